"""The fuzz tests: every public name of infonce_lib, with bad, unusual and extreme input.

The framework and the rules are in tests/fuzzing.py; the specifications, one file per
library module, in tests/fuzz_specs/. This module only runs them.
"""

from __future__ import annotations

import dataclasses
import inspect
import math
import os
import re
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import infonce_lib as il
from tests.conftest import scaled_examples
from tests.fuzzing import Arr, Num, _numbers, build, call, cases, collect, run_case, smallest

TABLES = collect()
SPECS = TABLES.specs
EXTREMES = TABLES.extremes
EXEMPT = TABLES.exempt
NO_EXTREME = TABLES.no_extreme
SPEC_ITEMS = TABLES.spec_items()

# Parameters that set a scale; every function with one has a valid-extreme test (EXTREMES)
# or a reason not to (NO_EXTREME), in its module's file of tests/fuzz_specs.
_SCALES = {"temperature", "tau", "logit_scale", "beta", "sigma", "t", "alpha", "length_scale",
           "noise_ratio", "target"}  # fmt: skip


def _examples_section(doc: str) -> str | None:
    """The text of a NumPy-style ``Examples`` section, up to the next section, or None."""
    m = re.search(r"^Examples\n-{8,}\n(.*?)(?=^\S[^\n]*\n-{3,}\n|\Z)", doc, re.M | re.S)
    return m.group(1) if m else None


_DOCUMENTED = [
    n for n in il.__all__ if inspect.isfunction(getattr(il, n)) or inspect.isclass(getattr(il, n))
]


def test_every_public_name_has_a_spec():
    """A new public name needs a spec (or an exemption) in tests/fuzz_specs/<module>.py."""
    public = set(il.__all__)
    missing = sorted(public - set(SPECS) - set(EXEMPT))
    assert not missing, (
        f"public names without a fuzz spec: {missing}; add one to SPECS (or EXEMPT, with the "
        "reason) in tests/fuzz_specs/<module>.py, as the docstring of tests/fuzzing.py shows"
    )
    stale = sorted((set(SPECS) | set(EXEMPT)) - public)
    assert not stale, f"specs or exemptions for names not in infonce_lib.__all__: {stale}"
    assert not set(SPECS) & set(EXEMPT)


def test_the_spec_check_can_fail(monkeypatch):
    """Without its spec, a public name is reported (the test above is not vacuous)."""
    monkeypatch.delitem(SPECS, "info_nce_loss")
    with pytest.raises(AssertionError, match=r"without a fuzz spec: \['info_nce_loss'\]"):
        test_every_public_name_has_a_spec()


@pytest.mark.parametrize("sid", list(SPEC_ITEMS))
def test_every_case(sid):
    """Every derived case of the spec once, at the smallest sizes (seed 0, first position)."""
    spec = SPEC_ITEMS[sid]
    dims = smallest(spec)
    kw = build(spec, dims, np.random.default_rng(0))
    failures = []
    for case in cases(spec, dims, kw):
        rng = np.random.default_rng(0)
        try:
            run_case(spec, case, case.apply(kw, dims, rng, lambda n: 0))
        except AssertionError as exc:
            failures.append(str(exc))
    assert not failures, f"{len(failures)} case(s) of {sid} failed:\n" + "\n".join(failures)


@pytest.mark.parametrize("sid", list(SPEC_ITEMS))
def test_fuzz(sid):
    """Hypothesis draws the sizes, the seed, the case and where a bad entry goes."""
    spec = SPEC_ITEMS[sid]

    @settings(max_examples=scaled_examples(spec.max_examples))
    @given(data=st.data())
    def fuzz(data):
        dims = spec.dims(lambda lo, hi: data.draw(st.integers(lo, hi), label="size"))
        seed = data.draw(st.integers(0, 2**16), label="seed")
        rng = np.random.default_rng(seed)
        kw = build(spec, dims, rng)
        options = cases(spec, dims, kw)
        case = data.draw(st.sampled_from(options), label="case")

        def pick(n):
            return data.draw(st.integers(0, n - 1), label="position")

        run_case(spec, case, case.apply(kw, dims, rng, pick))

    fuzz()


def test_the_fuzzer_catches_a_broken_validation(monkeypatch):
    """A test that cannot fail is a defect: remove the NaN check of as_real_array (as a
    careless edit of _validation.py would) and the fuzzer must report it."""
    import infonce_lib._validation as v

    real = v.as_real_array

    def no_finite_check(value, name, *, ndim=None, allow_empty=False):
        arr = np.asarray(value)
        if arr.dtype.kind in "iuf":
            with np.errstate(invalid="ignore"):
                return real(
                    np.nan_to_num(arr, nan=0.0, posinf=0.0, neginf=0.0),
                    name,
                    ndim=ndim,
                    allow_empty=allow_empty,
                )
        return real(value, name, ndim=ndim, allow_empty=allow_empty)

    spec = SPEC_ITEMS["mean_and_se"]
    dims = smallest(spec)
    kw = build(spec, dims, np.random.default_rng(0))
    (case,) = [c for c in cases(spec, dims, kw) if c.id == "values: a NaN entry"]
    run_case(spec, case, case.apply(kw, dims, None, lambda n: 0))  # passes as the library is
    monkeypatch.setattr("infonce_lib.bounds.as_real_array", no_finite_check)
    with pytest.raises(AssertionError, match="invalid input was accepted"):
        run_case(spec, case, case.apply(kw, dims, None, lambda n: 0))


@pytest.mark.parametrize(
    "name, label", [(n, label) for n, table in EXTREMES.items() for label in table]
)
@given(seed=st.integers(0, 2**16))
@settings(max_examples=scaled_examples(5))
def test_valid_extreme(name, label, seed):
    """Valid extremes give finite results that agree with a float64 reference."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        triples = EXTREMES[name][label](np.random.default_rng(seed))
    assert triples
    for got, want, tol in triples:
        assert math.isfinite(got), f"{name} ({label}): {got}"
        assert abs(got - want) <= tol, f"{name} ({label}): {got!r} vs {want!r} (tol {tol:.3g})"


def test_extremes_cover_every_scale_parameter():
    assert set(EXTREMES) <= set(SPECS), set(EXTREMES) - set(SPECS)
    assert not set(EXTREMES) & set(NO_EXTREME)
    scaled = {
        name
        for name, specs in SPECS.items()
        for spec in specs
        for p, kind in spec.params.items()
        if p in _SCALES and isinstance(kind, Num | Arr)
    }
    missing = sorted(scaled - set(EXTREMES) - set(NO_EXTREME))
    assert not missing, f"functions with a scale parameter but no valid-extreme test: {missing}"


@pytest.mark.parametrize(
    "sid",
    [
        sid
        for sid, spec in SPEC_ITEMS.items()
        if any(isinstance(p, Arr) and not p.index and p.f32 for p in spec.params.values())
    ],
)
@given(data=st.data())
@settings(max_examples=scaled_examples(5))
def test_float32_input_agrees_with_float64(sid, data):
    """float32 arrays give the result of float64 arrays holding the same values
    (to 1e-12 relative, 1e-300 absolute): the library computes in float64."""
    spec = SPEC_ITEMS[sid]
    dims = spec.dims(lambda lo, hi: data.draw(st.integers(lo, hi), label="size"))
    seed = data.draw(st.integers(0, 2**16), label="seed")
    kw = build(spec, dims, np.random.default_rng(seed))
    f32 = dict(kw)
    for name, p in spec.params.items():
        if isinstance(p, Arr) and not p.index and p.f32:
            f32[name] = np.asarray(kw[name], dtype=np.float32)
    f64 = {k: np.asarray(v, dtype=np.float64) if v is not kw[k] else v for k, v in f32.items()}
    got = list(_numbers(call(spec.fn, f32), "result"))
    want = list(_numbers(call(spec.fn, f64), "result"))
    assert [p for p, _ in got] == [p for p, _ in want]
    for (path, g), (_, w) in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-300, err_msg=f"{sid}: {path}")


@pytest.mark.parametrize("name", _DOCUMENTED)
def test_public_docstring_has_examples(name):
    """Every public function and class documents an Examples section with at least one
    ``>>>`` line; ``make unit`` runs them (``pytest --doctest-modules infonce_lib``)."""
    doc = inspect.getdoc(getattr(il, name)) or ""
    section = _examples_section(doc)
    assert section is not None, f"{name} has no 'Examples' section"
    assert re.search(r"^>>> \S", section, re.M), f"{name}'s Examples section has no >>> line"


def test_docstring_check_can_fail():
    assert _examples_section("Returns\n-------\nint\n") is None
    assert (
        _examples_section("Examples\n--------\nsee the book\n\nNotes\n-----\nx")
        == "see the book\n\n"
    )


def test_the_fuzzer_catches_a_truthy_boolean_option(monkeypatch):
    """Boolean options are fuzzed: if include_positive went back to bool(...), which takes
    the string "False" as True, the fuzzer must report it."""
    spec = SPEC_ITEMS["contrastive_log_probs[0]"]
    dims = smallest(spec)
    kw = build(spec, dims, np.random.default_rng(0))
    (case,) = [c for c in cases(spec, dims, kw) if c.id == "include_positive: not a bool: str 'no'"]
    run_case(spec, case, case.apply(kw, dims, None, lambda n: 0))  # passes as the library is
    monkeypatch.setattr("infonce_lib.core.as_bool", lambda value, name: bool(value))
    with pytest.raises(AssertionError, match="invalid input was accepted"):
        run_case(spec, case, case.apply(kw, dims, None, lambda n: 0))


def test_accepted_exceptions_never_excuse_bad_input():
    """Spec.edge_accept lets a far extreme with no answer raise; a valid call may not, and an
    invalid one must still raise an error that names its argument."""
    spec = dataclasses.replace(SPEC_ITEMS["mean_and_se"], edge_accept=(il.NoMaximiserError,))
    dims = smallest(spec)
    kw = build(spec, dims, np.random.default_rng(0))
    by_id = {c.id: c for c in cases(spec, dims, kw)}
    valid, bad = by_id["(none): the valid call"], by_id["values: a NaN entry"]
    edge = by_id["values: far extreme: entries times 1e300"]

    def raises(exc):
        def fn(values):
            raise exc

        return dataclasses.replace(spec, fn=fn)

    no_max = il.NoMaximiserError("the NCE objective has no maximiser")
    run_case(raises(no_max), edge, edge.apply(kw, dims, None, lambda n: 0))  # accepted
    with pytest.raises(AssertionError, match="valid input raised NoMaximiserError"):
        run_case(raises(no_max), valid, kw)
    with pytest.raises(AssertionError, match="crashed with NoMaximiserError"):
        run_case(raises(no_max), bad, bad.apply(kw, dims, None, lambda n: 0))
    with pytest.raises(AssertionError, match="TypeError does not name values"):
        run_case(raises(TypeError("x")), edge, edge.apply(kw, dims, None, lambda n: 0))


def test_the_ci_profile_is_deterministic_and_explore_scales_every_test():
    """`make test` (profile "ci") draws from a fixed seed and keeps no database; `make fuzz`
    (profile "explore") multiplies the examples of every test, those that set their own
    max_examples through scaled_examples included."""
    ci, explore = settings.get_profile("ci"), settings.get_profile("explore")
    assert ci.derandomize is True and ci.database is None
    assert explore.derandomize is False and explore.database is None
    assert [scaled_examples(n, ci) for n in (1, 5, 40, 60)] == [1, 5, 40, 60]
    assert scaled_examples(40, explore) >= 20 * 40
    active = os.environ.get("HYPOTHESIS_PROFILE", "ci")
    assert scaled_examples(40) == scaled_examples(40, settings.get_profile(active))

    def examples_run(profile: str) -> int:
        settings.load_profile(profile)
        try:
            seen = []

            @settings(max_examples=scaled_examples(3))
            @given(st.integers(0, 2**62))
            def probe(i):
                seen.append(i)

            probe()
            return len(seen)
        finally:
            settings.load_profile(active)

    assert examples_run("ci") == 3
    assert examples_run("explore") >= 3 * 20
