"""The student edition in a folder a student works in: ``./run lab --student``
(``python -m memorykit.classroom course student --out DIR``).

A student with a clone of the repository should not open ``notebooks/``: it holds the reference
answers and the instructor-only metadata. ``student_workspace(folder)`` makes the course's student
edition (``build_course``, nbgrader's ``generate_assignment``: the same files a class is handed)
in a temporary folder and copies it into ``folder``, and on a later run refreshes it **without
touching the student's work**: a file is replaced only when the student has not changed it since
it was placed (its sha256 is the one recorded in ``.memorykit-edition.json``); a changed one is
kept, and named. The folder ignores itself in git (its own ``.gitignore``).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from memorykit.classroom.course.release import build_course

__all__ = ["MANIFEST", "Workspace", "student_workspace"]

MANIFEST = ".memorykit-edition.json"
"""In the student's folder: each placed file's sha256, as placed."""


@dataclass(frozen=True)
class Workspace:
    """What ``student_workspace`` did: files ``added`` (new), ``updated`` (the student had not
    changed them), ``kept`` (the student's changed copy stays), ``unchanged``."""

    folder: Path
    lessons: tuple[str, ...]
    added: tuple[str, ...]
    updated: tuple[str, ...]
    kept: tuple[str, ...]
    unchanged: tuple[str, ...]

    def report(self) -> str:
        lines = [f"student edition in {self.folder}: {len(self.lessons)} lessons; "
                 f"{len(self.added)} files added, {len(self.updated)} updated, "
                 f"{len(self.unchanged)} unchanged, {len(self.kept)} kept as you changed them"]
        lines += [f"  kept your {name} (the new edition's is not copied over it)" for name in self.kept]
        return "\n".join(lines)


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def student_workspace(folder: Path, *, repo: Path | None = None) -> Workspace:
    """Make or refresh the student edition in ``folder`` (created), keeping the student's work."""
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise NotADirectoryError(f"the student folder must be a directory, {folder} is a file")
    manifest_path = folder / MANIFEST
    if folder.is_dir() and any(folder.iterdir()) and not manifest_path.is_file():
        raise FileExistsError(f"{folder} is not empty and holds no student edition "
                              f"({MANIFEST}): choose an empty or new folder")
    placed: dict[str, str] = (json.loads(manifest_path.read_text(encoding="utf-8"))
                              if manifest_path.is_file() else {})
    added, updated, kept, unchanged = [], [], [], []
    with tempfile.TemporaryDirectory(prefix="memorykit-edition-") as tmp:
        course = build_course(Path(tmp) / "course", repo=repo)
        folder.mkdir(parents=True, exist_ok=True)
        for source in sorted(p for p in course.release.rglob("*") if p.is_file()):
            name = source.relative_to(course.release).as_posix()
            target = folder / name
            new = _sha(source)
            if not target.exists():
                added.append(name)
            elif _sha(target) == new:
                unchanged.append(name)
                placed[name] = new
                continue
            elif placed.get(name) == _sha(target):
                updated.append(name)
            else:
                kept.append(name)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
            placed[name] = new
        lessons = course.lessons
    manifest_path.write_text(json.dumps(placed, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    ignore = folder / ".gitignore"
    if not ignore.exists():
        ignore.write_text("# a student's own work (./run lab --student): never committed\n*\n",
                          encoding="utf-8")
    return Workspace(folder, lessons, *(tuple(x) for x in (added, updated, kept, unchanged)))
