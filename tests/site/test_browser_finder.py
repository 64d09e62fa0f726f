"""How the browser tests find Chromium, and what they do without one (no browser needed here).

Without a browser the browser tests are skipped with the reason and pytest exits 0; under CI
(``CI`` set) they fail. The last two tests run pytest on tests/site in a subprocess with the
browser hidden (an empty PATH and an empty Playwright folder), once per case.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests.site.browser import find_chromium, in_ci, skip_or_fail

ROOT = Path(__file__).resolve().parents[2]


def _fake_chromium(folder: Path, name: str = "chromium") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    exe = folder / name
    exe.write_text("#!/bin/sh\nexit 0\n")
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    return exe


def _no_browser_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """The environment of a machine with no Chromium on PATH and none from Playwright."""
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "INFONCE_CHROMIUM")}
    empty = tmp_path / "empty-bin"
    empty.mkdir(exist_ok=True)
    env["PATH"] = str(empty)
    env["PLAYWRIGHT_BROWSERS_PATH"] = str(tmp_path / "no-playwright-browsers")
    env.update(extra)
    return env


@pytest.mark.parametrize(
    ("value", "expected"),
    [("", False), ("0", False), ("false", False), ("true", True), ("1", True), ("yes", True)],
)
def test_in_ci(value, expected):
    assert in_ci({"CI": value}) is expected
    assert in_ci({}) is False


def test_finds_chromium_on_path(tmp_path):
    exe = _fake_chromium(tmp_path / "bin")
    found = find_chromium(_no_browser_env(tmp_path, PATH=str(tmp_path / "bin")))
    assert found.path == exe
    assert "PATH" in found.how


def test_explicit_choice_wins_and_is_checked(tmp_path):
    exe = _fake_chromium(tmp_path / "elsewhere", "my-chrome")
    env = _no_browser_env(tmp_path, INFONCE_CHROMIUM=str(exe))
    assert find_chromium(env).path == exe
    env["INFONCE_CHROMIUM"] = str(tmp_path / "missing")
    found = find_chromium(env)
    assert found.path is None and "not an executable" in found.how


def test_finds_playwrights_own_browser(tmp_path):
    """Where `playwright install chromium` would have put its browser, it is found."""
    pytest.importorskip("playwright")
    env = _no_browser_env(tmp_path)
    ask = "from playwright.sync_api import sync_playwright\n"
    ask += "with sync_playwright() as p: print(p.chromium.executable_path)"
    expected = subprocess.run(
        [sys.executable, "-c", ask], env=env, capture_output=True, text=True, check=True
    ).stdout.strip()
    assert expected.startswith(str(tmp_path / "no-playwright-browsers")), expected
    assert find_chromium(env).path is None  # not installed yet
    _fake_chromium(Path(expected).parent, Path(expected).name)
    assert find_chromium(env).path == Path(expected)


def test_no_browser_gives_the_reason(tmp_path):
    found = find_chromium(_no_browser_env(tmp_path))
    assert found.path is None
    assert "apt-get install -y chromium" in found.how
    assert "playwright install chromium" in found.how


def test_skip_outside_ci_fail_under_ci():
    with pytest.raises(pytest.skip.Exception, match="SKIPPED: no browser here"):
        skip_or_fail("no browser here", env={})
    with pytest.raises(pytest.fail.Exception, match="cannot run under CI: no browser here"):
        skip_or_fail("no browser here", env={"CI": "true"})


def _pytest_site(env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            *(sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider"),
            *("tests/site/test_site.py", "tests/site/test_lite.py", "tests/site/test_pdf.py"),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_without_a_browser_pytest_skips_and_passes(tmp_path):
    result = _pytest_site(_no_browser_env(tmp_path))
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    assert "SKIPPED" in out and "no Chromium on PATH" in out, out
    assert "failed" not in out.splitlines()[-1], out


def test_without_a_browser_ci_fails(tmp_path):
    result = _pytest_site(_no_browser_env(tmp_path, CI="true"))
    out = result.stdout + result.stderr
    assert result.returncode == 1, out
    assert "browser test cannot run under CI: no Chromium on PATH" in out, out


def _book_pdf(tmp_path: Path, env: dict[str, str]) -> tuple[subprocess.CompletedProcess, Path]:
    """tools/book_pdf.py, as `make pdf` runs it, on a page of its own; a stale PDF is there."""
    html = tmp_path / "book.html"
    html.write_text("<html><body><p>A page.</p></body></html>")
    pdf = tmp_path / "out" / "book.pdf"
    pdf.parent.mkdir()
    pdf.write_bytes(b"%PDF-1.4 stale")
    result = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "book_pdf.py"), str(html), str(pdf)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return result, pdf


def test_without_a_browser_the_pdf_is_skipped(tmp_path):
    """`make test` runs `make pdf` before the browser tests: without a browser it must pass
    too, say why, and leave no stale PDF for tests/site/test_pdf.py to read."""
    result, pdf = _book_pdf(tmp_path, _no_browser_env(tmp_path))
    assert result.returncode == 0, result.stderr
    assert "PDF SKIPPED" in result.stderr and "no Chromium on PATH" in result.stderr
    assert not pdf.exists()


def test_without_a_browser_the_pdf_fails_under_ci(tmp_path):
    result, pdf = _book_pdf(tmp_path, _no_browser_env(tmp_path, CI="true"))
    assert result.returncode == 1, result.stderr
    assert "cannot print the PDF under CI: no Chromium on PATH" in result.stderr
    assert not pdf.exists()
