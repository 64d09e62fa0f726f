"""The chapters' asserts must be able to fail.

A chapter claims something by asserting it. Some asserts claim nothing; the detector below
finds these kinds:

- **a constant condition**: the condition has a value fixed before the notebook runs
  (``assert True``, ``assert 1 < 2``, ``assert math.log(256) > 5``). The detector folds
  constants through arithmetic, comparisons and the pure functions of :mod:`math` and NumPy
  on literals, and through names bound to literals (``K = 256`` and then
  ``assert math.log(K) - 4 > 1``). A notebook is read as one program, top to bottom: a name
  is a literal from its binding to a number, string or tuple (in that cell or an earlier
  one) until a cell binds it to something computed, and never inside (or after) a loop,
  function or block that binds it; a list, set or dict is never a literal;
- **a constant part of the condition**: an operand of ``and``/``or``, or a link of a chained
  comparison, that is constant (``assert x > 0 and 1 < 2``; with ``K = 256``,
  ``assert loss < 1.0 < math.log(K) - 4``, whose second link always holds);
- **an expression compared with itself** (``assert x == x``, ``assert a.mean <= a.mean``;
  a call is not folded, so ``run(0) == run(0)`` can state that a run is reproducible);
- **a claim checked against a number typed in the same cell**, where the typed number is the
  value the claim is compared with (a copy of an output tests the copy, not the claim):
  - an ``==``, ``!=``, ``in`` or ``not in`` comparison with a numeric literal other than 0, 1
    and -1, with a string that is a number, or with a list, tuple or set of such values
    (``["5.545"] * 3``); a numeric literal passed positionally to ``isclose``,
    ``allclose``, ``array_equal`` or a ``numpy.testing`` assertion;
  - a tolerance around a typed target, ``abs(loss - 0.4786) < 1e-4`` (also ``np.abs``,
    ``math.fabs``, a square, a ratio ``x / 0.4786 - 1``, or the difference bracketed on both
    sides, ``-1e-4 < loss - 0.4786 < 1e-4``);
  - a bracket between two typed numbers, ``0.4785 < loss < 0.4787`` or
    ``loss > 0.4785 and loss < 0.4787``.

  The typed target *pins* the claim when it carries three or more significant digits (as
  an output printed at stable precision does) or when the tolerance, or the bracket's width,
  is under 5% of it; a theoretical constant with a loose tolerance (``abs(slope + 0.5) <
  0.1``, the CLT's slope) and a wide band (``0.9 < slope < 1.05``) are claims. Compare with a
  value computed in the cell, or read a published figure from ``infonce_lib.published``.

Thresholds are fine: ``abs(a - b) < 1e-12`` (a computed difference) and ``x > 0.5`` compare
with typed numbers on purpose. The detector reads each code cell with :mod:`ast`; it is
unit-tested below on small snippets, both ways, for every form.
"""

from __future__ import annotations

import ast
import json
import math
import operator
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CHAPTERS = sorted((ROOT / "chapters").glob("*.ipynb"))

ALLOWED_NUMBERS = {0, 1, -1}
EQUALITY_OPS = (ast.Eq, ast.NotEq, ast.In, ast.NotIn)
LESS_OPS = (ast.Lt, ast.LtE)
GREATER_OPS = (ast.Gt, ast.GtE)
ORDER_OPS = (*LESS_OPS, *GREATER_OPS)
CLOSENESS_CALLS = {
    "isclose",
    "allclose",
    "array_equal",
    "array_equiv",
    "assert_equal",
    "assert_array_equal",
    "assert_allclose",
    "assert_almost_equal",
    "assert_array_almost_equal",
    "assert_approx_equal",
}
#: A typed target with this many significant digits was copied from an output.
PIN_DIGITS = 3
#: A tolerance (or a bracket's width) under this fraction of the typed target pins it.
PIN_FRACTION = 0.05
#: Calls of ``abs`` and its NumPy and math spellings: ``abs(D) < tol`` is a tolerance.
ABS_CALLS = {"abs", "np.abs", "numpy.abs", "np.absolute", "numpy.absolute", "math.fabs"}


@dataclass(frozen=True)
class Offence:
    line: int
    what: str
    code: str


# ------------------------------------------------------------------ constant folding


class _NotConstant(Exception):
    """The expression reads a value the cell computes (or one the folder does not know)."""


def _square(x):
    return x * x


_PURE = {
    "log": math.log,
    "log2": math.log2,
    "log10": math.log10,
    "log1p": math.log1p,
    "exp": math.exp,
    "expm1": math.expm1,
    "sqrt": math.sqrt,
    "sin": math.sin,
    "cos": math.cos,
    "tan": math.tan,
    "tanh": math.tanh,
    "floor": math.floor,
    "ceil": math.ceil,
    "fabs": math.fabs,
    "isclose": math.isclose,
}
_NUMPY_ONLY = {
    "abs": abs,
    "absolute": abs,
    "arctan": math.atan,
    "square": _square,
    "power": pow,
    "float64": float,
}
#: Pure functions of constants, by their dotted name in a cell.
FOLDABLE_CALLS = {
    **{f"math.{k}": v for k, v in _PURE.items()},
    "math.atan": math.atan,
    "math.pow": math.pow,
    **{f"{m}.{k}": v for m in ("np", "numpy") for k, v in {**_PURE, **_NUMPY_ONLY}.items()},
    **{k: v for k, v in (("abs", abs), ("min", min), ("max", max), ("round", round))},
    **{k: v for k, v in (("float", float), ("int", int), ("pow", pow), ("len", len))},
    "sum": sum,
}
#: Constants of the math and NumPy modules.
FOLDABLE_ATTRIBUTES = {
    **{f"math.{k}": getattr(math, k) for k in ("pi", "e", "tau", "inf")},
    **{f"{m}.{k}": getattr(math, k) for m in ("np", "numpy") for k in ("pi", "e", "inf")},
}
_BINARY = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_UNARY = {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Not: operator.not_}
_COMPARE = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
    ast.Is: operator.is_,
    ast.IsNot: operator.is_not,
}
_HUGE = 1e6  # larger exponents (or repeated sequences) are not folded


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _dotted(node.value)
        return f"{inner}.{node.attr}" if inner else ""
    return ""


def _fold(node: ast.AST, env: dict):
    """The value of ``node`` if it is fixed before the cell runs; else ``_NotConstant``."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        if node.id in env:
            return env[node.id]
        raise _NotConstant
    if isinstance(node, ast.Attribute):
        name = _dotted(node)
        if name in FOLDABLE_ATTRIBUTES:
            return FOLDABLE_ATTRIBUTES[name]
        raise _NotConstant
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        values = [_fold(e, env) for e in node.elts]
        return tuple(values) if not isinstance(node, ast.Set) else frozenset(values)
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _apply(_UNARY[type(node.op)], _fold(node.operand, env))
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _fold(node.left, env), _fold(node.right, env)
        _refuse_huge(node.op, left, right)
        return _apply(_BINARY[type(node.op)], left, right)
    if isinstance(node, ast.BoolOp):
        values = [_fold(v, env) for v in node.values]
        out = values[0]
        for v in values[1:]:
            out = (out and v) if isinstance(node.op, ast.And) else (out or v)
        return out
    if isinstance(node, ast.Compare):
        operands = [_fold(node.left, env), *(_fold(c, env) for c in node.comparators)]
        pairs = zip(node.ops, operands[:-1], operands[1:], strict=True)
        return all(_apply(_COMPARE[type(op)], a, b) for op, a, b in pairs)
    if isinstance(node, ast.IfExp):
        return _fold(node.body if _fold(node.test, env) else node.orelse, env)
    if isinstance(node, ast.Subscript):
        return _apply(operator.getitem, _fold(node.value, env), _fold(node.slice, env))
    if isinstance(node, ast.Call):
        func = FOLDABLE_CALLS.get(_dotted(node.func))
        if func is None or any(isinstance(a, ast.Starred) for a in node.args):
            raise _NotConstant
        args = [_fold(a, env) for a in node.args]
        kwargs = {k.arg: _fold(k.value, env) for k in node.keywords if k.arg is not None}
        if len(kwargs) != len(node.keywords):
            raise _NotConstant
        return _apply(func, *args, **kwargs)
    raise _NotConstant


def _refuse_huge(op: ast.operator, left, right) -> None:
    if isinstance(op, ast.Pow) and isinstance(right, (int, float)) and abs(right) > 1_000:
        raise _NotConstant
    if isinstance(op, ast.Mult):
        for a, b in ((left, right), (right, left)):
            if isinstance(a, (str, tuple)) and isinstance(b, int) and b * len(a) > _HUGE:
                raise _NotConstant


def _apply(func, *args, **kwargs):
    try:
        return func(*args, **kwargs)
    except (ArithmeticError, ValueError, TypeError, KeyError, IndexError):
        raise _NotConstant from None


def _is_constant(node: ast.AST, env: dict) -> bool:
    try:
        _fold(node, env)
    except _NotConstant:
        return False
    return True


def _bound_names(node: ast.AST) -> set[str]:
    """Every name that ``node`` binds anywhere inside it (assignment targets, loop and
    comprehension variables, parameters, definitions, imports, ``as`` names)."""
    names = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
            names.add(n.id)
        elif isinstance(n, ast.arg):
            names.add(n.arg)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(n.name)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in n.names)
        elif isinstance(n, ast.ExceptHandler) and n.name:
            names.add(n.name)
        elif isinstance(n, (ast.MatchAs, ast.MatchStar)) and n.name:
            names.add(n.name)
    return names


def _bind(target: ast.AST, value, env: dict) -> None:
    """Record ``target = value`` (``value`` is ``_NotConstant`` when computed)."""
    if isinstance(target, ast.Name):
        if value is _NotConstant:
            env.pop(target.id, None)
        else:
            env[target.id] = value
    elif (
        isinstance(target, (ast.Tuple, ast.List))
        and isinstance(value, tuple)
        and len(value) == len(target.elts)
        and not any(isinstance(e, ast.Starred) for e in target.elts)
    ):
        for t, v in zip(target.elts, value, strict=True):
            _bind(t, v, env)
    else:
        for name in _bound_names(target):
            env.pop(name, None)


def _literal_value(node: ast.AST | None, env: dict):
    """The value bound by ``name = node`` if it is a literal (``_NotConstant`` if not). A
    list, set or dict is never a literal: the cell may change it in place."""
    mutable = (ast.List, ast.Set, ast.Dict, ast.ListComp, ast.SetComp, ast.DictComp)
    if node is None or any(isinstance(n, mutable) for n in ast.walk(node)):
        return _NotConstant
    try:
        return _fold(node, env)
    except _NotConstant:
        return _NotConstant


def _asserts_with_env(tree: ast.Module, env: dict):
    """Each assert of the cell with the literal bindings in force where it runs; ``env``
    (the bindings of the cells before) is updated to those after the cell."""
    for stmt in tree.body:
        if isinstance(stmt, ast.Assert):
            yield stmt, dict(env)
        elif isinstance(stmt, ast.Assign):
            value = _literal_value(stmt.value, env)
            for target in stmt.targets:
                _bind(target, value, env)
        elif isinstance(stmt, ast.AnnAssign):
            _bind(stmt.target, _literal_value(stmt.value, env), env)
        elif isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
            new = ast.BinOp(left=ast.Name(stmt.target.id, ast.Load()), op=stmt.op, right=stmt.value)
            _bind(stmt.target, _literal_value(new, env), env)
        else:
            # A block may bind a name many times (a loop) or not at all (a branch): inside
            # it and after it, every name it binds is computed.
            for name in _bound_names(stmt):
                env.pop(name, None)
            for node in ast.walk(stmt):
                if isinstance(node, ast.Assert):
                    yield node, dict(env)


# ------------------------------------------------------------------ typed numbers


def _number(node: ast.AST) -> complex | None:
    """The value of a numeric literal (``2.5``, ``-3``), else None."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        inner = _number(node.operand)
        if inner is None:
            return None
        return -inner if isinstance(node.op, ast.USub) else inner
    if isinstance(node, ast.Constant) and not isinstance(node.value, bool):
        if isinstance(node.value, (int, float, complex)):
            return node.value
    return None


def _numeric_string(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        try:
            float(node.value.replace(",", "").replace("_", ""))
        except ValueError:
            return False
        return True
    return False


def _typed_value(node: ast.AST) -> bool:
    """A number typed in the code: a literal other than 0, 1, -1; a numeric string; a
    list, tuple or set of typed values (or of 0, 1, -1 with at least one typed value);
    such a sequence repeated (``["5.545"] * 3``)."""
    value = _number(node)
    if value is not None:
        return value not in ALLOWED_NUMBERS
    if _numeric_string(node):
        return True
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)) and node.elts:
        elements_ok = all(_typed_value(e) or _number(e) is not None for e in node.elts)
        return elements_ok and any(_typed_value(e) for e in node.elts)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        return _typed_value(node.left) or _typed_value(node.right)
    return False


def _significant_digits(value) -> int:
    digits = Decimal(repr(abs(value))).normalize().as_tuple().digits
    return max(1, len(digits))


def _pins(target, tolerance) -> bool:
    """Whether a typed ``target`` with this ``tolerance`` (a number, or None when computed)
    pins the claim to a copied value."""
    if target in ALLOWED_NUMBERS or isinstance(target, complex):
        return False
    if _significant_digits(target) >= PIN_DIGITS:
        return True
    return tolerance is not None and abs(tolerance) < PIN_FRACTION * abs(target)


def _sum_terms(node: ast.AST) -> list[ast.AST]:
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
        return _sum_terms(node.left) + _sum_terms(node.right)
    return [node]


def _targets(node: ast.AST) -> list:
    """The typed numbers a deviation ``node`` is measured from: the numeric literals among
    the terms of its sum (``loss - 0.4786``) and, in a ratio's deviation from 1
    (``x / 2.718 - 1``), the literal it divides by. A coefficient (``a - 2 * b``) is part of
    a formula, not a target."""
    terms = _sum_terms(node)
    literals = [v for v in map(_number, terms) if v is not None]
    if any(v in (1, -1) for v in literals):
        for t in terms:
            if isinstance(t, ast.BinOp) and isinstance(t.op, ast.Div):
                literals += [v for v in (_number(t.left), _number(t.right)) if v is not None]
    return literals


def _deviation(node: ast.AST) -> ast.AST | None:
    """``D`` when ``node`` is ``abs(D)`` (or a spelling of it) or ``D ** 2``."""
    if isinstance(node, ast.Call) and _dotted(node.func) in ABS_CALLS and len(node.args) == 1:
        return node.args[0]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow) and _number(node.right) == 2:
        return node.left
    return None


def _tolerance_offence(small: ast.AST, large: ast.AST) -> bool:
    """``small < large``: is ``small`` a deviation from a pinned typed target?"""
    inner = _deviation(small)
    if inner is None:
        return False
    tolerance = _number(large)
    return any(_pins(t, tolerance) for t in _targets(inner))


def _bracket_offence(low, middle: ast.AST, high) -> bool:
    """``low < middle < high`` with typed ``low`` and ``high`` (None when not typed): is the
    claim pinned to a copied value?"""
    if low is None or high is None or isinstance(low, complex) or isinstance(high, complex):
        return False
    # a deviation bracketed on both sides: -1e-4 < loss - 0.4786 < 1e-4
    if any(_pins(t, (high - low) / 2) for t in _targets(middle)):
        return True
    # a value between two typed numbers: 0.4785 < loss < 0.4787
    width, scale = high - low, max(abs(low), abs(high))
    return 0 <= width < PIN_FRACTION * scale


def _order(op: ast.cmpop, left: ast.AST, right: ast.AST) -> tuple[ast.AST, ast.AST] | None:
    """``(small, large)`` for an ordering comparison ``left op right``."""
    if isinstance(op, LESS_OPS):
        return left, right
    if isinstance(op, GREATER_OPS):
        return right, left
    return None


def _compare_offences(node: ast.Compare) -> list[str]:
    found = []
    operands = [node.left, *node.comparators]
    triples = list(zip(node.ops, operands[:-1], operands[1:], strict=True))
    for op, left, right in triples:
        if isinstance(op, EQUALITY_OPS) and (_typed_value(left) or _typed_value(right)):
            found.append("compared with a typed number")
        if ast.dump(left) == ast.dump(right) and not any(
            isinstance(n, ast.Call) for n in ast.walk(left)
        ):
            found.append("compares an expression with itself")
        pair = _order(op, left, right)
        if pair and _tolerance_offence(*pair):
            found.append("checked against a typed number (a tolerance around it)")
    if len(triples) == 2 and all(isinstance(op, ORDER_OPS) for op in node.ops):
        (op1, a, b), (op2, _, c) = triples
        same_way = isinstance(op1, LESS_OPS) == isinstance(op2, LESS_OPS)
        low, high = (a, c) if isinstance(op1, LESS_OPS) else (c, a)
        if same_way and _bracket_offence(_number(low), b, _number(high)):
            found.append("checked against typed numbers (a bracket around a value)")
    return found


def _conjunction_brackets(node: ast.BoolOp) -> list[str]:
    """``x > 0.4785 and x < 0.4787``: one expression bounded on both sides by literals."""
    if not isinstance(node.op, ast.And):
        return []
    bounds: dict[str, dict[str, object]] = {}
    middles = {}
    for value in node.values:
        if not (isinstance(value, ast.Compare) and len(value.ops) == 1):
            continue
        pair = _order(value.ops[0], value.left, value.comparators[0])
        if pair is None:
            continue
        small, large = pair
        for side, bound, expr in (("high", large, small), ("low", small, large)):
            number = _number(bound)
            if number is not None and _number(expr) is None:
                key = ast.dump(expr)
                bounds.setdefault(key, {})[side] = number
                middles[key] = expr
    return [
        "checked against typed numbers (a bracket around a value)"
        for key, b in bounds.items()
        if _bracket_offence(b.get("low"), middles[key], b.get("high"))
    ]


def _parts(node: ast.AST):
    """The claims that ``node`` makes together: the operands of its ``and``/``or`` (through
    ``not``) and the links of its chained comparisons (``a < b < c`` is ``a < b and b < c``)."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        yield from _parts(node.operand)
    elif isinstance(node, ast.BoolOp):
        for v in node.values:
            yield v
            yield from _parts(v)
    elif isinstance(node, ast.Compare) and len(node.ops) > 1:
        operands = [node.left, *node.comparators]
        for op, a, b in zip(node.ops, operands[:-1], operands[1:], strict=True):
            yield ast.Compare(left=a, ops=[op], comparators=[b])


def _call_name(node: ast.Call) -> str:
    func = node.func
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return ""


def _assert_offences(node: ast.Assert, env: dict) -> list[str]:
    local = {k: v for k, v in env.items() if k not in _bound_names(node.test)}
    if _is_constant(node.test, local):
        return ["assert on a constant"]
    found = []
    if any(_is_constant(v, local) for v in _parts(node.test)):
        found.append("a constant part of the condition")
    for sub in ast.walk(node.test):
        if isinstance(sub, ast.Compare):
            found.extend(_compare_offences(sub))
        elif isinstance(sub, ast.BoolOp):
            found.extend(_conjunction_brackets(sub))
        elif isinstance(sub, ast.Call) and _call_name(sub) in CLOSENESS_CALLS:
            if any(_typed_value(a) for a in sub.args):
                found.append("compared with a typed number")
    return found


def find_offences(source: str, env: dict | None = None) -> list[Offence]:
    """Asserts in ``source`` (one code cell) that cannot fail or check a typed number.

    ``env`` holds the names that the cells before bound to literals (the notebook runs top
    to bottom); it is updated with this cell's bindings.
    """
    env = {} if env is None else env
    if source.lstrip().startswith("%%"):
        return []  # a cell magic: not Python
    # Line magics and shell escapes are not Python either; keep the line numbers.
    lines = [
        "pass" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines()
    ]
    tree = ast.parse("\n".join(lines))
    src_lines = source.splitlines()
    found = set()
    for node, local in _asserts_with_env(tree, env):
        code = src_lines[node.lineno - 1].strip()
        for what in _assert_offences(node, local):
            found.add(Offence(node.lineno, what, code))
    return sorted(found, key=lambda o: (o.line, o.what))


def notebook_offences(path: Path) -> list[str]:
    """``chapter, cell index, line: what: code`` for every offence in a notebook."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    messages, env = [], {}
    for index, cell in enumerate(cells):
        if cell["cell_type"] != "code":
            continue
        source = "".join(cell["source"])
        for o in find_offences(source, env):
            messages.append(f"{path.stem}, cell {index}, line {o.line}: {o.what}: {o.code}")
    return messages


# ------------------------------------------------------------------ the detector itself

#: (snippet, what the detector must report for it), one or more examples of every form.
OFFENDING = [
    # constant conditions
    ("assert True", "assert on a constant"),
    ("assert 1 < 2", "assert on a constant"),
    ("assert (1, 2)", "assert on a constant"),
    ("assert not 0", "assert on a constant"),
    ("assert math.log(256) > 5", "assert on a constant"),
    ("assert np.log(256) > 5", "assert on a constant"),
    ("assert numpy.sqrt(2.0) > 1 and math.pi > 3", "assert on a constant"),
    ("assert round(math.exp(1), 3) == 2.718", "assert on a constant"),
    ("K = 256\nassert math.log(K) - 4 > 1", "assert on a constant"),
    ("K = 256\nassert 1.0 < math.log(K) - 4", "assert on a constant"),
    ("K, D = 256, 8\nassert math.log(K) > D / 2", "assert on a constant"),
    ("K = 256\nlog_k = math.log(K)\nassert log_k > 5", "assert on a constant"),
    ("K = 128\nK *= 2\nassert K == 256", "assert on a constant"),
    ("K = 256\nfor t in (0.1, 0.2):\n    assert math.log(K) > 5", "assert on a constant"),
    ("name = 'worked example'\nassert name == 'worked example'", "assert on a constant"),
    # constant parts: operands of and/or, links of a chained comparison
    ("assert x > 0 and 1 < 2", "a constant part of the condition"),
    ("assert x > 0 or math.pi > 3", "a constant part of the condition"),
    ("assert not (f(x) and np.log(256) > 5)", "a constant part of the condition"),
    ("K = 256\nassert loss > 0 and math.log(K) > 5", "a constant part of the condition"),
    ("K = 256\nassert loss < 1.0 < math.log(K) - 4", "a constant part of the condition"),
    ("assert 0 < 1 < loss", "a constant part of the condition"),
    # an expression compared with itself
    ("assert x == x", "compares an expression with itself"),
    ("assert stats.mean <= stats.mean", "compares an expression with itself"),
    ("assert a[0] + b >= a[0] + b", "compares an expression with itself"),
    # equality with a typed number
    ("x = f()\nassert x == 5.545", "compared with a typed number"),
    ("assert 5.545 == x", "compared with a typed number"),
    ("assert loss != 2", "compared with a typed number"),
    ("assert f(x) == -3", "compared with a typed number"),
    ("assert round(loss, 3) == 0.479", "compared with a typed number"),
    ("assert text == '5.545'", "compared with a typed number"),
    ("assert texts == ['5.545'] * 3", "compared with a typed number"),
    ("assert texts == ('0.1', '0.2')", "compared with a typed number"),
    ("assert best in (1.0, 2.0)", "compared with a typed number"),
    ("assert k not in [2, 3]", "compared with a typed number"),
    ("assert len(queue) == 10", "compared with a typed number"),
    ("assert a > 0 and b == 0.25", "compared with a typed number"),
    ("assert np.isclose(loss, 0.4786)", "compared with a typed number"),
    ("assert math.isclose(0.4786, loss, rel_tol=1e-3)", "compared with a typed number"),
    ("np.random.seed(0)\nassert np.allclose(x, [0.5, 0.25])", "compared with a typed number"),
    ("assert np.array_equal(x, 2.5)", "compared with a typed number"),
    ("%time y = f()\nassert y == 7", "compared with a typed number"),
    # a tolerance around a typed target
    ("assert abs(loss - 0.4786) < 1e-4", "a tolerance around it"),
    ("assert np.abs(0.4786 - loss) <= 1e-4", "a tolerance around it"),
    ("assert 1e-4 > math.fabs(loss - 0.4786)", "a tolerance around it"),
    ("assert (loss - 0.4786) ** 2 < 1e-8", "a tolerance around it"),
    ("assert abs(loss / 0.4786 - 1) < 1e-3", "a tolerance around it"),
    ("assert abs(loss - 0.48) < 1e-4", "a tolerance around it"),
    ("assert abs(loss - 4.159) < 3 * se", "a tolerance around it"),
    ("assert -1e-4 < loss - 0.4786 < 1e-4", "a bracket around a value"),
    # a bracket between typed numbers
    ("assert 0.4785 < loss < 0.4787", "a bracket around a value"),
    ("assert 0.4787 >= loss >= 0.4785", "a bracket around a value"),
    ("assert loss > 0.4785 and loss < 0.4787", "a bracket around a value"),
    ("assert 0.4785 < f(x).loss and f(x).loss <= 0.4787", "a bracket around a value"),
]

ACCEPTED = [
    "assert abs(loss - by_hand) < 1e-12",
    "assert x > 0.5 and y <= 2.0",
    "assert report.passed, report.checks_text()",
    "assert loss == expected",
    "assert np.sum(a != b) == 1",
    "assert n == 0 and m == -1",
    "assert name == 'worked example'",
    "assert text == f'{value:.4f}'",
    "assert best in SCALES[1:3]",
    "assert np.allclose(a, b, rtol=1e-10, atol=1e-15)",
    "assert math.isclose(a, b, rel_tol=1e-9)",
    "x = 5.545  # typed values outside an assert are not claims\nprint(x == 5.545)",
    "assert len(queue) == queue.capacity",
    "assert flags == [True, False]",
    "%%bash\necho 'assert True'",
    # computed values beside literal-bound names, and names rebound to computed values
    "K = 256\nassert abs(loss - math.log(K)) < 1e-12",
    "Q = 10\nassert len(queue) == Q",
    "K = 256\nK = f(K)\nassert math.log(K) > 5",
    "K = 256\nfor K in (8, 64):\n    assert abs(loss(K) - math.log(K)) < 1e-12",
    "for K in (8, 64):\n    assert math.log(K) > 2",
    "def f(K=256):\n    assert math.log(K) > 5",
    "assert all(math.log(K) > 2 for K in sizes)",
    "assert np.all(losses <= math.log(4))",
    "assert math.log(4) - losses[-1] < 1e-2",
    # a theoretical constant with a loose tolerance, a wide band, computed bounds
    "assert abs(slope + 0.5) < 0.1",
    "assert abs(slope_mean + 1.0) < 0.2",
    "assert 0.9 < slope < 1.05",
    "assert -0.2 < deviation < 0.2",
    "assert 0 < value < truth",
    "assert x > 0.4 and x < 0.6",
    "assert abs(a - 2 * b) < 1e-12",
    "assert abs(r.mean() / math.exp(2 * info) - 1) < 0.05",
    "assert abs(x - y) < 1e-9 and x > 0",
    "assert abs(g) > 1e-10",
    "assert run(seed=0).value == run(seed=0).value",
    # a list can change in place: it is never folded as a literal
    "sizes = [8, 64]\nsizes.append(256)\nassert len(sizes) > 2",
    "assert loss < 1.0 < math.log(K) - 4",
]


@pytest.mark.parametrize(("source", "what"), OFFENDING, ids=[s for s, _ in OFFENDING])
def test_detector_flags(source, what):
    found = find_offences(source)
    assert found, source
    assert any(what in o.what for o in found), (source, found)


@pytest.mark.parametrize("source", ACCEPTED)
def test_detector_accepts(source):
    assert find_offences(source) == [], source


def test_every_form_has_an_example_both_ways():
    forms = {what for _, what in OFFENDING}
    assert forms == {
        "assert on a constant",
        "a constant part of the condition",
        "compares an expression with itself",
        "compared with a typed number",
        "a tolerance around it",
        "a bracket around a value",
    }


def test_literals_carry_over_from_the_cells_before():
    env: dict = {}
    assert find_offences("K = 256\nZ = f(K)", env) == []
    assert env == {"K": 256}
    found = find_offences("assert rows[0] < 1.0 < math.log(K) - 4", env)
    assert [o.what for o in found] == ["a constant part of the condition"]
    # rebinding K to a computed value (in a loop, here) ends it
    assert find_offences("for K in sizes:\n    pass\nassert math.log(K) > 5", env) == []
    assert "K" not in env


def _notebook(tmp_path, *sources):
    nb = {"cells": [{"cell_type": "code", "source": [s]} for s in sources]}
    path = tmp_path / "09_example.ipynb"
    path.write_text(json.dumps(nb), encoding="utf-8")
    return path


def test_a_notebook_is_read_as_one_program(tmp_path):
    path = _notebook(tmp_path, "K = 256", "assert math.log(K) > 5")
    assert notebook_offences(path) == [
        "09_example, cell 1, line 1: assert on a constant: assert math.log(K) > 5"
    ]
    path = _notebook(tmp_path, "K = 256", "K = len(data)", "assert math.log(K) > 5")
    assert notebook_offences(path) == []


def test_message_names_chapter_cell_and_line(tmp_path):
    nb = {
        "cells": [
            {"cell_type": "markdown", "source": ["assert True"]},
            {"cell_type": "code", "source": ["x = f()\n", "assert x == 2.5\n"]},
        ]
    }
    path = tmp_path / "09_example.ipynb"
    path.write_text(json.dumps(nb), encoding="utf-8")
    assert notebook_offences(path) == [
        "09_example, cell 1, line 2: compared with a typed number: assert x == 2.5"
    ]


# ------------------------------------------------------------------ the chapters


def test_every_chapter_is_checked():
    """The chapters are found (an empty glob would make the test below vacuous)."""
    assert len(CHAPTERS) >= 7, CHAPTERS


@pytest.mark.parametrize("path", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_chapter_asserts_can_fail(path):
    """Every chapter: an offence in any of them fails."""
    offences = notebook_offences(path)
    assert not offences, "\n".join(offences)
