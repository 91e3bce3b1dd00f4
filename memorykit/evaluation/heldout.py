"""Honest tuning figures: pick on some conversations, report on others, with intervals.

* ``split_conversations(ids, holdout)``: cut a dataset by conversation (never inside one: its
  questions share a history, so they are not independent) into a tuning part, where a
  configuration is picked, and a test part, where it is scored. With too few conversations for
  a test part of ``MIN_TEST_CONVERSATIONS``, k folds instead: each conversation is tested once,
  by a pick made on the others.
* ``bootstrap_ci(sums, counts)``: a percentile bootstrap interval for a recall pooled over
  conversations (``sums[i]`` the recall summed over conversation ``i``'s questions, ``counts[i]``
  how many). Conversations are resampled, not questions, for the reason above; with
  ``sums = a - b`` for two policies on the same questions it is the paired difference's interval.
Taught in ``notebooks/12_parameter_tuning.ipynb``.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from memorykit._validate import require_int, require_real, require_unit_interval

__all__ = ["MIN_TEST_CONVERSATIONS", "Split", "bootstrap_ci", "split_conversations"]

MIN_TEST_CONVERSATIONS = 3
"""Below this many test conversations one held-out part says too little: k folds instead."""


@dataclass(frozen=True)
class Split:
    """One cut of a dataset by conversation."""

    tuning: tuple[str, ...]
    """Conversations a configuration is picked on."""
    test: tuple[str, ...]
    """Conversations the picked configuration is scored on (none of the tuning ones)."""


def split_conversations(ids: Sequence[str], holdout: float = 0.3, *, folds: int | None = None,
                        seed: int = 0) -> list[Split]:
    """Splits of ``ids`` (shuffled with ``seed``): one with ``holdout`` of them as the test
    part, or ``folds`` splits whose test parts cover every conversation once.

    ``folds=None`` chooses: one split when its test part holds at least
    ``MIN_TEST_CONVERSATIONS`` conversations, else ``round(1 / holdout)`` folds (at least 2, at
    most one per conversation). No split (``[]``) for ``holdout=0`` or fewer than 2
    conversations: there is nothing to hold out, and figures are then picked and scored on the
    same questions.
    """
    if isinstance(ids, str) or not isinstance(ids, Sequence):
        raise TypeError(f"ids must be a list of conversation ids, got {ids!r:.80}")
    names = list(dict.fromkeys(ids))
    if len(names) != len(ids):
        raise ValueError(f"ids must be distinct, got {len(ids) - len(names)} repeated")
    holdout = require_unit_interval("holdout", holdout)
    if holdout == 1.0:
        raise ValueError("holdout must be below 1 (some conversations must be left to tune on), "
                         "got 1.0")
    seed = require_int("seed", seed, minimum=0)
    if folds is not None:
        folds = require_int("folds", folds, minimum=2)
        if folds > len(names):
            raise ValueError(f"folds must be at most the number of conversations ({len(names)}), "
                             f"got {folds}")
    if folds is None and (holdout == 0.0 or len(names) < 2):
        return []
    order = names[:]
    random.Random(seed).shuffle(order)
    if folds is None:
        n_test = min(len(order) - 1, max(1, round(holdout * len(order))))
        if n_test >= MIN_TEST_CONVERSATIONS:
            return [Split(tuple(order[n_test:]), tuple(order[:n_test]))]
        folds = min(len(order), max(2, round(1 / holdout)))
    parts = [order[k::folds] for k in range(folds)]
    return [Split(tuple(c for j, p in enumerate(parts) if j != k for c in p), tuple(part))
            for k, part in enumerate(parts)]


def bootstrap_ci(sums: Sequence[float] | np.ndarray, counts: Sequence[int] | np.ndarray, *,
                 level: float = 0.95, resamples: int = 2000, seed: int = 0
                 ) -> tuple[float, float] | None:
    """The ``level`` percentile interval of ``sum(sums) / sum(counts)`` over ``resamples``
    resamplings of the conversations (with replacement), or None with fewer than 2
    conversations holding a question (one conversation has no spread to resample)."""
    s = np.asarray(sums, dtype=np.float64)
    n = np.asarray(counts, dtype=np.float64)
    if s.shape != n.shape or s.ndim != 1:
        raise ValueError(f"sums and counts must be two lists of one length, got shapes "
                         f"{s.shape} and {n.shape}")
    if not (np.isfinite(s).all() and np.isfinite(n).all()) or (n < 0).any():
        raise ValueError("sums must be finite and counts finite and >= 0")
    level = require_real("level", level)
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    resamples = require_int("resamples", resamples, minimum=100, maximum=1_000_000)
    keep = n > 0
    s, n = s[keep], n[keep]
    if len(s) < 2:
        return None
    draws = np.random.default_rng(require_int("seed", seed, minimum=0)).integers(0, len(s), (resamples, len(s)))
    ratios = s[draws].sum(axis=1) / n[draws].sum(axis=1)
    tail = (1.0 - level) / 2 * 100
    low, high = np.percentile(ratios, [tail, 100 - tail])
    return float(low), float(high)
