"""The chapters read in JupyterLab as they read on the website.

``make lab-test`` (part of ``make test``) starts JupyterLab headless on 127.0.0.1 with a random
token, in a temporary root holding a copy of the chapters, and drives Debian's Chromium through
Playwright; every request that does not go to 127.0.0.1 is aborted. For each chapter it checks:

* opening the notebook and connecting its kernel leaves it unmodified (nothing to save);
* the prose shows the stored ``{eval}`` values before anything runs; for the fixture and
  chapter 2 (every chapter with ``LAB_TEST_RUN=all``, or a comma-separated list of names) also
  after Run All, so the kernel reproduces what the website shows, with no cell raising an error;
* the same values appear on the chapter's page of the built site, when the site is built;
* no raw MyST is visible (``{eval}``, ``{glue``, ``:::{``, a citation key ``{cite:p}``, an API
  role's ``<infonce_lib.`` target, ``{doc}``, ``{eq}``, ``{prf:ref}``), admonitions render as
  boxes and equations are typeset;
* nothing of a solution shows on opening: every cell after the "Solutions" heading (which is
  collapsed) is hidden until the reader opens that heading (``tools/notebooks.py convert``
  moves the solutions there);
* a link to another chapter opens that chapter in JupyterLab.

Without a Chromium (found as the site's browser tests find one, ``tests/site/browser.py``)
or JupyterLab the test is skipped with the reason, except under CI (``CI`` set), where a
missing piece is an error.
"""

from __future__ import annotations

import html
import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.site.browser import LAUNCH_ARGS, find_chromium, settle, skip_or_fail

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
SITE = ROOT / "_build" / "html"
RAW_MYST = re.compile(
    r"\{eval\}|\{glue|:::\{|```\{|\{cite|\{py:|<infonce_lib\.|\{doc\}|\{eq\}|\{prf:ref\}|\{ref\}"
)
CHAPTER_LINK = re.compile(r"\[([^\[\]]+)\]\((0\d_\w+\.ipynb)\)")


def _missing(reason: str) -> None:
    """Skip the module with ``reason``; under CI a missing piece fails instead."""
    skip_or_fail(reason, what="JupyterLab browser test", module=True)


# The same Chromium as the site's browser tests: INFONCE_CHROMIUM, one on PATH (Debian's
# package) or the one `playwright install chromium` downloaded.
_FOUND = find_chromium()
if _FOUND.path is None:
    _missing(_FOUND.how)
CHROMIUM = _FOUND.path
for _module in ("jupyterlab", "jupyterlab_myst", "playwright"):
    try:
        __import__(_module)
    except ImportError:
        _missing(f"`{_module}` is not installed (`make lab-test` installs it into .venv)")

from playwright.sync_api import TimeoutError as PlaywrightTimeout  # noqa: E402
from playwright.sync_api import sync_playwright  # noqa: E402


def _chapters() -> list[Path]:
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import notebooks
    finally:
        sys.path.pop(0)
    return [ROOT / p for p in notebooks.toc_notebooks()]


NOTEBOOKS = [HERE / "fixture.ipynb", *_chapters()]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """A JupyterLab server on 127.0.0.1 whose root is a copy of chapters/ plus the fixture."""
    base = tmp_path_factory.mktemp("lab")
    root = base / "root"
    shutil.copytree(ROOT / "chapters", root, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    shutil.copy(HERE / "fixture.ipynb", root / "fixture.ipynb")
    port, token = _free_port(), secrets.token_hex(16)
    env = dict(os.environ)
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        env[var] = "1"
    # Keep the reader's own Jupyter settings, kernels and IPython start-up files out of it.
    # Render every cell, not only those scrolled into view, so the whole text can be read.
    settings = base / "config" / "lab" / "user-settings" / "@jupyterlab" / "notebook-extension"
    settings.mkdir(parents=True)
    (settings / "tracker.jupyterlab-settings").write_text('{"windowingMode": "none"}')
    for var, sub in (
        ("JUPYTER_CONFIG_DIR", "config"),
        ("JUPYTER_DATA_DIR", "data"),
        ("JUPYTER_RUNTIME_DIR", "runtime"),
        ("IPYTHONDIR", "ipython"),
    ):
        env[var] = str(base / sub)
    cmd = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}",
        "--LabApp.expose_app_in_browser=True",
        "--LabApp.news_url=",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
    ]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-root")
    log = (base / "server.log").open("w")
    server = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, cwd=root)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                with urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=5):
                    break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    log.flush()
                    pytest.fail("JupyterLab did not start:\n" + (base / "server.log").read_text())
                time.sleep(0.5)
        yield {"url": url, "token": token, "root": root, "log": base / "server.log"}
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()


@pytest.fixture(scope="module")
def browser(lab, tmp_path_factory):
    profile = tmp_path_factory.mktemp("chromium-profile")
    pw = sync_playwright().start()
    context = pw.chromium.launch_persistent_context(
        str(profile),
        executable_path=str(CHROMIUM),
        headless=True,
        args=LAUNCH_ARGS,
        viewport={"width": 1280, "height": 900},
    )
    outside: list[str] = []

    def route(r):
        if r.request.url.startswith(("http://127.0.0.1:", "data:", "blob:")):
            r.continue_()
        else:
            outside.append(r.request.url)
            r.abort()

    context.route("**/*", route)
    context.outside_requests = outside
    yield context
    context.close()
    pw.stop()


def _stored_values(cell: dict) -> list[str]:
    """The values a markdown cell's stored inline expressions show, as the book renders them."""
    values = []
    for item in cell.get("metadata", {}).get("user_expressions", []):
        text = item.get("result", {}).get("data", {}).get("text/plain")
        if text is None:
            continue
        if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
            text = text[1:-1]  # a str shows without its quotes, as on the website
        values.append(text)
    return values


def _site_text(notebook: Path) -> str | None:
    """The text of the chapter's page in the built site (None for the fixture or no site)."""
    if not notebook.is_relative_to(ROOT / "chapters"):
        return None
    page = SITE / notebook.relative_to(ROOT).with_suffix(".html")
    if not page.exists():
        return None
    raw = re.sub(r"<script.*?</script>|<style.*?</style>", " ", page.read_text(), flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", " ", raw))


OPEN_JS = """async (path) => {
  const app = window.jupyterapp;
  const panel = await app.commands.execute('docmanager:open', {path, factory: 'Notebook'});
  await panel.context.ready;
  await panel.sessionContext.ready;
  const kernel = panel.sessionContext.session && panel.sessionContext.session.kernel;
  if (kernel) { await kernel.info; await kernel.spec; }
  window.__panel = panel;
  return {kernel: kernel ? kernel.name : null};
}"""

RUN_JS = "() => window.jupyterapp.commands.execute('notebook:run-all-cells')"

CLOSE_JS = """async () => {
  const panel = window.__panel;
  await panel.sessionContext.shutdown();
  panel.dispose();  // no "save changes?" dialog: the copy is thrown away
}"""

STATE_JS = """() => {
  const panel = window.__panel;
  const model = panel.context.model;
  const cells = [];
  panel.content.widgets.forEach((w) => {
    const cell = {type: w.model.type, text: '', admonitions: 0, math: 0, errors: 0,
                  hidden: w.isHidden, folded: w.inputHidden,
                  tags: w.model.getMetadata('tags') || []};
    if (w.model.type === 'markdown') {
      // jupyterlab-myst renders into '.myst'; JupyterLab's own renderer into '.jp-RenderedMarkdown'
      const node =
        w.node.querySelector('.myst, .jp-RenderedMarkdown') || document.createElement('div');
      cell.text = node.innerText;
      cell.admonitions = node.querySelectorAll('.myst-admonition, .admonition').length;
      cell.math = node.querySelectorAll('.katex, mjx-container, .MathJax').length;
      cell.html = node.innerHTML.slice(0, 2000);
    } else if (w.model.type === 'code') {
      const outs = w.model.toJSON().outputs || [];
      cell.errors = outs
        .filter((o) => o.output_type === 'error')
        .map((o) => o.ename + ': ' + o.evalue);
    }
    cells.push(cell);
  });
  return {dirty: model.dirty, metadata: model.toJSON().metadata, cells,
          status: panel.sessionContext.kernelDisplayStatus};
}"""

# True once the application has restored its layout. The predicate hooks the `restored` promise
# itself (again after a reload), so nothing awaits a promise through Playwright (see `settle`).
RESTORED_JS = """() => {
  const app = window.jupyterapp;
  if (!app || !app.restored) return false;
  if (!window.__restoredHooked) {
    window.__restoredHooked = true;
    app.restored.then(() => { window.__restored = true; });
  }
  return window.__restored === true;
}"""

# A folded cell (a solution's prose) is rendered only once the reader unfolds it.
RENDERED_JS = """() => window.__panel.content.widgets
  .filter((w) => w.model.type === 'markdown' && !w.inputHidden)
  .every((w) => w.node.querySelector('.myst, .jp-RenderedMarkdown'))"""


def _wait_idle(page, timeout_ms=120_000):
    page.wait_for_function(
        "() => window.__panel && window.__panel.sessionContext.kernelDisplayStatus === 'idle'",
        timeout=timeout_ms,
    )


def _to_run() -> set[str]:
    """The notebooks to Run All: the fixture and chapter 2 unless LAB_TEST_RUN says otherwise."""
    chosen = os.environ.get("LAB_TEST_RUN", "fixture,02_infonce").strip()
    if chosen == "all":
        return {p.stem for p in NOTEBOOKS}
    return {s.strip() for s in chosen.split(",") if s.strip()}


@pytest.fixture(scope="module")
def app(lab, browser):
    """One JupyterLab page for every notebook (loading the app once)."""
    page = browser.new_page()
    page.goto(f"{lab['url']}/lab?token={lab['token']}")
    page.wait_for_function(RESTORED_JS, timeout=90_000, polling=100)
    yield page
    page.close()


def _check_prose(rel, source, state, expected, when):
    for i, values in expected.items():
        if state["cells"][i]["folded"]:  # checked once unfolded (_check_walking_on...)
            continue
        for value in values:
            assert value in state["cells"][i]["text"], (
                f"{rel} cell {i}: {when}, the prose does not show {value!r} (the stored value, "
                f"which the website shows):\n{state['cells'][i]['text'][:600]}"
            )
    for i, cell in enumerate(state["cells"]):
        if cell["type"] != "markdown" or cell["folded"]:
            continue
        src = "".join(source["cells"][i]["source"])
        raw = RAW_MYST.findall(cell["text"])
        assert not raw, f"{rel} cell {i}: {when}, raw MyST {raw} shows:\n{cell['text'][:600]}"
        if re.search(r"^:::\{(admonition|note|tip|warning|important|caution)\}", src, re.M):
            assert cell["admonitions"], (
                f"{rel} cell {i}: {when}, the admonition is not a box:\n{cell['html']}"
            )
        if re.search(r"\$\$|\$[^$\s][^$]*\$", src):
            assert cell["math"], f"{rel} cell {i}: {when}, no typeset math:\n{cell['html']}"


SOLUTIONS_HIDDEN_JS = """() => window.__panel.content.widgets
  .filter((w) => {
    const tags = w.model.getMetadata('tags') || [];
    return tags.includes('nb-solution') || tags.includes('nb-solution-heading');
  })
  .every((w) => w.isHidden)"""

CURRENT_PATH_JS = """() => {
  const w = window.jupyterapp.shell.currentWidget;
  return w && w.context ? w.context.path : null;
}"""

CLOSE_CURRENT_JS = """async () => {
  const w = window.jupyterapp.shell.currentWidget;
  if (w === window.__panel) return;
  if (w.sessionContext) await w.sessionContext.shutdown();
  w.dispose();
  window.jupyterapp.shell.activateById(window.__panel.id);
}"""


def _check_solutions_hidden(rel, state):
    """Every cell under the collapsed "Solutions" heading is hidden on opening."""
    tags = [set(c["tags"]) for c in state["cells"]]
    heading = [i for i, t in enumerate(tags) if "nb-solutions" in t]
    if not heading:
        assert not any("nb-solution" in t for t in tags), f"{rel}: solutions with no heading"
        return
    (h,) = heading
    assert not state["cells"][h]["hidden"], f"{rel}: the Solutions heading is hidden"
    for i in range(h + 1, len(tags)):
        if "nb-references" in tags[i]:
            break
        assert state["cells"][i]["hidden"], (
            f"{rel} cell {i} (a solution's) shows before the reader opens the Solutions heading:"
            f"\n{state['cells'][i]['text'][:300]}"
        )
    early = [i for i, t in enumerate(tags[:h]) if t & {"nb-solution", "nb-solution-heading"}]
    assert not early, f"{rel}: solution cells {early} before the Solutions heading"


# Shift+Enter moves the active cell down one, onto a hidden cell too, and JupyterLab then
# opens the collapsed heading above it. Walking the active cell to the end as Shift+Enter would
# opens every Solutions heading; a solution's prose and outputs must still show nothing.
WALK_TO_END_JS = """(start) => {
  const nb = window.__panel.content;
  for (let i = start; i < nb.widgets.length; i++) { nb.activeCellIndex = i; }
  return nb.activeCellIndex;
}"""

SOLUTION_TEXT_SHOWN_JS = """() => {
  const seen = (w, sel) => [...w.node.querySelectorAll(sel)]
    .filter((e) => e.offsetParent !== null)
    .map((e) => e.innerText.trim()).filter((t) => t).join(' | ');
  const out = [];
  window.__panel.content.widgets.forEach((w, i) => {
    const tags = w.model.getMetadata('tags') || [];
    if (!tags.includes('nb-solution')) return;
    const text = w.model.type === 'markdown'
      ? seen(w, '.jp-MarkdownOutput, .myst, .jp-RenderedMarkdown, .jp-InputPlaceholder')
      : seen(w, '.jp-OutputArea-output');
    out.push({i, hidden: w.isHidden, text: text.slice(0, 300)});
  });
  return out;
}"""


UNFOLD_JS = """() => window.__panel.content.widgets.forEach((w) => {
  if ((w.model.getMetadata('tags') || []).includes('nb-solution')) {
    w.inputHidden = false;
    if (w.model.type === 'code') w.outputHidden = false;
  }
})"""


def _check_walking_on_shows_no_answer(app, rel, state, source, expected):
    """Shift+Enter past the last exercise opens the collapsed headings, not the answers;
    unfolded by the reader, the solutions' prose reads like the page."""
    tags = [set(c["tags"]) for c in state["cells"]]
    heading = [i for i, t in enumerate(tags) if "nb-solutions" in t]
    if not heading:
        return
    app.evaluate(WALK_TO_END_JS, heading[0] - 1)
    app.wait_for_timeout(500)
    cells = app.evaluate(SOLUTION_TEXT_SHOWN_JS)
    assert any(not c["hidden"] for c in cells), (
        f"{rel}: walking on opened no Solutions heading (has JupyterLab changed?)"
    )
    shown = [(c["i"], c["text"]) for c in cells if not c["hidden"] and c["text"]]
    assert not shown, f"{rel}: walking on with Shift+Enter shows solution text: {shown}"
    app.evaluate(UNFOLD_JS)
    app.wait_for_function(RENDERED_JS, timeout=60_000)
    _check_prose(rel, source, app.evaluate(STATE_JS), expected, "with its solutions unfolded")


def _check_chapter_link(app, rel, source):
    """The first link to another chapter opens that chapter (a notebook tab) when clicked."""
    texts = ["".join(c["source"]) for c in source["cells"] if c["cell_type"] == "markdown"]
    found = [m for t in texts for m in CHAPTER_LINK.finditer(t)]
    if not found:
        return
    text, target = found[0].groups()
    link = app.locator(f"#{source_panel_id(app)} a", has_text=text).first
    link.scroll_into_view_if_needed()
    link.click()
    app.wait_for_function(
        f"() => ({CURRENT_PATH_JS})() === {json.dumps(target)}", timeout=60_000, polling=200
    )
    settle(app, CLOSE_CURRENT_JS, what=f"{rel}: closing {target}")


def source_panel_id(app) -> str:
    return app.evaluate("() => window.__panel.id")


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_reads_like_the_page(lab, browser, app, notebook):
    source = json.loads(notebook.read_text(encoding="utf-8"))
    rel = "fixture.ipynb" if notebook.parent == HERE else notebook.name
    opened = settle(app, OPEN_JS, rel, what=f"opening {rel}")
    try:
        assert opened["kernel"] == source["metadata"]["kernelspec"]["name"], opened
        _wait_idle(app)
        app.wait_for_function(RENDERED_JS, timeout=60_000)
        app.wait_for_timeout(1000)  # let late metadata updates (language_info) land
        try:  # JupyterLab collapses a heading once it has parsed the headings, asynchronously
            app.wait_for_function(SOLUTIONS_HIDDEN_JS, timeout=30_000, polling=200)
        except PlaywrightTimeout:
            pass  # _check_solutions_hidden says which cell shows
        before = app.evaluate(STATE_JS)

        # Opening and connecting the kernel changes nothing the reader would have to save.
        assert not before["dirty"], (
            f"{rel} is marked modified right after opening; stored metadata "
            f"{json.dumps(source['metadata'], sort_keys=True)}, JupyterLab's "
            f"{json.dumps(before['metadata'], sort_keys=True)}"
        )

        # The stored values show before anything runs, with boxes and math and no raw MyST.
        md_cells = [(i, c) for i, c in enumerate(source["cells"]) if c["cell_type"] == "markdown"]
        expected = {i: _stored_values(c) for i, c in md_cells}
        for i, cell in md_cells:  # every {eval} in the prose has a stored value to compare
            roles = set(re.findall(r"\{eval\}`([^`]*)`", "".join(cell["source"])))
            stored = {e["expression"] for e in cell["metadata"].get("user_expressions", [])}
            assert roles <= stored, f"{rel} cell {i}: no stored value for {sorted(roles - stored)}"
        _check_prose(rel, source, before, expected, "on opening")
        _check_solutions_hidden(rel, before)
        if notebook.parent != HERE:
            _check_chapter_link(app, rel, source)
            _check_walking_on_shows_no_answer(app, rel, before, source, expected)

        # The website shows the same values (when the site has been built).
        site = _site_text(notebook)
        if site is not None:
            for i, values in expected.items():
                for value in values:
                    assert value in site, f"{rel} cell {i}: {value!r} is not on the built page"

        # Run All: no error, and the kernel's values are the stored ones.
        if notebook.stem in _to_run():
            settle(app, RUN_JS, timeout_ms=600_000, what=f"{rel}: Run All")
            _wait_idle(app, timeout_ms=300_000)
            after = app.evaluate(STATE_JS)
            for i, cell in enumerate(after["cells"]):
                if cell["type"] == "code" and "raises-exception" not in cell.get("tags", []):
                    assert not cell["errors"], f"{rel} cell {i} raised {cell['errors']}"
            _check_prose(rel, source, after, expected, "after Run All")
        assert not browser.outside_requests, f"requests left 127.0.0.1: {browser.outside_requests}"
    finally:
        settle(app, CLOSE_JS, what=f"closing {rel}")
