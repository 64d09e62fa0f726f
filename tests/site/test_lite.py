"""Every chapter runs to the end in JupyterLite (Pyodide in the browser), offline.

The built site is served on 127.0.0.1; every other request is aborted and recorded. Each
chapter is opened from its page's JupyterLite button, all its cells are run, and the test
asserts that every code cell ran and that no cell raised, except those tagged
``raises-exception`` (cells meant to show an error). This needs the local Pyodide bundle
(``make book PYODIDE=local``; the strict build of ``make test`` makes it): the default
site loads Pyodide from the web, which this test cuts off.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest

from tests.site.browser import skip_or_fail
from tests.site.conftest import launch

ROOT = Path(__file__).resolve().parents[2]
HTML = ROOT / "_build" / "html"
LITE = HTML / "lite"
CHAPTERS = sorted((ROOT / "chapters").glob("*.ipynb"))
RUN_TIMEOUT_S = 300

pytestmark = pytest.mark.site


def _pyodide_settings() -> dict:
    config = json.loads((LITE / "jupyter-lite.json").read_text())["jupyter-config-data"]
    return config["litePluginSettings"]["@jupyterlite/pyodide-kernel-extension:kernel"]


@pytest.fixture(scope="module")
def lite(site):
    if not (LITE / "jupyter-lite.json").exists():
        skip_or_fail("the site has no JupyterLite build (_build/html/lite)")
    return LITE


@pytest.fixture(scope="module")
def offline_lite(lite):
    url = _pyodide_settings().get("pyodideUrl", "")
    if not url.startswith("./"):
        skip_or_fail(
            "the site loads Pyodide from the web; build it with the local bundle "
            "(`make book PYODIDE=local`) to run the chapters offline"
        )
    return lite


def test_every_chapter_page_has_a_jupyterlite_button(lite):
    for nb in CHAPTERS:
        page = HTML / "chapters" / f"{nb.stem}.html"
        html = page.read_text(encoding="utf-8")
        links = re.findall(r'href="([^"]*lite/notebooks/index\.html\?path=[^"]*)"', html)
        assert links, f"{page.name}: no JupyterLite button"
        (link,) = set(links)
        target = (page.parent / urlparse(link).path).resolve()
        assert target == (LITE / "notebooks" / "index.html").resolve(), link
        (path,) = parse_qs(urlparse(link).query)["path"]
        assert path == f"chapters/{nb.name}", link
        copy = json.loads((LITE / "files" / path).read_text())
        first = "".join(copy["cells"][0]["source"])
        assert "%pip install" in first and "infonce-lib" in first, first
        assert copy["metadata"]["kernelspec"]["name"] == "python"  # Pyodide's kernel
        original = json.loads(nb.read_text())
        assert len(copy["cells"]) == len(original["cells"]) + 1


def test_lite_installs_only_from_the_site(lite):
    settings = _pyodide_settings()
    assert settings["disablePyPIFallback"] is True
    wheels = sorted(p.name for p in (LITE / "pypi").glob("*.whl"))
    assert any(w.startswith("infonce_lib-") for w in wheels), wheels


def test_local_pyodide_matches_the_official_lock(offline_lite):
    import sys

    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import pyodide_bundle
    finally:
        sys.path.pop(0)
    checked = pyodide_bundle.verify_bundle(offline_lite / "static" / "pyodide")
    assert checked >= 20, checked


@pytest.fixture(scope="module")
def lite_browser(playwright_api, chromium, offline_lite, http_site):
    pw, context = launch(playwright_api, chromium, "chromium-lite-profile", (http_site, "data:"))

    def expose_app(route):
        # Let the test reach the JupyterLite application object (window.jupyterapp);
        # the published site's configuration is left as it is.
        response = route.fetch()
        data = response.json()
        data.setdefault("jupyter-config-data", {})["exposeAppInBrowser"] = True
        route.fulfill(response=response, json=data)

    context.route(f"{http_site}/lite/jupyter-lite.json", expose_app)
    context.base_url = http_site
    yield context
    context.close()
    pw.stop()


_CELL_STATE = """() => {
  const app = window.jupyterapp;
  const panel = app && app.shell.currentWidget;
  if (!panel || !panel.content || !panel.sessionContext) return null;
  const cells = [];
  for (const cell of panel.content.widgets) {
    const m = cell.model;
    if (m.type !== 'code') continue;
    const errors = [];
    for (let i = 0; i < m.outputs.length; i++) {
      const o = m.outputs.get(i).toJSON();
      if (o.output_type === 'error') errors.push(o.ename + ': ' + o.evalue);
    }
    cells.push({count: m.executionCount, tags: m.getMetadata('tags') || [], errors,
                source: m.sharedModel.getSource().slice(0, 80)});
  }
  const kernel = panel.sessionContext.session && panel.sessionContext.session.kernel;
  return {cells, status: kernel ? kernel.status : 'none'};
}"""


@pytest.mark.parametrize("notebook", CHAPTERS, ids=lambda p: p.stem)
def test_chapter_runs_in_jupyterlite(lite_browser, notebook):
    page = lite_browser.new_page()
    console_errors: list[str] = []
    page.on("pageerror", lambda e: console_errors.append(str(e)))
    before = len(lite_browser.outside_requests)
    try:
        url = f"{lite_browser.base_url}/lite/notebooks/index.html?path=chapters/{notebook.name}"
        page.goto(url, wait_until="load")
        page.wait_for_function(
            "() => { const p = window.jupyterapp && window.jupyterapp.shell.currentWidget;"
            " return p && p.sessionContext && p.sessionContext.session"
            " && p.sessionContext.session.kernel"
            " && p.sessionContext.session.kernel.status === 'idle'; }",
            timeout=RUN_TIMEOUT_S * 1000,
        )
        page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
        deadline = time.monotonic() + RUN_TIMEOUT_S
        state = None
        while time.monotonic() < deadline:
            state = page.evaluate(_CELL_STATE)
            done = state and all(c["count"] is not None for c in state["cells"])
            if done and state["status"] == "idle":
                break
            if state and any(
                c["errors"] and "raises-exception" not in c["tags"] for c in state["cells"]
            ):
                break  # Run All stops at the first unexpected error
            time.sleep(1)
        assert state is not None, f"{notebook.name}: the notebook did not open"
        failed = [
            (c["source"], c["errors"])
            for c in state["cells"]
            if c["errors"] and "raises-exception" not in c["tags"]
        ]
        assert not failed, f"{notebook.name}: cells raised in JupyterLite: {failed}"
        not_run = [c["source"] for c in state["cells"] if c["count"] is None]
        assert not not_run, f"{notebook.name}: cells not run within {RUN_TIMEOUT_S} s: {not_run}"
        assert not console_errors, f"{notebook.name}: page errors: {console_errors}"
        outside = lite_browser.outside_requests[before:]
        assert not outside, f"{notebook.name}: requests to the outside: {outside}"
    finally:
        page.close()
