"""The reproduce command's framework (each experiment's own tests live with its module)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from infonce_lib import reproduce
from infonce_lib.reproduce import Check, Experiment, Report


def _toy():
    return Report(
        results={"x": 1.25, "nan": float("nan")},
        tables="toy table",
        checks=[Check("x is positive", True, "1.25 > 0")],
    )


def _toy_failing():
    return Report(results={}, tables="t", checks=[Check("impossible", False, "as designed")])


@pytest.fixture
def toy_registry(monkeypatch):
    registry = {
        "toy": Experiment("toy", f"{__name__}:_toy", "a toy", "tests"),
        "toy-fail": Experiment("toy-fail", f"{__name__}:_toy_failing", "fails", "tests"),
    }
    monkeypatch.setattr(reproduce, "EXPERIMENTS", registry)
    return registry


def test_list_and_json(toy_registry, tmp_path, capsys):
    assert reproduce.main(["reproduce", "--list"]) == 0
    assert "toy" in capsys.readouterr().out
    out = tmp_path / "r.json"
    assert reproduce.main(["reproduce", "toy", "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "toy table" in printed and "[PASS] x is positive" in printed
    assert json.loads(out.read_text()) == {"x": 1.25, "nan": None}


def test_failed_check_gives_exit_status_1(toy_registry, capsys):
    assert reproduce.main(["reproduce", "toy-fail"]) == 1
    assert "[FAIL] impossible" in capsys.readouterr().out


def test_unknown_name(toy_registry, capsys):
    assert reproduce.main(["reproduce", "nope"]) == 2
    with pytest.raises(ValueError, match="name must be one of"):
        reproduce.run_experiment("nope")


def test_module_entry_point_lists():
    done = subprocess.run(
        [sys.executable, "-m", "infonce_lib", "reproduce", "--list"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    for name in reproduce.EXPERIMENTS:
        assert name in done.stdout
