"""How long a reader waits: execute every chapter notebook and time it.

Each notebook in the table of contents is executed top to bottom in a fresh kernel with one
BLAS thread, as nbval does. The time includes starting the kernel and importing the libraries,
which is what a reader who opens the notebook and runs every cell waits for; the kernel's
shutdown after the last cell is not.
Run alone with ``python benchmarks/bench_notebooks.py`` or through ``make bench``.
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(ROOT / "benchmarks"))


from common import describe_machine, format_rows, machine_speed, row  # noqa: E402

TARGET_TOTAL_S = 60.0  # all chapter notebooks together in at most 60 s
TARGET_CHAPTER_S = 12.0  # and each in at most 12 s


def _execute(path: Path) -> float:
    """Seconds to execute the notebook at ``path`` as ``tools/notebooks.py execute`` does,
    from the kernel's start to the last cell's end (the shutdown, which no reader waits
    for, is not counted)."""
    import nbformat
    import notebooks

    nb = nbformat.read(path, as_version=4)
    return notebooks.run(nb, path.parent)


def run(quick: bool = False, repeats: int = 1) -> list[dict]:
    """One row per notebook plus a total; times are medians over ``repeats`` runs (seconds)."""
    import notebooks

    rows = []
    total = 0.0
    for rel in notebooks.toc_notebooks():
        times = [_execute(ROOT / rel) for _ in range(repeats)]
        med = statistics.median(times)
        total += med
        rows.append(
            row(
                "notebook execution",
                rel.name,
                med,
                target=f"<= {TARGET_CHAPTER_S:.0f} s",
                met=med <= TARGET_CHAPTER_S,
            )
        )
    rows.append(
        row(
            "notebook execution",
            "all chapters",
            total,
            target=f"<= {TARGET_TOTAL_S:.0f} s",
            met=total <= TARGET_TOTAL_S,
            notes="fresh kernel per notebook, one BLAS thread, kernel start and imports "
            f"included, its shutdown not; {describe_machine(machine_speed())}",
        )
    )
    return rows


if __name__ == "__main__":
    print(format_rows(run()))
