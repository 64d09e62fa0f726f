"""The built website, opened page by page in a real headless browser with the network cut.

Runs after the strict book build (``make site``, part of ``make test``). Uses the Chromium
that ``tests/site/browser.py`` finds (Debian's, or Playwright's own), driven by Playwright; it
never downloads a browser, and skips with the reason where there is none (fails under CI). Every
request that is not file://, data: or 127.0.0.1 is aborted and recorded, so a page that needs
the internet for its math, fonts, scripts or styles fails here. A screenshot of each page's
first screen is saved to ``_build/screenshots/`` for a person to look at.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.site.browser import settle

ROOT = Path(__file__).resolve().parents[2]
HTML = ROOT / "_build" / "html"
SHOTS = ROOT / "_build" / "screenshots"

pytestmark = pytest.mark.site


def _source_of(page: Path) -> Path | None:
    """The source file (notebook or markdown) a built chapter page came from."""
    rel = page.relative_to(HTML).with_suffix("")
    for suffix in (".ipynb", ".md"):
        src = ROOT / rel.with_suffix(suffix)
        if src.exists():
            return src
    return None


def _source_has_math(src: Path) -> bool:
    text = src.read_text(encoding="utf-8")
    if src.suffix == ".ipynb":
        import json

        cells = json.loads(text)["cells"]
        text = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    return bool(re.search(r"\$[^$\s][^$]*\$|\\begin\{|```\{math\}|:::\{math\}", text))


CHAPTER_PAGES = sorted(
    [HTML / "index.html", *(HTML / "chapters").glob("*.html"), *(HTML / "reference").glob("*.html")]
)


def _open(context, path: Path):
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(path.as_uri(), wait_until="load")
    settle(page, "() => (window.MathJax && MathJax.startup && MathJax.startup.promise) || null")
    return page, errors


def test_there_are_chapter_pages(site):
    names = {p.stem for p in CHAPTER_PAGES}
    assert {"index", "02_infonce"} <= names, names


@pytest.mark.parametrize("path", CHAPTER_PAGES, ids=lambda p: p.stem)
def test_page_renders_offline(browser, path):
    before = len(browser.outside_requests)
    page, errors = _open(browser, path)
    try:
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / f"{path.stem}.png"))
        n_math = page.evaluate("() => document.querySelectorAll('mjx-container').length")
        n_merror = page.evaluate("() => document.querySelectorAll('mjx-merror').length")
        body_text = page.evaluate("() => document.querySelector('article, main, body').innerText")
        images = page.evaluate(
            "() => Array.from(document.images).map(i => [i.getAttribute('src'),"
            " i.complete && i.naturalWidth > 0])"
        )
        src = _source_of(path)
        if src is not None and _source_has_math(src):
            assert n_math > 0, f"{path.name}: the source has math but nothing was typeset"
        assert n_merror == 0, f"{path.name}: {n_merror} MathJax errors"
        assert "$$" not in body_text, f"{path.name}: raw $$ left in the text"
        overflowing = page.evaluate(
            """() => Array.from(document.querySelectorAll(
                'article div.cell pre, article table, article mjx-container[display="true"]'))
              .filter(e => e.offsetParent !== null && e.scrollWidth > e.clientWidth + 2)
              .map(e => e.tagName + ': ' + e.innerText.trim().slice(0, 50))"""
        )
        assert not overflowing, f"{path.name}: wider than the column at 1280 px: {overflowing}"
        broken = [s for s, ok in images if not ok]
        assert not broken, f"{path.name}: images that did not load: {broken}"
        assert not errors, f"{path.name}: console errors: {errors}"
        new_outside = browser.outside_requests[before:]
        assert not new_outside, f"{path.name}: requests to the outside: {new_outside}"
    finally:
        page.close()


def test_search_finds_temperature(browser):
    page, errors = _open(browser, HTML / "search.html")
    try:
        page.goto((HTML / "search.html").as_uri() + "?q=temperature", wait_until="load")
        page.wait_for_function(
            "() => document.querySelectorAll('#search-results li, ul.search li').length > 0",
            timeout=15000,
        )
        hits = page.evaluate("() => document.querySelectorAll('ul.search li').length")
        assert hits > 0
        assert not errors, errors
    finally:
        page.close()
