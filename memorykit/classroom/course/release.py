"""The course editions: ``python -m memorykit.classroom course release --out DIR``.

``build_course(out)`` turns the repository's lessons into a course directory in nbgrader's
layout and makes both editions:

* ``source/<lesson>/<lesson>.ipynb``: one assignment per lesson 01-12, the notebooks as committed
  (reference answers, outputs) with their links moved to the layout (``memorykit.classroom.course.layout``),
  and ``nbgrader_config.py``: the course nbgrader works on.
* ``release/``: the **student edition**, made by nbgrader's own ``generate_assignment`` (every
  ``### BEGIN SOLUTION`` region replaced by ``# YOUR CODE HERE`` / ``raise NotImplementedError()``,
  outputs cleared, graded cells locked and checksummed), without the instructor-only
  ``metadata.memorykit.wrong_answer``, with a markdown cell for the student's answers under each
  lesson's review questions (``add_review_answer_cells``); plus the course map ``00_index.ipynb`` and the pages the
  lessons link (``docs/BIBLIOGRAPHY.md``...), never the instructor's pages (``INSTRUCTOR_PAGES``).
* ``instructor/``: the **instructor edition**, the same layout with the notebooks as committed,
  the instructor guide and the review answers (``docs/review/NN.md``).

Grading the release is ``memorykit.classroom.course.grading``. Taught in ``docs/INSTRUCTOR_GUIDE.md``.
"""

from __future__ import annotations

import re
import shutil
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import memorykit.classroom.course._nbgrader as _nbgrader
from memorykit._validate import require_bool
from memorykit.classroom.course.layout import INDEX, Edition, lesson_stems

__all__ = ["INSTRUCTOR_PAGES", "STUDENT_PAGES", "Course", "build_course", "student_notebook",
           "add_review_answer_cells"]

INSTRUCTOR_PAGES = ("docs/INSTRUCTOR_GUIDE.md", "docs/review/")
"""Repository paths (a trailing ``/``: a folder) that only the instructor edition holds."""

STUDENT_PAGES = ("docs/BIBLIOGRAPHY.md", "docs/LEARNING_PATH.md", "docs/GLOSSARY.md")
"""Pages both editions hold even when no lesson links them (when the repository has them)."""

_MADE = ("source", "release", "instructor", "autograded", "feedback", "nbgrader_config.py",
         "gradebook.db")


@dataclass(frozen=True)
class Course:
    """A course directory made by ``build_course``: where nbgrader and each edition live."""

    root: Path
    lessons: tuple[str, ...]

    @property
    def release(self) -> Path:
        """The student edition (nbgrader's ``release/``)."""
        return self.root / "release"

    @property
    def instructor(self) -> Path:
        """The instructor edition."""
        return self.root / "instructor"

    def notebook(self, edition: str, lesson: str) -> Path:
        """Lesson ``lesson``'s notebook in ``edition`` (``source``, ``release`` or ``instructor``)."""
        if edition not in ("source", "release", "instructor"):
            raise ValueError(f"edition must be 'source', 'release' or 'instructor', got {edition!r}")
        if lesson not in self.lessons:
            raise ValueError(f"lesson must be one of {', '.join(self.lessons)}, got {lesson!r}")
        return self.root / edition / lesson / f"{lesson}.ipynb"

    @classmethod
    def open(cls, root: Path) -> Course:
        """The course ``build_course`` made at ``root`` (a relative path is resolved)."""
        root = Path(root).resolve()
        if not (root / "nbgrader_config.py").is_file() or not (root / "source").is_dir():
            raise FileNotFoundError(f"{root} is not a course directory (no nbgrader_config.py "
                                    "and source/): make one with python -m memorykit.classroom course "
                                    "release --out DIR")
        lessons = sorted(p.name for p in (root / "source").iterdir() if p.is_dir())
        return cls(root, tuple(lessons))


def _instructor_only(path: str) -> bool:
    return any(path == p or (p.endswith("/") and path.startswith(p)) for p in INSTRUCTOR_PAGES)


def _instructor_pages(repo: Path) -> list[str]:
    found: list[str] = []
    for page in INSTRUCTOR_PAGES:
        paths = sorted((repo / page).glob("**/*.md")) if page.endswith("/") else [repo / page]
        found += [p.relative_to(repo).as_posix() for p in paths if p.is_file()]
    return found


def _read(path: Path) -> Any:
    import nbformat

    return nbformat.read(path, as_version=4)


def _move_links(nb: Any, repo_path: str, edition: Edition) -> set[str]:
    reached: set[str] = set()
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source, found = edition.markdown(cell.source, repo_path)
            reached |= found
    return reached


def _write(nb: Any, path: Path) -> None:
    import nbformat

    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)


# Answers in a cell's metadata that nbgrader's solution regions do not cover: the plausible wrong
# answer the grading test submits, and the shortcuts (answers copied from the lesson's output,
# degenerate settings) tests/test_exercise_shortcuts.py requires to fail.
INSTRUCTOR_ONLY_METADATA = ("wrong_answer", "shortcuts")


def student_notebook(nb: Any) -> Any:
    """``nb`` without what only the instructor may see beyond nbgrader's solution regions:
    ``metadata.memorykit``'s ``INSTRUCTOR_ONLY_METADATA`` of each cell (in place; returned)."""
    for cell in nb.cells:
        mine = cell.metadata.get("memorykit")
        if isinstance(mine, dict):
            for key in INSTRUCTOR_ONLY_METADATA:
                mine.pop(key, None)
            if not mine:
                del cell.metadata["memorykit"]
    return nb


_REVIEW = re.compile(r"^#+\s*Review questions\s*$", re.M)
_QUESTION = re.compile(r"^(\d+)\.\s", re.M)
REVIEW_ANSWERS = ("**Your answers** (double-click this cell to write them; the reference answers "
                  "are your instructor's, in the instructor edition's `docs/review/`):")


def add_review_answer_cells(nb: Any) -> Any:
    """``nb`` with a markdown cell for the student's answers under each cell of review questions,
    one numbered line per question (in place; returned). The answers are not graded."""
    from nbformat.v4 import new_markdown_cell

    cells = []
    for cell in nb.cells:
        cells.append(cell)
        if cell.cell_type == "markdown" and _REVIEW.search(cell.source):
            numbers = _QUESTION.findall(cell.source[_REVIEW.search(cell.source).end():])
            lines = [f"{n}. *(your answer)*" for n in numbers]
            answer = new_markdown_cell("\n\n".join([REVIEW_ANSWERS, "\n".join(lines)]))
            answer.id = f"{cell.get('id') or 'review'}-answers"[:64]
            cells.append(answer)
    nb.cells = cells
    return nb


def graded_in(root: Path) -> tuple[int, int]:
    """How many students and submissions the gradebook of the course at ``root`` holds."""
    if not (root / "gradebook.db").is_file():
        return 0, 0
    db = sqlite3.connect(f"file:{root / 'gradebook.db'}?mode=ro", uri=True)
    try:
        return tuple(db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]  # type: ignore[return-value]
                     for table in ("student", "submitted_assignment"))
    except sqlite3.DatabaseError as exc:
        raise FileExistsError(f"{root / 'gradebook.db'} is not a gradebook nbgrader made ({exc}): "
                              "move it away, or pass --force to replace it") from None
    finally:
        db.close()


def _prepare(out: Path, force: bool) -> Path:
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise NotADirectoryError(f"--out must be a directory, {out} is a file")
    if out.is_dir() and any(out.iterdir()) and not (out / "nbgrader_config.py").is_file():
        raise FileExistsError(f"{out} is not empty and is not a course directory: choose an "
                              "empty or new folder")
    students, submissions = (0, 0) if force else graded_in(out)
    if students or submissions:
        raise FileExistsError(
            f"{out} is a course whose gradebook holds {students} students and {submissions} "
            "graded submissions: a release replaces the gradebook and source/, release/, "
            "instructor/, autograded/, feedback/ (every grade would be lost). Pass --force "
            "(build_course(..., force=True)) to replace them, or choose another --out")
    out.mkdir(parents=True, exist_ok=True)
    for name in _MADE:
        made = out / name
        if made.is_dir():
            shutil.rmtree(made)
        elif made.exists():
            made.unlink()
    return out.resolve()


def build_course(out: Path, *, repo: Path | None = None,
                 lessons: Sequence[str] | None = None, force: bool = False) -> Course:
    """Make the course directory ``out`` (created) from ``repo`` (default: the checkout holding
    this package): both editions, as the module says. ``lessons`` limits it to some lessons
    (default: every ``notebooks/NN_*.ipynb``, NN >= 01). A course made there before is replaced,
    gradebook included; one whose gradebook holds grades only with ``force``."""
    force = require_bool("force", force)
    repo = Path(repo) if repo is not None else Path(__file__).resolve().parents[3]
    available = lesson_stems(repo / "notebooks")
    chosen = list(available if lessons is None else lessons)
    for lesson in chosen:
        if lesson not in available:
            raise ValueError(f"lesson must be one of {', '.join(available)}, got {lesson!r}")
    if not chosen:
        raise ValueError(f"no lesson to release in {repo / 'notebooks'}")
    root = _prepare(out, force)
    (root / "nbgrader_config.py").write_text(_nbgrader.CONFIG, encoding="utf-8")
    course = Course(root, tuple(chosen))
    # a link to a lesson left out of this course (``lessons``) becomes its plain text
    left_out = {f"notebooks/{s}.ipynb" for s in available} - {f"notebooks/{s}.ipynb" for s in chosen}
    student = Edition(repo, course.release, lambda p: p not in left_out and not _instructor_only(p))
    teacher = Edition(repo, course.instructor, lambda p: p not in left_out)
    for edition in (student, teacher):
        pages = [p for p in STUDENT_PAGES if edition.keep(p)]
        if edition is teacher:
            pages += _instructor_pages(repo)
        index = repo / "notebooks" / f"{INDEX}.ipynb"
        if index.is_file():
            nb = _read(index)
            pages += _move_links(nb, f"notebooks/{INDEX}.ipynb", edition)
            _write(nb, edition.root / f"{INDEX}.ipynb")
        for lesson in chosen:
            nb = _read(repo / "notebooks" / f"{lesson}.ipynb")
            pages += _move_links(nb, f"notebooks/{lesson}.ipynb", edition)
            _write(nb, (course.instructor if edition is teacher else root / "source")
                   / lesson / f"{lesson}.ipynb")
        edition.copy_closure(pages)
    for lesson in chosen:
        _nbgrader.run(root, "generate_assignment", lesson)
        released = course.notebook("release", lesson)
        _write(add_review_answer_cells(student_notebook(_read(released))), released)
    return course
