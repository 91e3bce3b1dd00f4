"""Reading a salience matrix: what the Objects column shows at a turn, and why.

``salience_matrix`` (in ``objects``) scores every object at every turn; this module
answers the questions a reader asks of one turn: which objects are shown, in what order,
and which of the five weighted terms put each there (``top_objects``, ``ObjectScore``);
how far each object is from the turn's context, the seed of the 2-hop neighbourhood query
(``context_hops``); how many objects of each kind the column shows on average
(``shown_by_kind``). ``salience_view`` bundles one turn's answers under one set of weights.
Taught in ``notebooks/07_objects_salience.ipynb``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from memorykit._validate import require_int
from memorykit.workspace.objects import (
    OBJECT_KINDS,
    SALIENCE_COMPONENTS,
    SalienceInputs,
    SalienceMatrix,
    SalienceWeights,
    salience_matrix,
)

COMPONENT_SHORT = {
    "recent_mention": "recent",
    "active_task_link": "task",
    "note_link": "note",
    "relationship": "rel",
    "belief_strength": "belief",
}
"""How ``ObjectScore.line`` names each salience term."""


def turn_index(inputs: SalienceInputs, turn: int) -> int:
    """The 0-based column of a 1-based ``turn`` (ValueError naming it when out of range)."""
    require_int("turn", turn, minimum=1)
    if turn > inputs.shape[1]:
        raise ValueError(f"turn must be in 1..{inputs.shape[1]}, got {turn}")
    return turn - 1


def context_hops(inputs: SalienceInputs, t: int, recency_turns: int) -> np.ndarray:
    """(N,) hops from each object to the context at turn index ``t``.

    The context is what seeds the neighbourhood query: entities named by active
    tasks, by live notes, and objects mentioned in the last ``recency_turns``
    turns. 0 = part of the context; ``inf`` = unreachable.
    """
    recent = np.flatnonzero(inputs.turns_since_mention[:, t] < recency_turns)
    to_recent = inputs.hop_matrix[:, recent].min(axis=1) if recent.size else np.full(len(inputs.ids), np.inf)
    return np.minimum(np.minimum(inputs.task_hops[:, t], inputs.note_hops[:, t]), to_recent)


@dataclass(frozen=True)
class ObjectScore:
    """One object's salience at one turn, split into its weighted components."""

    id: str
    name: str
    kind: str
    rank: int
    """0 = first in the Objects column."""
    total: float
    components: dict[str, float]
    pinned: bool
    """Shown whatever its score: a temporal object whose period is on, or a pattern of the
    active tasks (``SalienceWeights.pattern_hops``)."""

    def line(self) -> str:
        parts = " + ".join(f"{COMPONENT_SHORT[c]} {v:.2f}" for c, v in self.components.items() if v > 0)
        reason = "current period" if self.kind == "temporal" else "pattern of an active task"
        why = f"pinned: {reason}" if self.pinned else (parts or "no component")
        return f"{self.rank + 1:>2}. {self.name} [{self.kind}] {self.total:.2f} = {why}"


def top_objects(matrix: SalienceMatrix, inputs: SalienceInputs, turn: int, *,
                names: Sequence[str] | None = None, n: int | None = None) -> list[ObjectScore]:
    """The objects the column shows at ``turn`` (1-based), best first; ``n`` cuts the list.

    ``names`` labels the objects (same order as ``inputs.ids``; the ids by default).
    """
    t = turn_index(inputs, turn)
    names = inputs.ids if names is None else names
    shown = np.flatnonzero(matrix.selected[:, t])
    shown = shown[np.argsort(matrix.rank[shown, t], kind="stable")]
    if n is not None:
        shown = shown[: require_int("n", n, minimum=0)]
    return [
        ObjectScore(
            inputs.ids[i], names[i], inputs.kinds[i], int(matrix.rank[i, t]),
            round(float(matrix.total[i, t]), 4),
            {c: round(float(matrix.components[c][i, t]), 4) for c in SALIENCE_COMPONENTS},
            bool(matrix.pinned[i, t]),
        )
        for i in shown
    ]


def format_top_objects(rows: Sequence[ObjectScore]) -> str:
    """One line per object: rank, name, kind, total = its non-zero components (2 decimals)."""
    return "\n".join(r.line() for r in rows) if rows else "(no object is shown)"


@dataclass(frozen=True)
class SalienceView:
    """One turn of the Objects column under one set of weights."""

    turn: int
    weights: SalienceWeights
    matrix: SalienceMatrix
    """Salience over all turns under ``weights``."""
    hops: np.ndarray
    """(N,) hops to the context at ``turn``."""
    top: list[ObjectScore]
    """The objects shown at ``turn``, best first."""


def salience_view(inputs: SalienceInputs, turn: int, weights: SalienceWeights, *,
                  matrix: SalienceMatrix | None = None, names: Sequence[str] | None = None) -> SalienceView:
    """Salience over all turns under ``weights`` (or the given ``matrix``) and the turn's details."""
    if matrix is None:
        matrix = salience_matrix(inputs, weights)
    t = turn_index(inputs, turn)
    hops = context_hops(inputs, t, weights.recency_turns)
    return SalienceView(turn, weights, matrix, hops, top_objects(matrix, inputs, turn, names=names))


def object_rank(view: SalienceView, object_id: str) -> int | None:
    """1-based place of an object in the column at the view's turn, or None if not shown."""
    for row in view.top:
        if row.id == object_id:
            return row.rank + 1
    return None


def shown_by_kind(matrix: SalienceMatrix, kinds: Sequence[str]) -> dict[str, float]:
    """Mean number of objects of each kind the column shows per turn (kinds in rendering order).

    ``kinds`` gives each object's kind (``SalienceInputs.kinds``)."""
    kinds = np.asarray(kinds)
    if kinds.shape != (matrix.selected.shape[0],):
        raise ValueError(f"kinds must give one kind per object ({matrix.selected.shape[0]}), got {kinds.shape}")
    per_turn = matrix.selected.sum(axis=0)
    out = {k: round(float(matrix.selected[kinds == k].sum(axis=0).mean()), 2) for k in OBJECT_KINDS}
    out["all"] = round(float(per_turn.mean()), 2)
    return out
