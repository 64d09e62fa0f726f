"""tools/seeds.py (``make seeds``): a check that fails for some seeds is found and counted."""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import seeds  # noqa: E402  (tools/seeds.py)


def test_seed_ranges_parse():
    assert seeds.parse_seeds("1-10") == list(range(1, 11))
    assert seeds.parse_seeds("1-3,7, 2") == [1, 2, 3, 7]
    with pytest.raises(Exception, match="not a seed range"):
        seeds.parse_seeds("5-2")


def _fixture(tmp_path: Path) -> Path:
    """A notebook whose check fails for odd seeds, a cell tagged to raise that does not, and a
    cell that fails only as a consequence (a name the failed check never defined)."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "infonce",
        "display_name": "Python 3",
        "language": "python",
    }
    raising = nbformat.v4.new_code_cell("1 + 1")
    raising.metadata["tags"] = ["raises-exception"]
    nb.cells = [
        nbformat.v4.new_code_cell("import infonce_lib as il\nSEED = il.book_seed()"),
        nbformat.v4.new_code_cell("x = SEED % 2\nassert x == 0, f'odd seed {SEED}'\nw = x"),
        nbformat.v4.new_code_cell("assert SEED != 3"),
        raising,
        nbformat.v4.new_code_cell("print(w)"),
    ]
    path = tmp_path / "fixture.ipynb"
    nbformat.write(nb, path)
    return path


def test_failing_statements_are_reported_with_their_seeds(tmp_path):
    path = _fixture(tmp_path)
    runs = {}
    for seed in (1, 2, 3):
        _, _, found, _ = seeds.run_one(path, seed)
        runs[seed] = found
    odd = ("assert x == 0, f'odd seed {SEED}'", "AssertionError: odd seed")
    assert [(f.cell, f.statement, f.error[: len(odd[1])]) for f in runs[1]] == [
        (1, odd[0], odd[1]),
        (3, "(tagged raises-exception)", "raised nothing"),
        (4, "print(w)", "NameError: name 'w' is n"),
    ]
    assert [f.consequence for f in runs[1]] == [False, False, True]
    assert [f.cell for f in runs[2]] == [3]
    assert [f.cell for f in runs[3]] == [1, 2, 3, 4]
    lines, ok = seeds.summarise(str(path), runs, allowed=1)
    assert not ok  # the odd-seed check fails for 2 of 3 seeds, the tagged cell for all
    text = "\n".join(lines)
    assert "[FAIL] cell 1: assert x == 0" in text and "failed for 2 of 3 seeds: 1, 3" in text
    assert "[ok  ] cell 2: assert SEED != 3" in text
    assert "[then] cell 4: print(w)" in text
    # A consequence alone (fails for 2 of 3 seeds) does not fail the verdict.
    only_then = {s: [f for f in found if f.consequence] for s, found in runs.items()}
    assert seeds.summarise(str(path), only_then, allowed=1)[1]
    _, ok = seeds.summarise(str(path), {2: []}, allowed=1)
    assert ok
