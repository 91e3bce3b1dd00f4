"""Lesson 09's checkers: episodic and semantic recall (``notebooks/09_long_term_memory.ipynb``).

* ``check_episodic_tau`` (exercise 1): the smallest whole number of hours tau that keeps a
  full-match episode recalled 48 h later under D3's weights (``tau_recall_ok`` computes it);
* ``check_semantic_threshold`` (exercise 2): the highest cosine threshold keeping every
  fact-bank question's own fact with the lexical baseline (the memory service's embedder), and
  the wrong facts it lets in (``semantic_threshold_answer`` scans for it). Not MiniLM's: its
  answer is the lowest cosine the lesson prints and writes in its figure (0.575, "0.57"), and
  its wrong count the 0 beside it;
* ``check_episodic_score`` (exercise 3, build it yourself): the student's ``episodic_score``
  under the contract the library's score keeps (``memorykit.classroom.contracts.longterm``),
  equal to the library's S on random episodes, and its own code (not a call to the library's
  ``keyword_overlap``, ``episode_scores`` or the contracts' ``library_episodic_score``).

Every checker returns a ``Verdict`` (printed only with ``show=True``) naming the numbers that
decided it, and raises ``TypeError`` / ``ValueError`` naming the value for an answer of the
wrong kind (text, a bool, NaN, a negative or fractional count, a number for a function).
"""

from __future__ import annotations

from typing import Any

from memorykit._validate import require_positive
from memorykit.classroom.verdict import (Verdict, report, require_answer_dict, require_number,
                                         require_unit)


def _whole(name: str, value: Any, what: str, minimum: int) -> int:
    """A whole number >= minimum (an int, or a float such as 35.0), else the error."""
    x = require_number(name, value, what)
    if x != int(x) or x < minimum:
        raise ValueError(f"{name} must be {what}, got {value!r}")
    return int(x)


TAU_EXERCISE = {"alpha": 0.6, "beta": 0.4, "threshold": 0.7, "age_hours": 48.0}
"""Lesson 09, exercise 1: D3's weights and threshold, a full-match episode two days old."""


def tau_recall_ok(tau_hours: float) -> tuple[bool, float]:
    """(is a full-match episode of TAU_EXERCISE's age recalled with this tau?, its score)."""
    from memorykit.longterm.episodic import HOUR, episode_scores

    p = TAU_EXERCISE
    tau_seconds = require_positive("tau_hours", tau_hours) * HOUR
    s = float(episode_scores(1.0, p["age_hours"] * HOUR, alpha=p["alpha"], beta=p["beta"],
                             tau_seconds=tau_seconds))
    return s > p["threshold"], s


def check_episodic_tau(tau_hours: Any, *, show: bool = False) -> Verdict:
    """Lesson 09: the smallest whole number of hours tau for which an episode matching every
    query word is still recalled 48 h later (alpha 0.6, beta 0.4, threshold 0.7)."""
    name = "09 tau"
    tau = _whole("tau_hours", tau_hours, "a whole number of hours >= 1", 1)
    ok, s = tau_recall_ok(tau)
    details = (f"S(overlap 1, age 48 h, tau {tau} h) = 0.6 + 0.4 x exp(-48/{tau}) = {s:.4f}",)
    if not ok:
        return report(Verdict(name, False, f"with tau {tau} h the score {s:.4f} is not above "
                               "the threshold 0.7: the episode is forgotten; decay more slowly",
                               details), show)
    below_ok, below = tau_recall_ok(tau - 1) if tau > 1 else (False, 0.0)
    if below_ok:
        return report(Verdict(name, False, f"tau {tau} h works, but so does {tau - 1} h "
                               f"(S = {below:.4f}): find the smallest", details), show)
    return report(Verdict(name, True, f"tau {tau} h is the smallest: S = {s:.4f} > 0.7, while "
                           f"{tau - 1} h gives {below:.4f}", details), show)


SEMANTIC_EXERCISE_EMBEDDER = "lexical"
"""Lesson 09, exercise 2's embedder: the lexical baseline the memory service embeds with."""


def semantic_threshold_answer(embedder: str = SEMANTIC_EXERCISE_EMBEDDER) -> dict[str, Any]:
    """Lesson 09, exercise 2 solved by scanning thresholds 0.00..1.00 in steps of 0.01."""
    from memorykit.classroom.lesson09_semantic import semantic_matrix, semantic_recall

    n = len(semantic_matrix(embedder).questions)
    best = None
    for k in range(101):
        r = semantic_recall(k / 100, embedder)
        if r["own"] == n:
            best = (k / 100, r["wrong"])
    if best is None:  # pragma: no cover - the bank always allows a threshold of 0
        raise RuntimeError("no threshold recalls every question's fact")
    return {"threshold": best[0], "wrong_recalls": best[1]}


def check_semantic_threshold(answer: Any, *, show: bool = False) -> Verdict:
    """Lesson 09: {'threshold': t, 'wrong_recalls': n}: the highest cosine threshold (two
    decimals) at which every fact-bank question still recalls its own fact with the lexical
    baseline (the memory service's embedder), and how many wrong facts are recalled with it."""
    from memorykit.classroom.lesson09_semantic import semantic_matrix, semantic_recall

    name = "09 semantic threshold"
    answer = require_answer_dict(answer, ("threshold", "wrong_recalls"))
    t = require_unit("threshold", answer["threshold"], "a cosine threshold in [0, 1]")
    wrong = _whole("wrong_recalls", answer["wrong_recalls"], "a whole number of facts >= 0", 0)
    embedder = SEMANTIC_EXERCISE_EMBEDDER
    n = len(semantic_matrix(embedder).questions)
    r = semantic_recall(t, embedder)
    ref = semantic_threshold_answer(embedder)
    details = (f"lexical baseline at threshold {t:g}: {r['own']}/{n} questions recall their "
               "fact",)
    if r["own"] < n:
        return report(Verdict(name, False, f"at {t:g} only {r['own']} of {n} questions recall "
                               "their own fact: the threshold is too high", details), show)
    if round(t, 2) < ref["threshold"]:
        return report(Verdict(name, False, f"{t:g} recalls every fact, but a higher threshold "
                               "does too (and lets fewer wrong facts in): find the highest",
                               details), show)
    if wrong != r["wrong"]:  # the count is half the answer: the verdict does not give it
        return report(Verdict(name, False, f"the threshold is right, but it does not recall "
                               f"{wrong} wrong facts: count the wrong facts above it (at most "
                               "recall_limit per question)", details), show)
    wrong_note = (f"it still lets {r['wrong']} wrong facts in" if r["wrong"]
                  else "it lets no wrong fact in: this embedder separates right from wrong")
    details = (*details, f"{r['wrong']} wrong facts recalled")
    return report(Verdict(name, True, f"{t:g} is the highest threshold that keeps all {n} "
                           f"facts; {wrong_note}", details), show)


def check_episodic_score(score_function: Any, *, show: bool = False) -> Verdict:
    """Lesson 09, build it yourself: ``score_function(keywords, query_words, age_hours,
    alpha=0.6, beta=0.4, tau_hours=24.0)`` returns D3's episodic score
    ``alpha * |K & T| / |T| + beta * exp(-age / tau)`` (overlap 0 for a query without words).
    The library's contract for the score (``memorykit.classroom.contracts.longterm``) runs over
    it, it must give the library's S on random episodes, and compute it itself (a wrapper
    around ``keyword_overlap`` and ``episode_scores`` fails ``own_code``)."""
    from memorykit.classroom.contracts import run_contracts
    from memorykit.classroom.contracts.longterm import (EPISODIC_SCORE_CONTRACTS,
                                                        agrees_with_library_score,
                                                        library_episodic_score)
    from memorykit.classroom.contracts.own_code import own_code
    from memorykit.longterm.episodic import episode_scores, keyword_overlap

    if isinstance(score_function, type) or not callable(score_function):
        raise TypeError("score_function must be your function itself (episodic_score, without "
                        f"calling it), got {score_function!r}")
    # The exercise names keyword_overlap and episode_scores: a wrapper around them passes every
    # other contract with no score written.
    mine = own_code(keyword_overlap, episode_scores, library_episodic_score)
    return report(run_contracts(score_function,
                                (mine, *EPISODIC_SCORE_CONTRACTS, agrees_with_library_score()),
                                exercise="09 episodic score"), show)
