"""Plain-text tables the lessons print (what nbval compares, and what a reader copies).

Not taught by a notebook: it is plumbing for the lesson apps.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def print_rows(rows: Sequence[Mapping[str, Any]], align: str = "right") -> None:
    """Rows of flat dicts (the first row's keys are the columns) as a fixed-width table,
    every column aligned ``"right"`` (numbers) or ``"left"`` (text)."""
    if align not in ("right", "left"):
        raise ValueError(f"align must be 'right' or 'left', got {align!r}")
    if not rows:
        raise ValueError("rows must hold at least one row, got an empty sequence")
    keys = list(rows[0])
    widths = [max(len(k), *(len(str(r[k])) for r in rows)) for k in keys]
    pad = str.rjust if align == "right" else str.ljust
    print("  ".join(pad(k, w) for k, w in zip(keys, widths)))
    for r in rows:
        print("  ".join(pad(str(r[k]), w) for k, w in zip(keys, widths)))


__all__ = ["print_rows"]
