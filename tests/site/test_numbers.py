"""The numbers a chapter shows in JupyterLab are the website's.

``tools/notebooks.py convert`` writes the website's numbers into each chapter (``\\tag{2.1}``
on labelled equations, ``:enumerator: 2.1`` on theorems and exercises, "(2.1)" and "Theorem
2.1" in references to them), computed by ``_ext/notebook_markup.numbering``. This test reads
the built site and fails if Sphinx numbers any of them differently.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HTML = ROOT / "_build" / "html"
sys.path.insert(0, str(ROOT / "_ext"))
sys.path.insert(0, str(ROOT / "tools"))
import notebook_markup  # noqa: E402
import notebooks  # noqa: E402

CHAPTERS = [ROOT / p for p in notebooks.toc_notebooks()]

pytestmark = pytest.mark.site


def _site_numbers(page: str) -> dict[str, str]:
    found = {}
    for number, label in re.findall(
        r'<span class="eqno">\(([\d.]+)\)<a class="headerlink" href="#equation-([\w-]+)"', page
    ):
        found[label] = number
    for label, body in re.findall(r'<div class="[^"]*admonition"[^>]*id="([\w-]+)">(.{0,400})',
                                  page, re.S):  # fmt: skip
        caption = re.search(r'<span class="caption-number">([^<]*)</span>', body)
        if caption:
            found[label] = caption.group(1).strip()
    return found


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_notebook_numbers_are_the_websites(site, path):
    page = site / path.relative_to(ROOT).with_suffix(".html")
    nb = notebook_markup.to_site(json.loads(path.read_text(encoding="utf-8")))
    ours = notebook_markup.numbering(nb, CHAPTERS.index(path) + 1)
    theirs = _site_numbers(page.read_text(encoding="utf-8"))
    differ = {k: (v, theirs.get(k)) for k, v in ours.items() if theirs.get(k) != v}
    assert not differ, f"{path.name}: label: (notebook, website) {differ}"
