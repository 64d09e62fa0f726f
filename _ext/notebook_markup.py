"""One chapter, two readings: markup for JupyterLab and JupyterLite, roles for the website.

The chapters are read in two places. The website (Sphinx) understands the book's roles and
directives: citations ``{cite:p}`key```, API references ``{py:func}`il.x <infonce_lib.x>```,
links between chapters ``{doc}`chapter 2 <02_infonce>```, equation and theorem references, and
gated solutions (``:::{solution-start}`` ... ``:::{solution-end}``) that open as dropdowns. In
JupyterLab and JupyterLite (with jupyterlab-myst) these show as raw keys, dead links, numbers
that differ from the site's, and solutions whose code and answers are visible without a click.

So the notebooks are stored in the form a notebook reader needs (``to_notebook``, run by
``tools/notebooks.py convert``), and this Sphinx extension turns that form back into the
book's roles at ``source-read`` time (``to_site``), so that the website is built from exactly
the markup it was written in. The notebook form:

- a citation is author-year text linked to a "References" cell at the end of the chapter
  (built from ``references.bib``): ``([van den Oord et al., 2018](#ref-oord2018cpc))`` for
  ``{cite:p}``, ``[van den Oord et al. (2018)](#ref-oord2018cpc)`` for ``{cite:t}``;
- an API reference is the name in code, linked to a one-line summary of it in that cell:
  ``[`il.info_nce_loss`](#api-infonce_lib-info_nce_loss)``;
- a link to another chapter is a relative link to its notebook, ``[chapter 2](02_infonce.ipynb)``;
- a reference to an equation, theorem or exercise carries the number the website gives it,
  ``[(2.1)](#eq-infonce)``, ``[Theorem 3.1](#thm-infonce-lower-bound)``, and each labelled
  equation shows that number (``\\tag{2.1}``), so both front ends agree;
- every solution is moved to a "Solutions" section at the end of the chapter, under headings
  that JupyterLab stores collapsed (``jp-MarkdownHeadingCollapsed``), its code cells hidden
  too; the exercise keeps a link to it. Nothing of a solution shows until the reader opens it.

``to_site(to_notebook(nb)) == nb`` for every chapter (the round trip is tested), and
``to_notebook`` is idempotent, so authors may keep writing the roles: ``convert`` rewrites
them. Cells this module adds or moves carry tags starting with ``nb-``.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

# --- the cells this module adds -------------------------------------------------------------
TAG_SOLUTIONS = "nb-solutions"  # the "Solutions" heading cell
TAG_HEADING = "nb-solution-heading"  # "Solution to Exercise 4.1", one per solution
TAG_MOVED = "nb-solution"  # a cell moved from inside a gated solution
TAG_FIRST = "nb-solution-first"  # the prose that followed :::{solution-start}, same cell
TAG_LAST = "nb-solution-last"  # the prose that preceded :::{solution-end}, same cell
TAG_BODY = "nb-solution-body"  # the body of a one-cell :::{solution} directive
TAG_LINK = "nb-solution-link"  # where a gated solution was: a link to it
TAG_REFERENCES = "nb-references"  # the References cell
OUR_TAGS = {TAG_SOLUTIONS, TAG_HEADING, TAG_MOVED, TAG_FIRST, TAG_LAST, TAG_BODY, TAG_LINK,
            TAG_REFERENCES}  # fmt: skip
COLLAPSED = "jp-MarkdownHeadingCollapsed"
SOLUTIONS_HEADING = "## Solutions"
REFERENCES_HEADING = "## References"

GATED_START = re.compile(r"\A:::\{solution-start\} ([\w-]+)\n:class: dropdown\n:::(?:\n\n(.*))?\Z",
                         re.S)  # fmt: skip
GATED_END = re.compile(r"\A(?:(.*)\n\n)?:::\{solution-end\}\n:::\Z", re.S)
ONE_CELL = re.compile(
    r"(?:\A|\n\n):::\{solution\} ([\w-]+)\n:class: dropdown\n\n(.*?)\n:::(?=\n|\Z)", re.S
)

# --- the roles and their notebook form ------------------------------------------------------
CITE = re.compile(r"\{cite:([pt])\}`([^`]+)`")
PY_ROLE = re.compile(r"\{py:(func|class|data|meth|attr|obj|mod)\}`([^`<]+?)(?: <([^`>]+)>)?`")
DOC_ROLE = re.compile(r"\{doc\}`(?:([^`<]+?) <)?([^`<>]+?)>?`")
EQ_ROLE = re.compile(r"\{eq\}`([^`]+)`")
PRF_ROLE = re.compile(r"\{prf:ref\}`([^`]+)`")
REF_ROLE = re.compile(r"\{ref\}`(?:([^`<]+?) <)?([^`<>]+?)>?`")
# A labelled section: "(label)=" on the line before its heading.
SECTION_LABEL = re.compile(r"^\(([\w-]+)\)=\n#+ (.+)$", re.M)
# A labelled display equation: "$$" alone on a line, lines not starting with "$$", then
# "$$ (label)". Group 1 is the body (with its last newline), group 2 the label.
LABELLED_MATH = re.compile(r"^\$\$\n((?:(?!\$\$).*\n)*?)\$\$ \(([\w-]+)\)$", re.M)
# A numbered directive (sphinx-proof's, or an exercise) and its options; proofs have no number.
NUMBERED_DIRECTIVE = re.compile(r"^(:{3,})\{(prf:(?!proof\})\w+|exercise)\}.*\n((?::\w+:.*\n?)*)",
                                re.M)  # fmt: skip
OPTION_LABEL = re.compile(r"^:label: ([\w-]+)", re.M)

_P_ITEM = r"\[[^\[\]]+?, \d{4}[a-z]?\]\(#ref-[\w-]+\)"  # [Author, 2018](#ref-key)
NB_CITE_P = re.compile(rf"\(({_P_ITEM}(?:; {_P_ITEM})*)\)")
NB_CITE_T = re.compile(r"\[[^\[\]]+? \(\d{4}[a-z]?\)\]\(#ref-([\w-]+)\)")
NB_REF_KEY = re.compile(r"\(#ref-([\w-]+)\)")
NB_API = re.compile(r"\[`([^`]+)`\]\(#api-([\w-]+)\)")
NB_DOC = re.compile(r"\[([^\[\]]+)\]\(((?:\.\./)*[\w./-]+?)\.ipynb\)")
NB_SECTION = re.compile(r"\[([^\[\]]+)\]\(#([\w-]+)\)")  # [title](#label), a labelled section
NB_EQ = re.compile(r"\[\((\d+(?:\.\d+)*)\)\]\(#(eq-[\w-]+)\)")

NB_TAG = re.compile(r" \\tag\{\d+(?:\.\d+)*\}\Z")
NB_ENUMERATOR = re.compile(r"^:enumerator: \d+(?:\.\d+)*\n", re.M)
# jupyterlab-myst numbers every display equation (1), (2), ...; the website numbers only the
# labelled ones, per chapter. This front matter of the first cell turns mystmd's numbering of
# equations off; each labelled equation shows its website number with \tag.
FRONT_MATTER = "---\nnumbering:\n  equation: false\n---\n"
NB_LINK_PARA = re.compile(
    r"(\A|\n\n)\*Solution:\* \[[^\]]*\]\(#solution-([\w-]+)\)[^\n]*(?=\n\n|\Z)"
)

# Whether sphinx-proof numbers all its directives with one counter per chapter (Theorem 3.1,
# Lemma 3.2) or each kind with its own (Theorem 3.1, Lemma 3.1).
SHARED_PRF_COUNTER = False
# Sphinx-proof's names for its directives (what the site prints before the number).
PRF_NAMES = {
    "theorem": "Theorem", "proposition": "Proposition", "lemma": "Lemma",
    "definition": "Definition", "corollary": "Corollary", "example": "Example",
    "remark": "Remark", "conjecture": "Conjecture", "property": "Property",
    "observation": "Observation", "algorithm": "Algorithm", "axiom": "Axiom",
    "criterion": "Criterion", "assumption": "Assumption", "notation": "Notation",
}  # fmt: skip


NB_PRF = re.compile(rf"\[({'|'.join(PRF_NAMES.values())}) (\d+(?:\.\d+)*)\]\(#([\w-]+)\)")


def _src(cell: dict) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else source


def _tags(cell: dict) -> list[str]:
    return list(cell.get("metadata", {}).get("tags", []))


def _set_tags(cell: dict, tags: list[str]) -> None:
    if tags:
        cell.setdefault("metadata", {})["tags"] = tags
    else:
        cell.get("metadata", {}).pop("tags", None)


def _md(source: str, tags: list[str], collapsed: bool = False, folded: bool = False) -> dict:
    cell = {"cell_type": "markdown", "metadata": {"tags": tags} if tags else {}, "source": source}
    if collapsed:
        cell["metadata"][COLLAPSED] = True
    if folded:
        _fold(cell)
    return cell


def _fold(cell: dict) -> None:
    """Fold a solution's prose. JupyterLab opens a collapsed heading when Shift+Enter reaches a
    cell under it; the prose stays folded even then. A folded cell shows its first line, so the
    text starts with an empty line (which the rendered Markdown ignores)."""
    cell["metadata"]["jupyter"] = {"source_hidden": True}
    cell["source"] = "\n" + _src(cell).removeprefix("\n")


def _unfold(text: str) -> str:
    return text.removeprefix("\n")


# --- bibliography ---------------------------------------------------------------------------
def load_bibliography(path: Path) -> dict[str, dict]:
    """Each entry of ``references.bib`` as {"authors": [(first, last)], "year", "text"}."""
    from pybtex.database import parse_file

    data = parse_file(str(path))
    entries = {}
    for key, entry in data.entries.items():
        people = [
            (_latex(" ".join(p.first_names + p.middle_names)),
             _latex(" ".join(p.prelast_names + p.last_names)))
            for p in entry.persons.get("author", [])
        ]  # fmt: skip
        fields = {k.lower(): _latex(str(v)) for k, v in entry.fields.items()}
        entries[key] = {"authors": people, "year": fields.get("year", ""), "fields": fields}
    return entries


def _latex(text: str) -> str:
    import latexcodec  # noqa: F401  (registers the "latex" codec)

    return text.encode("utf-8").decode("latex").replace("{", "").replace("}", "")


def author_label(entry: dict) -> str:
    """The author part of an author-year citation, as sphinxcontrib-bibtex writes it."""
    last = [p[1] for p in entry["authors"]]
    if len(last) == 1:
        return last[0]
    if len(last) == 2:
        return f"{last[0]} and {last[1]}"
    return f"{last[0]} et al."


def _reference_entry(key: str, entry: dict) -> str:
    names = [f"{last}, {first}".strip(", ") for first, last in entry["authors"]]
    authors = names[0] if len(names) == 1 else ", ".join(names[:-1]) + ", and " + names[-1]
    f = entry["fields"]
    where = f.get("journal") or f.get("booktitle") or f.get("howpublished") or f.get("note", "")
    parts = [f"{authors} ({entry['year']}). {f.get('title', '')}."]
    if where:
        parts.append(f"*{where}*.")
    return f"(ref-{key})=\n" + " ".join(parts)


# --- the library's names --------------------------------------------------------------------
def api_summary(target: str) -> str:
    """The first line of the docstring of ``target`` (a dotted name inside infonce_lib)."""
    import importlib
    import inspect

    module, _, attr = target.rpartition(".")
    try:
        obj = getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError):
        obj = importlib.import_module(target)
    doc = (inspect.getdoc(obj) or "").strip().split("\n\n")[0].replace("\n", " ")
    doc = re.sub(r":math:`([^`]*)`", r"$\1$", doc)  # reStructuredText to Markdown
    doc = re.sub(r":\w+:`~?([^`]*)`", r"`\1`", doc)
    return re.sub(r"``([^`]*)``", r"`\1`", doc)


def _api_role(target: str) -> str:
    import importlib
    import inspect

    module, _, attr = target.rpartition(".")
    try:
        obj = getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError):
        return "mod"
    return "class" if inspect.isclass(obj) else "func"


def _anchor(target: str) -> str:
    return "api-" + target.replace(".", "-")


# --- numbering, as the website numbers ------------------------------------------------------
def _directive_numbers(nb: dict, chapter: int):
    """(cell index, match, kind, number, label) of each numbered item, in reading order."""
    counters: dict[str, int] = {}
    for index, cell in enumerate(nb["cells"]):
        if cell["cell_type"] != "markdown":
            continue
        text = _src(cell)
        events = [(m.start(), m, "eq", m.group(2)) for m in LABELLED_MATH.finditer(text)]
        for m in NUMBERED_DIRECTIVE.finditer(text):
            label = OPTION_LABEL.search(m.group(3))
            kind = m.group(2).removeprefix("prf:")
            events.append((m.start(), m, kind, label and label.group(1)))
        for _, m, kind, label in sorted(events, key=lambda e: e[0]):
            counter = "prf" if kind in PRF_NAMES and SHARED_PRF_COUNTER else kind
            counters[counter] = counters.get(counter, 0) + 1
            yield index, m, kind, f"{chapter}.{counters[counter]}", label


def _add_enumerators(nb: dict, chapter: int) -> None:
    """Give each numbered directive its website number (``:enumerator:``, which mystmd reads)."""
    todo: dict[int, list] = {}
    for index, m, kind, number, _ in _directive_numbers(nb, chapter):
        if kind != "eq":
            end_of_line = m.start() + len(m.group(0).split("\n")[0])
            todo.setdefault(index, []).append((end_of_line, number))
    for index, places in todo.items():
        text = _src(nb["cells"][index])
        for end_of_line, number in sorted(places, reverse=True):
            text = f"{text[:end_of_line]}\n:enumerator: {number}{text[end_of_line:]}"
        nb["cells"][index]["source"] = text


def numbering(nb: dict, chapter: int) -> dict[str, str]:
    """label -> what the website shows: "2.1" for equations, "Theorem 2.1", "Exercise 2.1".

    Sphinx (numfig, one level of section numbers) numbers labelled equations, sphinx-proof's
    directives and the exercises per chapter, in order of appearance.
    """
    names: dict[str, str] = {}
    for _, _, kind, number, label in _directive_numbers(nb, chapter):
        if label is None:
            continue
        if kind == "eq":
            names[label] = number
        elif kind == "exercise":
            names[label] = f"Exercise {number}"
        else:
            names[label] = f"{PRF_NAMES.get(kind, kind.title())} {number}"
    return names


# --- to the notebook form -------------------------------------------------------------------
def section_titles(cells: list[dict]) -> dict[str, str]:
    """Each labelled section's title, by label (what {ref}`label` prints on the website)."""
    return {
        m.group(1): m.group(2).strip()
        for c in cells
        if c["cell_type"] == "markdown"
        for m in SECTION_LABEL.finditer(_src(c))
    }


def _convert_text(
    text: str, bib: dict, numbers: dict, cited: dict, used: dict, titles: dict
) -> str:
    def cite(m: re.Match) -> str:
        keys = [k.strip() for k in m.group(2).split(",")]
        for key in keys:
            if key not in bib:
                raise KeyError(f"{{cite}} key {key!r} is not in references.bib")
            cited[key] = True
        if m.group(1) == "t":
            return " and ".join(
                f"[{author_label(bib[k])} ({bib[k]['year']})](#ref-{k})" for k in keys
            )
        inner = "; ".join(f"[{author_label(bib[k])}, {bib[k]['year']}](#ref-{k})" for k in keys)
        return f"({inner})"

    def api(m: re.Match) -> str:
        text, target = m.group(2), m.group(3) or m.group(2)
        if m.group(1) != _api_role(target):
            raise ValueError(f"{m.group(0)}: write {{py:{_api_role(target)}}} for {target}")
        used[target] = True
        return f"[`{text}`]({'#' + _anchor(target)})"

    def doc(m: re.Match) -> str:
        text, target = m.group(1) or m.group(2), m.group(2)
        if not re.fullmatch(r"[\w-]+", target):
            raise ValueError(
                f"{m.group(0)}: a notebook can link to another chapter (a notebook beside it), "
                "not to a page of the website; name the page in words"
            )
        return f"[{text}]({target}.ipynb)"

    def eq(m: re.Match) -> str:
        return f"[({numbers[m.group(1)]})](#{m.group(1)})"

    def prf(m: re.Match) -> str:
        return f"[{numbers[m.group(1)]}](#{m.group(1)})"

    def ref(m: re.Match) -> str:
        label = m.group(2)
        if label not in titles:
            raise ValueError(f"{m.group(0)}: a notebook can link to a section of its own only")
        return f"[{m.group(1) or titles[label]}](#{label})"

    def tag(m: re.Match) -> str:
        body = NB_TAG.sub("", m.group(1).rstrip("\n"))
        return f"$$\n{body} \\tag{{{numbers[m.group(2)]}}}\n$$ ({m.group(2)})"

    text = CITE.sub(cite, text)
    text = PY_ROLE.sub(api, text)
    text = DOC_ROLE.sub(doc, text)
    text = EQ_ROLE.sub(eq, text)
    text = PRF_ROLE.sub(prf, text)
    text = REF_ROLE.sub(ref, text)
    return LABELLED_MATH.sub(tag, text)


def _solution_link(label: str, numbers: dict) -> str:
    name = numbers.get(label, "the exercise")
    return (
        f"*Solution:* [{name}, solution](#solution-{label}) at the end of the chapter, under a "
        "collapsed heading, its cells folded: open them when you want to read it."
    )


def _heading(label: str, numbers: dict) -> dict:
    name = numbers.get(label, label)
    return _md(f"(solution-{label})=\n### Solution to {name}", [TAG_HEADING], True)


def _move_solutions(cells: list[dict], numbers: dict) -> tuple[list[dict], list[dict]]:
    """Take the solutions out of ``cells``: (the cells left, the Solutions section's cells)."""
    kept: list[dict] = []
    moved: list[dict] = []
    i = 0
    while i < len(cells):
        cell = cells[i]
        text = _src(cell) if cell["cell_type"] == "markdown" else ""
        start = GATED_START.match(text)
        if start:
            label, first = start.group(1), start.group(2)
            j = i + 1
            while j < len(cells) and not (
                cells[j]["cell_type"] == "markdown" and GATED_END.match(_src(cells[j]))
            ):
                j += 1
            if j == len(cells):
                raise ValueError(f"{{solution-start}} {label} has no {{solution-end}}")
            moved.append(_heading(label, numbers))
            if first:
                moved.append(_md(first, [TAG_MOVED, TAG_FIRST], folded=True))
            for inner in cells[i + 1 : j]:
                inner = copy.deepcopy(inner)
                _set_tags(inner, [*_tags(inner), TAG_MOVED])
                if inner["cell_type"] == "code":
                    inner["metadata"]["jupyter"] = {"source_hidden": True, "outputs_hidden": True}
                else:
                    _fold(inner)
                moved.append(inner)
            last = GATED_END.match(_src(cells[j])).group(1)
            if last:
                moved.append(_md(last, [TAG_MOVED, TAG_LAST], folded=True))
            kept.append(_md(_solution_link(label, numbers), [TAG_LINK]))
            i = j + 1
            continue
        if ONE_CELL.search(text):
            cell = copy.deepcopy(cell)

            def cut(m: re.Match) -> str:
                moved.append(_heading(m.group(1), numbers))
                moved.append(_md(m.group(2), [TAG_MOVED, TAG_BODY], folded=True))
                sep = "\n\n" if m.group(0).startswith("\n\n") else ""
                return sep + _solution_link(m.group(1), numbers)

            cell["source"] = ONE_CELL.sub(cut, text)
        kept.append(cell)
        i += 1
    return kept, moved


def _references_cell(cited: dict, used: dict, bib: dict) -> dict | None:
    parts = [REFERENCES_HEADING]
    if cited:
        order = sorted(cited, key=lambda k: (author_label(bib[k]).lower(), bib[k]["year"], k))
        parts.append("Works cited in this chapter:")
        parts.extend(_reference_entry(k, bib[k]) for k in order)
    if used:
        parts.append(
            "Names from the book's library, `infonce_lib` (imported as `il`), used in this "
            "chapter; `help(il.name)` shows the full description, and the website's API "
            "reference lists them all:"
        )
        parts.extend(
            f"({_anchor(t)})=\n`{t.replace('infonce_lib.', 'il.', 1)}`: {api_summary(t)}"
            for t in sorted(used, key=str.lower)
        )
    if len(parts) == 1:
        return None
    return _md("\n\n".join(parts), [TAG_REFERENCES])


def to_notebook(nb: dict, chapter: int, bib: dict) -> dict:
    """The notebook-reader form of chapter ``chapter`` (idempotent; see the module docstring)."""
    nb = to_site(nb)  # from whatever mix of forms, to the roles
    numbers = numbering(nb, chapter)
    _add_enumerators(nb, chapter)
    cells, moved = _move_solutions(nb["cells"], numbers)
    cited: dict = {}
    used: dict = {}
    titles = section_titles(nb["cells"])
    for cell in [*cells, *moved]:
        if cell["cell_type"] == "markdown":
            cell["source"] = _convert_text(_src(cell), bib, numbers, cited, used, titles)
    if moved:
        cells.append(_md(SOLUTIONS_HEADING, [TAG_SOLUTIONS], True))
        cells.extend(moved)
    references = _references_cell(cited, used, bib)
    if references is not None:
        cells.append(references)
    first = next(c for c in cells if c["cell_type"] == "markdown")
    first["source"] = FRONT_MATTER + _src(first)
    nb = dict(nb)
    nb["cells"] = cells
    return nb


# --- back to the roles ----------------------------------------------------------------------
def _restore_text(text: str, titles: dict) -> str:
    def cite_p(m: re.Match) -> str:
        return "{cite:p}`" + ",".join(NB_REF_KEY.findall(m.group(1))) + "`"

    def api(m: re.Match) -> str:
        target = m.group(2).replace("-", ".")
        role = _api_role(target)
        return f"{{py:{role}}}`{m.group(1)}`" if m.group(1) == target else (
            f"{{py:{role}}}`{m.group(1)} <{target}>`")  # fmt: skip

    def doc(m: re.Match) -> str:
        text, target = m.group(1), m.group(2)
        return f"{{doc}}`{target}`" if text == target else f"{{doc}}`{text} <{target}>`"

    text = NB_CITE_P.sub(cite_p, text)
    text = NB_CITE_T.sub(lambda m: "{cite:t}`" + m.group(1) + "`", text)
    text = NB_API.sub(api, text)
    text = NB_DOC.sub(doc, text)
    text = NB_EQ.sub(lambda m: "{eq}`" + m.group(2) + "`", text)
    text = NB_ENUMERATOR.sub("", text.removeprefix(FRONT_MATTER))
    text = NB_PRF.sub(lambda m: "{prf:ref}`" + m.group(3) + "`", text)

    def ref(m: re.Match) -> str:
        shown, label = m.group(1), m.group(2)
        if label not in titles:
            return m.group(0)
        return f"{{ref}}`{label}`" if shown == titles[label] else f"{{ref}}`{shown} <{label}>`"

    text = NB_SECTION.sub(ref, text)
    return LABELLED_MATH.sub(
        lambda m: f"$$\n{NB_TAG.sub('', m.group(1).rstrip(chr(10)))}\n$$ ({m.group(2)})", text
    )


def _strip_ours(cell: dict) -> dict:
    cell = copy.deepcopy(cell)
    _set_tags(cell, [t for t in _tags(cell) if t not in OUR_TAGS])
    cell.get("metadata", {}).pop(COLLAPSED, None)
    if cell["cell_type"] == "markdown":
        cell["metadata"].pop("jupyter", None)
        cell["source"] = _unfold(_src(cell))
    if cell["cell_type"] == "code":
        cell["metadata"].pop("jupyter", None)
        if {"hide-input", "remove-input", "remove-cell"} & set(_tags(cell)):
            cell["metadata"]["jupyter"] = {"source_hidden": True}
    return cell


def _solution_groups(cells: list[dict]) -> dict[str, list[dict]]:
    groups: dict[str, list[dict]] = {}
    label = None
    for cell in cells:
        tags = _tags(cell)
        if TAG_HEADING in tags:
            label = re.match(r"\(solution-([\w-]+)\)=", _src(cell)).group(1)
            groups[label] = []
        elif TAG_MOVED in tags and label is not None:
            groups[label].append(cell)
    return groups


def _gated(label: str, group: list[dict]) -> list[dict]:
    first = [c for c in group if TAG_FIRST in _tags(c)]
    last = [c for c in group if TAG_LAST in _tags(c)]
    inner = [_strip_ours(c) for c in group if not {TAG_FIRST, TAG_LAST} & set(_tags(c))]
    start = f":::{{solution-start}} {label}\n:class: dropdown\n:::"
    if first:
        start += "\n\n" + _unfold(_src(first[0]))
    end = ":::{solution-end}\n:::"
    if last:
        end = _unfold(_src(last[0])) + "\n\n" + end
    return [_md(start, []), *inner, _md(end, [])]


def to_site(nb: dict) -> dict:
    """The book's own markup of a chapter: the inverse of ``to_notebook``."""
    cells = nb["cells"]
    groups = _solution_groups(cells)
    out: list[dict] = []
    for cell in cells:
        tags = set(_tags(cell))
        if tags & {TAG_SOLUTIONS, TAG_HEADING, TAG_MOVED, TAG_REFERENCES}:
            continue
        if TAG_LINK in tags:
            label = NB_LINK_PARA.search(_src(cell)).group(2)
            group = groups.pop(label)
            out.extend(_gated(label, group))
            continue
        cell = copy.deepcopy(cell)
        if cell["cell_type"] == "markdown":
            text = _src(cell)

            def put_back(m: re.Match) -> str:
                body = _unfold(_src(groups.pop(m.group(2))[0]))
                return f"{m.group(1)}:::{{solution}} {m.group(2)}\n:class: dropdown\n\n{body}\n:::"

            cell["source"] = NB_LINK_PARA.sub(put_back, text)
        out.append(cell)
    titles = section_titles(out)
    for cell in out:
        if cell["cell_type"] == "markdown":
            cell["source"] = _restore_text(_src(cell), titles)
    if groups:
        raise ValueError(f"solutions with no link from their exercise: {sorted(groups)}")
    nb = dict(nb)
    nb["cells"] = out
    return nb


# --- Sphinx ---------------------------------------------------------------------------------
def source_read(app, docname: str, source: list[str]) -> None:
    """Give myst-nb each chapter in the book's own markup."""
    if not str(app.env.doc2path(docname)).endswith(".ipynb"):
        return
    nb = json.loads(source[0])
    source[0] = json.dumps(to_site(nb), ensure_ascii=False, indent=1)


def setup(app):
    app.connect("source-read", source_read)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}


# --- what moving the solutions may break (tools/notebooks.py convert prints it) -------------
def _names(source: str) -> tuple[set[str], set[str]]:
    """(names read, names bound) by a code cell; magics and shell lines are ignored."""
    import ast

    lines = [ln for ln in source.splitlines() if not ln.lstrip().startswith(("%", "!"))]
    try:
        tree = ast.parse("\n".join(lines))
    except SyntaxError:
        return set(), set()
    read, bound = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (read if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound.add(node.name)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            bound.update((a.asname or a.name).split(".")[0] for a in node.names)
    return read, bound


def moved_name_warnings(nb: dict) -> list[str]:
    """Where running a chapter's solutions at its end, not after their exercises, may change
    what they compute or break a later cell (``nb`` in the book's own markup)."""
    cells = nb["cells"]
    warnings = []
    i = 0
    while i < len(cells):
        start = GATED_START.match(_src(cells[i])) if cells[i]["cell_type"] == "markdown" else None
        if not start:
            i += 1
            continue
        j = i + 1
        while not (cells[j]["cell_type"] == "markdown" and GATED_END.match(_src(cells[j]))):
            j += 1
        read, bound = set(), set()
        for cell in cells[i + 1 : j]:
            if cell["cell_type"] == "code":
                r, b = _names(_src(cell))
                read |= r - bound
                bound |= b
        for k in range(j + 1, len(cells)):
            if cells[k]["cell_type"] != "code":
                continue
            r, b = _names(_src(cells[k]))
            if read & b:
                warnings.append(f"solution {start.group(1)} reads {sorted(read & b)}, which "
                                f"cell {k} (after it) binds again")  # fmt: skip
            if bound & r:
                warnings.append(f"solution {start.group(1)} binds {sorted(bound & r)}, which "
                                f"cell {k} (after it) reads")  # fmt: skip
        i = j + 1
    return warnings
