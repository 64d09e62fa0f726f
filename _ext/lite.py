"""Run each chapter in the reader's browser: JupyterLite with the Pyodide kernel.

jupyterlite-sphinx builds a JupyterLite site into ``_build/html/lite`` at the end of the HTML
build. Before that, this extension prepares its inputs in ``_build/lite-src`` (the
``jupyterlite_dir`` of ``_config.yml``):

- ``wheels/``: a wheel of ``infonce_lib`` built from this checkout; JupyterLite's piplite serves
  it from the site, so the browser installs the book's own library, never one from PyPI;
- ``contents/chapters/``: a copy of every chapter for the browser, kernel set to Pyodide's, with
  one first cell that installs that wheel (``%pip install infonce-lib``) and builds
  Matplotlib's font cache without the notice Matplotlib prints on stderr while it does (a
  fresh Pyodide file system has no cache). The copy keeps the stored outputs, so a chapter
  opens with its figures and tables as in JupyterLab, and marks every cell trusted
  (``metadata.trusted``, which JupyterLite reads; there is no notebook signature in the
  browser), since the outputs are the ones the book's own build stored and tested;
- ``jupyter_lite_config.json`` and ``jupyter-lite.json``: the wheel, no source maps, and
  ``disablePyPIFallback`` so that nothing is fetched from PyPI at run time;
- ``static/pyodide/``: only with ``PYODIDE=local`` in the environment (``make book
  PYODIDE=local``): Pyodide and the packages the chapters need, each file checked against the
  official ``pyodide-lock.json`` by ``tools/pyodide_bundle.py``. Without it, Pyodide comes from
  the official Pyodide distribution on the web (JupyterLite's default).

Each page built from a notebook gets a "JupyterLite" entry in the header's launch menu that
opens ``lite/notebooks/index.html?path=chapters/<name>.ipynb``.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

INSTALL_CELL = (
    "# In the browser (JupyterLite): install the book's library, served with this site, and\n"
    "# let Matplotlib build its font cache now without printing a notice about it.\n"
    "%pip install -q infonce-lib\n"
    "import logging\n"
    "\n"
    'logging.getLogger("matplotlib.font_manager").setLevel(logging.ERROR)\n'
    "import matplotlib.font_manager  # noqa: E402\n"
    "\n"
    'logging.getLogger("matplotlib.font_manager").setLevel(logging.NOTSET)'
)
PYODIDE_KERNELSPEC = {
    "name": "python",
    "display_name": "Python (Pyodide)",
    "language": "python",
}
LITE_NOTEBOOKS_URL = "lite/notebooks/index.html"
# The Pyodide kernel imports `comm`, which is not part of the Pyodide distribution; with PyPI
# switched off at run time the site serves it (pure Python, from PyPI, sha256 pinned).
EXTRA_WHEELS = {
    "comm-0.2.2-py3-none-any.whl": (
        "e6fb86cb70ff661ee8c9c14e7d36d6de3b4066f1441be4063df9c5009f0a64d3"
    ),
}


def _root(app) -> Path:
    return Path(app.srcdir)


def _lite_src(app) -> Path:
    return _root(app) / app.config.jupyterlite_dir


def build_wheel(root: Path, dest: Path) -> Path:
    """Build the ``infonce_lib`` wheel from a clean copy of the sources (no files left behind)."""
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "src"
        src.mkdir()
        for name in ("pyproject.toml", "README.md"):
            shutil.copy2(root / name, src / name)
        shutil.copytree(
            root / "infonce_lib", src / "infonce_lib", ignore=shutil.ignore_patterns("__pycache__")
        )
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "wheel",
                "--quiet",
                "--no-deps",
                "-w",
                str(dest),
                str(src),
            ],
            check=True,
        )
    (wheel,) = dest.glob("infonce_lib-*.whl")
    return wheel


def fetch_pinned_wheels(cache: Path) -> list[Path]:
    """Download (once) the wheels of EXTRA_WHEELS with pip and check their sha256."""
    cache.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, sha256 in EXTRA_WHEELS.items():
        path = cache / name
        if not path.exists():
            project, version = name.split("-")[:2]
            pip = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps"]
            subprocess.run(
                [*pip, "--only-binary", ":all:", f"{project}=={version}", "-d", str(cache)],
                check=True,
            )
        got = hashlib.sha256(path.read_bytes()).hexdigest()
        if got != sha256:
            raise RuntimeError(f"{path}: sha256 {got}, expected {sha256}")
        paths.append(path)
    return paths


def lite_notebook(nb: dict) -> dict:
    """The browser copy of a chapter: stored outputs kept and trusted, Pyodide kernel, an
    install cell first. Written with ``json``: nbformat would drop ``metadata.trusted``."""
    nb = copy.deepcopy(nb)
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            cell.setdefault("metadata", {})["trusted"] = True
    install = {
        "cell_type": "code",
        "execution_count": None,
        "id": "install-infonce-lib",
        "metadata": {"trusted": True},
        "outputs": [],
        "source": INSTALL_CELL,
    }
    nb["cells"].insert(0, install)
    nb["metadata"]["kernelspec"] = dict(PYODIDE_KERNELSPEC)
    return nb


def chapter_notebooks(root: Path) -> list[Path]:
    return sorted((root / "chapters").glob("*.ipynb"))


def prepare(app) -> None:
    """Write everything ``jupyter lite build`` reads, before Sphinx reads the sources."""
    if app.builder.name != "html":
        _skip_lite_build(app)
        return
    root, src = _root(app), _lite_src(app)
    src.mkdir(parents=True, exist_ok=True)
    wheel = build_wheel(root, src / "wheels")
    extra = fetch_pinned_wheels(root / "_build" / "downloads")

    contents = _root(app) / app.config.jupyterlite_content_dir / "chapters"
    contents.mkdir(parents=True, exist_ok=True)
    for path in chapter_notebooks(root):
        nb = json.loads(path.read_text(encoding="utf-8"))
        text = json.dumps(lite_notebook(nb), indent=1, ensure_ascii=False) + "\n"
        (contents / path.name).write_text(text, encoding="utf-8")

    build_config = {
        "LiteBuildConfig": {"no_sourcemaps": True, "no_unused_shared_packages": True},
        "PipliteAddon": {"piplite_urls": [str(wheel), *map(str, extra)]},
    }
    (src / "jupyter_lite_config.json").write_text(json.dumps(build_config, indent=2) + "\n")
    lite_json = {
        "jupyter-lite-schema-version": 0,
        "jupyter-config-data": {
            "litePluginSettings": {
                "@jupyterlite/pyodide-kernel-extension:kernel": {"disablePyPIFallback": True}
            }
        },
    }
    (src / "jupyter-lite.json").write_text(json.dumps(lite_json, indent=2) + "\n")

    pyodide_dir = src / "static" / "pyodide"
    mode = os.environ.get("PYODIDE", "cdn").strip().lower() or "cdn"
    if mode == "local":
        sys.path.insert(0, str(root / "tools"))
        try:
            import pyodide_bundle
        finally:
            sys.path.pop(0)
        summary = pyodide_bundle.build(pyodide_dir, root / "_build" / "downloads")
        print(
            f"[lite] local Pyodide {summary['version']}: {summary['files']} files, "
            f"{summary['verified_package_files']} package files verified against the official "
            "pyodide-lock.json"
        )
    elif mode == "cdn":
        shutil.rmtree(pyodide_dir, ignore_errors=True)
    else:
        raise ValueError(f"PYODIDE must be 'cdn' (the default) or 'local', not {mode!r}")


def _skip_lite_build(app) -> None:
    """Builders other than ``html`` (the single page behind the PDF) need no JupyterLite."""
    listeners = app.events.listeners.get("build-finished", [])
    for listener in list(listeners):
        if getattr(listener.handler, "__module__", "").startswith("jupyterlite_sphinx"):
            app.disconnect(listener.id)


def add_launch_button(app, pagename, templatename, context, doctree) -> None:
    if app.builder.name != "html" or not str(app.env.doc2path(pagename)).endswith(".ipynb"):
        return
    url = f"{context['pathto'](LITE_NOTEBOOKS_URL, 1)}?path={pagename}.ipynb"
    entry = {
        "type": "link",
        "text": "JupyterLite",
        "tooltip": "Run this chapter in your browser (JupyterLite, nothing to install)",
        "icon": "fas fa-play",
        "url": url,
        "label": "jupyterlite-button",
    }
    buttons = context.get("header_buttons")
    if buttons is None:
        return
    for button in buttons:
        if button.get("label") == "launch-buttons" and button.get("type") == "group":
            button["buttons"].append(entry)
            return
    buttons.insert(
        0,
        {
            "type": "group",
            "tooltip": "Launch interactive content",
            "icon": "fas fa-rocket",
            "buttons": [entry],
            "label": "launch-buttons",
        },
    )


def drop_remote_css(app) -> None:
    """jupyterlite-sphinx adds a web font from the internet to every page; the book works
    offline and does not use the widgets that font is for."""
    remote = [entry for entry in app.registry.css_files if str(entry[0]).startswith("http")]
    for entry in remote:
        app.registry.css_files.remove(entry)
    css = getattr(app.builder, "_css_files", None)
    if css is not None:
        css[:] = [c for c in css if not str(getattr(c, "filename", c)).startswith("http")]


def setup(app):
    app.connect("builder-inited", prepare)
    app.connect("builder-inited", drop_remote_css)
    # After sphinx-book-theme has made the header buttons (its handler runs at priority 500).
    app.connect("html-page-context", add_launch_button, priority=800)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
