"""Print the book's single-page build to a PDF with headless Chromium (no LaTeX needed).

``make pdf`` runs ``jupyter-book build . --builder singlehtml`` and then this script::

    python tools/book_pdf.py _build/singlehtml/book.html _build/pdf/book.pdf

The page is opened from disk with every outside request aborted (MathJax and the fonts are
bundled with the build), the script waits until MathJax has typeset every formula and every
image has loaded, and then prints A4 pages with page numbers. The Chromium is the one the
browser tests use (``tests/site/browser.py``: Debian's, or Playwright's own).

Where there is no such browser the script behaves as the browser tests do: it says that the
PDF was SKIPPED and why, removes any PDF left by an earlier run (so that the PDF's test cannot
read a stale one) and exits 0; under CI (``CI`` set) it exits 1 instead.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.site.browser import LAUNCH_ARGS, find_chromium, in_ci, settle  # noqa: E402

FOOTER = (
    '<div style="font-size:8px;width:100%;text-align:center;color:#555;">'
    '<span class="title"></span> &middot; <span class="pageNumber"></span> / '
    '<span class="totalPages"></span></div>'
)
# Printed, the page keeps the article only: no sidebars, header buttons or search box.
PRINT_CSS = """
.bd-header, .bd-sidebar-primary, .bd-sidebar-secondary, .header-article, .bd-footer,
.bd-footer-article, .prev-next-area, .search-button-field, #pst-back-to-top,
.skip-link { display: none !important; }
.bd-main .bd-content .bd-article-container { max-width: 100% !important; }
.bd-page-width { max-width: 100% !important; }
details.above-input, details.below-input { display: none !important; }
"""


class NoBrowser(Exception):
    """No Chromium to print with; the message says where one was looked for."""


def print_pdf(html: Path, pdf: Path, timeout_s: float = 300) -> dict:
    from playwright.sync_api import sync_playwright

    found = find_chromium()
    if found.path is None:
        raise NoBrowser(found.how)
    pdf.parent.mkdir(parents=True, exist_ok=True)
    outside: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(found.path), args=LAUNCH_ARGS)
        page = browser.new_page()

        def route(r):
            if r.request.url.startswith(("file://", "data:", "blob:")):
                r.continue_()
            else:
                outside.append(r.request.url)
                r.abort()

        page.route("**/*", route)
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(html.resolve().as_uri(), wait_until="load", timeout=timeout_s * 1000)
        page.wait_for_function(
            "() => window.MathJax && MathJax.startup && MathJax.startup.promise",
            timeout=timeout_s * 1000,
        )
        settle(page, "() => MathJax.startup.promise", timeout_ms=timeout_s * 1000, what="MathJax")
        page.wait_for_function(
            "() => Array.from(document.images).every(i => i.complete)",
            timeout=timeout_s * 1000,
        )
        # Every <details> (hidden solutions, collapsed cells) printed open.
        page.evaluate("() => document.querySelectorAll('details').forEach(d => d.open = true)")
        page.add_style_tag(content=PRINT_CSS)
        page.emulate_media(media="print")
        stats = page.evaluate(
            """() => ({math: document.querySelectorAll('mjx-container').length,
                   merror: document.querySelectorAll('mjx-merror').length,
                   images: document.images.length,
                   broken: Array.from(document.images).filter(i => !i.naturalWidth)
                                .map(i => i.getAttribute('src'))})"""
        )
        started = time.monotonic()
        page.pdf(
            path=str(pdf),
            format="A4",
            print_background=True,
            margin={"top": "18mm", "bottom": "18mm", "left": "16mm", "right": "16mm"},
            display_header_footer=True,
            header_template="<span></span>",
            footer_template=FOOTER,
        )
        stats["print_seconds"] = round(time.monotonic() - started, 1)
        browser.close()
    stats.update(outside=outside, errors=errors, bytes=pdf.stat().st_size)
    return stats


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("html", type=Path)
    parser.add_argument("pdf", type=Path)
    args = parser.parse_args(argv)
    if not args.html.exists():
        print(f"book_pdf: {args.html} is missing (run the singlehtml build first)", file=sys.stderr)
        return 2
    try:
        stats = print_pdf(args.html, args.pdf)
    except NoBrowser as exc:
        args.pdf.unlink(missing_ok=True)
        if in_ci(os.environ):
            print(f"book_pdf: cannot print the PDF under CI: {exc}", file=sys.stderr)
            return 1
        print(f"book_pdf: PDF SKIPPED (no browser to print with): {exc}", file=sys.stderr)
        return 0
    problems = []
    if stats["merror"]:
        problems.append(f"{stats['merror']} MathJax errors")
    if stats["broken"]:
        problems.append(f"images that did not load: {stats['broken']}")
    if stats["outside"]:
        problems.append(f"requests to the outside: {stats['outside']}")
    if stats["errors"]:
        problems.append(f"page errors: {stats['errors']}")
    print(
        f"book_pdf: {args.pdf} ({stats['bytes'] / 1e6:.1f} MB), {stats['math']} formulas, "
        f"{stats['images']} images, printed in {stats['print_seconds']} s"
    )
    for p in problems:
        print(f"book_pdf: {p}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
