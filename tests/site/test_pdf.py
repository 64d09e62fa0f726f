"""The book as a PDF (``make pdf``): every chapter is in it, every formula is typeset, and it
reads as a printed book.

Reads the text of ``_build/pdf/book.pdf`` with poppler's ``pdftotext`` (whole, page by page and
word by word) and its links and bookmarks with pypdf. The chapter titles are taken from the
notebooks' first headings, so a new chapter is checked without editing this file. Raw TeX in
the text means a formula was printed before MathJax typeset it; TeX that the book shows as code
(matplotlib labels in code cells, fenced code blocks) is allowed exactly as often as the
sources contain it. The book's checks: each chapter starts a page and its title is not left
alone at a page's foot; the contents gives each chapter's page; each solution is at the end of
its chapter, complete, with no toggle label; no word runs past the right margin; links stay in
the PDF (no ``file://``); bookmarks open each chapter at its page; the bibliography is in
author-year order with the labels the text cites; the API reference is a compact appendix.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
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
def built_pdf() -> Path:
    if not PDF.exists():
        found = find_chromium()
        # Without a browser `make pdf` prints nothing (tools/book_pdf.py): give that reason.
        skip_or_fail(found.how if found.path is None else "the PDF is not built (run `make pdf`)")
    if shutil.which("pdftotext") is None:
        skip_or_fail("pdftotext is missing (`apt-get install -y poppler-utils`; .ci/run does)")
    return PDF


def _pdftotext(*args: str) -> str:
    return subprocess.run(
        ["pdftotext", *args, str(PDF), "-"], check=True, capture_output=True, text=True
    ).stdout


@pytest.fixture(scope="module")
def pdf_text(built_pdf) -> str:
    """The whole text, normalised (pdftotext: seconds where pypdf takes minutes)."""
    text = _pdftotext()
    assert text.count("\f") > 20, text.count("\f")
    return _normal(text)


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


# ------------------------------------------------------------------------------------------
# The PDF as a book (tools/book_pdf.py): pages read with poppler's pdftotext, links and
# bookmarks with pypdf.

A4_WIDTH_PT = 595.28
RIGHT_MARGIN_PT = 16 / 25.4 * 72  # tools/book_pdf.py prints with 16 mm side margins


@pytest.fixture(scope="module")
def pages(built_pdf) -> list[str]:
    """The text of each page, normalised."""
    return [_normal(p) for p in _pdftotext("-layout").split("\f")]


@pytest.fixture(scope="module")
def reader(built_pdf):
    from pypdf import PdfReader

    return PdfReader(PDF)


def _number(title: str) -> int:
    return int(re.match(r"\d+", title).group())


def _chapter_heading(notebook: Path) -> str:
    """The chapter's title as printed: its number, then the title's words up to any math."""
    title = _normal(chapter_title(notebook))
    words = re.split(r"\$[^$]*\$", title)[0].strip()
    return f"{int(notebook.stem[:2])}. {words}"


def _start_page(pages: list[str], heading: str) -> int:
    """Index of the page that opens with ``heading`` (after the contents pages)."""
    hits = [i for i, p in enumerate(pages) if p.startswith(heading[:40])]
    assert hits, f"no page starts with {heading!r}: chapters must start on a new page"
    return hits[-1]


@pytest.mark.parametrize("notebook", CHAPTERS, ids=lambda p: p.stem)
def test_chapter_starts_a_page_and_keeps_its_first_lines(pages, notebook):
    heading = _chapter_heading(notebook)
    start = _start_page(pages, heading)
    # The title is not left alone at the foot of a page: its page goes on with the text.
    assert len(pages[start]) > len(heading) + 400, pages[start][:300]


def test_contents_gives_each_chapter_its_page(pages):
    contents = next((i for i, p in enumerate(pages) if "Contents" in p[:200]), None)
    assert contents is not None and contents < 4, "no contents at the front of the PDF"
    front = " ".join(pages[contents : contents + 4])
    for notebook in CHAPTERS:
        heading = _chapter_heading(notebook)
        start = _start_page(pages, heading)
        entry = re.search(re.escape(heading[:40]) + r"[^\d]*?(?:\. ?)+ ?(\d+)", front)
        assert entry, f"{heading!r} has no page number in the contents"
        assert int(entry.group(1)) == start + 1, (heading, entry.group(1), start + 1)


def test_solutions_are_at_the_end_of_their_chapter_complete_and_without_toggles(pages):
    text = " ".join(pages)
    assert "Show code cell" not in text and "Hide code cell" not in text, "a toggle's label"
    starts = [_start_page(pages, _chapter_heading(nb)) for nb in CHAPTERS] + [len(pages)]
    exercises_seen = 0
    for k, notebook in enumerate(CHAPTERS):
        number = int(notebook.stem[:2])
        chapter = pages[starts[k] : starts[k + 1]]
        exercises = sorted(set(re.findall(rf"\bExercise {number}\.(\d+)\b", " ".join(chapter))))
        if not exercises:
            continue
        exercises_seen += len(exercises)
        end = next(
            (i for i, p in enumerate(chapter) if f"Solutions to the exercises of chapter {number}"
             in p),
            None,
        )  # fmt: skip
        assert end is not None, f"chapter {number} has no solutions at its end"
        before = " ".join(chapter[:end])
        after = " ".join(chapter[end:])
        assert "Solution to Exercise" not in before, f"a solution inside chapter {number}"
        for m in exercises:
            title = f"Solution to Exercise {number}.{m}"
            assert title in after, f"{title} is missing"
            body = re.split(
                r"Solution to Exercise \d+\.\d+|\bSolutions? to\b", after.split(title)[1]
            )
            assert len(body[0].strip()) > 60, f"{title} is (nearly) empty: {body[0][:80]!r}"
    assert exercises_seen >= len(CHAPTERS), exercises_seen


def test_no_text_is_cut_at_the_right_margin(built_pdf):
    html = _pdftotext("-bbox")
    page = 0
    past = []
    for line in html.splitlines():
        if "<page " in line:
            page += 1
        m = re.search(r'<word xMin="[\d.]+" yMin="[\d.]+" xMax="([\d.]+)"[^>]*>(.*?)</word>', line)
        if m and float(m.group(1)) > A4_WIDTH_PT - RIGHT_MARGIN_PT + 2:
            past.append((page, m.group(2), round(float(m.group(1)) - A4_WIDTH_PT, 1)))
    assert not past, f"{len(past)} words past the right margin (page, word, pt): {past[:10]}"


def test_links_stay_in_the_pdf(reader):
    internal, files, external = 0, [], 0
    names = set(reader.named_destinations)
    dangling = []
    for number, page in enumerate(reader.pages, start=1):
        for annot in page.get("/Annots") or []:
            annot = annot.get_object()
            if annot.get("/Subtype") != "/Link":
                continue
            if "/Dest" in annot:
                internal += 1
                dest = annot["/Dest"]
                if isinstance(dest, str) and dest not in names:
                    dangling.append((number, dest))
                continue
            action = annot.get("/A", {})
            uri = str(action.get("/URI", ""))
            if action.get("/S") != "/URI" or not uri.startswith(("http://", "https://")):
                files.append((number, action.get("/S"), uri[:80]))
            else:
                external += 1
    assert not files, f"links that leave the book other than to the web: {files[:10]}"
    assert not dangling, f"internal links to missing destinations: {dangling[:10]}"
    # Every citation, equation reference and API name links inside the PDF.
    assert internal > 300, internal


def test_bookmarks_open_every_chapter_at_its_page(reader, pages):
    def flat(items, depth=0):
        for item in items:
            if isinstance(item, list):
                yield from flat(item, depth + 1)
            else:
                yield depth, _normal(item.title), reader.get_destination_page_number(item)

    marks = list(flat(reader.outline))
    assert len(marks) > 3 * len(CHAPTERS), len(marks)
    top = {title: page for depth, title, page in marks if depth == 0}
    for notebook in CHAPTERS:
        heading = _chapter_heading(notebook)
        hit = [page for title, page in top.items() if title.startswith(heading[:40])]
        assert hit, f"no bookmark for {heading!r}"
        assert hit[0] == _start_page(pages, heading), heading
    assert any(t.startswith("Solution to Exercise") for _, t, _ in marks)


def test_bibliography_is_in_author_year_order_with_the_texts_labels(pages):
    start = max(i for i, p in enumerate(pages) if p.startswith("Bibliography"))
    bib = " ".join(pages[start:])
    labels = re.findall(r"\[([^\[\]]+?, \d{4}[a-z]?)\]", bib)
    assert len(labels) >= 10, labels
    keys = [label.lower() for label in labels]
    assert keys == sorted(keys), f"bibliography not in author-year order: {labels}"
    groups = re.findall(r"\[([A-Za-z][^\[\]]{2,200}?, \d{4}[a-z]?)\]", " ".join(pages[:start]))
    # One bracket may hold several: "[Chen et al., 2020, He et al., 2020]".
    cited = {c.strip() for g in groups for c in re.split(r"(?:(?<=\d{4})|(?<=\d{4}[a-z]))[;,] ", g)}
    missing = sorted(c for c in cited if c not in labels)
    assert not missing, f"citations with no bibliography entry of that label: {missing}"


def test_api_reference_is_a_compact_appendix(pages):
    start = max(i for i, p in enumerate(pages) if p.startswith("API reference"))
    end = max(i for i, p in enumerate(pages) if p.startswith("Bibliography"))
    assert 0 < end - start <= 0.3 * len(pages), (end - start, len(pages))
