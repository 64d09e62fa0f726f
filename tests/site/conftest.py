"""Fixtures of the browser tests: the Chromium to use, the built site, a local HTTP server.

Every request that leaves this machine is aborted and recorded, so a page that needs the
internet fails here. A missing browser or site skips the tests that need them, with the reason
(``tests/site/browser.py``); under CI it fails them.
"""

from __future__ import annotations

import functools
import http.server
import shutil
import threading
from pathlib import Path

import pytest

from tests.site.browser import LAUNCH_ARGS, find_chromium, skip_or_fail

ROOT = Path(__file__).resolve().parents[2]
HTML = ROOT / "_build" / "html"


@pytest.fixture(scope="session")
def chromium() -> Path:
    found = find_chromium()
    if found.path is None:
        skip_or_fail(found.how)
    return found.path


@pytest.fixture(scope="session")
def site() -> Path:
    if not (HTML / "index.html").exists():
        skip_or_fail("the site is not built (run `make build-strict` or `make book` first)")
    return HTML


@pytest.fixture(scope="session")
def playwright_api():
    try:
        from playwright import sync_api
    except ImportError:
        skip_or_fail("Playwright is not installed (`make test` installs it into .venv)")
    return sync_api


def launch(playwright_api, chromium: Path, profile_name: str, allow: tuple[str, ...]):
    """A fresh headless Chromium profile; requests not starting with ``allow`` are aborted."""
    pw = playwright_api.sync_playwright().start()
    profile = ROOT / "_build" / profile_name
    shutil.rmtree(profile, ignore_errors=True)
    context = pw.chromium.launch_persistent_context(
        str(profile),
        executable_path=str(chromium),
        headless=True,
        args=LAUNCH_ARGS,
        viewport={"width": 1280, "height": 800},
    )
    outside: list[str] = []

    def route(r):
        url = r.request.url
        if url.startswith(allow):
            r.continue_()
        else:
            outside.append(url)
            r.abort()

    context.route("**/*", route)
    context.outside_requests = outside
    return pw, context


@pytest.fixture(scope="module")
def browser(playwright_api, chromium, site):
    """Chromium for pages opened from disk (file://)."""
    pw, context = launch(
        playwright_api,
        chromium,
        "chromium-profile",
        ("file://", "data:", "blob:", "http://127.0.0.1"),
    )
    yield context
    context.close()
    pw.stop()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {  # noqa: RUF012 (the base class's attribute, overridden)
        **http.server.SimpleHTTPRequestHandler.extensions_map,
        ".wasm": "application/wasm",
        ".mjs": "text/javascript",
        ".js": "text/javascript",
        ".json": "application/json",
    }

    def log_message(self, format, *args):
        pass


@pytest.fixture(scope="session")
def http_site(site):
    """The built site served on 127.0.0.1 (JupyterLite needs HTTP); yields its base URL."""
    handler = functools.partial(_QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


# Each chapter's seconds in JupyterLite, from Run All to its last cell (None if it did not
# finish, or a cell raised), when test_lite.py ran them.
LITE_TIMES = pytest.StashKey[dict]()


def pytest_terminal_summary(terminalreporter, config):
    times = config.stash.get(LITE_TIMES, None)
    if not times:
        return
    terminalreporter.section("chapters in JupyterLite: seconds from Run All to the last cell")
    for name, seconds in sorted(times.items()):
        terminalreporter.write_line(f"{name:28s} {'-' if seconds is None else f'{seconds:.0f}'}")
