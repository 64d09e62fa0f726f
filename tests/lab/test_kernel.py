"""The README's kernel instructions work in a Jupyter that is not the project's.

A reader who already has Jupyter (or VS Code) runs ``make kernel`` once; the notebooks ask for
the kernel it registers, so their own front end starts the project's .venv Python. This test
does exactly that with a second, bare virtual environment holding only nbclient (no NumPy, no
ipykernel, no kernel of its own): ``make kernel`` into a temporary Jupyter data folder, then
that environment executes the fixture and the first chapter by the kernel name the notebooks
store. It needs ``make`` and PyPI (for the second environment's nbclient, at the locked
version); it is part of ``make lab-test``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent

if shutil.which("make") is None:
    pytest.skip("kernel test SKIPPED: `make` is not on PATH", allow_module_level=True)

RUN = """
import sys
import nbformat
from nbclient import NotebookClient

path, cwd = sys.argv[1], sys.argv[2]
nb = nbformat.read(path, as_version=4)
# No kernel_name: nbclient takes the notebook's own kernelspec, as any front end does.
NotebookClient(nb, timeout=600, resources={"metadata": {"path": cwd}}).execute()
print("ran", path, "with kernel", nb.metadata.kernelspec.name)
"""


@pytest.fixture(scope="module")
def front_end(tmp_path_factory):
    """A bare environment with nbclient only, and a Jupyter data folder with `make kernel` run."""
    base = tmp_path_factory.mktemp("other-jupyter")
    env = dict(os.environ, JUPYTER_DATA_DIR=str(base / "data"), IPYTHONDIR=str(base / "ipy"))
    subprocess.run(["make", "-s", "kernel"], cwd=ROOT, env=env, check=True, capture_output=True)
    spec = json.loads((base / "data" / "kernels" / "infonce" / "kernel.json").read_text())
    assert Path(spec["argv"][0]) == ROOT / ".venv" / "bin" / "python", spec["argv"]

    venv.EnvBuilder(with_pip=True).create(base / "front")
    python = base / "front" / "bin" / "python"
    lock = str(ROOT / "requirements" / "test.txt")
    subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "-c", lock, "nbclient", "nbformat"],
        check=True,
        capture_output=True,
    )
    probe = subprocess.run([str(python), "-c", "import numpy"], capture_output=True)
    assert probe.returncode != 0, "the second environment must not have the book's packages"
    return python, env


@pytest.mark.parametrize(
    "notebook", [HERE / "fixture.ipynb", ROOT / "chapters" / "01_nce.ipynb"], ids=lambda p: p.stem
)
def test_a_separate_jupyter_runs_the_notebook_with_the_registered_kernel(
    front_end, notebook, tmp_path
):
    python, env = front_end
    name = json.loads(notebook.read_text(encoding="utf-8"))["metadata"]["kernelspec"]["name"]
    assert name == "infonce", f"{notebook.name} asks for kernel {name!r}, not the book's"
    copy = tmp_path / notebook.name
    shutil.copy(notebook, copy)
    env = dict(env, OPENBLAS_NUM_THREADS="1")
    result = subprocess.run(
        [str(python), "-c", RUN, str(copy), str(notebook.parent)],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert f"with kernel {name}" in result.stdout
