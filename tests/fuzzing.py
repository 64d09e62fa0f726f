"""The fuzz framework: every public name of :mod:`infonce_lib`, called with bad and extreme input.

Where things are
----------------
* ``tests/fuzzing.py`` (this module): the parameter kinds, the corruptions derived from them,
  the rule that judges each call, and :func:`collect`, which gathers the tables below.
* ``tests/fuzz_specs/<module>.py``: one file per library module (``core``, ``losses``,
  ``nce``, ...), each with ``SPECS`` (how to call each public name validly), ``EXTREMES``
  (valid extremes checked against a float64 reference), and, where needed, ``EXEMPT``
  (public names that are not functions, with the reason) and ``NO_EXTREME`` (functions with
  a scale parameter but no extreme test, with the reason). Every module of that package is
  collected automatically.
* ``tests/test_fuzz.py``: the tests that run the tables (every case once; Hypothesis draws;
  the extremes; float32 against float64; every public name has a spec; docstring examples).

Adding a public function
------------------------
``test_every_public_name_has_a_spec`` fails until the name has a spec (or an exemption).
Add a few lines to ``SPECS`` in the file of the function's module (a new library module gets
a new file in ``tests/fuzz_specs/``, with the same three names)::

    "my_loss": (
        Spec(
            il.my_loss,
            dict(Z=Arr(("N", "D")), temperature=Num(POS, 0.5), normalise=Bool(True)),
            dims=_sizes(N=(1, 4), D=(1, 3)),  # each symbol's range of sizes
        ),
    ),

and, if it has a scale parameter (``temperature``, ``sigma``, ...), an entry in
``EXTREMES`` that compares it at scales 1e-8 and 1e8 with a loop reference (see the
existing ``_x_*`` functions). A specification says how to build a valid call on small,
seeded inputs and what each parameter is:

* :class:`Arr`, an array with a symbolic shape such as ``("N", "D")``: symbols shared by two
  axes (of one or several arrays), or tied to a scalar argument (``Spec.bound``), are the
  shape relations the function must enforce;
* :class:`Num`, a scalar of a kind (``pos``: finite and > 0; ``nonneg``; ``int`` with a
  minimum; ``real``; ``unit``: ``|x| < 1``);
* :class:`Bool`, a boolean option (only ``True``, ``False`` and NumPy booleans are valid);
* :class:`Choice` (a string option), :class:`Seed`, :class:`Func` (a callable), :class:`Obj`
  (an object such as a :class:`~infonce_lib.GaussianField`), :class:`Seq` (a sequence of
  scalars), :class:`Opts` (a dict of options), or :class:`Fixed` (never corrupted);
* ``Spec.bad``: the invalid inputs that the generic corruptions cannot express (an index
  out of range, a matrix that is not positive definite, a batch size that does not divide);
* ``Spec.edge_accept``: exception types a far extreme may raise because that extreme input
  has no answer (an objective with no maximiser there: ``NoMaximiserError``). A valid call
  may not raise them (its specification draws inputs that have an answer), an invalid one
  must still raise its own error, and anything else, or any warning, still fails.

From a specification :func:`cases` derives every corruption, and for each its expected
outcome:

* arrays: a NaN, +inf or -inf entry (at a drawn position); each axis emptied, and every
  axis of a shared size emptied at once (so the sizes still agree); a leading or trailing
  axis more, one fewer, a 0-d value; strings (as an array and as nested lists), complex,
  object and boolean dtypes (for index arrays also float); ragged nested lists; each
  shared size changed by one in one array; far extremes: entries scaled by 1e300, one
  entry 1.7e308, entries 1.7e308 and -1.7e308 side by side;
* scalars: zero, negative, NaN, +-inf (where invalid), strings, None, booleans, complex,
  arrays, floats for integers, integers below the minimum; far extremes of a positive
  scale (5e-324, 1e-300, 1e300, 1.7e308; not for ``nu`` and ``nus``, which set how many
  samples are drawn, nor for integers, which set sizes);
* booleans: the strings ``'False'``, ``'no'``, ``'0'``, None, 0 and 1, an array;
* options, seeds, callables, objects and sequences: unknown strings, None, wrong types,
  non-sequences, empty sequences, a bad element;
* valid variants: nested lists, float32 and int32 arrays, 0-d arrays and NumPy scalars,
  extra leading axes and empty axes where the docstring allows them, ``None`` where it is a
  documented default.

Every call runs under ``warnings.catch_warnings()`` with ``simplefilter("error")`` (pytest
also turns RuntimeWarning into errors). Then:

* an invalid input must raise exactly ``ValueError`` or ``TypeError`` (not a subclass such as
  ``numpy.linalg.LinAlgError`` or ``numpy.exceptions.AxisError``) whose message names the
  argument as a whole word; any other exception, a warning, or a return value fails;
* a valid variant must return without a warning, and every number in the result (floats,
  arrays, tuples, dataclasses, named tuples, dicts, reports) must be finite (``nwj_bound``
  may return ``-inf``, as documented);
* a far extreme may either return finite results or raise ``ValueError``/``TypeError``
  naming the argument; never warn, crash or return NaN or inf.

Tolerances of the valid extremes (:func:`test_valid_extreme`)
--------------------------------------------------------------
``eps`` is the float64 machine epsilon (2.2e-16).

* float32 input (every function with a float array argument): the result equals, to
  ``1e-12`` relative (``1e-300`` absolute), the result for float64 arrays holding the same
  values: the library converts to float64 before computing, so only the summation order
  of the conversion may differ.
* log-softmax family (InfoNCE, NT-Xent, CLIP, MoCo, the streaming core, the logit-matrix
  core, the bounds, binary NCE and its noise ratio, the NCE objective, the hypersphere
  limit and sampled losses, InfoNCE at ``beta`` and its value in
  ``infonce_beta_derivatives``), at temperatures / scales of 1e-8 and 1e8 and logits of
  order 1e6: against loop references in Python floats with ``math.fsum``,
  ``|got - want| <= 1e-12 (1 + S)`` where ``S`` is the largest absolute logit: a
  log-sum-exp is accurate to a few ulps of its largest term, and a dot product of length
  ``D`` to ``D eps`` relative.
* chapter 5's cosine functions at ``tau`` (``beta``, ``margin``) 1e-8 and 1e8: softmax
  weights and the derivatives in ``beta`` to ``1e-12`` absolute (scores lie in [-1, 1]);
  ``tau_scaled_loss`` and ``hadsell_contrastive_loss`` to ``1e-12`` relative.
* closed forms with one scale (``patch_information``, ``log_p_y_given_x``,
  ``field_covariance``, ``correlated_gaussian_information``, ``sphere_log_partition``,
  ``alignment``, ``uniformity``): ``1e-12`` relative (plus ``1e-12 (1 + S)`` absolute for
  a log-sum-exp of scale ``S``); ``log_p_y`` against ``scipy.stats.multivariate_normal``
  to ``1e-10`` relative; ``optimal_critic_scores`` (a squared distance expanded into a
  matrix product) to ``1e-12 ((1 + |x|^2 + |y|^2) / (2 sigma^2) + |F|)``.
* samplers (``sample_patch_pairs``, ``sample_binary_channel``) at ``sigma`` 1e-8 and 1e8:
  exactly the documented draws (tolerance 0).
* root finding and round trips (``sigma_for_information``, ``correlated_gaussian_rho``):
  ``1e-9`` relative on the recovered quantity (Brent's method stops at ``xtol = 1e-14`` on
  ``log sigma``; ``rho`` near 1 loses ``eps / (1 - rho)``).
* quadrature (``binary_channel_information``): ``1e-12`` absolute per dimension, its
  documented accuracy.
* ``cosine_cap``: ``log K`` exactly at ``tau = 1e-8``; the first-order value
  ``2 (K - 1) / (K tau)`` to ``1e-7`` relative at ``tau = 1e8`` (the neglected term is of
  relative size ``1 / tau``).
* ``gaussian_mutual_information`` of a joint covariance scaled by 1e-150 and 1e150: equal
  to the unscaled value to ``1e-9`` absolute (the log-determinants shift by ``n log s``,
  which cancels).
* ``correlated_gaussian_critic`` at ``rho = 0.999``: the squared distance is expanded into a
  matrix product, so the absolute error is about ``eps (|x|^2 + |y|^2) / (1 - rho^2)``;
  the test allows ``1e-12 (1 + |x|^2 + |y|^2) / (1 - rho^2)``.

Run time: the fuzz tests take about 20 s with one BLAS thread (``Spec.max_examples``, 30 to
100 Hypothesis examples per specification, plus the exhaustive ``test_every_case``). The
Hypothesis profile of ``make test`` is derandomized (tests/conftest.py); ``make fuzz`` draws
afresh with 2000 / 60 times the examples of every test, each specification's
``max_examples`` included (``tests.conftest.scaled_examples``).
"""

from __future__ import annotations

import dataclasses
import importlib
import math
import pkgutil
import re
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import infonce_lib as il
from tests.reference import logsumexp_list


def _normal(rng, shape, dims):
    return rng.normal(size=shape)


@dataclass(frozen=True)
class Arr:
    """An array argument with a symbolic shape, e.g. ``("N", "D")``."""

    shape: tuple[str, ...]
    make: Callable = _normal  # (rng, concrete shape, dims) -> valid array
    ranks: frozenset[int] | None = None  # ranks valid with the other arguments unchanged
    empty_ok: frozenset[int] = frozenset()  # axes that may have length 0
    index: bool = False  # an integer index array
    f32: bool = True  # float32 values are still valid (not for unit-norm checks)

    def allowed_ranks(self) -> frozenset[int]:
        return self.ranks if self.ranks is not None else frozenset({len(self.shape)})


@dataclass(frozen=True)
class Num:
    """A scalar: ``pos`` (> 0), ``nonneg`` (>= 0), ``int`` (>= minimum), ``real``, ``unit``."""

    kind: str
    valid: Any  # value, or callable(dims) -> value
    minimum: Any = 0  # for "int": int or callable(dims) -> int
    none_ok: bool = False  # None is a documented default
    array_ok: bool = False  # arrays are accepted too (cosine_cap's tau)
    far: bool = True  # try the far extremes 5e-324 ... 1.7e308 (off where they set a size)


@dataclass(frozen=True)
class Choice:
    """A string option."""

    valid: str


@dataclass(frozen=True)
class Seed:
    """An explicit seed: an int >= 0 (or, if documented, a numpy.random.Generator)."""

    valid: int = 0
    generator_ok: bool = True


@dataclass(frozen=True)
class Func:
    """A callable argument."""

    valid: Callable


@dataclass(frozen=True)
class Obj:
    """An object argument (e.g. a GaussianField) and wrong values for it."""

    make: Callable  # (dims, rng) -> object
    bad: tuple = (None, "field", 1.0)


@dataclass(frozen=True)
class Seq:
    """A sequence of scalars of one kind."""

    valid: tuple
    element: Num


@dataclass(frozen=True)
class Opts:
    """A dict of options passed on (or None)."""

    valid: Any = None


@dataclass(frozen=True)
class Bool:
    """A boolean option: only Python and NumPy booleans are valid."""

    valid: bool


@dataclass(frozen=True)
class Fixed:
    """An argument that is not fuzzed: a value, or callable(dims, rng) -> value."""

    value: Any


@dataclass(frozen=True)
class Bad:
    """An invalid input (or a far extreme) the generic corruptions cannot express."""

    what: str
    apply: Callable  # (kwargs, dims, rng) -> kwargs
    names: tuple[str, ...]
    expect: str = "error"


def _finite(out, *, neg_inf_ok: bool = False) -> None:
    for path, arr in _numbers(out, "result"):
        ok = np.isfinite(arr) | (neg_inf_ok & np.isneginf(arr))
        assert ok.all(), f"{path} is not finite: {arr!r}"


@dataclass(frozen=True)
class Spec:
    """How to call one public function (or constructor, or method) validly."""

    fn: Callable
    params: dict[str, Any]
    dims: Callable = lambda n: {}  # (n(lo, hi) -> int) -> {symbol: size}
    bound: frozenset[str] = frozenset()  # sizes tied to a scalar, object or fixed argument
    bad: tuple[Bad, ...] = ()
    check: Callable = _finite  # applied to every valid result
    max_examples: int = 100
    edge_accept: tuple[type[Exception], ...] = ()  # a far extreme may raise these (no answer)


def _numbers(obj, path):
    """Yield (path, float64 array) for every number inside a result."""
    if obj is None or isinstance(obj, bool | np.bool_ | str | bytes):
        return
    if isinstance(obj, int | float | np.integer | np.floating):
        yield path, np.asarray(obj, dtype=np.float64)
    elif isinstance(obj, np.ndarray):
        if obj.dtype.kind in "iuf":
            yield path, obj.astype(np.float64)
        elif obj.dtype.kind == "c":
            yield path, np.abs(obj)
    elif isinstance(obj, il.MoCoQueue):
        yield from _numbers(obj.keys, f"{path}.keys")
    elif dataclasses.is_dataclass(obj):
        for f in dataclasses.fields(obj):
            if f.name != "result":  # NCEFit.result: scipy's own OptimizeResult
                yield from _numbers(getattr(obj, f.name), f"{path}.{f.name}")
    elif isinstance(obj, tuple | list):
        for i, v in enumerate(obj):
            yield from _numbers(v, f"{path}[{i}]")
    elif isinstance(obj, Mapping):
        for k, v in obj.items():
            yield from _numbers(v, f"{path}[{k!r}]")


def _value(v, dims):
    return v(dims) if callable(v) else v


def build(spec: Spec, dims: dict, rng: np.random.Generator) -> dict:
    """Valid keyword arguments for ``spec`` at the given sizes."""
    kw = {}
    for name, p in spec.params.items():
        if isinstance(p, Arr):
            kw[name] = p.make(rng, tuple(dims[s] for s in p.shape), dims)
        elif isinstance(p, Num):
            kw[name] = _value(p.valid, dims)
        elif isinstance(p, Choice):
            kw[name] = p.valid
        elif isinstance(p, Seed):
            kw[name] = p.valid
        elif isinstance(p, Func):
            kw[name] = p.valid
        elif isinstance(p, Obj):
            kw[name] = p.make(dims, rng)
        elif isinstance(p, Seq):
            kw[name] = p.valid
        elif isinstance(p, Opts):
            kw[name] = p.valid
        elif isinstance(p, Bool):
            kw[name] = p.valid
        elif isinstance(p, Fixed):
            kw[name] = p.value(dims, rng) if callable(p.value) else p.value
        else:  # pragma: no cover - a mistake in the table
            raise AssertionError(f"unknown parameter kind {p!r}")
    return kw


@dataclass(frozen=True)
class Case:
    """One corruption (or valid variant) of one argument and what must happen."""

    param: str
    what: str
    expect: str  # "error", "valid" or "edge"
    apply: Callable = field(compare=False)  # (kwargs, dims, rng, pick) -> kwargs
    names: tuple[str, ...] = ()

    @property
    def id(self) -> str:
        return f"{self.param}: {self.what}"


def _set(name, value):
    return lambda kw, dims, rng, pick: {**kw, name: value}


def _far_scalars():
    return [5e-324, 1e-300, 1e300, 1.7e308]


_NON_NUMBERS = [("a string", "1"), ("None", None), ("a bool", True), ("complex", 1 + 0j)]


def _num_cases(name: str, p: Num, dims: dict) -> list[Case]:
    v = _value(p.valid, dims)
    out: list[Case] = []

    def err(what, value):
        out.append(Case(name, what, "error", _set(name, value), (name,)))

    def ok(what, value, expect="valid"):
        out.append(Case(name, what, expect, _set(name, value), (name,)))

    for what, value in _NON_NUMBERS:
        if not (value is None and p.none_ok):
            err(what, value)
    if p.none_ok:
        ok("None", None)
    if p.kind == "int":
        lo = _value(p.minimum, dims)
        err(f"below the minimum ({lo - 1})", lo - 1)
        if lo - 3 != lo - 1:
            err(f"negative ({min(lo - 3, -1)})", min(lo - 3, -1))
        if v is not None:
            err("a whole float", float(v))
            ok("a NumPy integer", np.int64(v))
        for what, value in [("2.5", 2.5), ("NaN", math.nan), ("inf", math.inf)]:
            err(what, value)
        return out
    bad = [("NaN", math.nan), ("inf", math.inf), ("-inf", -math.inf)]
    if p.kind == "pos":
        bad += [("zero", 0.0), ("negative", -1.0)]
    elif p.kind == "nonneg":
        bad += [("negative", -1.0)]
        ok("zero", 0.0)
    elif p.kind == "unit":
        bad += [("1", 1.0), ("-1", -1.0), ("1.5", 1.5)]
        ok("1 - 2**-53", 1.0 - 2.0**-53, "edge")
        ok("-(1 - 2**-53)", -(1.0 - 2.0**-53), "edge")
    if p.kind in ("pos", "nonneg") and p.far:
        for value in _far_scalars():
            ok(f"far extreme {value:g}", value, "edge")
    if not p.array_ok:
        err("an array of two values", np.array([1.0, 2.0]))
    for what, value in bad:
        err(what, value)
    if v is not None:
        ok("a NumPy float32", np.float32(v))
        ok("a 0-d array", np.array(v))
    return out


def _replace(name, make_value):
    return lambda kw, dims, rng, pick: {**kw, name: make_value(kw[name], pick)}


def _with_entry(value):
    def put(arr, pick):
        out = np.array(arr, dtype=np.float64)
        out.flat[pick(out.size)] = value
        return out

    return put


def _shared_symbols(spec: Spec) -> set[str]:
    counts: dict[str, int] = {}
    for p in spec.params.values():
        if isinstance(p, Arr):
            for s in p.shape:
                counts[s] = counts.get(s, 0) + 1
    return {s for s, c in counts.items() if c >= 2} | set(spec.bound)


def _arr_cases(name: str, p: Arr, spec: Spec, dims: dict, value: np.ndarray) -> list[Case]:
    out: list[Case] = []
    shape = value.shape

    def add(what, expect, make_value, names=(name,)):
        out.append(Case(name, what, expect, _replace(name, make_value), names))

    for what, bad in [("a NaN entry", math.nan), ("a +inf entry", math.inf)]:
        add(what, "error", _with_entry(bad))
    add("a -inf entry", "error", _with_entry(-math.inf))
    for axis in range(len(shape)):
        new = (*shape[:axis], 0, *shape[axis + 1 :])
        expect = "valid" if axis in p.empty_ok else "error"
        dtype = np.intp if p.index else np.float64
        add(f"axis {axis} empty", expect, lambda a, pick, new=new, dt=dtype: np.zeros(new, dt))
    ranks = p.allowed_ranks()
    nd = len(shape)
    add("a 0-d value", "valid" if 0 in ranks else "error", lambda a, pick: np.asarray(a).flat[0])
    if nd >= 2:
        add("one axis fewer", "valid" if nd - 1 in ranks else "error", lambda a, pick: a[0])
    add("a leading axis more", "valid" if nd + 1 in ranks else "error", lambda a, pick: a[None])
    # A trailing axis changes the meaning of the last axes: right or wrong depends on sizes.
    add(
        "a trailing axis more", "edge" if nd + 1 in ranks else "error", lambda a, pick: a[..., None]
    )
    add("strings", "error", lambda a, pick: np.full(np.shape(a), "a"))
    add("nested lists of strings", "error", lambda a, pick: np.full(np.shape(a), "a").tolist())
    add("complex dtype", "error", lambda a, pick: np.asarray(a) + 0j)
    add("object dtype", "error", lambda a, pick: np.asarray(a).astype(object))
    add("bool dtype", "error", lambda a, pick: np.ones(np.shape(a), dtype=bool))
    if nd >= 2 and shape[0] >= 2 and shape[1] >= 1:

        def ragged(a, pick):
            rows = np.asarray(a).tolist()
            rows[1] = rows[1] + rows[1][:1]
            return rows

        add("ragged nested lists", "error", ragged)
    shared = _shared_symbols(spec)
    for axis, sym in enumerate(p.shape):
        if sym in shared:
            new = tuple(s + 1 if i == axis else s for i, s in enumerate(shape))

            def grow(a, pick, new=new):
                if p.index:
                    return p.make(None, new, dims)
                return np.random.default_rng(1).normal(size=new)

            add(f"axis {axis} ({sym}) one longer", "error", grow)
    add("nested lists", "valid", lambda a, pick: np.asarray(a).tolist())
    if p.index:
        add("float dtype", "error", lambda a, pick: np.asarray(a, dtype=np.float64))
        add("int32 dtype", "valid", lambda a, pick: np.asarray(a, dtype=np.int32))
    else:
        if p.f32:
            add("float32 dtype", "valid", lambda a, pick: np.asarray(a, dtype=np.float32))
        add("far extreme: entries times 1e300", "edge", lambda a, pick: np.asarray(a) * 1e300)
        add("far extreme: one entry 1.7e308", "edge", _with_entry(1.7e308))

        def opposite(a, pick):
            out = np.array(a, dtype=np.float64)
            out.flat[0], out.flat[1] = 1.7e308, -1.7e308
            return out

        if value.size >= 2:
            add("far extreme: entries 1.7e308 and -1.7e308", "edge", opposite)
    return out


def cases(spec: Spec, dims: dict, kw: dict) -> list[Case]:
    """Every corruption and valid variant of ``spec`` at these sizes."""
    out = [Case("(none)", "the valid call", "valid", lambda kw, dims, rng, pick: kw)]
    for name, p in spec.params.items():
        if isinstance(p, Arr):
            out += _arr_cases(name, p, spec, dims, kw[name])
        elif isinstance(p, Num):
            out += _num_cases(name, p, dims)
        elif isinstance(p, Choice):
            for bad in ("bogus", "", None, 3):
                out.append(Case(name, f"option {bad!r}", "error", _set(name, bad), (name,)))
        elif isinstance(p, Seed):
            for what, bad in [("-1", -1), ("1.5", 1.5), ("'abc'", "abc"), ("None", None)]:
                out.append(Case(name, f"seed {what}", "error", _set(name, bad), (name,)))
            out.append(Case(name, "seed True", "error", _set(name, True), (name,)))
            gen = np.random.default_rng(3)
            expect = "valid" if p.generator_ok else "error"
            out.append(Case(name, "a Generator", expect, _set(name, gen), (name,)))
            out.append(Case(name, "a NumPy integer", "valid", _set(name, np.int64(5))))
        elif isinstance(p, Func):
            for bad in (None, 1, "f"):
                out.append(Case(name, f"not callable: {bad!r}", "error", _set(name, bad), (name,)))
        elif isinstance(p, Obj):
            for bad in p.bad:
                what = f"wrong object: {type(bad).__name__}"
                out.append(Case(name, what, "error", _set(name, bad), (name,)))
        elif isinstance(p, Seq):
            for what, bad in [("not a sequence: 1.0", 1.0), ("None", None), ("empty", ())]:
                out.append(Case(name, what, "error", _set(name, bad), (name,)))
            out.append(Case(name, "a list", "valid", _set(name, list(p.valid))))
            for c in _num_cases(name, p.element, dims):
                if c.expect == "error" and "array" not in c.what:
                    value = c.apply({name: None}, dims, None, None)[name]
                    bad = (value, *p.valid[1:])
                    out.append(Case(name, f"element {c.what}", "error", _set(name, bad), (name,)))
        elif isinstance(p, Opts):
            for bad in ("abc", 1, [1, 2]):
                out.append(Case(name, f"options {bad!r}", "error", _set(name, bad), (name,)))
            out.append(Case(name, "empty dict", "valid", _set(name, {})))
        elif isinstance(p, Bool):
            for bad in ("False", "no", "0", None, 0, 1, np.array([p.valid])):
                what = f"not a bool: {type(bad).__name__} {bad!r}"
                out.append(Case(name, what, "error", _set(name, bad), (name,)))
            out.append(Case(name, "a NumPy bool", "valid", _set(name, np.bool_(p.valid))))
    for sym in sorted(_shared_symbols(spec) - set(spec.bound)):
        out.append(_empty_everywhere(spec, sym, kw))
    for b in spec.bad:
        out.append(Case("(relation)", b.what, b.expect, _apply_bad(b), b.names))
    return out


def _empty_everywhere(spec: Spec, sym: str, kw: dict) -> Case:
    """Every axis of size ``sym`` emptied at once (sizes still agree: only emptiness is wrong)."""
    arrays = {n: p for n, p in spec.params.items() if isinstance(p, Arr) and sym in p.shape}
    valid = all(i in p.empty_ok for p in arrays.values() for i, s in enumerate(p.shape) if s == sym)

    def apply(kw, dims, rng, pick):
        out = dict(kw)
        for name, p in arrays.items():
            shape = tuple(0 if s == sym else np.shape(kw[name])[i] for i, s in enumerate(p.shape))
            out[name] = np.zeros(shape, dtype=np.intp if p.index else np.float64)
        return out

    return Case("(shared)", f"every {sym} axis empty", "valid" if valid else "error", apply,
                tuple(arrays))  # fmt: skip


def _apply_bad(b: Bad):
    return lambda kw, dims, rng, pick: b.apply(dict(kw), dims, rng)


def _names(name: str, message: str) -> bool:
    return re.search(rf"(?<![\w.]){re.escape(name)}(?!\w)", message) is not None


def call(fn, kw):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return fn(**kw)


def run_case(spec: Spec, case: Case, kw: dict) -> None:
    """Call with the case applied and check the outcome; raise AssertionError if wrong."""
    try:
        out = call(spec.fn, kw)
    except Exception as exc:  # judged below
        kind, msg = type(exc).__name__, str(exc)
        if case.expect == "edge" and isinstance(exc, spec.edge_accept):
            return  # a documented outcome for extremes with no answer (Spec.edge_accept)
        if case.expect == "valid":
            raise AssertionError(f"[{case.id}] valid input raised {kind}: {msg}") from exc
        if type(exc) not in (ValueError, TypeError):
            raise AssertionError(f"[{case.id}] crashed with {kind}: {msg}") from exc
        if not any(_names(n, msg) for n in case.names):
            raise AssertionError(
                f"[{case.id}] {kind} does not name {' or '.join(case.names)}: {msg}"
            ) from exc
        return
    if case.expect == "error":
        raise AssertionError(f"[{case.id}] invalid input was accepted; returned {out!r:.200}")
    try:
        spec.check(out)
    except AssertionError as exc:
        raise AssertionError(f"[{case.id}] {exc}") from None


def smallest(spec: Spec) -> dict:
    return spec.dims(lambda lo, hi: lo)


def _spd(rng, shape, dims):
    A = rng.normal(size=shape)
    d = shape[-1]
    return A @ np.swapaxes(A, -1, -2) + d * np.eye(d)


def _unit(rng, shape, dims):
    Z = rng.normal(size=shape) + 0.1
    return Z / np.linalg.norm(Z, axis=-1, keepdims=True)


def _positive(rng, shape, dims):
    return rng.uniform(0.5, 2.0, size=shape)


def _zeros(rng, shape, dims):
    return np.zeros(shape)


def _positives(rng, shape, dims):
    """Anchor i's positive: candidate (2 i + 1) mod C, an int array of the given shape."""
    return (2 * np.arange(shape[0], dtype=np.intp) + 1) % dims["C"]


def _exclude(rng, shape, dims):
    return (_positives(rng, shape, dims) + 1) % dims["C"]


def _cosines(rng, shape, dims):
    B, K, _ = shape
    X = _unit(rng, (B, K, 3), dims)
    Y = _unit(rng, (B, K, 3), dims)
    return np.clip(Y @ np.swapaxes(X, -1, -2), -1.0, 1.0)


def _rows(rng, shape, dims):
    """Rows well away from zero (for cosines)."""
    return rng.normal(size=shape) + 2.0


def _set_row_zero(name):
    def apply(kw, dims, rng):
        a = np.array(kw[name], dtype=np.float64)
        a[0] = 0.0
        return {**kw, name: a}

    return apply


def _sizes(**ranges):
    """dims builder: each symbol drawn from its (lo, hi) range, in order."""
    return lambda n: {k: n(*r) for k, r in ranges.items()}


def _batched(n):
    K, B, d = n(2, 3), n(1, 2), n(1, 3)
    return {"K": K, "B": B, "M": K * B, "d": d}


POS = "pos"

_SCORES = Arr(("B", "K", "K"))  # critic scores or cosines: B batches of K x K
_SCORE_DIMS = _sizes(B=(1, 3), K=(2, 4))


def _cosine_above_one(kw, dims, rng):
    S = np.array(kw["cosines"], dtype=np.float64)
    S.flat[0] = 1.5
    return {**kw, "cosines": S}


_LN2 = math.log(2.0)


def _lse_tol(scale: float) -> float:
    """Log-softmax family: 1e-12 (1 + S), S the largest absolute logit (module docstring)."""
    return 1e-12 * (1.0 + scale)


def _rel(want: float, rtol: float) -> float:
    return rtol * abs(want)


def _dot(a, b) -> float:
    return math.fsum(float(x) * float(y) for x, y in zip(a, b, strict=True))


def _loop_log_probs(L, positives=None, include_positive=True):
    """Row-wise log-softmax of the positives of a 2-D list of logits, by loops."""
    out = []
    for i, row in enumerate(L):
        p = i if positives is None else positives[i]
        den = [v for j, v in enumerate(row) if include_positive or j != p]
        out.append(row[p] - logsumexp_list(den))
    return out


def _pairs_of(got, want, tol):
    got = np.atleast_1d(np.asarray(got, dtype=np.float64)).ravel()
    want = np.atleast_1d(np.asarray(want, dtype=np.float64)).ravel()
    assert got.shape == want.shape
    return [(g, w, tol) for g, w in zip(got, want, strict=True)]


def _loop_softmax(row):
    lse = logsumexp_list(row)
    return [math.exp(v - lse) for v in row]


# ================================================================ the tables

SPEC_PACKAGE = "tests.fuzz_specs"


@dataclass(frozen=True)
class Tables:
    """Every module's tables of ``tests/fuzz_specs``, merged (a name may appear once)."""

    specs: dict[str, tuple[Spec, ...]]
    extremes: dict[str, dict[str, Callable]]
    exempt: dict[str, str]
    no_extreme: dict[str, str]

    def spec_items(self) -> dict[str, Spec]:
        """``{"name": spec}``, or ``{"name[i]": spec}`` for a name with several specs."""
        out = {}
        for name, specs in self.specs.items():
            for i, spec in enumerate(specs):
                out[f"{name}[{i}]" if len(specs) > 1 else name] = spec
        return out


def collect(package: str = SPEC_PACKAGE) -> Tables:
    """Import every module of ``package`` and merge its ``SPECS``, ``EXTREMES``, ``EXEMPT``
    and ``NO_EXTREME``; a name defined in two modules is a mistake and raises."""
    merged: dict[str, dict] = {"SPECS": {}, "EXTREMES": {}, "EXEMPT": {}, "NO_EXTREME": {}}
    pkg = importlib.import_module(package)
    for info in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{package}.{info.name}")
        for table, into in merged.items():
            part = getattr(module, table, {})
            twice = set(part) & set(into)
            if twice:
                raise AssertionError(f"{info.name}.{table} repeats {sorted(twice)}")
            into.update(part)
    return Tables(merged["SPECS"], merged["EXTREMES"], merged["EXEMPT"], merged["NO_EXTREME"])
