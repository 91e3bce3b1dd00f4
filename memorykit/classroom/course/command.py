"""``python -m memorykit.classroom course release|grade``: the course commands of ``memorykit.cli``.

* ``course release --out DIR [--lessons NN_name ...] [--force]``: the course directory, the student
  edition in ``DIR/release`` and the instructor edition in ``DIR/instructor`` (``build_course``;
  a course whose gradebook holds grades is replaced only with ``--force``).
* ``course grade --course DIR --student NAME [--notebooks FOLDER] [--workers N]
  [--notebook-timeout SECONDS]``: submit the
  student's notebooks from ``FOLDER`` (``NN_name.ipynb`` or ``NN_name/NN_name.ipynb``, as in the
  release; without it, what already is in ``DIR/submitted/NAME``), autograde them with nbgrader
  (each lesson in a scratch course, stopped at the time limit) and print the points per lesson
  and graded cell with the feedback of every failed cell, or why a lesson could not be graded.
* ``course student --out DIR``: make or refresh the student edition in the folder a student
  works in, keeping every file the student changed (``student_workspace``; ``./run lab --student``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

__all__ = ["add_course_commands", "run_course"]


def add_course_commands(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``course`` and its ``release`` and ``grade`` subcommands to ``commands``."""
    from memorykit.classroom.course.grading import NOTEBOOK_TIMEOUT_SECONDS

    course = commands.add_parser(
        "course", help="course editions and grading (nbgrader)",
        description="Make the student and instructor editions of the lessons and grade "
                    "students' notebooks with nbgrader (docs/INSTRUCTOR_GUIDE.md).")
    actions = course.add_subparsers(dest="course_command", required=True)
    release = actions.add_parser("release", help="make the course directory and both editions")
    release.add_argument("--out", metavar="DIR", type=Path, required=True,
                         help="course directory (created). A course made there before is "
                              "replaced: source/, release/, instructor/, autograded/, feedback/ "
                              "and the gradebook; refused when its gradebook holds grades, "
                              "unless --force")
    release.add_argument("--force", action="store_true",
                         help="replace a course whose gradebook holds grades (they are lost)")
    release.add_argument("--lessons", metavar="NN_name", nargs="+",
                         help="only these lessons (default: every lesson 01-12)")
    student = actions.add_parser(
        "student", help="make or refresh the student edition in a student's working folder",
        description="The student edition (no reference answers) in DIR; a later run refreshes "
                    "it and keeps every file the student changed.")
    student.add_argument("--out", metavar="DIR", type=Path, required=True,
                         help="the student's folder (created)")
    grade = actions.add_parser("grade", help="autograde a student's notebooks")
    grade.add_argument("--course", metavar="DIR", type=Path, required=True,
                       help="the course directory made by `course release`")
    grade.add_argument("--student", metavar="NAME", required=True, help="the student's id")
    grade.add_argument("--notebooks", metavar="FOLDER", type=Path,
                       help="the student's notebooks (default: DIR/submitted/NAME as collected)")
    grade.add_argument("--lessons", metavar="NN_name", nargs="+",
                       help="only these lessons (default: every lesson submitted)")
    grade.add_argument("--workers", "-w", metavar="N", type=int, default=1,
                       help="lessons graded at once, one process each (default 1)")
    grade.add_argument("--notebook-timeout", metavar="SECONDS", type=float, default=None,
                       help="time limit per notebook; a notebook stopped at it grades 0 "
                            f"(default {NOTEBOOK_TIMEOUT_SECONDS:g})")


def _found(folder: Path, lesson: str) -> Path | None:
    for path in (folder / f"{lesson}.ipynb", folder / lesson / f"{lesson}.ipynb"):
        if path.is_file():
            return path
    return None


def run_course(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """Run the ``course`` subcommand ``args`` holds; bad arguments end in ``parser.error``."""
    from memorykit.classroom.course import Course, autograde, build_course, submit

    try:
        if args.course_command == "release":
            course = build_course(args.out, lessons=args.lessons, force=args.force)
            print(f"course: {course.root} ({len(course.lessons)} lessons: "
                  f"{', '.join(course.lessons)})")
            print(f"student edition: {course.release}  (hand this folder out)")
            print(f"instructor edition: {course.instructor}")
            return 0
        if args.course_command == "student":
            from memorykit.classroom.course.student import student_workspace

            print(student_workspace(args.out).report())
            return 0
        course = Course.open(args.course)
        if args.notebooks is not None:
            if not args.notebooks.is_dir():
                parser.error(f"--notebooks must be a folder, got {args.notebooks}")
            lessons = args.lessons or course.lessons
            found = {lesson: _found(args.notebooks, lesson) for lesson in lessons}
            if not any(found.values()):
                parser.error(f"--notebooks {args.notebooks} holds no lesson notebook "
                             f"({', '.join(f'{s}.ipynb' for s in lessons)})")
            submit(course, args.student, {k: v for k, v in found.items() if v is not None})
            if args.lessons is None:
                args.lessons = [k for k, v in found.items() if v is not None]
        timeout = {} if args.notebook_timeout is None else {"notebook_timeout": args.notebook_timeout}
        grades = autograde(course, args.student, args.lessons, workers=args.workers, **timeout)
    except (ValueError, TypeError, FileNotFoundError, FileExistsError,
            NotADirectoryError) as exc:
        parser.error(str(exc))
    except RuntimeError as exc:  # nbgrader failed on the course itself, not on a submission
        print(f"course {args.course_command}: {exc}", file=sys.stderr)
        return 1
    print(grades.report())
    return 0
