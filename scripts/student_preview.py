"""Print what a student sees of a lesson: nbgrader's own preprocessors, applied in memory.

    python scripts/student_preview.py notebooks/02_pruning_strategies.ipynb [--exercises]

A quick look while writing exercises; the real student edition comes from
``python -m memorykit.classroom course release`` (nbgrader's ``generate_assignment``).
"""

from __future__ import annotations

import argparse
import sys

import nbformat
from nbgrader.preprocessors import ClearOutput, ClearSolutions


def student_view(path: str) -> nbformat.NotebookNode:
    nb = nbformat.read(path, as_version=4)
    resources = {"language": "python"}
    for preprocessor in (ClearSolutions(), ClearOutput()):
        nb, resources = preprocessor.preprocess(nb, resources)
    return nb


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebook")
    parser.add_argument("--exercises", action="store_true",
                        help="print only from the '## Exercises' heading on")
    args = parser.parse_args(argv)
    shown = not args.exercises
    for i, cell in enumerate(student_view(args.notebook).cells):
        shown = shown or cell.source.startswith("## Exercises")
        if shown:
            tag = cell.metadata.get("nbgrader", {}).get("grade_id", "")
            print(f"---- [{i}] {cell.cell_type} {tag}\n{cell.source}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
