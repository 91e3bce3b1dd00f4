"""The outcome of a check, shared by the exercise checkers and the contract runner.

Kept out of ``memorykit.classroom`` so that ``memorykit.classroom.contracts`` (which the lessons' checkers
import) does not import the lessons.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np


class NotYet(AssertionError):
    """A graded cell's failed check: an ``AssertionError`` (nbgrader scores the cell 0 and shows
    the text as feedback) that IPython shows as the verdict alone. A plain exception's
    traceback showed ten lines of this module (its source and the install path) above the
    verdict the student needs to read."""

    def _render_traceback_(self) -> list[str]:
        # IPython calls this instead of formatting a traceback; the lines are what the
        # notebook, nbval and nbgrader's feedback show.
        return [f"\x1b[0;31m{self.args[0]}\x1b[0m" if self.args else "NOT YET"]


@dataclass(frozen=True, repr=False)
class Verdict:
    """The outcome of a checker: passed or not, one-line reason, and supporting details."""

    exercise: str
    passed: bool
    reason: str
    details: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        # ``passed`` decides the grade: "false", 1 or None must not pass for a bool. A numpy
        # bool (a comparison of arrays) is read as the bool it is.
        if isinstance(self.passed, np.bool_):
            object.__setattr__(self, "passed", bool(self.passed))
        if type(self.passed) is not bool:
            raise TypeError(f"passed must be a bool, got {self.passed!r} "
                            f"({type(self.passed).__name__})")

    def __bool__(self) -> bool:
        return self.passed

    def __str__(self) -> str:
        head = f"[{self.exercise}] {'PASS' if self.passed else 'NOT YET'}: {self.reason}"
        return "\n".join([head, *(f"  - {d}" for d in self.details)])

    def __repr__(self) -> str:
        return str(self)

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:  # pragma: no cover - IPython
        p.text(str(self))

    def assert_passed(self) -> Verdict:
        """This verdict, or ``NotYet`` (an ``AssertionError``) carrying its whole text when it
        did not pass.

        nbgrader awards a graded cell's points when it runs without an error and shows the
        error's text (the reason and the numbers) as the feedback. Graded cells do not call
        this (a notebook could patch it): they run ``contracts.graded.graded``, which reads
        ``passed`` itself. A passing verdict is returned, so a cell displays it once.
        """
        if not self.passed:
            raise NotYet(str(self))
        return self
