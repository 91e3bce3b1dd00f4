"""Which configurations are worth it: the Pareto front of recall against tokens.

A configuration is on the front when no other one reaches at least its recall
with at most its tokens (and is strictly better in one of the two).
``cheapest_reaching(rows, 0.8)`` answers "what is the cheapest configuration
that reaches 80% recall?". Rows are any mappings with the two columns
(``SweepResult`` rows, ``EvalResult.summary()`` dicts, a ``Table``).

A row whose ``over_budget`` share is above 0 (some context exceeded its budget) is
not a configuration that works at that budget: neither function lists it.
Taught in ``notebooks/12_parameter_tuning.ipynb``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from memorykit._validate import require_fraction, require_real

__all__ = ["cheapest_reaching", "pareto_front"]


def _rows(rows: Any, x: str, y: str) -> list[dict[str, Any]]:
    if isinstance(rows, Mapping) or isinstance(rows, (str, bytes)) or not isinstance(rows, Iterable):
        raise TypeError(f"rows must be an iterable of mappings, got {rows!r:.80}")
    out = []
    for i, row in enumerate(rows):
        if not isinstance(row, Mapping):
            raise TypeError(f"rows[{i}] must be a mapping, got {row!r:.80}")
        for col in (x, y):
            if col not in row:
                raise ValueError(f"rows[{i}] has no column {col!r}: {sorted(row)}")
        if row[x] is None or row[y] is None:
            continue  # e.g. no questions in a category: nothing to place on the plot
        if row.get("over_budget"):
            continue  # over its budget on some question: not a configuration of that budget
        require_real(f"rows[{i}][{x!r}]", row[x])
        require_real(f"rows[{i}][{y!r}]", row[y])
        out.append(dict(row))
    return out


def pareto_front(rows: Any, *, x: str = "tokens", y: str = "recall") -> list[dict[str, Any]]:
    """Rows not dominated in (min ``x``, max ``y``), sorted by ``x`` (ties: higher ``y`` first).

    Rows whose ``x`` or ``y`` is None are ignored; duplicates of a front point are all kept.
    """
    points = sorted(_rows(rows, x, y), key=lambda r: (r[x], -r[y]))
    front: list[dict[str, Any]] = []
    best_y = float("-inf")
    best_at_x: dict[Any, float] = {}
    for row in points:
        if row[y] > best_y:
            front.append(row)
            best_y = row[y]
            best_at_x[row[x]] = row[y]
        elif row[y] == best_y and best_at_x.get(row[x]) == row[y]:
            front.append(row)  # the same point twice: neither dominates the other
    return front


def cheapest_reaching(rows: Any, recall: float, *, x: str = "tokens", y: str = "recall"
                      ) -> dict[str, Any] | None:
    """The row with the fewest ``x`` among those with ``y >= recall`` (ties: higher ``y``), or None."""
    target = require_fraction("recall", recall, include_zero=True)
    reaching = [r for r in _rows(rows, x, y) if r[y] >= target]
    if not reaching:
        return None
    return min(reaching, key=lambda r: (r[x], -r[y]))
