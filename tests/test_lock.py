"""The lock files agree with each other, with pyproject.toml and with the running environment.

``requirements/test.txt`` is the full lock; ``book.txt`` and ``lab.txt`` are the subsets that
``make book`` and ``make lab`` install. A hand edit, a lock refreshed without its subsets, or a
``.venv`` that drifted from the lock fails here (``make lock`` regenerates all three).
"""

from __future__ import annotations

import re
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
from packaging.markers import Marker
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parent.parent
LOCKS = ROOT / "requirements"


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _pins(lock: str) -> dict[str, tuple[str, str | None]]:
    """``{name: (version, marker)}`` of one lock file."""
    pins = {}
    for line in (LOCKS / lock).read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        req = Requirement(line)
        (spec,) = req.specifier
        assert spec.operator == "==", f"{lock}: {line!r} is not an exact pin"
        pins[_canonical(req.name)] = (spec.version, str(req.marker) if req.marker else None)
    return pins


def test_subsets_pin_the_same_versions_as_the_full_lock():
    full = _pins("test.txt")
    for lock in ("book.txt", "lab.txt"):
        for name, (version, _) in _pins(lock).items():  # markers may differ: needed by fewer
            assert name in full, f"{lock} pins {name}, test.txt does not"
            assert full[name][0] == version, f"{lock}: {name} {version}, test.txt {full[name][0]}"
    assert set(_pins("book.txt")) < set(_pins("lab.txt")) < set(full)


@pytest.mark.parametrize(
    ("lock", "extras"),
    [("book.txt", ["book"]), ("lab.txt", ["book", "lab"]), ("test.txt", ["book", "lab", "test"])],
)
def test_every_declared_dependency_is_locked_within_its_range(lock, extras):
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    declared = list(project["dependencies"])
    for extra in extras:
        declared += project["optional-dependencies"][extra]
    pins = _pins(lock)
    for line in declared:
        req = Requirement(line)
        name = _canonical(req.name)
        assert name in pins, f"{lock} does not lock {req.name} (run `make lock`)"
        assert req.specifier.contains(pins[name][0]), f"{lock}: {name} {pins[name][0]} vs {req}"


def test_the_environment_runs_the_locked_versions():
    """What the tests run with is what the lock says (a stale .venv fails here)."""
    wrong = []
    for name, (version, marker) in _pins("test.txt").items():
        if marker and not Marker(marker).evaluate():
            continue
        try:
            installed = metadata.version(name)
        except metadata.PackageNotFoundError:
            wrong.append(f"{name} missing (locked {version})")
            continue
        if installed != version:
            wrong.append(f"{name} {installed} (locked {version})")
    assert not wrong, (
        "the environment differs from requirements/test.txt (reinstall: rm .venv/.installed-*; "
        "make test): " + ", ".join(wrong)
    )


def test_the_book_build_has_the_myst_renderer_for_the_in_browser_edition():
    """`make book` installs book.txt only; `jupyter lite build` bundles the JupyterLab
    extensions installed beside it, and without jupyterlab-myst the in-browser chapters show
    their admonitions, exercises and {eval} values as raw markup."""
    assert "jupyterlab-myst" in _pins("book.txt")
