"""Checkers of lessons 09-10: episodic and semantic recall, the four architectures.

Taught in ``notebooks/09_long_term_memory.ipynb`` and ``10_architectures.ipynb`` (lesson 11's
checkers are in ``memorykit.lessons.checks.llm``).
"""

from __future__ import annotations

from typing import Any

from memorykit._validate import require_positive
from memorykit.lessons.checks.verdict import Verdict, report

# -------------------------------------------------------------- lesson 09
TAU_EXERCISE = {"alpha": 0.6, "beta": 0.4, "threshold": 0.7, "age_hours": 48.0}
"""Lesson 09, exercise 1: seed 003's weights and threshold, a full-match episode two days old."""


def _is_number(x: Any) -> bool:
    return not isinstance(x, bool) and isinstance(x, (int, float))


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
    if not _is_number(tau_hours) or tau_hours != int(tau_hours) or tau_hours < 1:
        return report(Verdict(name, False, f"tau must be a whole number of hours >= 1, got "
                               f"{tau_hours!r}"), show)
    tau = int(tau_hours)
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


def semantic_threshold_answer() -> dict[str, Any]:
    """Lesson 09, exercise 2 solved by scanning thresholds 0.00..1.00 in steps of 0.01."""
    from memorykit.lessons.recall_app import semantic_matrix, semantic_recall

    n = len(semantic_matrix().questions)
    best = None
    for k in range(101):
        r = semantic_recall(k / 100)
        if r["own"] == n:
            best = (k / 100, r["wrong"])
    if best is None:  # pragma: no cover - the bank always allows a threshold of 0
        raise RuntimeError("no threshold recalls every question's fact")
    return {"threshold": best[0], "wrong_recalls": best[1]}


def check_semantic_threshold(answer: Any, *, show: bool = False) -> Verdict:
    """Lesson 09: {'threshold': t, 'wrong_recalls': n}: the highest cosine threshold (two
    decimals) at which every fact-bank question still recalls its own fact with the lesson's
    embedder (all-MiniLM-L6-v2), and how many wrong facts are recalled with it."""
    from memorykit.lessons.recall_app import semantic_matrix, semantic_recall

    name = "09 semantic threshold"
    if not isinstance(answer, dict) or set(answer) != {"threshold", "wrong_recalls"}:
        return report(Verdict(name, False, "answer must be a dict with keys 'threshold' and "
                               f"'wrong_recalls', got {answer!r}"), show)
    t, wrong = answer["threshold"], answer["wrong_recalls"]
    if not _is_number(t) or not _is_number(wrong):
        return report(Verdict(name, False, f"threshold and wrong_recalls must be numbers, got "
                               f"{t!r} and {wrong!r}"), show)
    n = len(semantic_matrix().questions)
    r = semantic_recall(float(t))
    ref = semantic_threshold_answer()
    details = (f"at threshold {t}: {r['own']}/{n} questions recall their fact, "
               f"{r['wrong']} wrong facts recalled",)
    if r["own"] < n:
        return report(Verdict(name, False, f"at {t} only {r['own']} of {n} questions recall "
                               "their own fact: the threshold is too high", details), show)
    if round(float(t), 2) < ref["threshold"]:
        return report(Verdict(name, False, f"{t} recalls every fact, but a higher threshold "
                               "does too (and lets fewer wrong facts in): find the highest",
                               details), show)
    if wrong != r["wrong"]:
        return report(Verdict(name, False, f"the threshold is right, but it recalls "
                               f"{r['wrong']} wrong facts, not {wrong}", details), show)
    wrong_note = (f"it still lets {r['wrong']} wrong facts in" if r["wrong"]
                  else "it lets no wrong fact in: this embedder separates right from wrong")
    return report(Verdict(name, True, f"{t} is the highest threshold that keeps all {n} facts; "
                           f"{wrong_note}", details), show)


# -------------------------------------------------------------- lesson 10
WINDOW_EXERCISE_DISTRACTORS = 10
"""Lesson 10, exercise 1: distractor turns after the facts."""


def _a_recall(window: int) -> float:
    from memorykit.lessons.architectures_app import DISTRACTORS, curve

    return curve("A", window).recall[DISTRACTORS.index(WINDOW_EXERCISE_DISTRACTORS)]


def check_window_size(window: Any, *, show: bool = False) -> Verdict:
    """Lesson 10: the smallest window W (messages) with which A still recalls all four facts
    after 10 distractor turns."""
    name = "10 window"
    if isinstance(window, bool) or not isinstance(window, int) or window < 1:
        return report(Verdict(name, False, f"window must be a whole number of messages >= 1, "
                               f"got {window!r}"), show)
    r = _a_recall(window)
    details = (f"A with W={window} after {WINDOW_EXERCISE_DISTRACTORS} distractor turns: "
               f"recall {r:.0%}",)
    if r < 1:
        return report(Verdict(name, False, f"with W={window} A recalls only {r:.0%}: the facts "
                               "have already slid out of the window; widen it", details), show)
    if window > 1 and _a_recall(window - 1) == 1:
        return report(Verdict(name, False, f"W={window} works, but so does W={window - 1}: "
                               "find the smallest", details), show)
    return report(Verdict(name, True, f"W={window} is the smallest window holding all four facts "
                           f"after {WINDOW_EXERCISE_DISTRACTORS} distractor turns; "
                           f"W={window - 1} recalls {_a_recall(window - 1):.0%}", details), show)


SEMANTIC_EXERCISE = {"distractors": 50, "window": 20,
                     "thresholds": tuple(round(0.05 * k, 2) for k in range(1, 19))}
"""Lesson 10, exercise 2: C after 50 distractor turns, window 20, thresholds 0.05..0.90."""


def semantic_best() -> dict[str, float]:
    """Lesson 10, exercise 2 solved: C's best recall and the highest threshold reaching it."""
    from memorykit.lessons.architectures_app import DISTRACTORS, curve

    i = DISTRACTORS.index(SEMANTIC_EXERCISE["distractors"])
    recall = {t: curve("C", SEMANTIC_EXERCISE["window"], semantic_threshold=t).recall[i]
              for t in SEMANTIC_EXERCISE["thresholds"]}
    best = max(recall.values())
    return {"threshold": max(t for t, r in recall.items() if r == best), "recall": best}


def check_semantic_best(answer: Any, *, show: bool = False) -> Verdict:
    """Lesson 10: {'threshold': t, 'recall': r}: the highest threshold (0.05 steps) at which C
    reaches its best recall after 50 distractor turns (window 20), and that recall (0-1)."""
    from memorykit.lessons.architectures_app import DISTRACTORS, curve

    name = "10 semantic threshold"
    if not isinstance(answer, dict) or set(answer) != {"threshold", "recall"}:
        return report(Verdict(name, False, "answer must be a dict with keys 'threshold' and "
                               f"'recall', got {answer!r}"), show)
    t, r = answer["threshold"], answer["recall"]
    if not _is_number(t) or not _is_number(r) or not 0 <= r <= 1:
        return report(Verdict(name, False, f"threshold must be a number and recall a share in "
                               f"[0, 1], got {t!r} and {r!r}"), show)
    ref = semantic_best()
    i = DISTRACTORS.index(SEMANTIC_EXERCISE["distractors"])
    got = curve("C", SEMANTIC_EXERCISE["window"], semantic_threshold=float(t)).recall[i]
    details = (f"C at threshold {t}: recall {got:.0%}; best over 0.05..0.90: {ref['recall']:.0%}",)
    if got < ref["recall"]:
        return report(Verdict(name, False, f"at {t} C recalls {got:.0%}, below its best "
                               f"{ref['recall']:.0%}: lower the threshold", details), show)
    if float(t) < ref["threshold"] - 1e-9:
        return report(Verdict(name, False, f"{t} reaches the best recall, but a higher threshold "
                               "does too (with fewer irrelevant recalls): find the highest",
                               details), show)
    if abs(float(r) - got) > 1e-9:
        return report(Verdict(name, False, f"the threshold is right, but C's recall there is "
                               f"{got:.0%}, not {float(r):.0%}", details), show)
    lower = ("never reaches 100%" if got < 1 else "only lets more irrelevant sentences compete")
    return report(Verdict(name, True, f"{t} is the highest threshold at which C reaches its best "
                           f"recall, {got:.0%}: lowering it further {lower}", details), show)
