"""Grade a student's lessons with nbgrader's autograder: ``python -m memorykit.classroom course grade``.

``submit(course, student, notebooks)`` places a student's notebooks where nbgrader collects them
(``submitted/<student>/<lesson>/<lesson>.ipynb``); ``autograde(course, student)`` runs
nbgrader's ``autograde`` on each (the graded cells are restored from the gradebook, so a student
cannot edit a check away; every cell is executed) and reads back, per lesson and per graded cell
the gradebook holds, the points and the feedback: the text of the error a failed graded cell
raised, which for a graded cell's ``graded("lessonNN_checks.check_...", answer)`` is the
checker's verdict ("NOT YET: ...").

Grading runs student code, so each lesson is autograded in a process of its own (``workers`` at
once) in a scratch course: only that submission, the gradebook without the other students, no
reference answer; HOME and TMPDIR scratch, no secret in the environment; killed with what it
started after ``notebook_timeout``. The points come back into the course's gradebook. A notebook
that cannot be read or run grades 0 with the reason. What this does not stop, and how to isolate
grading properly: docs/INSTRUCTOR_GUIDE.md, "Grading runs student code".
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import memorykit.classroom.course._nbgrader as _nbgrader
from memorykit._validate import require_between
from memorykit.classroom.course.release import Course

__all__ = ["CellGrade", "LessonGrade", "Grades", "submit", "autograde"]

_STUDENT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
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
    problem: str = ""
    """Why the notebook could not be graded (every cell then has 0 points); empty when it was."""

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
            lines.append(f"  {grade.lesson}: {grade.points:g} / {grade.max_points:g}"
                         + (f" (not graded: {grade.problem})" if grade.problem else ""))
            for cell in grade.cells:
                lines.append(f"    {cell.grade_id}: {cell.points:g} / {cell.max_points:g}")
                if cell.feedback != grade.problem:
                    lines += [f"      | {line}" for line in cell.feedback.splitlines()]
        return "\n".join(lines)


def _check_student(student: str) -> str:
    if not isinstance(student, str) or not _STUDENT.match(student):
        raise ValueError("student must be a name of 1-64 letters, digits, '_', '.' or '-' (it "
                         f"names a folder and a gradebook entry), got {student!r}")
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


NOTEBOOK_TIMEOUT_SECONDS = 900.0
"""Default time limit for autograding one notebook, kernel start included: about five times the
slowest lesson's autograde measured (under 3 minutes on 2 shared cores). ``autograde(...,
notebook_timeout=)``, ``course grade --notebook-timeout SECONDS``."""
_DAY_SECONDS = 86_400.0
"""The longest notebook_timeout taken: a larger one is a typo, not a lesson."""


MAX_NOTEBOOK_BYTES = 50_000_000
"""A submitted notebook larger than this is not read (grades 0); the lessons' are under 1 MB."""

DELETED = "graded cell deleted from the notebook"

# the environment a student's code runs in: no API keys or tokens, HOME and TMPDIR scratch folders
_KEPT_ENV = ("PATH", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "TZ", "PYTHONPATH", "VIRTUAL_ENV")
_SECRET = re.compile(r"KEY|TOKEN|SECRET|PASSW|CREDENTIAL|AUTH", re.I)
_ERROR_LINE = re.compile(r"^\s*(?:\w+\.)*(\w*(?:Error|Exception|MissingEntry)): (.+)$", re.M)
_GRADEBOOK = threading.Lock()  # the course's gradebook is read and written by one thread at a time


def _readable(path: Path) -> tuple[Any, str]:
    """The submitted notebook at ``path``, or ``None`` and why it cannot be graded."""
    import nbformat

    if path.is_symlink() or not path.is_file():
        return None, "the submission is not a regular file"
    if path.stat().st_size > MAX_NOTEBOOK_BYTES:
        return None, f"the notebook has {path.stat().st_size:,} bytes (at most {MAX_NOTEBOOK_BYTES:,})"
    try:
        nb = nbformat.reads(path.read_bytes().decode("utf-8"), as_version=4)
        nbformat.validate(nb)
    except UnicodeDecodeError as exc:
        return None, f"the notebook is not UTF-8 text (byte {exc.start})"
    except Exception as exc:  # noqa: BLE001 - whatever a student's file breaks is its grade
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        kind = "JSON" if isinstance(exc, nbformat.reader.NotJSONError) else "a valid Jupyter notebook"
        return None, f"the notebook is not {kind} ({first[:200]})"
    return nb, ""


def _scratch_course(course: Course, student: str, lesson: str, nb: Any, root: Path) -> None:
    """At ``root``, a course holding only what autograding ``student``'s ``lesson`` needs: the
    config, a copy of the gradebook without the other students (it holds the release's cells, no
    reference answer), ``source/<lesson>/`` without its notebook, and the submission."""
    import nbformat
    from nbgrader.api import Gradebook

    # nbgrader copies a lesson's other files from source/ (data an instructor put there), never
    # its notebook: the reference answers stay in the course
    shutil.copytree(course.root / "source" / lesson, root / "source" / lesson,
                    ignore=shutil.ignore_patterns("*.ipynb", ".ipynb_checkpoints"))
    (root / "submitted" / student / lesson).mkdir(parents=True)
    shutil.copyfile(course.root / "nbgrader_config.py", root / "nbgrader_config.py")
    with _GRADEBOOK:
        shutil.copyfile(course.root / "gradebook.db", root / "gradebook.db")
    with _nbgrader.nbgrader_env(), _nbgrader.quiet_gradebook(), \
            Gradebook(f"sqlite:///{root}/gradebook.db") as gb:
        for other in [s.id for s in gb.students if s.id != student]:
            gb.remove_student(other)
    db = sqlite3.connect(root / "gradebook.db", isolation_level=None)
    db.execute("VACUUM")  # the removed students' rows leave the file, not only the tables
    db.close()
    nbformat.write(nb, root / "submitted" / student / lesson / f"{lesson}.ipynb")


def _kill_left_behind(tmp: Path, group: int) -> None:
    """Kill every process still running with ``TMPDIR`` = ``tmp``: the grader's and what it
    started (a kernel starts a session of its own, so the grader's process ``group`` misses it)."""
    try:
        import psutil  # IPython 9 (every kernel) requires it
    except ImportError:
        with contextlib.suppress(OSError):
            os.killpg(group, signal.SIGKILL)
        return
    for proc in psutil.process_iter():
        try:
            if proc.environ().get("TMPDIR") == str(tmp):
                proc.kill()
        except psutil.Error:  # gone, or another user's
            pass


def _why(log: str, returncode: int) -> str:
    """What to tell about an autograde that failed, from nbgrader's log (never its advice to
    run ``nbgrader db upgrade``: the gradebook is ours)."""
    if "DeadKernelError" in log or "Kernel died" in log:
        return "the kernel died while running the notebook (its code ended the kernel or ran out of memory)"
    if "UnresponsiveKernelError" in log or "became unresponsive" in log:
        return "the kernel stopped answering and could not be interrupted"
    if returncode < 0:
        return f"the grader was stopped by signal {-returncode}"
    # the first error a traceback ends with (the cause; nbgrader's NbGraderException after it
    # only wraps it, with advice meant for nbgrader's own commands)
    errors = [f"{m[1]}: {m[2]}" for m in _ERROR_LINE.finditer(_ANSI.sub("", log))
              if m[1] != "NbGraderException"]
    return f"nbgrader could not grade it ({(errors or [f'exit status {returncode}'])[0][:300]})"


def _autograde_apart(root: Path, lesson: str, student: str, timeout: float,
                     stop: threading.Event) -> str:
    """nbgrader's autograde of the scratch course at ``root`` in a process of its own, its
    working folder ``root``, HOME and TMPDIR scratch, no secret in its environment; stopped
    (with every process it started) after ``timeout`` seconds. ``""``, or why it did not grade;
    ``InterruptedError`` when ``stop`` is set meanwhile (the caller was interrupted)."""
    home, tmp = root.parent / "home", root.parent / "tmp"
    home.mkdir()
    tmp.mkdir()
    env = {k: v for k, v in os.environ.items()
           if (k in _KEPT_ENV or k.startswith("MEMORYKIT_")) and not _SECRET.search(k)}
    env.update(HOME=str(home), TMPDIR=str(tmp))
    code = "import sys; from memorykit.classroom.course._nbgrader import main; sys.exit(main(sys.argv[1:]))"
    cell_timeout = min(float(_nbgrader.CELL_TIMEOUT_SECONDS), timeout)
    log_path = root.parent / "autograde.log"
    with open(log_path, "w", encoding="utf-8") as log:  # a file: a process left behind cannot block it
        proc = subprocess.Popen(
            [sys.executable, "-c", code, str(root), str(cell_timeout), "autograde", lesson, student],
            cwd=root, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log,
            start_new_session=True)
        deadline = time.monotonic() + timeout
        while proc.poll() is None and time.monotonic() < deadline and not stop.is_set():
            stop.wait(0.2)
        returncode = proc.poll()
        _kill_left_behind(tmp, proc.pid)
        proc.wait()
    if stop.is_set():
        raise InterruptedError(f"grading {student}'s {lesson} was interrupted")
    if returncode is None:
        return f"took longer than {timeout:g} s (the time limit per notebook): stopped"
    if returncode != 0:
        return _why(log_path.read_text(encoding="utf-8", errors="replace"), returncode)
    return ""


def _collected_at(course: Course, student: str, lesson: str) -> dict[str, Any]:
    """``timestamp=`` of the submission from nbgrader collect's ``timestamp.txt`` (for late
    submissions, as nbgrader's autograde reads it), or nothing when there is none or it is bad."""
    from nbgrader.utils import parse_utc

    with contextlib.suppress(OSError, ValueError, OverflowError):
        text = (course.root / "submitted" / student / lesson / "timestamp.txt").read_text("utf-8")
        return {"timestamp": parse_utc(text.strip())}
    return {}


def _record(course: Course, student: str, lesson: str, graded: Any, scores: dict[str, float],
            problem: str) -> LessonGrade:
    """Enter the grades in the course's gradebook and return them: every graded cell the
    gradebook knows for ``lesson``, 0 points for one the notebook lacks or when ``problem``."""
    import nbformat
    from nbgrader.api import Gradebook

    metas = [(c, c.metadata.get("nbgrader")) for c in (graded.cells if graded is not None else [])]
    cells = {meta.get("grade_id"): c for c, meta in metas if isinstance(meta, dict) and meta.get("grade")}
    found = []
    with _GRADEBOOK, _nbgrader.nbgrader_env(), _nbgrader.quiet_gradebook(), \
            Gradebook(f"sqlite:///{course.root}/gradebook.db") as gb:
        gb.update_or_create_submission(lesson, student, **_collected_at(course, student, lesson))
        for grade in gb.find_submission_notebook(lesson, lesson, student).grades:
            most = float(grade.max_score)
            cell = cells.get(grade.name)
            feedback = problem or (DELETED if cell is None else _feedback(cell))
            points = 0.0 if feedback else min(max(scores.get(grade.name, 0.0), 0.0), most)
            grade.auto_score, grade.needs_manual_grade = points, False
            found.append(CellGrade(grade.name, points, most, "" if points >= most else feedback))
        gb.db.commit()
    order = [c.metadata.get("nbgrader", {}).get("grade_id") for c in
             nbformat.read(course.notebook("release", lesson), as_version=4).cells]
    found.sort(key=lambda c: (order.index(c.grade_id) if c.grade_id in order else len(order), c.grade_id))
    return LessonGrade(lesson, tuple(found), problem)


def _grade(course: Course, student: str, lesson: str, timeout: float,
           stop: threading.Event) -> LessonGrade:
    """Autograde one lesson in a scratch course (the module says what it isolates); the graded
    notebook is copied to the course's ``autograded/``. Never raises for what the student sent."""
    import nbformat
    from nbgrader.api import Gradebook

    name = f"{student}/{lesson}/{lesson}.ipynb"
    nb, problem = _readable(course.root / "submitted" / name)
    graded, scores = None, {}
    out = course.root / "autograded" / name
    if out.parent.exists():
        shutil.rmtree(out.parent)
    if not problem:
        with tempfile.TemporaryDirectory(prefix="mk-grade-", ignore_cleanup_errors=True) as tmp:
            root = Path(tmp) / "course"
            _scratch_course(course, student, lesson, nb, root)
            problem = _autograde_apart(root, lesson, student, timeout, stop)
            if not problem and not (root / "autograded" / name).is_file():
                problem = "nbgrader wrote no graded notebook"
            if not problem:
                graded = nbformat.read(root / "autograded" / name, as_version=4)
                with _nbgrader.nbgrader_env(), Gradebook(f"sqlite:///{root}/gradebook.db") as gb:
                    scores = {g.name: float(g.score)
                              for g in gb.find_submission_notebook(lesson, lesson, student).grades}
                out.parent.mkdir(parents=True)
                nbformat.write(graded, out)
    return _record(course, student, lesson, graded, scores, problem)

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


def autograde(course: Course, student: str, lessons: Sequence[str] | None = None, *,
              workers: int = 1, notebook_timeout: float = NOTEBOOK_TIMEOUT_SECONDS) -> Grades:
    """Autograde ``student``'s submitted ``lessons`` (default: every lesson submitted) with
    nbgrader, ``workers`` lessons at once, each stopped after ``notebook_timeout`` seconds, and
    return the grades. A notebook that cannot be read, ends its kernel or runs out of time
    grades 0 with the reason as feedback; the other lessons still grade."""
    if isinstance(workers, bool) or not isinstance(workers, int):
        raise TypeError(f"workers must be an int number of processes, got {workers!r}")
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    notebook_timeout = require_between("notebook_timeout", notebook_timeout, 1e-3, _DAY_SECONDS)
    _check_student(student)
    if isinstance(lessons, str):
        raise TypeError(f"lessons must be a list of lesson names, got the string {lessons!r}")
    course = Course(Path(course.root).resolve(), course.lessons)
    folder = course.root / "submitted" / student
    if lessons is None:
        lessons = [lesson for lesson in course.lessons if (folder / lesson).is_dir()]
        if not lessons:
            raise FileNotFoundError(f"nothing submitted for {student} in {folder}")
    for lesson in lessons:
        course.notebook("release", lesson)  # refuses a lesson the course does not have
        if not (folder / lesson / f"{lesson}.ipynb").exists():
            raise FileNotFoundError(f"{student} submitted no {lesson} "
                                    f"(expected {folder / lesson / f'{lesson}.ipynb'})")
    if not lessons:  # lessons=[]: nothing to grade
        return Grades(student, ())
    _nbgrader.add_student(course.root, student)
    stop = threading.Event()
    pool = ThreadPoolExecutor(min(workers, len(lessons)))
    try:
        return Grades(student, tuple(pool.map(
            lambda lesson: _grade(course, student, lesson, float(notebook_timeout), stop), lessons)))
    except BaseException:  # Ctrl-C: the lessons grading are stopped, and recorded nowhere
        stop.set()
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
