"""Make Jupyter Book's single-page build (``--builder singlehtml``) usable for the PDF.

Two fixes, both for the ``singlehtml`` builder only:

1. sphinx-exercise registers its own visitors for the single-page builder, so Sphinx no longer
   falls back to the HTML visitors for that builder, and nodes that only have HTML visitors
   (sphinx-proof's ``theorem_node`` and friends) crash the build with NotImplementedError. Every
   node that has HTML visitors but none for ``singlehtml`` gets the HTML ones.
2. The single page is written as the root document's page; after the build it is copied to
   ``book.html`` at the top of the build, where its links to ``_static/`` and ``_images/``
   resolve (``tools/book_pdf.py`` prints that file).
"""

from __future__ import annotations

import shutil
from pathlib import Path

SINGLE_PAGE = "book.html"


def copy_html_visitors(app) -> None:
    if app.builder.name != "singlehtml":
        return
    handlers = app.registry.translation_handlers
    html = handlers.get("html", {})
    single = handlers.setdefault("singlehtml", {})
    for node_name, visitors in html.items():
        single.setdefault(node_name, visitors)


def move_page_to_top(app, exception) -> None:
    if exception is not None or app.builder.name != "singlehtml":
        return
    outdir = Path(app.outdir)
    page = outdir / f"{app.config.root_doc}.html"
    if page.exists():
        shutil.copy2(page, outdir / SINGLE_PAGE)


def setup(app):
    app.connect("builder-inited", copy_html_visitors)
    app.connect("build-finished", move_page_to_top)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
