"""Find a Chromium for the browser tests, the way a user's machine has one.

In order: the path in ``INFONCE_CHROMIUM`` (an explicit choice), a ``chromium`` on ``PATH``
(Debian's package puts it at /usr/bin/chromium), then the browser that
``python -m playwright install chromium`` downloaded into Playwright's own folder. Nothing is
downloaded here.

``settle`` runs an asynchronous function in a page and returns what its promise resolves to,
polling for the outcome rather than awaiting the promise through Playwright (see its docstring).

Where none is found the browser tests are skipped with the reason, except under CI (``CI`` set
to anything but ``""``, ``0`` or ``false``), where a missing browser is an error: CI must
prove the site works, not skip it.
"""

from __future__ import annotations

import itertools
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

NAMES_ON_PATH = ("chromium", "chromium-browser")
HOW_TO_GET_ONE = (
    "install Debian's package (`apt-get install -y chromium`) or Playwright's browser "
    "(`.venv/bin/python -m playwright install chromium`), or set INFONCE_CHROMIUM to a "
    "Chromium executable"
)
# Headless Chromium's flags for every browser test (site, JupyterLite, JupyterLab, PDF).
LAUNCH_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-dev-shm-usage",
    "--disable-quic",
]

_ASK_PLAYWRIGHT = (
    "from playwright.sync_api import sync_playwright\n"
    "with sync_playwright() as p:\n"
    "    print(p.chromium.executable_path)\n"
)


@dataclass(frozen=True)
class Found:
    path: Path | None
    how: str  # where it came from, or why there is none


def in_ci(env: Mapping[str, str]) -> bool:
    return env.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def playwright_browser(env: Mapping[str, str]) -> Path | None:
    """Where Playwright keeps the Chromium that `playwright install chromium` downloads.

    Asked in a subprocess so that the answer follows ``env`` (HOME, PLAYWRIGHT_BROWSERS_PATH);
    ``None`` if Playwright is missing or that browser was never installed.
    """
    try:
        out = subprocess.run(
            [sys.executable, "-c", _ASK_PLAYWRIGHT],
            env=dict(env),
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    path = Path(out) if out else None
    return path if path is not None and path.is_file() else None


def find_chromium(env: Mapping[str, str] | None = None) -> Found:
    env = os.environ if env is None else env
    explicit = env.get("INFONCE_CHROMIUM", "").strip()
    if explicit:
        path = Path(explicit)
        if path.is_file() and os.access(path, os.X_OK):
            return Found(path, "INFONCE_CHROMIUM")
        return Found(None, f"INFONCE_CHROMIUM={explicit} is not an executable file")
    search_path = env.get("PATH", os.defpath)
    for name in NAMES_ON_PATH:
        hit = shutil.which(name, path=search_path)
        if hit:
            return Found(Path(hit), f"`{name}` on PATH")
    path = playwright_browser(env)
    if path is not None:
        return Found(path, "Playwright's browser folder")
    return Found(None, f"no Chromium on PATH nor in Playwright's browser folder: {HOW_TO_GET_ONE}")


def skip_or_fail(
    reason: str,
    env: Mapping[str, str] | None = None,
    *,
    what: str = "browser test",
    module: bool = False,
) -> None:
    """Skip the calling test (the whole module with ``module=True``) with ``reason``, or
    fail it when running under CI; ``what`` names the test in the message."""
    import pytest

    env = os.environ if env is None else env
    if in_ci(env):
        pytest.fail(f"{what} cannot run under CI: {reason}", pytrace=False)
    pytest.skip(f"{what} SKIPPED: {reason}", allow_module_level=module)


_SETTLE_KEYS = itertools.count()


def settle(page, js: str, arg=None, *, timeout_ms: float = 120_000, what: str = ""):
    """Call the page function ``js`` (which may return a promise) with ``arg`` and return the
    value it resolves to; raise ``AssertionError`` with the page's error if it rejects.

    ``page.evaluate`` would await the promise through the DevTools protocol, where Chromium
    holds it by a weak handle: under load Chromium 150 collected such a promise while it was
    still pending, and Playwright failed with "Resulting promise was garbage collected". Here
    the page stores the outcome in a global of its own, and Playwright polls for it, so no
    promise is held across the protocol. If the page is replaced meanwhile (a reload or a
    navigation), the outcome is lost and this says so.
    """
    key = f"__settle_{next(_SETTLE_KEYS)}"
    page.evaluate(
        f"""(arg) => {{
  window.{key} = null;
  Promise.resolve()
    .then(() => ({js})(arg))
    .then((value) => {{ window.{key} = {{value}}; }},
          (e) => {{ window.{key} = {{error: String((e && e.stack) || e)}}; }});
}}""",
        arg,
    )
    page.wait_for_function(f"() => window.{key} !== null", timeout=timeout_ms, polling=100)
    outcome = page.evaluate(f"() => window.{key}")
    label = what or js.strip().splitlines()[0][:80]
    if outcome is None:
        raise AssertionError(f"{label}: the page was replaced (reloaded?) before it settled")
    if "error" in outcome:
        raise AssertionError(f"{label}: rejected in the page: {outcome['error']}")
    return outcome.get("value")
