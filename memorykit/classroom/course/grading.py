"""Grade a student's lessons with nbgrader's autograder: ``python -m memorykit.classroom course grade``.

``submit(course, student, notebooks)`` places a student's notebooks where nbgrader collects them
(``submitted/<student>/<lesson>/<lesson>.ipynb``); ``autograde(course, student)`` runs
nbgrader's ``autograde`` on each (the graded cells are restored from the gradebook, so a student
cannot edit a check away; every cell is executed) and reads back, per lesson and per graded cell,
the points and the feedback: the text of the error a failed graded cell raised, which for
``check_...(...).assert_passed()`` is the checker's verdict ("NOT YET: ..." with its numbers).
Lessons are graded in ``workers`` processes at once (each executes whole notebooks; they share
the course's SQLite gradebook, whose writes are short).
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Mapping, Sequence
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import memorykit.classroom.course._nbgrader as _nbgrader
from memorykit.classroom.course.release import Course

__all__ = ["CellGrade", "LessonGrade", "Grades", "submit", "autograde"]

_STUDENT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


@dataclass(frozen=True)
class CellGrade:
    """One graded cell: its ``grade_id``, the points earned of ``max_points``, and the feedback
    (the error the cell raised; empty when it passed)."""

    grade_id: str
    points: float
    max_points: float
    feedback: str = ""

    @property
    def passed(self) -> bool:
        return self.points >= self.max_points


@dataclass(frozen=True)
class LessonGrade:
    """A student's grade on one lesson: every graded cell, in notebook order."""

    lesson: str
    cells: tuple[CellGrade, ...]

    @property
    def points(self) -> float:
        return sum(c.points for c in self.cells)

    @property
    def max_points(self) -> float:
        return sum(c.max_points for c in self.cells)


@dataclass(frozen=True)
class Grades:
    """A student's grades over the lessons graded."""

    student: str
    lessons: tuple[LessonGrade, ...]

    @property
    def points(self) -> float:
        return sum(g.points for g in self.lessons)

    @property
    def max_points(self) -> float:
        return sum(g.max_points for g in self.lessons)

    def lesson(self, lesson: str) -> LessonGrade:
        for grade in self.lessons:
            if grade.lesson == lesson:
                return grade
        raise KeyError(f"{lesson!r} was not graded for {self.student}")

    def report(self) -> str:
        """Scores per lesson and cell, with the feedback of every cell that earned no points."""
        lines = [f"{self.student}: {self.points:g} / {self.max_points:g} points"]
        for grade in self.lessons:
            lines.append(f"  {grade.lesson}: {grade.points:g} / {grade.max_points:g}")
            for cell in grade.cells:
                lines.append(f"    {cell.grade_id}: {cell.points:g} / {cell.max_points:g}")
                lines += [f"      | {line}" for line in cell.feedback.splitlines()]
        return "\n".join(lines)


def _check_student(student: str) -> str:
    if not isinstance(student, str) or not _STUDENT.match(student):
        raise ValueError("student must be a name of letters, digits, '_', '.' or '-' (it names "
                         f"a folder and a gradebook entry), got {student!r}")
    return student


def submit(course: Course, student: str, notebooks: Mapping[str, Any]) -> None:
    """Place ``notebooks`` (lesson -> a notebook node or the path of an ``.ipynb``) as
    ``student``'s submission, replacing an earlier one of those lessons."""
    import nbformat

    _check_student(student)
    for lesson, nb in notebooks.items():
        course.notebook("release", lesson)  # refuses a lesson the course does not have
        folder = course.root / "submitted" / student / lesson
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        target = folder / f"{lesson}.ipynb"
        if isinstance(nb, (str, Path)):
            if not Path(nb).is_file():
                raise FileNotFoundError(f"no notebook at {nb} (for {lesson})")
            shutil.copyfile(nb, target)
        else:
            nbformat.write(nb, target)


def _autograde_apart(root: str, lesson: str, student: str) -> None:
    """nbgrader's autograde in a process of its own (several run at once)."""
    code = "import sys; from memorykit.classroom.course._nbgrader import main; sys.exit(main(sys.argv[1:]))"
    done = subprocess.run([sys.executable, "-c", code, root, "autograde", lesson, student],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(done.stderr.strip() or f"nbgrader autograde {lesson} {student} failed")


# a failed check raises the verdict as an AssertionError (NotYet, memorykit.classroom.verdict):
# its text is the feedback as it stands; any other error keeps its name
_VERDICT_ERRORS = ("AssertionError", "NotYet")


def _feedback(cell: Any) -> str:
    texts = []
    for out in cell.get("outputs", []):
        if out.get("output_type") == "error":
            value = out.get("evalue", "")
            texts.append(value if out.get("ename") in _VERDICT_ERRORS and value
                         else f"{out.get('ename')}: {value}")
    return _ANSI.sub("", "\n".join(texts)).strip()


def _read_grades(course: Course, student: str, lesson: str) -> LessonGrade:
    import nbformat
    from nbgrader.api import Gradebook

    graded = nbformat.read(course.root / "autograded" / student / lesson / f"{lesson}.ipynb",
                           as_version=4)
    with _nbgrader.nbgrader_env(), Gradebook(f"sqlite:///{course.root}/gradebook.db") as gb:
        scores = {g.name: (float(g.score), float(g.max_score))
                  for g in gb.find_submission_notebook(lesson, lesson, student).grades}
    cells = []
    for cell in graded.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("grade") and meta.get("grade_id") in scores:
            points, most = scores[meta["grade_id"]]
            cells.append(CellGrade(meta["grade_id"], points, most,
                                   "" if points >= most else _feedback(cell)))
    return LessonGrade(lesson, tuple(cells))


def autograde(course: Course, student: str, lessons: Sequence[str] | None = None, *,
              workers: int = 1) -> Grades:
    """Autograde ``student``'s submitted ``lessons`` (default: every lesson submitted) with
    nbgrader, ``workers`` lessons at once, and return the grades."""
    if isinstance(workers, bool) or not isinstance(workers, int):
        raise TypeError(f"workers must be an int number of processes, got {workers!r}")
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    _check_student(student)
    if isinstance(lessons, str):
        raise TypeError(f"lessons must be a list of lesson names, got the string {lessons!r}")
    folder = course.root / "submitted" / student
    if lessons is None:
        lessons = [lesson for lesson in course.lessons if (folder / lesson).is_dir()]
        if not lessons:
            raise FileNotFoundError(f"nothing submitted for {student} in {folder}")
    for lesson in lessons:
        course.notebook("release", lesson)  # refuses a lesson the course does not have
        if not (folder / lesson / f"{lesson}.ipynb").is_file():
            raise FileNotFoundError(f"{student} submitted no {lesson} "
                                    f"(expected {folder / lesson / f'{lesson}.ipynb'})")
    jobs = [(str(course.root), lesson, student) for lesson in lessons]
    if not jobs:  # lessons=[]: nothing to grade
        return Grades(student, ())
    if workers == 1 or len(jobs) == 1:
        for root, lesson, _ in jobs:
            _nbgrader.run(Path(root), "autograde", lesson, student)
    else:
        _nbgrader.add_student(course.root, student)
        with ThreadPoolExecutor(min(workers, len(jobs))) as pool:
            for future in [pool.submit(_autograde_apart, *job) for job in jobs]:
                future.result()
    return Grades(student, tuple(_read_grades(course, student, lesson) for lesson in lessons))
