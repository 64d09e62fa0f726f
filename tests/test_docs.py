"""The book's reference pages cover the library: every public name and every experiment."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import infonce_lib
from infonce_lib.reproduce import EXPERIMENTS

ROOT = Path(__file__).resolve().parent.parent


def test_every_public_name_is_on_the_api_page():
    page = (ROOT / "chapters" / "api.md").read_text()
    documented = set(re.findall(r"\.\. automodule:: (infonce_lib\.\w+)\n\s+:members:", page))
    missing = []
    for name in infonce_lib.__all__:
        obj = getattr(infonce_lib, name)
        module = getattr(obj, "__module__", None)
        if module is None:  # a constant: look for the module that exports it
            module = next(
                m for m in documented if name in getattr(importlib.import_module(m), "__all__", [])
            )
        if module not in documented or name not in importlib.import_module(module).__all__:
            missing.append(f"{name} ({module})")
    assert not missing, f"public names not on chapters/api.md: {missing}"


def test_every_experiment_is_on_the_reproduce_page():
    page = (ROOT / "chapters" / "reproduce.md").read_text()
    missing = [n for n in EXPERIMENTS if f"python -m infonce_lib reproduce {n}" not in page]
    assert not missing, f"experiments not on chapters/reproduce.md: {missing}"
    listed = set(re.findall(r"python -m infonce_lib reproduce ([a-z0-9][a-z0-9-]*)", page))
    stale = listed - set(EXPERIMENTS)
    assert not stale, f"chapters/reproduce.md lists experiments that do not exist: {stale}"
