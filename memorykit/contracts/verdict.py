"""The outcome of a check, shared by the exercise checkers and the contract runner.

Kept out of ``memorykit.lessons`` so that ``memorykit.contracts`` (which the lessons' checkers
import) does not import the lessons.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, repr=False)
class Verdict:
    """The outcome of a checker: passed or not, one-line reason, and supporting details."""

    exercise: str
    passed: bool
    reason: str
    details: tuple[str, ...] = field(default=())

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
        """This verdict, or ``AssertionError`` carrying its whole text when it did not pass.

        Graded cells end in ``check_...(answer).assert_passed()``: nbgrader awards a graded
        cell's points when it runs without an error, and shows the error's text (the reason
        and the numbers) as the feedback. A passing verdict is returned, so the cell displays
        it once.
        """
        if not self.passed:
            raise AssertionError(str(self))
        return self
