"""Test helpers for the lesson explorers."""

from __future__ import annotations

from typing import Any


def traces_drawn(explorer: Any) -> list[str]:
    """A list that records the name of every trace the explorer's next draws touch (through
    ``explorer.trace``, the one way an explorer addresses a trace): what a move redraws."""
    touched: list[str] = []
    trace = explorer.trace

    def recording(name: str) -> Any:
        touched.append(name)
        return trace(name)

    explorer.trace = recording
    return touched
