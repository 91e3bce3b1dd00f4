"""Every graded exercise must be thought through: the answers a student could copy from the
lesson's own printed output, and the degenerate settings (all weights off, the defaults, the
extremes), fail their graded cell (issue 24).

Each answer cell lists them in ``metadata.memorykit.shortcuts`` (kept from students by the
release, like ``wrong_answer``): ``{"answer": <the whole cell's source>, "why": <where a student
would find it, or what it degenerates to>}``. A shortcut that is a right answer after all says so
in ``"legitimate": <why>`` and must pass instead.

One kernel per lesson runs the instructor notebook top to bottom (as nbval does), then, for each
answer cell, runs each shortcut in its place followed by the exercise's graded cells, and puts the
reference answer back. A shortcut fails only with the checker's verdict ("NOT YET"), not with a
crash; the shortcut itself must run (it is an answer a student could submit).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"


def _nbgrader(cell: Any) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {})


def shortcuts_of(cell: Any) -> list[dict]:
    return cell.get("metadata", {}).get("memorykit", {}).get("shortcuts", [])


def exercises(nb: Any) -> list[tuple[int, list[int]]]:
    """(answer cell index, the graded cells that follow it up to the next answer cell)."""
    found = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "code" and _nbgrader(cell).get("solution"):
            found.append((i, []))
        elif found and _nbgrader(cell).get("grade"):
            found[-1][1].append(i)
    return found


def graded_notebooks() -> list[Path]:
    return [p for p in sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
            if exercises(nbformat.read(p, 4))]


def _error(cell: Any) -> dict | None:
    return next((o for o in cell.get("outputs", []) if o.get("output_type") == "error"), None)


def _text(cell: Any) -> str:
    parts = []
    for out in cell.get("outputs", []):
        if out.get("output_type") == "error":
            parts += [out.get("ename", ""), out.get("evalue", ""), *out.get("traceback", [])]
        elif out.get("output_type") == "stream":
            parts.append(out.get("text", ""))
        else:
            parts.append(str(out.get("data", {}).get("text/plain", "")))
    return "\n".join(parts)


def test_every_answer_cell_lists_its_shortcuts():
    problems = []
    for path in graded_notebooks():
        nb = nbformat.read(path, 4)
        for answer, graded in exercises(nb):
            where = f"{path.stem} {_nbgrader(nb.cells[answer])['grade_id']}"
            listed = shortcuts_of(nb.cells[answer])
            if not listed:
                problems.append(f"{where}: no metadata.memorykit.shortcuts")
            for k, s in enumerate(listed):
                if not (isinstance(s, dict) and isinstance(s.get("answer"), str) and s["answer"].strip()
                        and isinstance(s.get("why"), str) and s["why"].strip()):
                    problems.append(f"{where} shortcut {k}: needs a non-empty 'answer' and 'why'")
                elif s["answer"] == nb.cells[answer].source:
                    problems.append(f"{where} shortcut {k}: is the reference answer itself")
                elif set(s) - {"answer", "why", "legitimate"}:
                    problems.append(f"{where} shortcut {k}: unknown keys {sorted(set(s) - {'answer', 'why', 'legitimate'})}")
            if not graded:
                problems.append(f"{where}: no graded cell follows")
    assert problems == []


@pytest.mark.parametrize("path", graded_notebooks(), ids=lambda p: p.stem)
def test_shortcuts_fail_their_graded_cells(path):
    from nbclient import NotebookClient

    nb = nbformat.read(path, 4)
    client = NotebookClient(nb, timeout=600, kernel_name="python3", allow_errors=True,
                            resources={"metadata": {"path": str(NOTEBOOKS)}})
    problems = []
    with client.setup_kernel():
        for i, cell in enumerate(nb.cells):
            if cell.cell_type == "code":
                client.execute_cell(cell, i)
                assert _error(cell) is None, f"{path.stem} cell {i} failed:\n{_text(cell)}"
        for answer, graded in exercises(nb):
            reference = nb.cells[answer]
            grade_id = _nbgrader(reference)["grade_id"]
            for k, shortcut in enumerate(shortcuts_of(reference)):
                where = f"{path.stem} {grade_id} shortcut {k} ({shortcut['why']})"
                tried = nbformat.v4.new_code_cell(shortcut["answer"])
                client.execute_cell(tried, answer)
                if _error(tried) is not None:
                    problems.append(f"{where}: the shortcut itself does not run:\n{_text(tried)}")
                    continue
                checks = [nbformat.v4.new_code_cell(nb.cells[g].source) for g in graded]
                for g, check in zip(graded, checks):
                    client.execute_cell(check, g)
                failed = [c for c in checks if _error(c) is not None]
                if "legitimate" in shortcut:
                    if failed:
                        problems.append(f"{where}: called legitimate ({shortcut['legitimate']}) "
                                        f"but fails:\n{_text(failed[0])}")
                elif not failed:
                    problems.append(f"{where}: passes its graded cell")
                elif not any("NOT YET" in _text(c) for c in failed):
                    problems.append(f"{where}: fails with a crash, not the checker's verdict:\n"
                                    f"{_text(failed[0])[-1500:]}")
            restored = nbformat.v4.new_code_cell(reference.source)
            client.execute_cell(restored, answer)
            assert _error(restored) is None, f"{path.stem} {grade_id}: reference answer failed"
    assert problems == [], "\n\n".join(problems)
