"""Local Sphinx extension for the book: scripts listed once, constants described.

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


# ------------------------------------------------------------------------------------------
# Public constants. autodoc documents ``infonce_lib.<NAME>`` from the package's __init__.py,
# where most constants are only re-exported (``from .bound_family import *``): it finds no
# ``#:`` comment there and falls back to the value's type docstring, so ESTIMATORS was shown
# with Python's help text for tuple and the published tables with the docstring of their
# class. The description of a constant is the ``#:`` comment on its assignment in the module
# that defines it; this handler puts that comment on the API page (a comment in __init__.py,
# where there is one, still wins, as autodoc already shows it).


def constant_description(name: str) -> list[str]:
    """The ``#:`` comment of public constant ``infonce_lib.<name>``: from __init__.py if it has
    one, else from the module whose ``__all__`` exports the name; [] if neither has one."""
    from sphinx.pycode import ModuleAnalyzer

    import infonce_lib

    modules = ["infonce_lib"] + [
        m.__name__ for m in infonce_lib._MODULES if name in getattr(m, "__all__", ())
    ]
    for modname in modules:
        docs = ModuleAnalyzer.for_module(modname).find_attr_docs()
        lines = list(docs.get(("", name), []))
        if any(line.strip() for line in lines):
            return lines
    return []


def describe_constants(app, what, name, obj, options, lines) -> None:
    if what != "data" or not name.startswith("infonce_lib."):
        return
    own = constant_description(name.rsplit(".", 1)[1])
    if own:
        lines[:] = own


def setup(app):
    app.connect("html-page-context", drop_duplicate_scripts, priority=900)
    app.connect("autodoc-process-docstring", describe_constants)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
