"""The chapters are stored in the form JupyterLab readers need, and the site gets its roles back.

``tools/notebooks.py convert`` writes citations, API references, links, numbers and solutions
in a form that reads in JupyterLab and JupyterLite; ``_ext/notebook_markup.py`` turns it back
into the book's roles when the site is built. These tests check both directions on small
notebooks, and that every chapter is stored converted with nothing of a solution before its
chapter's collapsed "Solutions" heading.
"""

from __future__ import annotations

import copy
import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "_ext"))
sys.path.insert(0, str(ROOT / "tools"))
import notebook_markup as markup  # noqa: E402
import notebooks  # noqa: E402

CHAPTERS = [ROOT / p for p in notebooks.toc_notebooks()]
BIB = markup.load_bibliography(ROOT / "references.bib")
RAW_ROLES = re.compile(
    r"\{cite(:[pt])?\}|\{py:|\{doc\}|\{eq\}|\{prf:ref\}|\{ref\}|\{solution|<infonce_lib\."
)


def _nb(*cells: tuple[str, str] | dict) -> dict:
    out = []
    for cell in cells:
        if isinstance(cell, dict):
            out.append(cell)
        elif cell[0] == "md":
            out.append({"cell_type": "markdown", "metadata": {}, "source": cell[1]})
        else:
            out.append({"cell_type": "code", "execution_count": 1, "metadata": {},
                        "outputs": [], "source": cell[1]})  # fmt: skip
    return {"cells": out, "metadata": {}, "nbformat": 4, "nbformat_minor": 4}


EXAMPLE = _nb(
    ("md", "# Title\n\nInfoNCE {cite:p}`oord2018cpc`, as {cite:t}`gutmann2010nce` and "
           "{cite:p}`he2020moco,wu2018instance` use it; see {py:func}`il.info_nce_loss "
           "<infonce_lib.info_nce_loss>` and {doc}`chapter 3 <03_lower_bound>`."),
    ("md", "$$\na = b\n$$ (eq-first)\n\nand\n\n$$\nc\n$$\n\n$$\nd = e\n$$ (eq-second)"),
    ("md", ":::{prf:theorem} A claim\n:label: thm-a\n\nBody.\n:::\n\nBy {prf:ref}`thm-a` "
           "and {eq}`eq-second`."),
    ("md", ":::{exercise}\n:label: ex-a\n\nDo it.\n:::"),
    ("code", "my_answer = None"),
    ("md", ":::{solution-start} ex-a\n:class: dropdown\n:::\n\nThe idea."),
    ("code", "answer = 42\nprint(answer)"),
    ("md", "Why it works.\n\n:::{solution-end}\n:::"),
    ("md", ":::{exercise}\n:label: ex-b\n\nThink.\n:::\n\n:::{solution} ex-b\n:class: dropdown"
           "\n\nThe answer is 42.\n:::"),
    ("md", "(sec-after)=\n## After\n\nMore text, as {ref}`sec-after` and {ref}`that part "
           "<sec-after>` say."),
)  # fmt: skip


def _convert(nb, chapter=2):
    return markup.to_notebook(copy.deepcopy(nb), chapter, BIB)


def _text(nb) -> str:
    return "\n".join(markup._src(c) for c in nb["cells"])


def test_roles_become_readable_markup_and_come_back_exactly():
    converted = _convert(EXAMPLE)
    text = _text(converted)
    assert not RAW_ROLES.search(text), RAW_ROLES.findall(text)
    assert "([van den Oord et al., 2018](#ref-oord2018cpc))" in text
    assert "[Gutmann and Hyvärinen (2010)](#ref-gutmann2010nce)" in text
    assert "([He et al., 2020](#ref-he2020moco); [Wu et al., 2018](#ref-wu2018instance))" in text
    assert "[`il.info_nce_loss`](#api-infonce_lib-info_nce_loss)" in text
    assert "[chapter 3](03_lower_bound.ipynb)" in text
    # The website's numbers: labelled equations 2.1 and 2.2 (the unlabelled one has none).
    assert "a = b \\tag{2.1}" in text and "d = e \\tag{2.2}" in text and "c \\tag" not in text
    assert "[Theorem 2.1](#thm-a)" in text and "[(2.2)](#eq-second)" in text
    assert "as [After](#sec-after) and [that part](#sec-after) say" in text
    assert ":enumerator: 2.1\n:label: ex-a" in text
    assert "(ref-oord2018cpc)=\nvan den Oord, Aaron" in text
    assert markup.to_site(converted) == EXAMPLE
    assert _convert(converted) == converted  # idempotent


def test_solutions_move_to_a_collapsed_section_at_the_end():
    cells = _convert(EXAMPLE)["cells"]
    heading = next(i for i, c in enumerate(cells) if markup.TAG_SOLUTIONS in markup._tags(c))
    before, after = cells[:heading], cells[heading:]
    shown = _text({"cells": before})
    for secret in ("The idea.", "answer = 42", "Why it works.", "The answer is 42."):
        assert secret not in shown
        assert secret in _text({"cells": after})
    assert cells[heading]["metadata"][markup.COLLAPSED] is True
    subheadings = [c for c in after if markup.TAG_HEADING in markup._tags(c)]
    assert [markup._src(c) for c in subheadings] == [
        "(solution-ex-a)=\n### Solution to Exercise 2.1",
        "(solution-ex-b)=\n### Solution to Exercise 2.2",
    ]
    assert all(c["metadata"][markup.COLLAPSED] for c in subheadings)
    (code,) = [c for c in after if c["cell_type"] == "code"]
    assert code["metadata"]["jupyter"] == {"source_hidden": True, "outputs_hidden": True}
    # Shift+Enter onto a cell under a collapsed heading opens the heading (JupyterLab): every
    # cell of a solution, its prose too, stays folded even then.
    moved = [c for c in after if markup.TAG_MOVED in markup._tags(c)]
    assert len(moved) == 4
    assert all(c["metadata"]["jupyter"]["source_hidden"] for c in moved)
    # A folded cell shows its first line: the prose's is empty.
    prose = [markup._src(c) for c in moved if c["cell_type"] == "markdown"]
    assert len(prose) == 3 and all(t.startswith("\n") and t.strip() for t in prose)
    # Each exercise links to its solution; the References cell comes last, after them.
    assert "[Exercise 2.1, solution](#solution-ex-a)" in shown
    assert "[Exercise 2.2, solution](#solution-ex-b)" in shown
    assert markup.TAG_REFERENCES in markup._tags(cells[-1])


def test_an_unknown_citation_key_or_a_wrong_role_is_refused():
    with pytest.raises(KeyError, match="nosuchkey"):
        _convert(_nb(("md", "{cite:p}`nosuchkey`")))
    with pytest.raises(ValueError, match="py:class"):
        _convert(_nb(("md", "{py:func}`il.Adam <infonce_lib.Adam>`")))


def test_moving_a_solution_reports_names_it_shares_with_later_cells():
    nb = _nb(
        ("md", ":::{solution-start} ex-a\n:class: dropdown\n:::"),
        ("code", "helper = 1\nprint(table)"),
        ("md", ":::{solution-end}\n:::"),
        ("code", "table = 2\nprint(helper)"),
    )
    found = markup.moved_name_warnings(nb)
    assert any("reads ['table']" in w for w in found), found
    assert any("binds ['helper']" in w for w in found), found


def test_the_site_gets_the_original_markup_from_the_stored_json():
    class App:
        class env:
            @staticmethod
            def doc2path(name):
                return f"{name}.ipynb"

    source = [json.dumps(_convert(EXAMPLE))]
    markup.source_read(App, "chapters/x", source)
    assert json.loads(source[0]) == EXAMPLE


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_chapter_is_stored_converted(path):
    nb = json.loads(path.read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        cell["source"] = markup._src(cell)
    chapter = CHAPTERS.index(path) + 1
    assert markup.to_site(_convert(markup.to_site(nb), chapter)) == markup.to_site(nb)
    raw = [(i, RAW_ROLES.findall(markup._src(c))) for i, c in enumerate(nb["cells"])
           if c["cell_type"] == "markdown" and RAW_ROLES.search(markup._src(c))]  # fmt: skip
    assert not raw, f"{path.name}: raw roles in cells {raw}: run `tools/notebooks.py convert`"
    assert _convert(nb, chapter)["cells"] == nb["cells"], (
        f"{path.name} is not as `python tools/notebooks.py convert {path.relative_to(ROOT)}` "
        "writes it (a new citation, name, number or solution?)"
    )


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_nothing_of_a_solution_shows_before_the_collapsed_solutions_heading(path):
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    tags = [set(c.get("metadata", {}).get("tags", [])) for c in cells]
    exercises = sum(markup._src(c).count(":::{exercise}") for c in cells)
    if not exercises:
        return
    heading = [i for i, t in enumerate(tags) if markup.TAG_SOLUTIONS in t]
    assert len(heading) == 1, f"{path.name}: {len(heading)} Solutions headings"
    (h,) = heading
    assert cells[h]["metadata"].get(markup.COLLAPSED) is True
    early = [i for i, t in enumerate(tags[:h]) if t & {markup.TAG_MOVED, markup.TAG_HEADING}]
    assert not early, f"{path.name}: solution cells {early} before the Solutions heading"
    for i in range(h + 1, len(cells)):
        if markup.TAG_REFERENCES in tags[i]:
            break
        assert tags[i] & {markup.TAG_MOVED, markup.TAG_HEADING}, f"{path.name} cell {i}"
        if markup.TAG_HEADING in tags[i]:
            assert cells[i]["metadata"].get(markup.COLLAPSED) is True
        if cells[i]["cell_type"] == "code":
            assert cells[i]["metadata"].get("jupyter") == notebooks.SOLUTION_HIDDEN
        elif markup.TAG_MOVED in tags[i]:  # folded, and its first line (shown folded) empty
            assert cells[i]["metadata"].get("jupyter") == {"source_hidden": True}
            assert markup._src(cells[i]).startswith("\n"), f"{path.name} cell {i}"
