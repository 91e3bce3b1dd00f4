"""Every lesson fits one 60-90 minute lab, and the learning path's time estimate stays true
(issue 24).

No student was timed, so the estimate is a model of the lesson's content with its rates stated
here, and the catalog's hand-written ``minutes`` (what docs/LEARNING_PATH.md and the README
print) must agree with it within ``TOLERANCE_MIN``. A lesson that grows past the lab (text,
code, an exercise or an explorer added) fails here and is split or trimmed; one that shrinks
makes its stated time too long and fails too.

The rates (``RATES``), chosen once and not fitted to the lessons:

* prose: 130 words a minute. Silent reading of non-fiction averages about 240 words a minute
  (Brysbaert 2019, a meta-analysis of 190 studies); reading to learn is slower, Carver's
  "learning" and "memorizing" rates are 200 and 138; lessons with formulas sit at the slow end.
* shown code: 5 non-blank, non-comment lines a minute (about 12 s a line: read, run, look at its
  output); answer cells are counted as exercises, not read.
* an exercise: 8 minutes for a 1-point graded cell (a number or a setting, with a first wrong
  attempt), 15 for a 2-point one (a function or class the student writes).
* an explorer (a cell that makes one): 3 minutes of moving its sliders.
* a review question: 2 minutes.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from memorykit.classroom.catalog import CATALOG

ROOT = Path(__file__).resolve().parent.parent
RATES = {"words_per_min": 130, "code_lines_per_min": 5, "exercise_min": {1: 8, 2: 15},
         "explorer_min": 3, "review_question_min": 2}
LAB_MIN = 90          # the longest lab a lesson must fit
TOLERANCE_MIN = 15    # how far the catalog's stated minutes may be from the model
INDEX_MAX_MIN = 30    # the index is a tour read before the first lab, not a lab


def _code_lines(source: str) -> int:
    return sum(1 for line in source.splitlines() if line.strip() and not line.strip().startswith("#"))


def _review_questions(nb) -> int:
    heading = re.compile(r"^#+\s*Review questions", re.M)
    return sum(len(re.findall(r"^\s*\d+\.\s", c.source, re.M)) for c in nb.cells
               if c.cell_type == "markdown" and heading.search(c.source))


def estimate_minutes(nb) -> tuple[float, dict[str, float]]:
    """The model's minutes for ``nb``, and each part of it."""
    grading = [c.metadata.get("nbgrader", {}) for c in nb.cells]
    words = sum(len(c.source.split()) for c in nb.cells if c.cell_type == "markdown")
    code = sum(_code_lines(c.source) for c, g in zip(nb.cells, grading)
               if c.cell_type == "code" and not g.get("solution") and not g.get("grade"))
    points = [g.get("points", 0) for g in grading if g.get("grade")]
    explorers = sum(1 for c in nb.cells if c.cell_type == "code" and re.search(r"Explorer\(", c.source))
    parts = {
        "prose": words / RATES["words_per_min"],
        "code": code / RATES["code_lines_per_min"],
        "exercises": sum(RATES["exercise_min"][2 if p >= 2 else 1] for p in points),
        "explorers": explorers * RATES["explorer_min"],
        "review": _review_questions(nb) * RATES["review_question_min"],
    }
    return sum(parts.values()), parts


def _describe(minutes: float, parts: dict[str, float]) -> str:
    return f"{minutes:.0f} min (" + ", ".join(f"{k} {v:.0f}" for k, v in parts.items()) + ")"


@pytest.mark.parametrize("lesson", CATALOG, ids=lambda lesson: lesson.filename[:2])
def test_lesson_fits_a_lab_and_its_stated_time_is_true(lesson):
    nb = nbformat.read(ROOT / "notebooks" / lesson.filename, 4)
    minutes, parts = estimate_minutes(nb)
    limit = INDEX_MAX_MIN if lesson.number == 0 else LAB_MIN
    assert minutes <= limit, (f"{lesson.filename}: {_describe(minutes, parts)} does not fit a "
                              f"{limit}-minute lab: split or trim it")
    assert abs(lesson.minutes - minutes) <= TOLERANCE_MIN, (
        f"{lesson.filename}: the catalog says {lesson.minutes} min, the content is "
        f"{_describe(minutes, parts)}: update catalog.py's minutes (and regenerate the learning path)")


def test_the_model_counts_each_part():
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell(" ".join(["word"] * 260)),
        nbformat.v4.new_code_cell("x = 1\n# a comment\n\ny = 2\nexplorer = LessonExplorer(budget=1)\n"),
        nbformat.v4.new_code_cell("answer = 3", metadata={"nbgrader": {"solution": True}}),
        nbformat.v4.new_code_cell("check(answer)", metadata={"nbgrader": {"grade": True, "points": 1}}),
        nbformat.v4.new_code_cell("check(f)", metadata={"nbgrader": {"grade": True, "points": 2}}),
        nbformat.v4.new_markdown_cell("## Review questions\n\n1. Why?\n2. Why not?\n"),
    ])
    minutes, parts = estimate_minutes(nb)
    assert parts["code"] == pytest.approx(3 / 5)
    assert parts["exercises"] == 8 + 15 and parts["explorers"] == 3 and parts["review"] == 4
    assert parts["prose"] == pytest.approx((260 + 8) / 130)
    assert minutes == pytest.approx(sum(parts.values()))
