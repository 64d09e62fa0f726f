"""Execute the chapter notebooks reproducibly and keep their JSON quiet.

Usage (from the repository root, inside the project's virtual environment)::

    python tools/notebooks.py execute chapters/02_infonce.ipynb   # run in place, then clean
    python tools/notebooks.py verify chapters/*.ipynb             # re-run, compare the prose
    python tools/notebooks.py check chapters/*.ipynb              # exit 1 if a file is not clean
    python tools/notebooks.py list                                # the notebooks in _toc.yml
    python tools/notebooks.py convert chapters/*.ipynb            # markup for notebook readers

``execute`` runs each notebook top to bottom in a fresh kernel from ``chapters/`` with one
BLAS thread (the setting nbval uses), stores the outputs, and normalises the file: no execution
timestamps, no machine-specific metadata, execution counts 1, 2, 3, ..., and consecutive
stream outputs of one name merged (how a kernel splits printed text into messages depends on
timing). ``check`` reports any notebook that carries such metadata, unmerged streams or a code
cell without stored outputs, so a hand-edited notebook cannot slip past review.
``make notebooks`` runs ``execute`` on every chapter.

``convert`` rewrites each chapter's markdown in the form JupyterLab and JupyterLite readers
need (citations as author-year text, API references as names, links to ``.ipynb`` files,
equation and theorem numbers as on the website, solutions at the end of the chapter under
collapsed headings); the book turns that form back into its roles when it builds the site.
See ``_ext/notebook_markup.py``. It is idempotent; after it, run ``execute`` (solutions now run
at the end of the chapter).

Numbers in the prose are MyST inline expressions, ``{eval}`name```, where ``name`` is a
variable set by an earlier code cell. While executing, after the code cells that precede a
markdown cell have run, ``execute`` asks the kernel for the value of each of that cell's
expressions (an ``execute_request`` with ``user_expressions``, as the jupyterlab-myst
extension does when a reader runs the cell) and stores the replies in the cell's metadata,
``user_expressions``. The book renders those stored values (``_ext/stored_expressions.py``),
and JupyterLab with jupyterlab-myst shows them too. nbval compares code cells only, so
``verify`` re-executes a copy of each notebook and fails if any stored value in the prose
differs from what the code gives today, or if an expression is not stored.
"""

from __future__ import annotations

import copy
import itertools
import os
import platform
import re
import sys
import time
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
THREAD_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
# The arithmetic of the stored outputs on any x86-64 processor with AVX2 (the Makefile exports
# the same; see its comment): OpenBLAS's Haswell kernels and NumPy without its AVX-512 loops.
ARITHMETIC_PINS = {
    "OPENBLAS_CORETYPE": "Haswell",
    "NPY_DISABLE_CPU_FEATURES": "X86_V4 AVX512_ICL AVX512_SPR",
}


def pin_arithmetic(environ=os.environ) -> None:
    """One BLAS thread, and on x86-64 with AVX2 the pins above, for the kernels started next."""
    for var in THREAD_VARS:
        environ[var] = "1"
    if platform.machine() in ("x86_64", "AMD64") and _has_avx2():
        environ.update(ARITHMETIC_PINS)


def _has_avx2() -> bool:
    try:
        return " avx2 " in Path("/proc/cpuinfo").read_text().replace("\n", " ")
    except OSError:
        return False


# The kernel the notebooks ask for: `make` registers it inside .venv, `make kernel` for the
# reader's own Jupyter or VS Code. Both dicts are exactly what JupyterLab writes when it
# connects that kernel, so opening a chapter leaves it unmodified (for the Python version below).
KERNELSPEC = {"name": "infonce", "display_name": "Python 3 (infonce)", "language": "python"}
LANGUAGE_INFO = {
    "name": "python",
    "version": platform.python_version(),  # the Python that produced the stored outputs
    "pygments_lexer": "ipython3",
    "codemirror_mode": {"name": "ipython", "version": 3},
    "file_extension": ".py",
    "mimetype": "text/x-python",
    "nbconvert_exporter": "python",
}
ALLOWED_CELL_METADATA = {"tags", "mystnb", "editable", "slideshow", "user_expressions", "jupyter",
                         "jp-MarkdownHeadingCollapsed"}  # fmt: skip
HIDDEN_INPUT_TAGS = {"hide-input", "remove-input", "remove-cell"}
# A cell of a solution (moved to the end of its chapter by `convert`) keeps its code and
# output, or its prose, hidden in JupyterLab until the reader opens them.
SOLUTION_TAG = "nb-solution"
SOLUTION_HIDDEN = {"source_hidden": True, "outputs_hidden": True}
# {eval}`name` or {eval}`name[key]`: a variable, or one entry of a dict of prose values keyed
# by a number or a string literal (values computed in a loop). Nothing that calls code.
EVAL_ROLE = re.compile(r"\{eval\}`([^`]*)`")
NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\[(-?[0-9][0-9.e+-]*|'[^'\\]*')\])?$")


def normalise(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Strip timestamps and machine-specific metadata; number code cells 1, 2, 3, ..."""
    nb.metadata = nbformat.from_dict(
        {"kernelspec": dict(KERNELSPEC), "language_info": dict(LANGUAGE_INFO)}
    )
    count = 0
    for cell in nb.cells:
        cell.metadata = nbformat.from_dict(
            {k: v for k, v in cell.metadata.items() if k in ALLOWED_CELL_METADATA}
        )
        # What the page hides, JupyterLab collapses: the book reads tags, JupyterLab reads
        # jupyter.source_hidden (and nothing else of "jupyter" is kept).
        cell.metadata.pop("jupyter", None)
        hidden = _hidden(cell)
        if hidden:
            cell.metadata["jupyter"] = hidden
        cell.pop("id", None)
        if cell.cell_type == "code":
            if cell.source.strip():
                count += 1
                cell.execution_count = count
                cell.outputs = merge_streams(cell.outputs)
                for out in cell.outputs:
                    if "execution_count" in out:
                        out.execution_count = count
            else:
                cell.execution_count = None
                cell.outputs = []
    nb.nbformat, nb.nbformat_minor = 4, 4
    return nb


def _hidden(cell) -> dict:
    """The ``jupyter`` metadata a cell must carry: what JupyterLab keeps collapsed."""
    tags = set(cell.metadata.get("tags", []))
    if SOLUTION_TAG in tags:  # a solution's prose stays folded too (see notebook_markup._md)
        return dict(SOLUTION_HIDDEN) if cell.cell_type == "code" else {"source_hidden": True}
    return {"source_hidden": True} if HIDDEN_INPUT_TAGS & tags else {}


def _stream_text(output) -> str:
    text = output.get("text", "")
    return "".join(text) if isinstance(text, list) else text


def _same_stream(a, b) -> bool:
    return a.get("output_type") == b.get("output_type") == "stream" and a.get("name") == b.get(
        "name"
    )


def merge_streams(outputs: list) -> list:
    """``outputs`` with each run of consecutive stream outputs of one name (stdout, stderr)
    joined into one, in order.

    How a kernel splits a cell's printing into stream messages depends on when it flushes,
    which depends on timing: the same cell can store one stdout output on one run and two on
    the next. Merged, the stored outputs are the same on every run (what Jupyter shows is
    unchanged; nbval compares streams merged too).
    """
    merged: list = []
    for out in outputs:
        if merged and _same_stream(merged[-1], out):
            merged[-1]["text"] = _stream_text(merged[-1]) + _stream_text(out)
        else:
            merged.append(out)
    return merged


def problems(nb: nbformat.NotebookNode) -> list[str]:
    """What keeps a notebook from being clean (an empty list when it is)."""
    found = []
    if nb.metadata.get("kernelspec") != KERNELSPEC:
        found.append(f"kernelspec is not {KERNELSPEC}")
    if nb.metadata.get("language_info", {}).get("pygments_lexer") != "ipython3":
        found.append("language_info.pygments_lexer is not ipython3")
    extra = set(nb.metadata) - {"kernelspec", "language_info"}
    if extra:
        found.append(f"notebook metadata has {sorted(extra)}")
    for i, cell in enumerate(nb.cells):
        extra = set(cell.metadata) - ALLOWED_CELL_METADATA
        if extra:
            found.append(f"cell {i} metadata has {sorted(extra)} (timestamps?)")
        if _hidden(cell) != dict(cell.metadata.get("jupyter", {})):
            found.append(
                f"cell {i}: jupyter metadata {dict(cell.metadata.get('jupyter', {}))} does not "
                f"match its tags (expected {_hidden(cell)})"
            )
        if cell.cell_type == "code" and cell.source.strip() and cell.execution_count is None:
            found.append(f"cell {i} has no stored outputs (not executed)")
        outputs = cell.get("outputs", [])
        if any(_same_stream(a, b) for a, b in itertools.pairwise(outputs)):
            found.append(f"cell {i}: consecutive stream outputs of one name are not merged")
        stored = {e["expression"] for e in cell.metadata.get("user_expressions", [])}
        missing = [n for n in expressions(cell) if n not in stored]
        if missing:
            found.append(f"cell {i}: no stored value for {{eval}} {missing} (not executed)")
        if "{glue" in cell.source or "myst_nb import glue" in cell.source:
            found.append(f"cell {i} uses myst_nb glue; use {{eval}}`name` (see this module)")
        for entry in cell.metadata.get("user_expressions", []):
            shown = entry["result"].get("data", {}).get("text/plain", "")
            if "\\" in shown:
                found.append(
                    f"cell {i}: {{eval}}`{entry['expression']}` stores {shown}, whose escape "
                    "the page would show as typed; give the value in printable characters"
                )
    return found


def expressions(cell: nbformat.NotebookNode) -> list[str]:
    """The inline expressions of a markdown cell, in order, each once."""
    if cell.cell_type != "markdown":
        return []
    return list(dict.fromkeys(EVAL_ROLE.findall(cell.source)))


def _evaluate(client, names: list[str]) -> list[dict]:
    """Ask the running kernel for ``names`` (user_expressions), as jupyterlab-myst does."""
    from nbclient.util import run_sync

    request = {str(i): name for i, name in enumerate(names)}
    msg_id = client.kc.execute("", silent=True, store_history=False, user_expressions=request)
    reply = run_sync(client.async_wait_for_reply)(msg_id)
    if reply is None or reply["content"].get("status") != "ok":
        raise RuntimeError(f"the kernel did not evaluate {names}")
    answers = reply["content"]["user_expressions"]
    stored = []
    for key, name in request.items():
        result = dict(answers[key])
        if result.get("status") != "ok":
            raise RuntimeError(
                f"{{eval}}`{name}`: {result.get('ename')}: {result.get('evalue')} "
                "(define it in a code cell above the markdown cell that uses it)"
            )
        stored.append({"expression": name, "result": result})
    return stored


def run(nb: nbformat.NotebookNode, directory: Path) -> float:
    """Execute ``nb`` in place in a fresh kernel in ``directory`` (one BLAS thread, pinned).

    Code cells run in order; each markdown cell's inline expressions are evaluated when the
    reader would reach it (after the code cells above it) and stored in its metadata.
    Returns the seconds from the kernel's start to the last cell's end: what a reader who
    opens the notebook and runs every cell waits for (the kernel's shutdown is not counted).
    """
    from nbclient import NotebookClient

    pin_arithmetic()
    start = time.perf_counter()
    client = NotebookClient(
        nb,
        kernel_name=KERNELSPEC["name"],
        timeout=600,
        record_timing=False,
        resources={"metadata": {"path": str(directory.resolve())}},
        shutdown_kernel="immediate",  # the outputs are in: no graceful wait (~0.6 s)
    )
    with client.setup_kernel():
        for index, cell in enumerate(nb.cells):
            if cell.cell_type == "code":
                client.execute_cell(cell, index)
                continue
            names = expressions(cell)
            bad = [n for n in names if not NAME.match(n)]
            if bad:
                raise ValueError(f"cell {index}: {{eval}} takes a name or name[literal], got {bad}")
            if names:
                cell.metadata["user_expressions"] = _evaluate(client, names)
            else:
                cell.metadata.pop("user_expressions", None)
        return time.perf_counter() - start


def prose_differences(stored: nbformat.NotebookNode, fresh: nbformat.NotebookNode) -> list[str]:
    """Where the prose values stored in ``stored`` differ from a fresh execution."""
    found = []
    for index, (a, b) in enumerate(zip(stored.cells, fresh.cells, strict=True)):
        if a.cell_type != "markdown":
            continue
        old = {e["expression"]: e["result"] for e in a.metadata.get("user_expressions", [])}
        new = {e["expression"]: e["result"] for e in b.metadata.get("user_expressions", [])}
        for name in new:
            if name not in old:
                found.append(f"cell {index}: {{eval}}`{name}` has no stored value")
            elif old[name].get("data") != new[name].get("data"):
                was = old[name].get("data", {}).get("text/plain")
                now = new[name].get("data", {}).get("text/plain")
                found.append(f"cell {index}: {{eval}}`{name}` stored {was}, the code gives {now}")
        for name in set(old) - set(new):
            found.append(f"cell {index}: stored value for {name!r}, which the prose no longer uses")
    return found


def verify(path: Path) -> list[str]:
    """Re-execute a copy of the notebook at ``path``; list the prose values that differ."""
    stored = nbformat.read(path, as_version=4)
    fresh = copy.deepcopy(stored)
    run(fresh, path.parent)
    return prose_differences(stored, fresh)


def execute(path: Path) -> None:
    """Execute the notebook at ``path`` and store its outputs, normalised."""
    nb = nbformat.read(path, as_version=4)
    run(nb, path.parent)
    nbformat.write(normalise(nb), path)


def _markup():
    sys.path.insert(0, str(ROOT / "_ext"))
    try:
        import notebook_markup
    finally:
        sys.path.pop(0)
    return notebook_markup


def convert(path: Path) -> bool:
    """Rewrite the chapter at ``path`` in the notebook readers' form; True if it changed."""
    import json

    markup = _markup()
    chapters = [(ROOT / p).resolve() for p in toc_notebooks()]
    if path.resolve() not in chapters:
        raise ValueError(f"{path} is not a chapter of _toc.yml: its number is unknown")
    chapter = chapters.index(path.resolve()) + 1
    bib = markup.load_bibliography(ROOT / "references.bib")
    text = path.read_text(encoding="utf-8")
    nb = json.loads(text)
    for warning in markup.moved_name_warnings(markup.to_site(nb)):
        print(f"{path}: {warning}")
    new = nbformat.writes(nbformat.from_dict(markup.to_notebook(nb, chapter, bib))) + "\n"
    if new != text:
        path.write_text(new, encoding="utf-8")
    return new != text


def toc_notebooks(toc: Path = ROOT / "_toc.yml") -> list[Path]:
    """The notebooks listed in the book's table of contents, in reading order."""
    import yaml

    found: list[Path] = []

    def walk(node) -> None:
        if isinstance(node, dict):
            if "file" in node:
                path = ROOT / f"{node['file']}.ipynb"
                if path.exists():
                    found.append(path.relative_to(ROOT))
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    data = yaml.safe_load(toc.read_text())
    walk({"file": data["root"]})
    walk(data)
    return found


def main(argv: list[str]) -> int:
    if argv[:1] == ["list"]:
        print(" ".join(str(p) for p in toc_notebooks()))
        return 0
    if len(argv) < 2 or argv[0] not in {"execute", "check", "normalise", "verify", "convert"}:
        print(__doc__)
        return 2
    command, paths = argv[0], [Path(p) for p in argv[1:]]
    status = 0
    for path in paths:
        if command == "convert":
            print(f"{'converted' if convert(path) else 'unchanged'} {path}")
        elif command == "execute":
            execute(path)
            print(f"executed {path}")
        elif command == "verify":
            found = verify(path)
            for p in found:
                print(f"{path}: {p}")
            print(f"{path}: {'prose values differ' if found else 'prose values as stored'}")
            status |= bool(found)
        elif command == "normalise":
            nbformat.write(normalise(nbformat.read(path, as_version=4)), path)
        else:
            found = problems(nbformat.read(path, as_version=4))
            for p in found:
                print(f"{path}: {p}")
            status |= bool(found)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
