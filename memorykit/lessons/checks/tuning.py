"""Checker of lesson 12 (``notebooks/12_parameter_tuning.ipynb``): beat the default BM25 at a
token budget on the bundled LoCoMo-style fixture.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memorykit.lessons.checks.verdict import Verdict, report

if TYPE_CHECKING:
    from memorykit.evaluation import EvalDataset

EXERCISE_BUDGET = 1000
"""Lesson 12's exercise budget (tokens)."""


def evaluate_configuration(config: Any, dataset: EvalDataset | None = None,
                           budget: int = EXERCISE_BUDGET) -> dict[str, Any]:
    """``{"policy": "attention", "neighbours": 2, ...}`` evaluated at ``budget``: its summary row.

    ``policy`` is one of ``memorykit.evaluation.toolkit.TUNABLE`` (parameters left out keep
    their defaults). Raises ValueError naming what is wrong.
    """
    from memorykit.evaluation import evaluate
    from memorykit.evaluation.toolkit import TUNABLE
    from memorykit.lessons.data import load_tuning_data

    if not isinstance(config, dict):
        raise ValueError(f"config must be a dict like {{'policy': 'bm25', 'k1': 1.2}}, got {config!r}")
    config = dict(config)
    name = config.pop("policy", None)
    if name not in TUNABLE:
        raise ValueError(f"config['policy'] must be one of {', '.join(TUNABLE)}, got {name!r}")
    k = TUNABLE[name]
    extra = set(config) - set(k.names) - {"budget"}
    if extra:
        raise ValueError(f"{name} takes parameters {', '.join(k.names)}, got {', '.join(sorted(extra))}")
    asked = config.pop("budget", budget)
    if asked != budget:
        raise ValueError(f"the exercise is at budget {budget}, got budget={asked!r}")
    data = dataset if dataset is not None else load_tuning_data()[0]
    params = {n: config.get(n, d) for n, d in zip(k.names, k.defaults)}
    row = evaluate(k.make(**params), data, budget).summary()
    return {"policy": name, **params, "budget": budget, "recall": row["recall"],
            "tokens": row["tokens"], "max_tokens": row["max_tokens"]}


# -------------------------------------------------------------- lesson 12
def check_beats_bm25(config: Any, *, show: bool = False) -> Verdict:
    """Lesson 12: a configuration of a tunable policy (``evaluation.toolkit.TUNABLE``) whose
    evidence recall at 1,000 tokens is above the default BM25's, with no context over the
    budget. The checker evaluates it itself, on the data the lesson's explorer shows
    (``load_tuning_data``: ``MEMORYKIT_LOCOMO`` when set, else the bundled fixture), so its
    verdict never contradicts the explorer."""
    from memorykit.evaluation import BM25Retrieval, evaluate
    from memorykit.lessons.data import load_tuning_data

    name = "12 beat BM25"
    data = load_tuning_data()[0]
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
