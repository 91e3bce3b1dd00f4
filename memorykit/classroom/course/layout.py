"""Where each file of the repository goes in a course edition, and its links rewritten to match.

An edition (``python -m memorykit.classroom course release``: the student edition in ``release/``, the
instructor edition in ``instructor/``) follows nbgrader's layout, one folder per lesson:
``notebooks/02_pruning_strategies.ipynb`` becomes ``02_pruning_strategies/02_pruning_strategies.ipynb``,
the index ``notebooks/00_index.ipynb`` sits at the top (``00_index.ipynb``), and every other file a
link reaches (``docs/BIBLIOGRAPHY.md``...) keeps its place relative to the repository
(``docs/BIBLIOGRAPHY.md``). Links between them are rewritten so they resolve from the new places:
lesson 02's ``03_summary_buffer.ipynb`` becomes ``../03_summary_buffer/03_summary_buffer.ipynb``,
its ``../docs/BIBLIOGRAPHY.md#d1`` stays as it is (one folder down, as in ``notebooks/``).
Used by ``memorykit.classroom.course.release``.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["INDEX", "lesson_stems", "edition_path", "relative_links", "rewrite_links", "Edition"]

INDEX = "00_index"
"""The course map: not an assignment, it opens each edition."""

_LESSON = re.compile(r"^(\d\d)_[A-Za-z0-9_]+$")
# [text](target) in markdown, and href="target" / src="target" in HTML a markdown cell may hold
_MD_LINK = re.compile(r"(?P<bang>!?)\[(?P<text>[^\]]*)\]\((?P<target>[^)\s]+)(?P<title>\s+\"[^\"]*\")?\)")
_HTML_LINK = re.compile(r"(?P<attr>\b(?:href|src)=)(?P<q>[\"'])(?P<target>[^\"']+)(?P=q)")


def lesson_stems(notebooks: Path) -> list[str]:
    """The lessons in ``notebooks`` (``NN_name.ipynb``, NN >= 01), by number: one assignment each."""
    if not notebooks.is_dir():
        raise FileNotFoundError(f"no notebooks folder at {notebooks}")
    stems = sorted(p.stem for p in notebooks.glob("*.ipynb") if _LESSON.match(p.stem))
    return [s for s in stems if s != INDEX and int(s[:2]) >= 1]


def edition_path(repo_path: str) -> str:
    """Where the repository file ``repo_path`` (POSIX, relative to the root) sits in an edition."""
    head, _, name = repo_path.partition("/")
    if head == "notebooks" and "/" not in name and name.endswith(".ipynb"):
        stem = name[: -len(".ipynb")]
        return name if stem == INDEX else f"{stem}/{name}"
    return repo_path


# fenced code blocks and inline code spans: their text is shown as written, never a link
_CODE = re.compile(r"(```.*?```|~~~.*?~~~|`[^`\n]*`)", re.S)


def _outside_code(text: str, change: Callable[[str], str]) -> str:
    parts = _CODE.split(text)
    return "".join(part if i % 2 else change(part) for i, part in enumerate(parts))


def _is_relative(target: str) -> bool:
    return not (re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target) or target.startswith(("#", "/")))


def _split(target: str) -> tuple[str, str]:
    cut = min((i for i in (target.find("#"), target.find("?")) if i >= 0), default=len(target))
    return target[:cut], target[cut:]


def relative_links(text: str) -> list[str]:
    """Every relative link target in markdown ``text`` (without its ``#anchor``; not in code)."""
    plain = "".join(p for i, p in enumerate(_CODE.split(text)) if not i % 2)
    found = [m.group("target") for m in _MD_LINK.finditer(plain)]
    found += [m.group("target") for m in _HTML_LINK.finditer(plain)]
    return [_split(t)[0] for t in found if _is_relative(t) and _split(t)[0]]


def rewrite_links(text: str, repo_path: str, keep: Callable[[str], bool],
                  reached: set[str] | None = None) -> str:
    """``text`` (a markdown cell or file at ``repo_path``) with its relative links moved to the
    edition layout. A link to a file ``keep`` refuses (an instructor-only page in the student
    edition) becomes its plain text; every target kept is added to ``reached``."""
    here = posixpath.dirname(repo_path)
    moved_here = posixpath.dirname(edition_path(repo_path))

    def target_of(target: str) -> tuple[str, str] | None:
        if not _is_relative(target):
            return None
        path, anchor = _split(target)
        if not path:
            return None
        resolved = posixpath.normpath(posixpath.join(here, path))
        if resolved.startswith("../"):
            return None  # outside the repository: left alone (the link check reports it)
        return resolved, anchor

    def moved(resolved: str, anchor: str) -> str:
        if reached is not None:
            reached.add(resolved)
        return posixpath.relpath(edition_path(resolved), moved_here or ".") + anchor

    def markdown(m: re.Match[str]) -> str:
        found = target_of(m.group("target"))
        if found is None:
            return m.group(0)
        if not keep(found[0]):
            return m.group("text")
        return f"{m.group('bang')}[{m.group('text')}]({moved(*found)}{m.group('title') or ''})"

    def html(m: re.Match[str]) -> str:
        found = target_of(m.group("target"))
        if found is None or not keep(found[0]):
            return m.group(0)
        return f"{m.group('attr')}{m.group('q')}{moved(*found)}{m.group('q')}"

    return _outside_code(text, lambda part: _HTML_LINK.sub(html, _MD_LINK.sub(markdown, part)))


@dataclass
class Edition:
    """The files of one edition: copies ``repo`` files into ``root`` in the edition layout,
    rewriting the links of markdown (files and notebook cells) and following them, so every
    file a kept link reaches is copied too. ``keep`` says which repository files belong."""

    repo: Path
    root: Path
    keep: Callable[[str], bool]
    copied: set[str] = field(default_factory=set)

    def markdown(self, text: str, repo_path: str) -> tuple[str, set[str]]:
        reached: set[str] = set()
        return rewrite_links(text, repo_path, self.keep, reached), reached

    def copy_closure(self, start: Iterable[str]) -> None:
        """Copy ``start`` (repository paths) and everything their links reach (not notebooks:
        those are placed by the caller)."""
        todo = [p for p in start if self.keep(p)]
        while todo:
            path = todo.pop()
            source = self.repo / path
            if path in self.copied or path.startswith("notebooks/") or not source.is_file():
                continue
            self.copied.add(path)
            target = self.root / edition_path(path)
            target.parent.mkdir(parents=True, exist_ok=True)
            if source.suffix == ".md":
                text, reached = self.markdown(source.read_text(encoding="utf-8"), path)
                target.write_text(text, encoding="utf-8")
                todo.extend(reached)
            else:
                target.write_bytes(source.read_bytes())
