"""Tests for infonce_lib.report: the records of an experiment's checks and its tables."""

from __future__ import annotations

import numpy as np
import pytest

from infonce_lib import Check, Report, format_table


def test_format_table_names_a_ragged_row():
    # it raised "zip() argument 2 is longer than argument 1"
    with pytest.raises(
        ValueError, match=r"rows\[1\] must have one cell per column \(2 headers\); got 1"
    ):
        format_table(["K", "bound"], [[4, 1.5], [16]])
    with pytest.raises(ValueError, match=r"rows\[0\] .*got 3"):
        format_table(["K", "bound"], [[4, 1.5, 2.0]])
    with pytest.raises(TypeError, match=r"rows\[0\] must be a sequence of cells; got int"):
        format_table(["K"], [4])


def test_format_table_refuses_masked_rows_and_reads_arrays():
    masked = np.ma.masked_array([[1.0, 2.0]], mask=[[False, True]])
    with pytest.raises(TypeError, match=r"rows is a numpy\.ma\.MaskedArray"):
        format_table(["a", "b"], masked)  # its masked cell was printed as "--"
    out = format_table(["a", "b"], np.array([[1.0, 2.0]]), [".1f", ".2f"])
    assert out.splitlines()[-1] == " 1.0  2.00"


def test_report_passes_only_when_every_check_does():
    report = Report({}, "", [Check("a", True), Check("b", np.bool_(False), "why")])
    assert not report.passed and [c.description for c in report.failed] == ["b"]
    with pytest.raises(AssertionError, match=r"1 of 2 check\(s\) failed"):
        report.raise_if_failed()
