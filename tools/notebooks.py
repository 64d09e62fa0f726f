"""Execute the chapter notebooks reproducibly and keep their JSON quiet.

Usage (from the repository root, inside the project's virtual environment)::

    python tools/notebooks.py execute chapters/02_infonce.ipynb   # run in place, then clean
    python tools/notebooks.py check chapters/*.ipynb              # exit 1 if a file is not clean
    python tools/notebooks.py list                                # the notebooks in _toc.yml

``execute`` runs each notebook top to bottom in a fresh kernel from ``chapters/`` with one
BLAS thread (the setting nbval uses), stores the outputs, and normalises the file: no execution
timestamps, no machine-specific metadata, execution counts 1, 2, 3, ... ``check`` reports any
notebook that carries such metadata or a code cell without stored outputs, so a hand-edited
notebook cannot slip past review. ``make notebooks`` runs ``execute`` on every chapter.
"""

from __future__ import annotations

import os
import platform
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
THREAD_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
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
ALLOWED_CELL_METADATA = {"tags", "mystnb", "editable", "slideshow"}


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
        cell.pop("id", None)
        if cell.cell_type == "code":
            if cell.source.strip():
                count += 1
                cell.execution_count = count
                for out in cell.outputs:
                    if "execution_count" in out:
                        out.execution_count = count
            else:
                cell.execution_count = None
                cell.outputs = []
    nb.nbformat, nb.nbformat_minor = 4, 4
    return nb


def problems(nb: nbformat.NotebookNode) -> list[str]:
    """What keeps a notebook from being clean (an empty list when it is)."""
    found = []
    if nb.metadata.get("kernelspec", {}).get("name") != "python3":
        found.append("kernelspec.name is not python3")
    if nb.metadata.get("language_info", {}).get("pygments_lexer") != "ipython3":
        found.append("language_info.pygments_lexer is not ipython3")
    extra = set(nb.metadata) - {"kernelspec", "language_info"}
    if extra:
        found.append(f"notebook metadata has {sorted(extra)}")
    for i, cell in enumerate(nb.cells):
        extra = set(cell.metadata) - ALLOWED_CELL_METADATA
        if extra:
            found.append(f"cell {i} metadata has {sorted(extra)} (timestamps?)")
        if cell.cell_type == "code" and cell.source.strip() and cell.execution_count is None:
            found.append(f"cell {i} has no stored outputs (not executed)")
    return found


def run(nb: nbformat.NotebookNode, directory: Path) -> None:
    """Execute ``nb`` in place in a fresh kernel started in ``directory``, one BLAS thread."""
    from nbclient import NotebookClient

    for var in THREAD_VARS:
        os.environ[var] = "1"
    client = NotebookClient(
        nb,
        kernel_name="python3",
        timeout=600,
        record_timing=False,
        resources={"metadata": {"path": str(directory.resolve())}},
    )
    client.execute()


def execute(path: Path) -> None:
    """Execute the notebook at ``path`` and store its outputs, normalised."""
    nb = nbformat.read(path, as_version=4)
    run(nb, path.parent)
    nbformat.write(normalise(nb), path)


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
    if len(argv) < 2 or argv[0] not in {"execute", "check", "normalise"}:
        print(__doc__)
        return 2
    command, paths = argv[0], [Path(p) for p in argv[1:]]
    status = 0
    for path in paths:
        if command == "execute":
            execute(path)
            print(f"executed {path}")
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
