"""Render MyST inline expressions ({eval}`name`) from the values stored in the notebook.

The chapters put computed numbers into their prose with MyST inline expressions: a markdown
cell says ``the loss is {eval}`worked_loss` nats`` and an earlier code cell sets
``worked_loss``. When a chapter is executed (``tools/notebooks.py execute``, or by a reader
in JupyterLab with the jupyterlab-myst extension), the kernel evaluates each expression and
the result is stored in the markdown cell's metadata, ``user_expressions``: a list of
``{"expression": ..., "result": {"status": "ok", "data": {...}, "metadata": {...}}}``.

The book is built with ``execute_notebooks: "off"`` (it renders the stored outputs that
``make test`` has just verified), and myst-nb 1.x then has no kernel to ask: its eval role
calls ``NotebookClientBase.eval_variable``, which raises ``NotImplementedError``. This
extension gives that method the stored values instead, so the website, JupyterLab and the
stored notebook all show the same text. An expression with no stored value, or stored twice
with two different values, is an error, which the strict build (``-W``) turns into a failure.
"""

from __future__ import annotations

import nbformat
from myst_nb.core.execute.base import NotebookClientBase


def stored_expressions(notebook) -> dict[str, dict]:
    """Map each stored expression of ``notebook`` to its result (a kernel reply entry)."""
    table: dict[str, dict] = {}
    for index, cell in enumerate(notebook.get("cells", [])):
        if cell.get("cell_type") != "markdown":
            continue
        for entry in cell.get("metadata", {}).get("user_expressions", []):
            expression, result = entry["expression"], entry["result"]
            if expression in table and table[expression] != result:
                raise ValueError(
                    f"expression {expression!r} has two different stored values "
                    f"(the second in cell {index}); use one name per value"
                )
            table[expression] = result
    return table


def _eval_stored(self: NotebookClientBase, name: str) -> list:
    table = self.__dict__.get("_stored_expressions")
    if table is None:
        table = self.__dict__["_stored_expressions"] = stored_expressions(self.notebook)
    if name not in table:
        raise KeyError(
            f"no stored value for {{eval}}`{name}`: execute the notebook with "
            "`python tools/notebooks.py execute` to store it"
        )
    result = table[name]
    if result.get("status") != "ok":
        output = {
            "output_type": "error",
            "ename": result.get("ename", "Error"),
            "evalue": result.get("evalue", ""),
            "traceback": result.get("traceback", []),
        }
    else:
        output = {
            "output_type": "execute_result",
            "execution_count": None,
            "data": result.get("data", {}),
            "metadata": result.get("metadata", {}),
        }
    return [nbformat.from_dict(output)]


def setup(app):
    # Only the base client (execution "off" or "auto" with nothing to run) lacks
    # eval_variable; the inline client keeps its own, which asks a live kernel.
    NotebookClientBase.eval_variable = _eval_stored
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
