"""Lesson 04's exercise checkers (``notebooks/04_entity_memory.ipynb``): the relevance score a
student builds (``check_relevance_score``, run against the library's score contract,
``memorykit.classroom.contracts.entities``, and refused when it calls the library's score), and the capacity and the TTL of entity working
memory (``check_entity_capacity``, ``check_entity_ttl``), replayed on
``data/entities/cms_large.jsonl``.

Each returns a ``Verdict`` (printed only with ``show=True``) naming the numbers that decided it,
and refuses an answer of the wrong kind with a ``TypeError`` / ``ValueError`` naming the value.
"""

from __future__ import annotations

from typing import Any

from memorykit._validate import require_fraction, require_int
from memorykit.classroom.verdict import Verdict, report

ENTITY_TTL_TARGET = 0.93
"""Lesson 04's TTL exercise: the resolution success a TTL must keep (max_size 20, D0's weights)."""


def _entity_summary(max_size: int, ttl_minutes: float | None = None) -> dict[str, Any]:
    from memorykit.entities import RelevanceMemory
    from memorykit.classroom.replays.entity_replay import replay
    from memorykit.classroom.lesson04 import cms_scenario

    return replay(cms_scenario("large"), lambda c: RelevanceMemory(max_size, clock=c,
                                                                   ttl_minutes=ttl_minutes)).summary()


def entity_capacity_answer() -> int:
    """The smallest max_size at which the relevance memory loses no antecedent to eviction."""
    size = 1
    while _entity_summary(size)["failures_antecedent_evicted"] > 0:
        size += 1
    return size


def entity_ttl_answer(target: float = ENTITY_TTL_TARGET) -> int:
    """The smallest whole-minute TTL keeping resolution success >= target (max_size 20).

    A TTL longer than the session expires nothing, so the search ends once the target is at
    most the success with no TTL; a higher target is refused rather than searched for ever."""
    target = require_fraction("target", target)
    reachable = _entity_summary(20)["resolution_success"]
    if target > reachable:
        raise ValueError(f"target must be <= {reachable:.4f} (resolution success with no TTL at "
                         f"all), got {target!r}")
    ttl = 1
    while _entity_summary(20, ttl)["resolution_success"] < target:
        ttl += 1
    return ttl


MAX_SIZE_LIMIT = 1_000
"""Sizes the checkers replay: the session has 200 entities, so a larger memory never evicts."""


MAX_TTL_MINUTES = 24 * 60
"""TTLs the checker replays: the session lasts 873 simulated minutes."""


def _whole(name: str, value: Any, what: str, maximum: int) -> int:
    """A whole number of ``what`` in [1, maximum]; anything else raises, naming the value."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int number of {what}, got {value!r} "
                        f"({type(value).__name__})")
    return require_int(name, value, minimum=1, maximum=maximum)


def _own_score() -> Any:
    """The contract that the student's ``relevance`` computes the score itself: one call to it
    runs none of the library's score functions (``RelevanceWeights.score`` and what it calls,
    ``components`` from the ``show_code`` above the explorer, ``candidate_scores``)."""
    import memorykit.entities.scoring as scoring
    from memorykit.classroom.contracts.own_code import own_code

    return own_code(scoring.RelevanceWeights.score, scoring.relevance_scores, scoring._scores,
                    scoring.components, scoring.candidate_scores, what="the formula",
                    title="your own formula, not a call to the library's score",
                    probe=lambda relevance: relevance(3.0, 2, scoring.RelevanceWeights()))


def check_relevance_score(relevance: Any, *, show: bool = False) -> Verdict:
    """Lesson 04, build it yourself: ``relevance(age_minutes, access_count, weights)`` returns
    document D0's relevance score of one entity as a float. The library's score contract
    (``memorykit.classroom.contracts.entities``, which every implementation of the formula in
    ``memorykit.entities.scoring`` passes) runs over it, and it must score what the library's
    ``RelevanceWeights.score`` scores on random ages, access counts and weights, without calling
    it or another of the library's score functions (``_own_score``)."""
    from memorykit.classroom.contracts import run_contracts
    from memorykit.classroom.contracts.entities import SCORE_CONTRACTS, agrees_with_library

    if isinstance(relevance, type) or not callable(relevance):
        raise TypeError("relevance must be a function (age_minutes, access_count, weights) -> "
                        f"float: pass the function itself, got {relevance!r}")
    return report(run_contracts(relevance, (_own_score(), *SCORE_CONTRACTS, agrees_with_library()),
                                exercise="04 relevance score"), show)


def check_entity_capacity(max_size: Any, *, show: bool = False) -> Verdict:
    """Lesson 04: the smallest ``max_size`` at which a relevance memory (D0's weights, no
    TTL) loses no reference's antecedent to eviction on the 1,000-turn CMS session."""
    name = "04 capacity"
    max_size = _whole("max_size", max_size, "entities", MAX_SIZE_LIMIT)
    mine = _entity_summary(max_size)
    lost = mine["failures_antecedent_evicted"]
    details = (f"max_size {max_size}: resolution success {mine['resolution_success']:.1%}, "
               f"{lost} references lost to eviction, eviction rate {mine['eviction_rate']:.1%}",)
    if lost:
        return report(Verdict(name, False, f"with max_size={max_size} the memory still evicts "
                               f"{lost} antecedents before they are referred to: try larger", details),
                       show)
    smaller = _entity_summary(max_size - 1) if max_size > 1 else None
    if smaller is not None and smaller["failures_antecedent_evicted"] == 0:
        return report(Verdict(name, False, f"max_size={max_size} loses nothing, but "
                               f"{max_size - 1} loses nothing either: find the smallest", details),
                       show)
    lost_below = "" if smaller is None else (f"; max_size {max_size - 1} loses "
                                             f"{smaller['failures_antecedent_evicted']}")
    return report(Verdict(name, True, f"max_size={max_size} is the smallest memory that loses no "
                           f"antecedent{lost_below}", details), show)


def check_entity_ttl(ttl_minutes: Any, *, show: bool = False) -> Verdict:
    """Lesson 04: the smallest whole-minute TTL at which a relevance memory of 20 (D0's
    weights) keeps resolution success at or above 93% on the 1,000-turn CMS session."""
    name = "04 ttl"
    ttl_minutes = _whole("ttl_minutes", ttl_minutes, "minutes", MAX_TTL_MINUTES)
    mine = _entity_summary(20, ttl_minutes)
    ok = mine["resolution_success"] >= ENTITY_TTL_TARGET
    details = (f"TTL {ttl_minutes} min: resolution success {mine['resolution_success']:.1%}, "
               f"{mine['expirations']} expiries, {mine['failures_antecedent_evicted']} antecedents "
               f"gone before their reference",)
    if not ok:
        return report(Verdict(name, False, f"TTL {ttl_minutes} min forgets too early: "
                               f"{mine['resolution_success']:.1%} < {ENTITY_TTL_TARGET:.0%}; "
                               "the user takes breaks longer than that", details), show)
    if ttl_minutes > 1:
        below = _entity_summary(20, ttl_minutes - 1)
        if below["resolution_success"] >= ENTITY_TTL_TARGET:
            return report(Verdict(name, False, f"TTL {ttl_minutes} min works, but "
                                   f"{ttl_minutes - 1} min works too "
                                   f"({below['resolution_success']:.1%}): find the smallest",
                                   details), show)
    return report(Verdict(name, True, f"TTL {ttl_minutes} min is the shortest that keeps "
                           f"resolution success >= {ENTITY_TTL_TARGET:.0%}", details), show)
