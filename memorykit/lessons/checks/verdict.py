"""The result every exercise checker returns, and how a notebook shows it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from memorykit._validate import require_bool


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


def report(verdict: Verdict, show: bool) -> Verdict:
    """Return ``verdict``, printing it first when ``show`` (for scripts without a display).
    Every checker answers through here, so this is where its ``show`` is checked."""
    if require_bool("show", show):
        print(verdict)
    return verdict
