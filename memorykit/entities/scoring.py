"""D0's relevance score, vectorized.

    score = w_recency * exp(-decay * age_minutes) + w_frequency * min(access_count / cap, 1)

with the seed's 0.6, 0.4, 0.1 per minute and a cap of 10 as defaults. Age is
measured from an entity's *last access* (an add or a get), so touching an entity
makes it both more recent and more frequent. ``relevance_scores`` takes arrays of
any shape (one entity, a memory's 20 entities, or a 200 x 1,000 heatmap) and
computes all three matrices at once; NaN inputs (an entity not in memory) give
NaN outputs. A memory choosing a victim scores its ~20 candidates with
``candidate_scores`` and explains the victim with ``components``: the same formula
in plain floats, because numpy's per-call overhead costs more than the arithmetic
of twenty numbers. Taught in ``notebooks/04_entity_memory.ipynb``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from memorykit._validate import require_non_negative, require_positive, require_real_array


@dataclass(frozen=True)
class RelevanceWeights:
    """The knobs of the relevance score. Scores range over [0, w_recency + w_frequency]."""

    w_recency: float = 0.6
    """Weight of recency, exp(-decay_per_minute * age_minutes). Must be >= 0."""
    w_frequency: float = 0.4
    """Weight of frequency, min(access_count / frequency_cap, 1). Must be >= 0."""
    decay_per_minute: float = 0.1
    """How fast recency fades: 0.1 halves it every ln(2)/0.1 = 6.9 minutes. Must be >= 0."""
    frequency_cap: float = 10
    """Accesses at which frequency saturates at 1.0. Must be > 0."""

    def __post_init__(self) -> None:
        require_non_negative("w_recency", self.w_recency)
        require_non_negative("w_frequency", self.w_frequency)
        if self.w_recency + self.w_frequency <= 0:
            raise ValueError(
                f"w_recency + w_frequency must be > 0, got w_recency={self.w_recency!r} "
                f"+ w_frequency={self.w_frequency!r}"
            )
        require_non_negative("decay_per_minute", self.decay_per_minute)
        require_positive("frequency_cap", self.frequency_cap)

    @property
    def half_life_minutes(self) -> float:
        """Age at which recency is 0.5 (infinite when decay is 0)."""
        return float(np.log(2) / self.decay_per_minute) if self.decay_per_minute else float("inf")

    def score(self, age_minutes: float, access_count: float) -> tuple[float, float, float]:
        """(recency, frequency, score) for one entity, in plain floats."""
        r, f, s = relevance_scores(np.float64(age_minutes), np.float64(access_count), self)
        return float(r), float(f), float(s)


SEED_WEIGHTS = RelevanceWeights()


def relevance_scores(
    ages_minutes: np.ndarray | float,
    access_counts: np.ndarray | float,
    weights: RelevanceWeights = SEED_WEIGHTS,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Recency, frequency and score arrays for any broadcastable pair of arrays.

    Negative ages (a last access in the future) are a caller bug and raise, as do
    infinities, text and bools; NaN marks a cell with no entity and gives NaN.
    """
    ages = require_real_array("ages_minutes", ages_minutes, minimum=0, allow_nan=True)
    counts = require_real_array("access_counts", access_counts, minimum=0, allow_nan=True)
    return _scores(ages, counts, weights)


def _scores(ages: np.ndarray, counts: np.ndarray,
            weights: RelevanceWeights) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The formula without argument checks: memories call it on arrays they built."""
    recency = np.exp(-weights.decay_per_minute * ages)
    frequency = np.minimum(counts / weights.frequency_cap, 1.0)
    score = weights.w_recency * recency + weights.w_frequency * frequency
    return recency, frequency, score


def components(age_minutes: float, access_count: float,
               weights: RelevanceWeights) -> tuple[float, float, float]:
    """(recency, frequency, score) of one entity in plain floats, as ``_scores`` computes
    them (the same operations in the same order); no argument checks."""
    recency = math.exp(-weights.decay_per_minute * age_minutes)
    frequency = access_count / weights.frequency_cap
    if frequency > 1.0:
        frequency = 1.0
    return recency, frequency, weights.w_recency * recency + weights.w_frequency * frequency


def candidate_scores(ages_minutes: Sequence[float], access_counts: Sequence[float],
                     weights: RelevanceWeights) -> list[float]:
    """The score of each candidate of one eviction, in plain floats (see ``components``)."""
    decay = -weights.decay_per_minute
    cap = weights.frequency_cap
    w_recency, w_frequency = weights.w_recency, weights.w_frequency
    exp = math.exp
    return [w_recency * exp(decay * age) + w_frequency * (f if (f := count / cap) < 1.0 else 1.0)
            for age, count in zip(ages_minutes, access_counts)]
