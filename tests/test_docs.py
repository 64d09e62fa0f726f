"""The book's reference pages cover the library: every public name and every experiment."""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path

import infonce_lib
from infonce_lib.experiments import EXPERIMENTS

ROOT = Path(__file__).resolve().parent.parent
TEMPLATE_MEMBERS = "NAME, SUMMARY, CHAPTER, Config, Result, run, tables, checks, report"


def test_every_public_name_is_on_the_api_page_in_the_package_namespace():
    page = (ROOT / "reference" / "api.md").read_text()
    documented = re.findall(r"^\.\. auto(?:function|class|data):: infonce_lib\.(\w+)$", page, re.M)
    assert len(documented) == len(set(documented)), "a name is documented twice"
    missing = sorted(set(infonce_lib.__all__) - set(documented))
    assert not missing, f"public names not on reference/api.md as infonce_lib.<name>: {missing}"
    stale = sorted(set(documented) - set(infonce_lib.__all__))
    assert not stale, f"reference/api.md documents names that are not public: {stale}"


def test_every_experiment_module_is_on_the_api_page():
    page = (ROOT / "reference" / "api.md").read_text()
    for module in EXPERIMENTS.values():
        entry = f".. automodule:: {module.__name__}\n   :members: {TEMPLATE_MEMBERS}\n"
        assert entry in page, f"{module.__name__} is not on reference/api.md"


def test_every_experiment_is_on_the_reproduce_page():
    page = (ROOT / "reference" / "reproduce.md").read_text()
    missing = [n for n in EXPERIMENTS if f"python -m infonce_lib reproduce {n}" not in page]
    assert not missing, f"experiments not on reference/reproduce.md: {missing}"
    listed = set(re.findall(r"python -m infonce_lib reproduce ([a-z0-9][a-z0-9-]*)", page))
    stale = listed - set(EXPERIMENTS)
    assert not stale, f"reference/reproduce.md lists experiments that do not exist: {stale}"


def test_default_chunk_size_has_its_own_description_on_the_api_page():
    # autodoc documents infonce_lib.<name> from the package's __init__.py: without a "#:"
    # comment on an assignment there, an int is shown with Python's help text for int.
    from sphinx.pycode import ModuleAnalyzer

    page = (ROOT / "reference" / "api.md").read_text()
    assert re.search(r"^\.\. autodata:: infonce_lib\.DEFAULT_CHUNK_SIZE$", page, re.M)
    docs = ModuleAnalyzer.for_module("infonce_lib").find_attr_docs()
    comment = " ".join(docs.get(("", "DEFAULT_CHUNK_SIZE"), []))
    assert "block edge" in comment and "int([x])" not in comment
    assert infonce_lib.DEFAULT_CHUNK_SIZE is infonce_lib.core.DEFAULT_CHUNK_SIZE


def _public_constants() -> list[str]:
    return [
        name
        for name in infonce_lib.__all__
        if not callable(getattr(infonce_lib, name))
        and not isinstance(getattr(infonce_lib, name), types.ModuleType)
    ]


def test_every_public_constant_has_its_own_description_on_the_api_page():
    # autodoc documents infonce_lib.<NAME> from __init__.py, where most constants are only
    # re-exported; there it finds no "#:" comment and shows the docstring of the value's type
    # (Python's help text for int, tuple or mappingproxy; a shared class's docstring).
    # _ext/book_extras.py shows the "#:" comment of the defining module instead; a constant
    # without one may keep the docstring of a private class written for it alone.
    sys.path.insert(0, str(ROOT / "_ext"))
    try:
        from book_extras import constant_description
    finally:
        sys.path.remove(str(ROOT / "_ext"))

    constants = _public_constants()
    assert {"DEFAULT_CHUNK_SIZE", "ESTIMATORS", "BETA_BOUNDS", "PUBLISHED"} <= set(constants)
    page = (ROOT / "reference" / "api.md").read_text()
    without = []
    for name in constants:
        assert re.search(rf"^\.\. autodata:: infonce_lib\.{name}$", page, re.M), name
        value = getattr(infonce_lib, name)
        described = " ".join(constant_description(name)).strip()
        own_class = type(value).__module__.startswith("infonce_lib") and type(
            value
        ).__name__.startswith("_")
        if not described and own_class:
            described = (type(value).__doc__ or "").strip()
        builtin = (type(value).__doc__ or "").strip()
        if len(described) < 40 or (described == builtin and not own_class):
            without.append(name)
    assert not without, f"public constants shown without a description of their own: {without}"
