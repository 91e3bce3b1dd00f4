"""The result every exercise checker returns, and how a notebook shows it."""

from __future__ import annotations

from memorykit._validate import require_bool
from memorykit.classroom.contracts.verdict import Verdict  # noqa: F401  (checkers import it from here)

def report(verdict: Verdict, show: bool) -> Verdict:
    """Return ``verdict``, printing it first when ``show`` (for scripts without a display).
    Every checker answers through here, so this is where its ``show`` is checked."""
    if require_bool("show", show):
        print(verdict)
    return verdict
