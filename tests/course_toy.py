"""A two-lesson toy course in a repository's layout, for tests/test_course_grading.py.

Lesson 01 has a number exercise (1 point, ``check_budget``) and a build-it-yourself one
(2 points, ``check_victim_choice``: the student writes a victim choice over the buffer base);
lesson 02 has one number exercise. Both follow docs/LESSON_FORMAT.md's answer/graded cells,
with a wrong answer in ``metadata.memorykit.wrong_answer``.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

VICTIM_ANSWER = '''class LeastImportant(MessageBuffer):
    """Evict the least important evictable message, the oldest among equals."""

    def _choose_victim(self, now):
        ### BEGIN SOLUTION
        candidates = [(m.importance, i, mid) for i, (mid, m) in enumerate(self._messages.items())
                      if self._evictable(mid)]
        if not candidates:
            return None
        importance, _, mid = min(candidates)
        return (mid, "importance", f"lowest importance {importance:.2f}", importance)
        ### END SOLUTION'''

VICTIM_WRONG = VICTIM_ANSWER.replace("(m.importance, i, mid)", "(m.importance, -i, mid)").replace(
    "        ### BEGIN SOLUTION\n", "").replace("\n        ### END SOLUTION", "")


def _answer(grade_id: str, source: str, wrong: str):
    return new_code_cell(source, metadata={
        "nbgrader": {"grade": False, "solution": True, "locked": False, "grade_id": grade_id,
                     "schema_version": 3},
        "memorykit": {"wrong_answer": wrong}})


def _graded(grade_id: str, source: str, points: int):
    return new_code_cell(source, metadata={
        "nbgrader": {"grade": True, "solution": False, "locked": True, "points": points,
                     "grade_id": grade_id, "schema_version": 3}})


def budget_answer() -> int:
    """The budget ``check_budget`` asks for: the billed tokens of the default conversation's
    first 30 turns (computed, so the toy follows lesson 01's checker)."""
    from memorykit.classroom.data import default_conversation
    from memorykit.classroom.lesson01 import turn_tokens

    turns = [m for m in default_conversation().messages if 1 <= m.turn <= 30]
    return turn_tokens(turns, 30)


def _budget_exercise(n: str, k: int):
    return [
        new_markdown_cell(f"**Exercise {k}.** Choose the smallest memory budget that holds the "
                          "first 30 turns."),
        _answer(f"{n}-ex{k}-answer",
                f"### BEGIN SOLUTION\nbudget = {budget_answer()}\n### END SOLUTION",
                "budget = 100"),
        _graded(f"{n}-ex{k}-check", "check_budget(budget).assert_passed()", 1),
    ]


def lesson_01():
    return new_notebook(cells=[
        new_markdown_cell("# 01 · Toy budgets\n\nSources: [D1](../docs/BIBLIOGRAPHY.md#d1), "
                          "the <a href=\"../docs/GLOSSARY.md\">glossary</a>; instructors see "
                          "[the guide](../docs/INSTRUCTOR_GUIDE.md)."),
        new_code_cell("from memorykit.buffers.base import MessageBuffer\n"
                      "from memorykit.classroom.lesson01_checks import check_budget\n"
                      "from memorykit.classroom.lesson02_checks import check_victim_choice"),
        new_markdown_cell("## Exercises"),
        *_budget_exercise("01", 1),
        new_markdown_cell("**Exercise 2.** Write the victim choice."),
        _answer("01-ex2-answer", VICTIM_ANSWER, VICTIM_WRONG),
        _graded("01-ex2-check", "check_victim_choice(LeastImportant).assert_passed()", 2),
        new_markdown_cell("## Summary"),
        new_code_cell("print(f'budget {budget:,}')"),
        new_markdown_cell("## Review questions\n\n1. Why does the budget hold 30 turns?\n"
                          "2. What would you evict first?"),
        new_markdown_cell("## Next\n\n[02 · Toy](02_toy.ipynb)"),
    ], metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                "language": "python"}})


def lesson_02():
    return new_notebook(cells=[
        new_markdown_cell("# 02 · Toy again\n\n[D2](../docs/BIBLIOGRAPHY.md#d2)"),
        new_code_cell("from memorykit.classroom.lesson01_checks import check_budget"),
        new_markdown_cell("## Exercises"),
        *_budget_exercise("02", 1),
        new_markdown_cell("## Next\n\n[Back to the index](00_index.ipynb)"),
    ], metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                "language": "python"}})


def write_toy_repo(repo: Path) -> Path:
    """The toy course's repository (notebooks/ and docs/) under ``repo``."""
    (repo / "notebooks").mkdir(parents=True)
    (repo / "docs" / "review").mkdir(parents=True)
    nbformat.write(new_notebook(cells=[new_markdown_cell(
        "# Toy course\n\n1. [Budgets](01_toy.ipynb)\n2. [Again](02_toy.ipynb)\n\n"
        "[Sources](../docs/BIBLIOGRAPHY.md)")]), repo / "notebooks" / "00_index.ipynb")
    nbformat.write(lesson_01(), repo / "notebooks" / "01_toy.ipynb")
    nbformat.write(lesson_02(), repo / "notebooks" / "02_toy.ipynb")
    (repo / "docs" / "BIBLIOGRAPHY.md").write_text(
        "# Bibliography\n\n<a id=\"d1\"></a>D1, <a id=\"d2\"></a>D2; lessons start at "
        "[01](../notebooks/01_toy.ipynb); see the [glossary](GLOSSARY.md).\n", encoding="utf-8")
    (repo / "docs" / "GLOSSARY.md").write_text("# Glossary\n\nbudget: tokens.\n", encoding="utf-8")
    (repo / "docs" / "INSTRUCTOR_GUIDE.md").write_text(
        "# Guide\n\nReview answers: [01](review/01.md); [lesson 01](../notebooks/01_toy.ipynb).\n",
        encoding="utf-8")
    (repo / "docs" / "review" / "01.md").write_text(
        "# 01 · Toy budgets: review answers\n\n1. 4,197 tokens.\n", encoding="utf-8")
    return repo
