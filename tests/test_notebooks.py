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


def _md(source, stored=None):
    cell = nbformat.v4.new_markdown_cell(source)
    if stored is not None:
        cell.metadata["user_expressions"] = [
            {"expression": k, "result": {"status": "ok", "data": {"text/plain": v}, "metadata": {}}}
            for k, v in stored.items()
        ]
    return cell


def test_prose_differences_name_each_stale_or_missing_value():
    stored = nbformat.v4.new_notebook(cells=[_md("{eval}`a` and {eval}`b`", {"a": "'1'"})])
    fresh = nbformat.v4.new_notebook(
        cells=[_md("{eval}`a` and {eval}`b`", {"a": "'2'", "b": "'3'"})]
    )
    found = notebooks.prose_differences(stored, fresh)
    assert any("`a` stored '1', the code gives '2'" in f for f in found)
    assert any("`b` has no stored value" in f for f in found)
    assert notebooks.prose_differences(fresh, fresh) == []


def test_problems_report_unstored_expressions_and_glue():
    nb = nbformat.v4.new_notebook(
        cells=[_md("{eval}`a`"), _md("{glue:text}`old`")],
        metadata={"kernelspec": notebooks.KERNELSPEC, "language_info": notebooks.LANGUAGE_INFO},
    )
    found = notebooks.problems(nb)
    assert any("no stored value for {eval} ['a']" in f for f in found)
    assert any("uses myst_nb glue" in f for f in found)


def test_problems_report_a_stored_value_that_would_show_an_escape():
    # A narrow no-break space is not printable to repr(): the text is '65\\u202f536', and the
    # website and JupyterLab would show the backslash; a comma or a plain space is fine.
    nb = nbformat.v4.new_notebook(
        cells=[_md("{eval}`m`", {"m": repr("65\u202f536")}), _md("{eval}`n`", {"n": "'65,536'"})],
        metadata={"kernelspec": notebooks.KERNELSPEC, "language_info": notebooks.LANGUAGE_INFO},
    )
    assert notebooks.problems(nb) == [
        "cell 0: {eval}`m` stores '65\\u202f536', whose escape the page would show as typed; "
        "give the value in printable characters"
    ]


@pytest.mark.parametrize(
    ("expression", "ok"),
    [("x", True), ("cap_text[0.1]", True), ("d['k']", True), ("f()", False), ("a.b", False)],
)
def test_eval_expressions_are_names_or_literal_lookups(expression, ok):
    assert bool(notebooks.NAME.match(expression)) is ok


def test_the_book_renders_stored_values_and_refuses_two_values_for_one_name():
    sys.path.insert(0, str(ROOT / "_ext"))
    import stored_expressions

    nb = nbformat.v4.new_notebook(cells=[_md("{eval}`a`", {"a": "'1'"})])
    assert stored_expressions.stored_expressions(nb)["a"]["data"] == {"text/plain": "'1'"}
    nb.cells.append(_md("{eval}`a`", {"a": "'2'"}))
    with pytest.raises(ValueError, match="two different stored values"):
        stored_expressions.stored_expressions(nb)


def _stream(name, text):
    return nbformat.v4.new_output("stream", name=name, text=text)


def test_normalise_merges_consecutive_streams_of_one_name():
    # A kernel flushed one cell's stdout in two messages: stored as one output, in order;
    # a stderr output between two stdout outputs, or a display between them, keeps them apart.
    display = nbformat.v4.new_output("display_data", data={"text/plain": "fig"})
    split = [_stream("stdout", "a\n"), _stream("stdout", ["b\n", "c\n"]), _stream("stdout", "d")]
    mixed = [_stream("stdout", "x\n"), _stream("stderr", "w\n"), _stream("stdout", "y\n"),
             display, _stream("stdout", "z\n"), _stream("stdout", "!\n")]  # fmt: skip
    cells = [
        nbformat.v4.new_code_cell("print(1)", outputs=split),
        nbformat.v4.new_code_cell("print(2)", outputs=mixed),
    ]
    nb = nbformat.v4.new_notebook(cells=cells)
    assert any("not merged" in f for f in notebooks.problems(nb))
    notebooks.normalise(nb)
    first, second = (cell.outputs for cell in nb.cells)
    assert [(o.name, o.text) for o in first] == [("stdout", "a\nb\nc\nd")]
    assert [(o.get("name"), o.get("text")) for o in second] == [
        ("stdout", "x\n"), ("stderr", "w\n"), ("stdout", "y\n"), (None, None), ("stdout", "z\n!\n"),
    ]  # fmt: skip
    assert not [f for f in notebooks.problems(nb) if "not merged" in f]
    nbformat.validate(nb)


def test_the_makefile_pins_the_same_arithmetic_as_the_notebook_tool():
    """`make nbval` (the Makefile's exports) and tools/notebooks.py must pin the same."""
    makefile = (ROOT / "Makefile").read_text()
    for var, value in notebooks.ARITHMETIC_PINS.items():
        assert f"export {var}" in makefile, var
        line = next(ln for ln in makefile.splitlines() if ln.startswith(f"export {var} "))
        assert line.split(":=", 1)[1].strip() == value, line


@pytest.mark.skipif(not notebooks._has_avx2(), reason="the pins apply to x86-64 with AVX2")
def test_the_pins_reach_openblas_and_numpy():
    import os
    import subprocess

    env = dict(os.environ)
    notebooks.pin_arithmetic(env)
    # NumPy zeroes exactly the named features (on an AVX-512 machine AVX512F itself still
    # reads True; the dispatch targets are what count).
    disabled = notebooks.ARITHMETIC_PINS["NPY_DISABLE_CPU_FEATURES"].split()
    code = (
        "import numpy as np, threadpoolctl as t\n"
        "from numpy._core._multiarray_umath import __cpu_features__ as f\n"
        f"print(*[f[n] for n in {disabled!r}], t.threadpool_info()[0]['architecture'])"
    )
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False"] * len(disabled) + ["Haswell"]
