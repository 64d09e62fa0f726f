"""Tests for infonce_lib._validation, the checks every public function runs at its boundary.

The fuzzer (tests/test_fuzz.py) calls every public function with bad input; these tests pin
the shared policies themselves: what each helper accepts, what it returns, and the words
of its errors.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import infonce_lib as il
from infonce_lib import _validation as v


class _FakeTensor:
    """Stands in for torch.Tensor: the policy looks only at the class's module, so the
    test suite needs no PyTorch. It converts to an array, as a CPU tensor does."""

    __module__ = "torch"

    def __init__(self, data):
        self._data = np.asarray(data, dtype=np.float64)

    def __array__(self, dtype=None, copy=None):
        return self._data

    def __float__(self):
        return float(self._data)


class _FakeParameter(_FakeTensor):
    __module__ = "torch.nn.parameter"


def _matrix(values):
    with warnings.catch_warnings():  # numpy.matrix warns that it is not recommended
        warnings.simplefilter("ignore", PendingDeprecationWarning)
        return np.matrix(values)


# ---------------------------------------------------------------- as_real_array


def test_as_real_array_returns_float64_and_keeps_a_float64_array():
    a = np.arange(6.0).reshape(2, 3)
    assert v.as_real_array(a, "a", ndim=2) is a
    out = v.as_real_array([[1, 2], [3, 4]], "a", ndim=2)
    assert out.dtype == np.float64 and out.shape == (2, 2)
    assert v.as_real_array(np.float32(2.5), "a", ndim=0).dtype == np.float64


@pytest.mark.parametrize(
    ("value", "ndim", "exc", "words"),
    [
        (np.array([True, False]), None, TypeError, ["x", "booleans"]),
        (np.array([1 + 2j]), None, TypeError, ["x", "complex"]),
        (np.array(["a"]), None, TypeError, ["x", "real numbers"]),
        ([[1.0, 2.0], [3.0]], None, ValueError, ["x", "ragged"]),
        (np.zeros((0, 2)), None, ValueError, ["x", "empty"]),
        (np.array([1.0, np.nan, np.inf]), None, ValueError, ["x", "1 NaN and 1 infinite"]),
        (np.zeros(3), 2, ValueError, ["x", "2-D", "(3,)"]),
        (np.zeros(3), (0, 2), ValueError, ["x", "0-D or 2-D"]),
    ],
)
def test_as_real_array_errors_name_the_argument(value, ndim, exc, words):
    with pytest.raises(exc) as info:
        v.as_real_array(value, "x", ndim=ndim)
    for w in words:
        assert w in str(info.value)


def test_as_real_array_empty_when_allowed():
    assert v.as_real_array(np.zeros((0, 3)), "x", ndim=2, allow_empty=True).shape == (0, 3)


def test_masked_arrays_are_refused_with_what_to_pass():
    m = np.ma.masked_array([[1.0, 2.0]], mask=[[False, True]])
    with pytest.raises(TypeError) as info:
        v.as_real_array(m, "Z1", ndim=2)
    msg = str(info.value)
    assert "Z1" in msg and "Z1.filled(" in msg and "Z1.compressed()" in msg
    # a mask with nothing masked is still a masked array: the policy is by type
    with pytest.raises(TypeError, match="MaskedArray"):
        v.as_real_array(np.ma.masked_array([1.0, 2.0]), "x")
    with pytest.raises(TypeError, match="MaskedArray"):
        v.as_real_scalar(np.ma.masked_array(1.0), "t")


def test_numpy_matrix_is_a_plain_2d_array():
    M = _matrix([[1.0, 2.0], [3.0, 4.0]])
    out = v.as_real_array(M, "M", ndim=2)
    assert type(out) is np.ndarray
    np.testing.assert_array_equal(out, [[1.0, 2.0], [3.0, 4.0]])
    assert type(out @ out.T) is np.ndarray and (out * out)[0, 1] == 4.0  # elementwise *


@pytest.mark.parametrize("cls", [_FakeTensor, _FakeParameter])
def test_pytorch_tensors_are_refused_with_what_to_pass(cls):
    t = cls([[1.0, 2.0]])
    for call in (
        lambda: v.as_real_array(t, "Z2", ndim=2),
        lambda: v.as_array(t, "Z2"),
        lambda: v.as_real_scalar(cls(0.5), "Z2"),
    ):
        with pytest.raises(TypeError) as info:
            call()
        assert "Z2.detach().cpu().numpy()" in str(info.value)


def test_a_class_merely_named_like_torch_is_not_refused():
    class NotTorch(_FakeTensor):
        __module__ = "torchvision_like_but_not_torch"

    assert v.as_real_array(NotTorch([1.0]), "x").tolist() == [1.0]


# ---------------------------------------------------------------- scalars and options


@pytest.mark.parametrize("value", [0.5, 2, np.float32(0.5), np.int64(3), np.array(0.25)])
def test_as_real_scalar_accepts_real_numbers(value):
    out = v.as_real_scalar(value, "t")
    assert type(out) is float and out == float(np.asarray(value))


@pytest.mark.parametrize(
    ("value", "exc"),
    [
        (True, TypeError),
        (np.bool_(False), TypeError),
        ("1", TypeError),
        (None, TypeError),
        (1j, TypeError),
        (np.array([1.0, 2.0]), TypeError),
        (math.nan, ValueError),
        (-math.inf, ValueError),
    ],
)
def test_as_real_scalar_refuses(value, exc):
    with pytest.raises(exc, match="temperature"):
        v.as_real_scalar(value, "temperature")


def test_as_positive_scalar_bounds():
    assert v.as_positive_scalar(0.0, "s", allow_zero=True) == 0.0
    with pytest.raises(ValueError, match=r"s must be > 0; got 0.0"):
        v.as_positive_scalar(0.0, "s")
    with pytest.raises(ValueError, match=r"s must be >= 0"):
        v.as_positive_scalar(-1.0, "s", allow_zero=True)


def test_as_int():
    assert v.as_int(np.int32(4), "n", minimum=1) == 4
    with pytest.raises(TypeError, match="n must be an integer"):
        v.as_int(4.0, "n")
    with pytest.raises(TypeError, match="n"):
        v.as_int(True, "n")
    with pytest.raises(ValueError, match="n must be >= 2; got 1"):
        v.as_int(1, "n", minimum=2)


@pytest.mark.parametrize("value", [True, False, np.True_, np.False_])
def test_as_bool_accepts_python_and_numpy_booleans(value):
    out = v.as_bool(value, "flag")
    assert type(out) is bool and out == bool(value)


@pytest.mark.parametrize("value", ["False", "no", "0", "", 0, 1, 1.0, None, np.array([True])])
def test_as_bool_refuses_everything_else(value):
    with pytest.raises(TypeError, match=r"flag must be True or False"):
        v.as_bool(value, "flag")


def test_as_generator():
    g = np.random.default_rng(1)
    assert v.as_generator(g) is g
    assert v.as_generator(np.int64(3)).integers(100) == np.random.default_rng(3).integers(100)
    for bad in (None, True, 1.5, "3"):
        with pytest.raises(TypeError, match="seed"):
            v.as_generator(bad)
    with pytest.raises(ValueError, match="seed"):
        v.as_generator(-1)


def test_as_sequence_and_as_options():
    assert v.as_sequence([1, 2], "s") == (1, 2)
    assert v.as_sequence(np.array([1.0, 2.0]), "s") == (1.0, 2.0)
    for bad in ("ab", 3, None, {"a": 1}):
        with pytest.raises(TypeError, match="s must be a sequence"):
            v.as_sequence(bad, "s")
    assert v.as_options(None) == {} and v.as_options({"a": 1}) == {"a": 1}
    with pytest.raises(TypeError, match="options"):
        v.as_options([("a", 1)])


def test_check_same_shape_and_finite_or_raise():
    v.check_same_shape(np.zeros(2), "a", np.ones(2), "b")
    with pytest.raises(ValueError, match=r"a and b must have the same shape; got \(2,\) and"):
        v.check_same_shape(np.zeros(2), "a", np.ones(3), "b")
    ok = np.ones(2)
    assert v.finite_or_raise(ok, "x") is ok
    with pytest.raises(ValueError, match=r"the logits overflowed float64.*use a larger"):
        v.finite_or_raise(np.array([1.0, np.inf]), "the logits")
    with pytest.raises(ValueError, match=r"; rescale them$"):
        v.finite_or_raise([np.nan], "y", "rescale them")


# ---------------------------------------------------------------- the policy reaches the API


@pytest.mark.parametrize(
    "call",
    [
        lambda x: il.info_nce_loss(x, np.ones((2, 2))),
        lambda x: il.info_nce_loss_and_grad(np.ones((2, 2)), x, chunk_size=1),
        lambda x: il.nt_xent_loss(x, np.ones((2, 2))),
        lambda x: il.clip_loss(np.ones((2, 2)), x),
        lambda x: il.moco_loss(np.ones((2, 2)), np.ones((2, 2)), x),
        lambda x: il.contrastive_log_probs(x),
        lambda x: il.contrastive_log_probs(np.ones((2, 2)), positives=x.astype(int)),
        lambda x: il.binary_nce_loss(x),
        lambda x: il.infonce_bound(x[None]),
        lambda x: il.mean_and_se(x.ravel()),
    ],
)
def test_masked_arrays_are_refused_by_every_loss(call):
    m = np.ma.masked_array(np.eye(2), mask=[[False, True], [False, False]])
    with pytest.raises(TypeError, match="MaskedArray"):
        call(m)


# ---------------------------------------------------------------- the policy comes first


def test_every_entry_point_applies_the_array_policy_first():
    # A masked 1-D sequence used to reach .tolist(), which turns a masked entry into None
    # ("must be a real number; got NoneType None"); the policy now speaks first, in every
    # helper that takes a caller's value.
    masked = np.ma.masked_array([0.5, 500.0], mask=[False, True])
    calls = [
        lambda: v.as_sequence(masked, "levels"),
        lambda: v.as_int(np.ma.masked_array(3), "levels"),
        lambda: v.as_bool(np.ma.masked_array(True), "levels"),
        lambda: v.as_generator(np.ma.masked_array(3), "levels"),
        lambda: v.as_options(np.ma.masked_array([1.0]), "levels"),
    ]
    for call in calls:
        with pytest.raises(TypeError, match=r"levels is a numpy.ma.MaskedArray.*levels.filled"):
            call()
    for call in (
        lambda: v.as_sequence(_FakeTensor([1.0]), "s"),
        lambda: v.as_int(_FakeTensor(3), "s"),
    ):
        with pytest.raises(TypeError, match=r"s is a PyTorch tensor.*s.detach"):
            call()
    with pytest.raises(
        TypeError, match=r"s must be a sequence \(a list, tuple or 1-D array\); got a 2-D"
    ):
        v.as_sequence(_matrix([[0.5, 5.0]]), "s")  # a matrix is a 2-D array


def test_masked_sequences_are_refused_by_the_public_functions():
    masked = np.ma.masked_array([0.5, 500.0], mask=[False, True])
    with pytest.raises(TypeError, match=r"levels is a numpy\.ma\.MaskedArray"):
        il.patch_level_pairs(1.0, levels=np.ma.masked_array([1.0, 3.0], mask=[False, True]))
    with pytest.raises(TypeError, match=r"beta_bounds is a numpy\.ma\.MaskedArray"):
        il.best_temperature(np.ones((1, 3, 3)), masked)
    with pytest.raises(TypeError, match=r"params\[0\] is a numpy.ma.MaskedArray"):
        il.Adam([np.ma.masked_array(np.zeros((2, 2)))])


# ---------------------------------------------------------------- real booleans only


_CHECKERS = sorted(n for n in il.__all__ if n.startswith("check_"))


def test_every_exercise_checker_is_listed():
    # A new checker joins the verbose test below automatically; naming them here makes its
    # arrival (or a checker lost from __all__) a visible change rather than a silent one.
    assert _CHECKERS == [
        "check_attainable_cap",
        "check_info_nce",
        "check_infonce_bound",
        "check_infonce_curvature",
        "check_log_scale_gradient",
        "check_min_batch_size",
        "check_nce_objective",
        "check_nwj_bound",
        "check_warped_log_density",
        "check_zero_temperature_limit",
    ], _CHECKERS


@pytest.mark.parametrize("name", _CHECKERS)
@pytest.mark.parametrize("bad", ["False", "no", None, 0, 1, np.array([False])])
def test_exercise_checkers_take_only_real_booleans_for_verbose(name, bad, capsys):
    # "False" is truthy: with bool(verbose) it printed the whole report.
    def fn(*args, **kwargs):
        raise AssertionError("the learner's function must not run on a bad option")

    with pytest.raises(TypeError, match=r"verbose must be True or False \(a bool\)"):
        getattr(il, name)(fn, verbose=bad)
    assert capsys.readouterr().out == ""


def test_a_check_takes_only_a_real_boolean():
    for bad in ("False", None, 0, 1, "yes"):
        with pytest.raises(TypeError, match=r"passed must be True or False"):
            il.Check("x is positive", bad)
    check = il.Check("x is positive", np.bool_(False))
    assert check.passed is False and check.line() == "[FAIL] x is positive"
