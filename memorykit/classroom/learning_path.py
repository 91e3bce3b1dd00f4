"""The learning path: the catalog's lessons in order with their time, prerequisites and what
each builds, and three suggested routes through them, rendered as ``docs/LEARNING_PATH.md``.

Generated, never edited by hand: ``python -m memorykit.classroom.learning_path --learning-path``
rewrites the file from ``memorykit.classroom.catalog.CATALOG`` and ``ROUTES``, and a test
fails when the committed file differs (``sync_learning_path(write=False)``).

Taught in ``notebooks/00_index.ipynb`` (which links the rendered file).
"""

from __future__ import annotations

from pathlib import Path

from memorykit.classroom.catalog import (CATALOG, DOCS_DIR, NOTEBOOKS_DIR, ROUTES, Lesson,
                                         reference_links, render_map, sync_readme)


LEARNING_PATH = "LEARNING_PATH.md"
LEARNING_PATH_NOTE = ("<!-- generated from memorykit/classroom/catalog.py by "
                      "`python -m memorykit.classroom.learning_path --learning-path`: edit the catalog, "
                      "not this file -->")


def _hours(minutes: int) -> str:
    hours, rest = divmod(minutes, 60)
    return f"{minutes} min" if not hours else f"{hours} h {rest:02d} min ({minutes} min)"


def _lesson_link(lesson: Lesson) -> str:
    return f"[{lesson.number:02d} · {lesson.title}](../notebooks/{lesson.filename})"


def _after(numbers: tuple[int, ...]) -> str:
    return ", ".join(f"{n:02d}" for n in numbers) or "-"


def render_learning_path() -> str:
    """docs/LEARNING_PATH.md: the lessons in order with time, prerequisites, what each builds
    and its sources, then the suggested routes with their total time and what they assume."""
    by_number = {lesson.number: lesson for lesson in CATALOG}
    total = sum(lesson.minutes for lesson in CATALOG)
    out = [
        "# Learning path", "", LEARNING_PATH_NOTE, "",
        f"{len(CATALOG)} notebooks, about {_hours(total)} for a student who reads each lesson, "
        "moves its sliders, does its exercises and answers its review questions. Times are "
        "estimates for a first pass, not timings of students: each is within 15 minutes of a "
        "model of the lesson's content (130 words a minute of prose, 5 lines a minute of shown "
        "code, 8 or 15 minutes an exercise, 3 an explorer, 2 a review question; "
        "tests/test_lesson_length.py), and no lesson is over 90 by it. A lesson's explorers "
        "invite more. Terms are defined in the "
        "[glossary](GLOSSARY.md), sources in the [bibliography](BIBLIOGRAPHY.md); running a lab "
        "(offline, with the local model, grading) is in the "
        "[instructor guide](INSTRUCTOR_GUIDE.md). A student with a clone of the repository "
        "opens the student edition with `./run lab --student` (the lessons without their "
        "reference answers, a cell for the review answers); `./run lab` opens the instructor's "
        "`notebooks/`, answers included.", "",
        "## The lessons in order", "",
        "| lesson | part | time | after | assumes | you build | sources |",
        "|---|---|---|---|---|---|---|",
    ]
    for lesson in CATALOG:
        out.append(f"| {_lesson_link(lesson)} | {lesson.part} | {lesson.minutes} min | "
                   f"{_after(lesson.after)} | {'; '.join(lesson.skills) or '-'} | "
                   f"{lesson.builds} | {reference_links(lesson, '')} |")
    out += ["", "## Suggested routes", ""]
    for route in ROUTES:
        chosen = [by_number[n] for n in route.lessons]
        minutes = sum(lesson.minutes for lesson in chosen)
        missing = sorted({b for lesson in chosen for b in lesson.after} - set(route.lessons))
        out += [f"### {route.name}", "",
                f"For {route.audience}. {len(chosen)} lessons, {_hours(minutes)}.", "",
                route.how, ""]
        out += [f"{k}. {_lesson_link(lesson)} ({lesson.minutes} min): {lesson.builds}"
                for k, lesson in enumerate(chosen, 1)]
        if missing:
            out += ["", "Assumes, outside the route: "
                    + ", ".join(_lesson_link(by_number[n]) for n in missing)
                    + (" (read its Summary first)." if len(missing) == 1
                       else " (read their Summaries first).")]
        out.append("")
    return "\n".join(out)


def sync_learning_path(path: Path | str | None = None, *, write: bool) -> bool:
    """Whether docs/LEARNING_PATH.md is current; with ``write=True`` make it so."""
    target = Path(path) if path is not None else DOCS_DIR / LEARNING_PATH
    text = render_learning_path()
    if target.is_file() and target.read_text(encoding="utf-8") == text:
        return True
    if write:
        target.write_text(text, encoding="utf-8")
    return False


if __name__ == "__main__":  # pragma: no cover - command line
    import sys

    args = sys.argv[1:]
    unknown = [a for a in args if a not in ("--readme", "--learning-path")]
    if unknown:
        sys.exit(f"unknown option(s) {' '.join(unknown)}: use --readme and/or --learning-path")
    if "--readme" in args:
        readme_path = NOTEBOOKS_DIR.parent / "README.md"
        print("README lessons map " + ("was current" if sync_readme(readme_path, write=True)
                                       else "rewritten"))
    if "--learning-path" in args:
        print(f"docs/{LEARNING_PATH} " + ("was current" if sync_learning_path(write=True)
                                         else "rewritten"))
    if not args:
        print(render_map())
