"""The chapter notebooks are in the table of contents and carry clean, executed JSON."""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import notebooks  # noqa: E402  (tools/notebooks.py)

ALL_NOTEBOOKS = sorted((ROOT / "chapters").glob("*.ipynb"))


def test_every_chapter_notebook_is_in_the_toc():
    in_toc = {ROOT / p for p in notebooks.toc_notebooks()}
    missing = [p.name for p in ALL_NOTEBOOKS if p not in in_toc]
    assert not missing, f"notebooks nbval would not run (not in _toc.yml): {missing}"


@pytest.mark.parametrize("path", ALL_NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_json_is_clean(path):
    found = notebooks.problems(nbformat.read(path, as_version=4))
    assert not found, f"{path.name}: {found}; run `python tools/notebooks.py execute {path}`"
