"""Every chapter runs to the end in JupyterLite (Pyodide in the browser), offline.

The built site is served on 127.0.0.1; every other request is aborted and recorded. Each
chapter is opened from its page's JupyterLite button, all its cells are run, and the test
asserts that every code cell ran and that no cell raised, except those tagged
``raises-exception`` (cells meant to show an error), and that no cell printed to stderr on this
first run (such as Matplotlib's notice that it is building its font cache). Before the run, the
chapter must show its stored outputs (every code cell that has outputs in the chapter shows
them), trusted, with every cell of its collapsed "Solutions" section hidden. Up to two
chapters run at a time, each in its own tab (one Pyodide kernel per tab). This needs the local
Pyodide bundle (``make book PYODIDE=local``; the strict build of ``make test`` makes it): the
default site loads Pyodide from the web, which this test cuts off.
"""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest

from tests.site.browser import skip_or_fail
from tests.site.conftest import LITE_TIMES, launch

ROOT = Path(__file__).resolve().parents[2]
HTML = ROOT / "_build" / "html"
LITE = HTML / "lite"
CHAPTERS = sorted((ROOT / "chapters").glob("*.ipynb"))
# Per chapter: for its kernel to start, then for its cells to run. A guard against a hang,
# not a speed test: a chapter takes 0.5 to 2 minutes, longer when the machine is busy.
RUN_TIMEOUT_S = 600
# Chapters run at the same time, each in its own tab (see lite_runs): one per core, at most 2.
PARALLEL = min(2, os.cpu_count() or 1)

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


def test_lite_has_the_myst_renderer(lite):
    """Without jupyterlab-myst the chapters' MyST (boxes, exercises, labels, {eval} values)
    shows as raw markup in the browser; `jupyter lite build` bundles it when it is installed."""
    config = json.loads((LITE / "jupyter-lite.json").read_text())["jupyter-config-data"]
    names = [e["name"] for e in config.get("federated_extensions", [])]
    assert "jupyterlab-myst" in names, names
    assert (LITE / "extensions" / "jupyterlab-myst").is_dir()


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
  const all = [];
  for (const cell of panel.content.widgets) {
    const m = cell.model;
    all.push({hidden: cell.isHidden, tags: m.getMetadata('tags') || [], type: m.type});
    if (m.type !== 'code') continue;
    const errors = [];
    const stderr = [];
    for (let i = 0; i < m.outputs.length; i++) {
      const o = m.outputs.get(i).toJSON();
      if (o.output_type === 'error') errors.push(o.ename + ': ' + o.evalue);
      if (o.output_type === 'stream' && o.name === 'stderr') stderr.push(String(o.text));
    }
    cells.push({count: m.executionCount, tags: m.getMetadata('tags') || [], errors, stderr,
                outputs: m.outputs.length, trusted: m.trusted,
                source: m.sharedModel.getSource().slice(0, 80)});
  }
  const kernel = panel.sessionContext.session && panel.sessionContext.session.kernel;
  return {cells, all, status: kernel ? kernel.status : 'none'};
}"""


_KERNEL_IDLE = (
    "() => { const p = window.jupyterapp && window.jupyterapp.shell.currentWidget;"
    " return !!(p && p.sessionContext && p.sessionContext.session"
    " && p.sessionContext.session.kernel"
    " && p.sessionContext.session.kernel.status === 'idle'); }"
)


def _unexpected(cell: dict) -> bool:
    """True for a cell that raised but is not tagged ``raises-exception``."""
    return bool(cell["errors"]) and "raises-exception" not in cell["tags"]


class _Run:
    """One chapter opened in its own tab and run to the end (or to its deadline)."""

    def __init__(self, context, notebook: Path):
        self.notebook = notebook
        self.console_errors: list[str] = []
        self.state = None
        self.opened = None  # the cells as the chapter opened, before it runs
        self.kernel_ready = False
        self.started: float | None = None  # when Run All was sent
        # From Run All to the last cell's end, as the polling sees it (one pass of the loop
        # below, longer while another tab opens); None unless every cell ran without error.
        self.seconds: float | None = None
        self.first_outside = len(context.outside_requests)
        self.outside: list[str] = []
        self.page = context.new_page()
        self.page.on("pageerror", lambda e: self.console_errors.append(str(e)))
        url = f"{context.base_url}/lite/notebooks/index.html?path=chapters/{notebook.name}"
        self.page.goto(url, wait_until="load")
        self.deadline = time.monotonic() + RUN_TIMEOUT_S  # for the kernel to start

    def poll(self) -> bool:
        """Advance the run by one look at the page; True once it is finished."""
        if not self.kernel_ready:
            if self.page.evaluate(_KERNEL_IDLE):
                self.kernel_ready = True
                self.opened = self.page.evaluate(_CELL_STATE)
                # Started, not awaited: the cells' state is polled below, and a rejected
                # Run All is kept as a page error (no promise held through Playwright).
                self.page.evaluate(
                    "() => { window.jupyterapp.commands.execute('notebook:run-all-cells')"
                    ".catch((e) => { window.__runAllError = String(e); }); }"
                )
                self.started = time.monotonic()
                self.deadline = self.started + RUN_TIMEOUT_S  # for the cells to run
                return False
            return time.monotonic() > self.deadline
        self.state = state = self.page.evaluate(_CELL_STATE)
        failed = self.page.evaluate("() => window.__runAllError || null")
        if failed:
            self.console_errors.append(f"Run All failed: {failed}")
            return True
        if state and any(_unexpected(c) for c in state["cells"]):
            return True  # Run All stops at the first unexpected error
        done = state and all(c["count"] is not None for c in state["cells"])
        if done and state["status"] == "idle":
            self.seconds = time.monotonic() - self.started
            return True
        return time.monotonic() > self.deadline


@pytest.fixture(scope="module")
def lite_runs(lite_browser, request) -> dict[str, _Run]:
    """Every chapter run in JupyterLite, ``PARALLEL`` tabs at a time.

    Each tab's Pyodide kernel is a web worker of its own, so two tabs keep two cores busy and
    the chapters take less time than one after the other. Requests to the
    outside are recorded per run over the time its tab was open (with overlapping runs a
    request can be counted for both: either way it fails the test).
    """
    pending = list(CHAPTERS)
    active: list[_Run] = []
    finished: dict[str, _Run] = {}
    # Each chapter's time in the browser, for the session's summary (tests/site/conftest.py),
    # filled in as chapters finish: timings, not checks (two chapters run side by side).
    times = request.config.stash[LITE_TIMES] = {}
    while pending or active:
        # A new tab opens only when every open tab's kernel is ready: kernels start one at
        # a time (two tabs starting JupyterLite together in a fresh profile can leave one
        # waiting for its kernel for ever), and then run side by side.
        if pending and len(active) < PARALLEL and all(r.kernel_ready for r in active):
            active.append(_Run(lite_browser, pending.pop(0)))
        for run in list(active):
            if run.poll():
                run.outside = lite_browser.outside_requests[run.first_outside :]
                run.page.close()
                active.remove(run)
                finished[run.notebook.name] = run
                times[run.notebook.name] = run.seconds
        if active:  # wait in Playwright, which serves the routed requests meanwhile
            active[0].page.wait_for_timeout(1000)
    return finished


@pytest.mark.parametrize("notebook", CHAPTERS, ids=lambda p: p.stem)
def test_chapter_runs_in_jupyterlite(lite_runs, notebook):
    run = lite_runs[notebook.name]
    state = run.state
    assert run.kernel_ready, f"{notebook.name}: the kernel was not ready within {RUN_TIMEOUT_S} s"
    assert state is not None, f"{notebook.name}: the notebook did not open"
    failed = [(c["source"], c["errors"]) for c in state["cells"] if _unexpected(c)]
    assert not failed, f"{notebook.name}: cells raised in JupyterLite: {failed}"
    not_run = [c["source"] for c in state["cells"] if c["count"] is None]
    assert not not_run, f"{notebook.name}: cells not run within {RUN_TIMEOUT_S} s: {not_run}"
    assert not run.console_errors, f"{notebook.name}: page errors: {run.console_errors}"
    assert not run.outside, f"{notebook.name}: requests to the outside: {run.outside}"


@pytest.mark.parametrize("notebook", CHAPTERS, ids=lambda p: p.stem)
def test_chapter_opens_in_jupyterlite_with_its_outputs_trusted_and_solutions_hidden(
    lite_runs, notebook
):
    opened = lite_runs[notebook.name].opened
    assert opened is not None, f"{notebook.name}: the notebook did not open"
    stored = json.loads((LITE / "files" / "chapters" / notebook.name).read_text())
    code = [c for c in stored["cells"] if c["cell_type"] == "code"]
    assert len(code) == len(opened["cells"]), notebook.name
    missing = [
        "".join(c["source"])[:60]
        for c, shown in zip(code, opened["cells"], strict=True)
        if c["outputs"] and not shown["outputs"]
    ]
    assert not missing, f"{notebook.name}: opens without the stored outputs of {missing}"
    assert any(c["outputs"] for c in code), f"{notebook.name}: no stored outputs at all"
    untrusted = [c["source"] for c in opened["cells"] if not c["trusted"]]
    assert not untrusted, f"{notebook.name}: cells not trusted on opening: {untrusted}"
    tags = [set(c["tags"]) for c in opened["all"]]
    solution = [i for i, t in enumerate(tags) if t & {"nb-solution", "nb-solution-heading"}]
    shown = [i for i in solution if not opened["all"][i]["hidden"]]
    assert not shown, f"{notebook.name}: solution cells {shown} show before they are opened"


@pytest.mark.parametrize("notebook", CHAPTERS, ids=lambda p: p.stem)
def test_first_run_in_jupyterlite_prints_nothing_on_stderr(lite_runs, notebook):
    state = lite_runs[notebook.name].state
    assert state is not None, f"{notebook.name}: the notebook did not open"
    printed = [(c["source"], c["stderr"]) for c in state["cells"] if c["stderr"]]
    assert not printed, f"{notebook.name}: stderr on the first run: {printed}"
