"""Local Sphinx extension for the book.

Sphinx 7.4 with sphinx-thebe 0.3.1 and sphinx-togglebutton (both loaded by Jupyter Book 1.x)
registers some inline scripts twice, so each page declared ``const THEBE_JS_URL`` twice and
the browser logged "Identifier 'THEBE_JS_URL' has already been declared" on every page. This
extension drops the repeated entries from each page's script list before the page is written
(it runs after the other handlers, which may still add scripts such as MathJax).
"""

from __future__ import annotations


def _script_key(script) -> tuple:
    filename = getattr(script, "filename", script) or ""  # inline scripts: None or ""
    attributes = getattr(script, "attributes", {}) or {}
    return (str(filename), tuple(sorted((k, str(v)) for k, v in attributes.items())))


def drop_duplicate_scripts(app, pagename, templatename, context, doctree) -> None:
    scripts = context.get("script_files")
    if not scripts:
        return
    seen: set[tuple] = set()
    unique = []
    for script in scripts:
        key = _script_key(script)
        if key not in seen:
            seen.add(key)
            unique.append(script)
    scripts[:] = unique  # in place: other handlers hold this same list


def setup(app):
    app.connect("html-page-context", drop_duplicate_scripts, priority=900)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
