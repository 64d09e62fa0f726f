"""The command line, ``python -m infonce_lib reproduce`` (each experiment's own tests live with
its module), and the report it prints."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import types

import pytest

from infonce_lib import Check, Report, cli
from infonce_lib.experiments import EXPERIMENTS


def _experiment(name: str, checks: list[Check]) -> types.ModuleType:
    """A stand-in experiment module on the template, which records that it ran."""
    module = types.ModuleType(name)
    module.NAME, module.SUMMARY, module.CHAPTER = name, f"a {name}", "tests"
    module.ran = 0

    def report():
        module.ran += 1
        return Report({"x": 1.25, "nan": float("nan")}, f"{name} table", checks)

    module.report = report
    return module


@pytest.fixture
def toy(monkeypatch):
    registry = {
        "toy": _experiment("toy", [Check("x is positive", True, "1.25 > 0")]),
        "toy-fail": _experiment("toy-fail", [Check("impossible", False, "as designed")]),
    }
    monkeypatch.setattr(cli, "EXPERIMENTS", registry)
    return registry


def _usage_error(capsys) -> str:
    """The one line a usage error prints (after the usage line, if any)."""
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = [line for line in captured.err.splitlines() if not line.startswith("usage:")]
    assert len(lines) == 1, captured.err
    return lines[0]


def test_list_and_json(toy, tmp_path, capsys):
    assert cli.main(["reproduce", "--list"]) == 0
    assert "toy" in capsys.readouterr().out
    out = tmp_path / "sub" / "r.json"  # a missing parent directory is created
    assert cli.main(["reproduce", "toy", "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "toy table" in printed and "[PASS] x is positive" in printed
    assert json.loads(out.read_text()) == {"x": 1.25, "nan": None}


def test_failed_check_gives_exit_status_1(toy, capsys):
    assert cli.main(["reproduce", "toy-fail"]) == 1
    assert "[FAIL] impossible" in capsys.readouterr().out


def test_unknown_name(toy, capsys):
    assert cli.main(["reproduce", "nope"]) == 2
    assert "unknown experiment 'nope'" in _usage_error(capsys)
    with pytest.raises(ValueError, match="name must be one of"):
        cli.run_experiment("nope")


def test_json_path_whose_parent_is_a_file_is_refused_before_running(toy, tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert cli.main(["reproduce", "toy", "--json", str(blocker / "r.json")]) == 2
    assert "is not a directory" in _usage_error(capsys)
    assert toy["toy"].ran == 0


def test_json_path_that_is_a_directory_is_refused_before_running(toy, tmp_path, capsys):
    assert cli.main(["reproduce", "toy", "--json", str(tmp_path)]) == 2
    assert "is a directory" in _usage_error(capsys)
    assert toy["toy"].ran == 0


@pytest.mark.parametrize("line", [["--json", ""], ["--json="], ["--json", "  "]])
def test_empty_json_path_is_named_as_such_before_running(toy, capsys, line):
    # Path("") is the current directory: without its own check this read "is a directory"
    assert cli.main(["reproduce", "toy", *line]) == 2
    assert "--json needs a file name" in _usage_error(capsys)
    assert toy["toy"].ran == 0


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write anywhere")
def test_json_path_that_is_not_writable_is_refused_before_running(toy, tmp_path, capsys):
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    try:
        assert cli.main(["reproduce", "toy", "--json", str(locked / "r.json")]) == 2
        assert "cannot create files" in _usage_error(capsys)
        assert toy["toy"].ran == 0
    finally:
        locked.chmod(0o700)


def test_json_file_that_is_not_writable_is_refused_before_running(toy, tmp_path, capsys):
    target = tmp_path / "r.json"
    target.write_text("{}")
    target.chmod(0o400)
    if os.access(target, os.W_OK):  # root: the permission bits do not bind
        pytest.skip("this user may write read-only files")
    assert cli.main(["reproduce", "toy", "--json", str(target)]) == 2
    assert "not writable" in _usage_error(capsys)
    assert toy["toy"].ran == 0


def test_list_with_a_name_is_a_usage_error(toy, capsys):
    assert cli.main(["reproduce", "--list", "toy"]) == 2
    assert "--list takes no experiment name" in _usage_error(capsys)
    assert toy["toy"].ran == 0


def test_bare_reproduce_prints_its_own_usage(toy, capsys):
    assert cli.main(["reproduce"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: python -m infonce_lib reproduce")
    assert "needs an experiment NAME" in err


def test_unknown_option_is_one_line(toy, capsys):
    assert cli.main(["reproduce", "toy", "--jsn", "x"]) == 2
    assert "unrecognized arguments" in _usage_error(capsys)
    assert cli.main([]) == 2
    assert "required" in _usage_error(capsys)


def _with_options(toy: dict) -> dict:
    """Options of their own, as bound-family has ``--critic``: toy's ``--size`` (int),
    ``--tag`` (a choice, one of which names the other experiment) and ``--jobs``;
    toy-fail's own ``--tag``, an int. Each report echoes its configuration."""

    def toy_options(parser):
        parser.add_argument("--size", type=int, default=3, help="how big")
        parser.add_argument("--tag", choices=["a", "toy-fail"], default="a")
        parser.add_argument("--jobs", type=int, default=1)

    def fail_options(parser):
        parser.add_argument("--tag", type=int, default=0)

    def echo(module):
        def report(config=None):
            module.ran += 1
            return Report({"config": list(config)}, f"{module.NAME} config {config}", [])

        return report

    for name, add in (("toy", toy_options), ("toy-fail", fail_options)):
        module = toy[name]
        module.add_arguments, module.report = add, echo(module)
        module.config_from_arguments = lambda args: (getattr(args, "size", None), args.tag)
    return toy


def test_help_lists_the_named_experiments_options(toy, capsys):
    _with_options(toy)
    with pytest.raises(SystemExit) as stop:
        cli.main(["reproduce", "--json", "toy-fail", "toy", "--help"])
    assert stop.value.code == 0
    out = capsys.readouterr().out
    assert "options of toy" in out and "--size SIZE" in out and "how big" in out
    helps = (["reproduce", "--help"], ["--help"], ["-h"], ["reproduce", "-h", "toy-fail"])
    for argv in helps:
        with pytest.raises(SystemExit) as stop:
            cli.main(argv)
        assert stop.value.code == 0, argv
        out = capsys.readouterr().out
        assert "--size" not in out and ("options of toy-fail" in out) == ("toy-fail" in argv)


def test_help_of_the_staircase_lists_its_options(capsys):
    with pytest.raises(SystemExit) as stop:
        cli.main(["reproduce", "bound-family", "--help"])
    assert stop.value.code == 0
    out = capsys.readouterr().out
    assert "options of bound-family" in out
    assert all(f"--{o}" in out for o in ("protocol", "critic", "task", "seeds", "steps"))


def test_the_named_experiments_options(toy, capsys, tmp_path):
    _with_options(toy)
    out = tmp_path / "r.json"
    assert cli.main(["reproduce", "--json", str(out), "toy", "--size", "5"]) == 0
    assert json.loads(out.read_text()) == {"config": [5, "a"]}
    # --json's value is not taken for the name, even when it names an experiment
    assert cli.main(["reproduce", f"--js={out}", "toy", "--tag", "toy-fail"]) == 0
    assert json.loads(out.read_text()) == {"config": [3, "toy-fail"]}
    # each experiment's option of the same name, with its own type
    assert cli.main(["reproduce", "toy-fail", "--tag", "3"]) == 0
    assert "toy-fail config (None, 3)" in capsys.readouterr().out
    # an abbreviation that is unique among the named experiment's options
    assert cli.main(["reproduce", "toy-fail", "--j", str(out)]) == 0
    assert json.loads(out.read_text()) == {"config": [None, 0]}


BEFORE = "(an experiment's own options go after its name)"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["toy-fail", "--size", "7"], "unrecognized arguments: --size 7"),
        (["toy-fail", "--jobs", "2"], "unrecognized arguments: --jobs 2"),
        (["toy", "--tag", "3"], "argument --tag: invalid choice"),
        (["toy-fail", "--tag", "x"], "argument --tag: invalid int value"),
        (["toy", "--size", "x"], "invalid int value"),
        (["toy", "--j", "x"], "ambiguous option: --j could match --json, --jobs"),
        (["toyy", "--size", "7"], "unknown experiment 'toyy'"),
        (["toyy", "--help"], "unknown experiment 'toyy'"),  # the name is what is wrong
        (["--size", "7", "toy"], f"unrecognized option '--size' {BEFORE}"),
        (["--size=7", "toyy"], f"unrecognized option '--size=7' {BEFORE}"),
        (["--jsn", "out.json", "toy"], f"unrecognized option '--jsn' {BEFORE}"),
        (["--list", "--size", "3"], f"unrecognized option '--size' {BEFORE}"),
        (["--list", "toy"], "--list takes no experiment name"),
    ],
)
def test_usage_errors_with_options(toy, capsys, argv, message):
    _with_options(toy)
    assert cli.main(["reproduce", *argv]) == 2
    assert message in _usage_error(capsys)
    assert toy["toy"].ran == 0 and toy["toy-fail"].ran == 0


def test_module_entry_point_lists_and_refuses_a_bad_path(tmp_path):
    def run(*args):
        return subprocess.run(
            [sys.executable, "-m", "infonce_lib", "reproduce", *args],
            capture_output=True,
            text=True,
            check=False,
        )

    done = run("--list")
    assert done.returncode == 0, done.stderr
    for name, module in EXPERIMENTS.items():
        assert name in done.stdout and module.CHAPTER in done.stdout
    # The full experiment is not run: the path is refused first (this takes well under 1 s
    # against the experiment's 30 s or more).
    done = run("nce-efficiency", "--json", str(tmp_path))
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr


# ---------------------------------------------------------------- the report


def test_report_checks_text_wraps_and_raise_if_failed_lists_failures():
    ok = Check("a check that holds", True, "evidence")
    bad = Check("a check that does not hold " * 4, False, "the evidence")
    report = Report({}, "", [ok, bad])
    assert not report.passed and report.failed == [bad]
    assert report.checks_text().splitlines() == [ok.line(), bad.line()]
    wrapped = report.checks_text(width=40).splitlines()
    assert max(len(line) for line in wrapped) <= 40
    assert wrapped[0] == "[PASS] a check that holds: evidence"
    assert all(line.startswith(" " * 7) for line in wrapped[2:])
    assert " ".join(w.strip() for w in wrapped[1:]).split() == bad.line().split()
    with pytest.raises(AssertionError, match=r"1 of 2 check\(s\) failed:\n\[FAIL\] a check that"):
        report.raise_if_failed()
    Report({}, "", [ok]).raise_if_failed()  # returns None
    with pytest.raises(ValueError, match="width must be at least 20"):
        report.checks_text(width=5)
    with pytest.raises(TypeError, match="width must be an int"):
        report.checks_text(width=40.0)
