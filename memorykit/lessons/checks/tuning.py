"""Checker of lesson 12 (``notebooks/12_parameter_tuning.ipynb``): beat the default BM25 at a
token budget on the bundled LoCoMo-style fixture.
"""

from __future__ import annotations

from typing import Any

from memorykit.lessons.checks.verdict import Verdict, report

# -------------------------------------------------------------- lesson 12
def check_beats_bm25(config: Any, *, show: bool = False) -> Verdict:
    """Lesson 12: a configuration of a tunable policy (``tuning_app.KNOBS``: bm25 or attention)
    whose evidence recall at 1,000 tokens on the bundled LoCoMo-style fixture is above the
    default BM25's, with no context over the budget. The checker evaluates it itself."""
    from memorykit.evaluation import BM25Retrieval, evaluate, load_locomo
    from memorykit.lessons.tuning_app import EXERCISE_BUDGET, FIXTURE, evaluate_configuration

    name = "12 beat BM25"
    data = load_locomo(FIXTURE, verify=False)
    try:
        row = evaluate_configuration(config, data, EXERCISE_BUDGET)
    except ValueError as exc:
        return report(Verdict(name, False, str(exc)), show)
    base = evaluate(BM25Retrieval(), data, EXERCISE_BUDGET).summary()
    params = ", ".join(f"{k}={row[k]}" for k in row if k not in
                       ("policy", "budget", "recall", "tokens", "max_tokens"))
    details = (f"{row['policy']}({params}): recall {row['recall']:.3f}, "
               f"{row['tokens']:.0f} tokens on average, at most {row['max_tokens']}",
               f"bm25(k1=1.5, b=0.75): recall {base['recall']:.3f}, {base['tokens']:.0f} tokens")
    if row["max_tokens"] > EXERCISE_BUDGET:
        return report(Verdict(name, False, f"a context of {row['max_tokens']} tokens is over the "
                               f"{EXERCISE_BUDGET:,}-token budget", details), show)
    if row["recall"] <= base["recall"]:
        return report(Verdict(
            name, False, f"recall {row['recall']:.3f} does not beat BM25's {base['recall']:.3f}: "
            "look at the per-category bars (which category does BM25 miss, and why?)",
            details), show)
    return report(Verdict(name, True, f"recall {row['recall']:.3f} beats BM25's "
                           f"{base['recall']:.3f} at {EXERCISE_BUDGET:,} tokens", details), show)
