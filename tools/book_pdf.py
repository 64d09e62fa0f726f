"""Print the book's single-page build to a PDF with headless Chromium (no LaTeX needed).

``make pdf`` runs ``jupyter-book build . --builder singlehtml`` and then this script::

    python tools/book_pdf.py _build/singlehtml/book.html _build/pdf/book.pdf

The page is opened from disk with every outside request aborted (MathJax and the fonts are
bundled with the build); the script waits until MathJax has typeset every formula and every
image has loaded. ``tools/book_pdf.js`` then makes a book of the page (solutions at the end
of their chapter, citations and links that stay inside the PDF, a bibliography in author-year
order, a contents) and ``tools/book_pdf.css`` lays it out for A4 paper (chapters on new pages,
headings kept with their text, code wrapped, the API reference in two columns). Tables and
displayed formulas still wider than the column are scaled down to fit.

The page is printed twice: the first printing tells, from the PDF's named destinations, on
which page each chapter, section and solution starts; those numbers are written into the
contents and into each exercise's pointer to its solution, and the page is printed again (once
more if the numbers moved). Chromium writes the bookmarks (the document outline, from the
headings) and the internal links. The Chromium is the one the browser tests use
(``tests/site/browser.py``: Debian's, or Playwright's own).

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

HERE = Path(__file__).resolve().parent
BOOK_JS = HERE / "book_pdf.js"
BOOK_CSS = HERE / "book_pdf.css"
FOOTER = (
    '<div style="font-size:8px;width:100%;text-align:center;color:#555;">'
    '<span class="title"></span> &middot; <span class="pageNumber"></span> / '
    '<span class="totalPages"></span></div>'
)
MARGIN_MM = {"top": 18, "bottom": 18, "left": 16, "right": 16}
PAGE_MM = (210, 297)  # A4
# The width of the printed column in CSS pixels (96 per inch): the page is laid out at this
# width before printing, so that what the script measures is what is printed.
COLUMN_PX = (PAGE_MM[0] - MARGIN_MM["left"] - MARGIN_MM["right"]) / 25.4 * 96
MAX_PRINTINGS = 3

# Tables, displayed formulas and figures wider than their column are scaled down (CSS zoom);
# then every element that still reaches past the column's right edge is reported.
FIT_JS = """(column) => {
  const scaled = [];
  const sel = 'table, mjx-container[display="true"], img, svg, div.highlight';
  document.querySelectorAll(sel).forEach((el) => {
    if (el.closest('mjx-container') && el.tagName !== 'MJX-CONTAINER') return;
    const parent = el.parentElement;
    const avail = Math.min(parent.getBoundingClientRect().width, column);
    const need = Math.max(el.scrollWidth, el.getBoundingClientRect().width);
    if (avail > 0 && need > avail + 1) {
      const zoom = Math.max(0.4, (avail - 2) / need);
      el.style.zoom = zoom.toFixed(3);
      scaled.push(`${el.tagName.toLowerCase()} ${Math.round(need)}px x ${zoom.toFixed(2)}`);
    }
  });
  const article = document.querySelector('article.bd-article') || document.body;
  const right = article.getBoundingClientRect().left + column + 1;
  const cut = [];
  const walker = document.createTreeWalker(article, NodeFilter.SHOW_TEXT);
  const range = document.createRange();
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    // MathJax's copy of each formula for screen readers is clipped away: not printed.
    if (!n.textContent.trim() || n.parentElement.closest('mjx-assistive-mml')) continue;
    range.selectNodeContents(n);
    const box = range.getBoundingClientRect();
    if (box.width && box.right > right) {
      cut.push(`${n.textContent.trim().slice(0, 50)} (${Math.round(box.right - right)}px)`);
    }
  }
  return {scaled, cut};
}"""

FILL_JS = """(pages) => {
  let changed = 0;
  const missing = [];
  document.querySelectorAll('.pdf-page').forEach((el) => {
    const page = pages[el.dataset.target];
    if (page === undefined) { missing.push(el.dataset.target); return; }
    if (el.textContent !== String(page)) { el.textContent = String(page); changed += 1; }
  });
  return {changed, missing};
}"""


class NoBrowser(Exception):
    """No Chromium to print with; the message says where one was looked for."""


def destinations(pdf: Path) -> dict[str, tuple[int, float, float]]:
    """Page (from 0), left and top of each named destination: Chromium names them by the id
    of the element a link points at."""
    import logging

    from pypdf import PdfReader

    # Chromium's PDFs make pypdf warn "Object count ... exceeds defined trailer size": harmless.
    logging.getLogger("pypdf").setLevel(logging.ERROR)
    reader = PdfReader(pdf)
    found = {}
    for name, dest in reader.named_destinations.items():
        try:
            number = reader.get_destination_page_number(dest)
        except Exception:  # a destination without a page is simply not used
            continue
        key = name[1:] if name.startswith("/") else name
        found[key] = (number, float(dest.left or 0), float(dest.top or 0))
    return found


def write_outline(pdf: Path, outline: list[dict], dests: dict) -> int:
    """Bookmarks: each entry of ``outline`` (id, title, level 1-3, in the book's order) at its
    destination, under the last entry of the level above; the viewer opens with them shown."""
    from pypdf import PdfWriter
    from pypdf.generic import Fit

    writer = PdfWriter(clone_from=pdf)
    parents: dict[int, object] = {}
    written = 0
    for entry in outline:
        if entry["id"] not in dests or not entry["title"]:
            continue
        number, left, top = dests[entry["id"]]
        level = entry["level"]
        item = writer.add_outline_item(
            title=entry["title"],
            page_number=number,
            parent=parents.get(level - 1),
            fit=Fit.xyz(left, top),
            is_open=False,  # chapters listed closed: a reader opens the one they want
        )
        parents[level] = item
        for deeper in [lv for lv in parents if lv > level]:
            del parents[deeper]
        written += 1
    writer.page_mode = "/UseOutlines"
    tmp = pdf.with_suffix(".outline.pdf")
    with tmp.open("wb") as f:
        writer.write(f)
    tmp.replace(pdf)
    return written


def _print(page, path: Path) -> float:
    started = time.monotonic()
    page.pdf(
        path=str(path),
        format="A4",
        print_background=True,
        margin={side: f"{mm}mm" for side, mm in MARGIN_MM.items()},
        display_header_footer=True,
        header_template="<span></span>",
        footer_template=FOOTER,
    )
    return time.monotonic() - started


def print_pdf(html: Path, pdf: Path, timeout_s: float = 600) -> dict:
    from playwright.sync_api import sync_playwright

    found = find_chromium()
    if found.path is None:
        raise NoBrowser(found.how)
    pdf.parent.mkdir(parents=True, exist_ok=True)
    outside: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(found.path), args=LAUNCH_ARGS)
        page = browser.new_page(viewport={"width": round(COLUMN_PX), "height": 1000})
        page.set_default_timeout(timeout_s * 1000)

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
        stats = make_book(page, pdf)
        browser.close()
    stats.update(outside=outside, errors=errors, bytes=pdf.stat().st_size)
    return stats


def make_book(page, pdf: Path) -> dict:
    """Rearrange the loaded page into a book, lay it out, print it (twice or more, to write
    the page numbers in) and add the bookmarks; return what was done and measured."""
    page.emulate_media(media="print")
    stats = page.evaluate(BOOK_JS.read_text(encoding="utf-8"))
    page.add_style_tag(content=BOOK_CSS.read_text(encoding="utf-8"))
    stats.update(page.evaluate(FIT_JS, COLUMN_PX))
    return print_book(page, pdf, stats)


def print_book(page, pdf: Path, stats: dict) -> dict:
    """Print, fill in the page numbers, print again until they stay; then the bookmarks."""
    stats.update(
        page.evaluate(
            """() => ({math: document.querySelectorAll('mjx-container').length,
               merror: document.querySelectorAll('mjx-merror').length,
               images: document.images.length,
               broken: Array.from(document.images).filter(i => !i.naturalWidth)
                            .map(i => i.getAttribute('src'))})"""
        )
    )
    # Print, read where the targets landed, write the page numbers in; again until stable.
    stats["print_seconds"] = []
    for _ in range(MAX_PRINTINGS):
        stats["print_seconds"].append(round(_print(page, pdf), 1))
        dests = destinations(pdf)
        pages = {name: where[0] + 1 for name, where in dests.items()}
        filled = page.evaluate(FILL_JS, pages)
        stats["page_numbers_missing"] = filled["missing"]
        if not filled["changed"]:
            break
    else:
        stats["page_numbers_unstable"] = True
    outline = stats.pop("outline")
    stats["outline_missing"] = [e["id"] for e in outline if e["id"] not in dests]
    stats["bookmarks"] = write_outline(pdf, outline, dests)
    return stats


def problems_of(stats: dict) -> list[str]:
    """What makes the PDF unfit to publish; empty when it is fine."""
    checks = [
        ("merror", "MathJax errors"),
        ("broken", "images that did not load"),
        ("outside", "requests to the outside"),
        ("errors", "page errors"),
        ("empty_solutions", "solutions with nothing in them"),
        ("unmatched_citations", "citations without a bibliography entry"),
        ("unlabelled_entries", "bibliography entries that no citation labels"),
        ("missing_targets", "links to targets that are not in the book"),
        ("page_numbers_missing", "contents entries without a page"),
        ("cut", "text past the right margin"),
        ("outline_missing", "bookmarks without a destination"),
    ]
    problems = [f"{what}: {stats[key]}" for key, what in checks if stats.get(key)]
    if stats.get("solutions_left"):
        problems.append(f"{stats['solutions_left']} solutions not moved to the chapter's end")
    if stats.get("page_numbers_unstable"):
        problems.append(f"page numbers still moving after {MAX_PRINTINGS} printings")
    return problems


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
    print(
        f"book_pdf: {args.pdf} ({stats['bytes'] / 1e6:.1f} MB), {stats['chapters']} chapters, "
        f"{stats['solutions']} solutions moved to their chapter's end, {stats['citations']} "
        f"citations, {stats['internal_links']} internal links, {len(stats['unlinked'])} links "
        f"to other files made plain text, {stats['contents_entries']} contents entries, "
        f"{len(stats['scaled'])} wide blocks scaled, {stats['math']} formulas, "
        f"{stats['images']} images, {stats['bookmarks']} bookmarks; "
        f"printed {len(stats['print_seconds'])} times "
        f"({' + '.join(map(str, stats['print_seconds']))} s)"
    )
    problems = problems_of(stats)
    for p in problems:
        print(f"book_pdf: {p}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
