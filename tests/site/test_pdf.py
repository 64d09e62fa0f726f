"""The book as a PDF (``make pdf``): every chapter is in it and every formula is typeset.

Reads the text of ``_build/pdf/book.pdf`` with pypdf. The chapter titles are taken from the
notebooks' first headings, so a new chapter is checked without editing this file. Raw TeX in
the text means a formula was printed before MathJax typeset it; TeX that the book shows as code
(matplotlib labels in code cells, fenced code blocks) is allowed exactly as often as the
sources contain it.
"""

from __future__ import annotations

import json
import re
import unicodedata
from pathlib import Path

import pytest

from tests.site.browser import find_chromium, skip_or_fail

ROOT = Path(__file__).resolve().parents[2]
PDF = ROOT / "_build" / "pdf" / "book.pdf"
CHAPTERS = sorted((ROOT / "chapters").glob("*.ipynb"))
RAW_TEX = ("$$", r"\frac", r"\mathcal", r"\mathbb", r"\begin{", r"\end{", r"\left", r"\sum")

pytestmark = pytest.mark.site


def _normal(text: str) -> str:
    """NFKC (ligatures such as 'ﬁ' become 'fi') and single spaces."""
    return re.sub(r"\s+", " ", unicodedata.normalize("NFKC", text)).strip()


def chapter_title(notebook: Path) -> str:
    nb = json.loads(notebook.read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        if cell["cell_type"] == "markdown":
            for line in "".join(cell["source"]).splitlines():
                if line.startswith("# "):
                    return line[2:].strip()
    raise AssertionError(f"{notebook.name} has no level-1 heading")


def _code_shown_in_the_book() -> str:
    parts = []
    for nb_path in CHAPTERS:
        nb = json.loads(nb_path.read_text(encoding="utf-8"))
        for cell in nb["cells"]:
            if cell["cell_type"] == "code":
                parts.append("".join(cell["source"]))
                parts.append(json.dumps(cell.get("outputs", [])))
    for md in [ROOT / "index.md", *(ROOT / "reference").glob("*.md")]:
        parts += re.findall(r"```.*?```", md.read_text(encoding="utf-8"), flags=re.S)
    return "\n".join(parts)


@pytest.fixture(scope="module")
def pdf_text() -> str:
    if not PDF.exists():
        found = find_chromium()
        # Without a browser `make pdf` prints nothing (tools/book_pdf.py): give that reason.
        skip_or_fail(found.how if found.path is None else "the PDF is not built (run `make pdf`)")
    from pypdf import PdfReader

    reader = PdfReader(PDF)
    assert len(reader.pages) > 20, len(reader.pages)
    return _normal("\n".join(page.extract_text() or "" for page in reader.pages))


def test_chapter_titles_are_read_from_the_notebooks():
    titles = [chapter_title(nb) for nb in CHAPTERS]
    assert len(titles) == len(CHAPTERS) >= 6
    assert all(len(t) > 5 for t in titles), titles


@pytest.mark.parametrize("notebook", CHAPTERS, ids=lambda p: p.stem)
def test_pdf_has_every_chapter(pdf_text, notebook):
    title = _normal(chapter_title(notebook))
    # MathJax-typeset math in a title is extracted as symbols: compare the words around it.
    words = [w for w in re.split(r"\$[^$]*\$", title) if w.strip()]
    for piece in words:
        assert _normal(piece) in pdf_text, f"chapter title {title!r} not in the PDF"


def test_pdf_has_no_raw_tex(pdf_text):
    code = _code_shown_in_the_book()
    leaked = {}
    for token in RAW_TEX:
        in_pdf, in_code = pdf_text.count(token), code.count(token)
        if in_pdf > in_code:
            leaked[token] = (in_pdf, in_code)
    assert not leaked, f"raw TeX in the PDF (count in PDF, count in code shown): {leaked}"


def test_pdf_has_numbered_equations_figures_and_references(pdf_text):
    assert re.search(r"\(\d+\.\d+\)", pdf_text), "no numbered equation such as (2.1)"
    assert re.search(r"Fig(ure|\.) ?\d", pdf_text), "no numbered figure"
    assert "Bibliography" in pdf_text or "References" in pdf_text
    assert re.search(r"\[[A-Z][a-z]+ (et al\.|and [A-Z][a-z]+), \d{4}\]", pdf_text), (
        "no author-year citation such as [Oord et al., 2018]"
    )


def test_landing_page_links_the_pdf(site):
    page = site / "index.html"
    links = re.findall(r'href="([^"]*book\.pdf)"', page.read_text(encoding="utf-8"))
    assert links, "the landing page has no link to the PDF"
    target = (page.parent / links[0]).resolve()
    assert target == (site / "book.pdf").resolve(), links
    if not target.exists():
        found = find_chromium()
        skip_or_fail(
            found.how if found.path is None else "the PDF is not in the site (`make pdf` copies it)"
        )
    assert target.read_bytes() == PDF.read_bytes()
