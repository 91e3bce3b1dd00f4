"""Checkers of lesson 12 (``notebooks/12_parameter_tuning.ipynb``): beat the default BM25 at a
token budget on the lesson's data, and a retrieval policy the student writes.

Both evaluate on the data the lesson's explorer shows (``load_tuning_data``: a local LoCoMo copy
named by ``MEMORYKIT_LOCOMO``, else the bundled fixture), so a verdict never contradicts the
explorer. Each returns a ``Verdict`` (printed only with ``show=True``) naming the numbers that
decided it, and refuses an answer of the wrong kind with a ``TypeError`` / ``ValueError`` naming
the value.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memorykit.classroom.memo import memo
from memorykit.classroom.verdict import Verdict, report

if TYPE_CHECKING:
    from memorykit.evaluation.dataset import EvalDataset


EXERCISE_BUDGET = 1000
"""Lesson 12's exercise budget (tokens)."""


def evaluate_configuration(config: Any, dataset: EvalDataset | None = None,
                           budget: int = EXERCISE_BUDGET) -> dict[str, Any]:
    """``{"policy": "attention", "neighbours": 2, ...}`` evaluated at ``budget``: its summary row.

    ``policy`` is one of ``memorykit.evaluation.toolkit.TUNABLE`` (parameters left out keep
    their defaults). Raises ValueError naming what is wrong.
    """
    from memorykit.evaluation.harness import evaluate
    from memorykit.evaluation.toolkit import TUNABLE
    from memorykit.classroom.data import load_tuning_data

    if not isinstance(config, dict):
        raise TypeError(f"config must be a dict like {{'policy': 'bm25', 'k1': 1.2}}, got {config!r}")
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
    for n, value in params.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
            raise TypeError(f"{name}'s {n} must be a number, got {value!r}")
    row = evaluate(k.make(**params), data, budget).summary()
    return {"policy": name, **params, "budget": budget, "recall": row["recall"],
            "tokens": row["tokens"], "max_tokens": row["max_tokens"]}


def check_beats_bm25(config: Any, *, show: bool = False) -> Verdict:
    """Lesson 12: a configuration of a tunable policy (``evaluation.toolkit.TUNABLE``) whose
    evidence recall at 1,000 tokens is above the default BM25's, with no context over the
    budget. The checker evaluates it itself, on the data the lesson's explorer shows
    (``load_tuning_data``: ``MEMORYKIT_LOCOMO`` when set, else the bundled fixture), so its
    verdict never contradicts the explorer."""
    from memorykit.evaluation.baselines import BM25Retrieval
    from memorykit.evaluation.harness import evaluate
    from memorykit.classroom.data import load_tuning_data

    name = "12 beat BM25"
    data = load_tuning_data()[0]
    row = evaluate_configuration(config, data, EXERCISE_BUDGET)  # nonsense raises, naming it
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


def retrieval_threshold() -> dict[str, float]:
    """Lesson 12, build it yourself: the recall a student's retrieval policy must reach at
    ``EXERCISE_BUDGET`` tokens on the lesson's data, and why: halfway between the best memory
    that ignores the question (the last-tokens and last-20-messages baselines) and the default
    BM25. A policy that reads the question should close at least half of that gap."""
    return dict(_threshold(_data_description()))


def _data_description() -> str:
    from memorykit.classroom.data import load_tuning_data

    return load_tuning_data()[1]


@memo(maxsize=2)
def _threshold(description: str) -> tuple[tuple[str, float], ...]:
    from memorykit.evaluation.baselines import BM25Retrieval, LastMessages, LastTokens
    from memorykit.evaluation.harness import evaluate
    from memorykit.classroom.data import load_tuning_data

    data = load_tuning_data()[0]
    blind = max(evaluate(p, data, EXERCISE_BUDGET).summary()["recall"]
                for p in (LastTokens(), LastMessages(20)))
    bm25 = evaluate(BM25Retrieval(), data, EXERCISE_BUDGET).summary()["recall"]
    return (("query_blind_recall", round(blind, 3)), ("bm25_recall", round(bm25, 3)),
            ("threshold", round((blind + bm25) / 2, 3)))


def check_retrieval_policy(policy_class: Any, *, show: bool = False) -> Verdict:
    """Lesson 12, build it yourself: ``policy_class`` subclasses ``ScoredRetrieval``
    (``memorykit.evaluation.scored``) and writes ``score(query_terms, message_terms)``. The
    library's context contract (``memorykit.classroom.contracts.context``, the suite every memory of the
    library passes) and its retrieval contract run over it, and its evidence recall at 1,000
    tokens on the lesson's data must reach ``retrieval_threshold()``."""
    from memorykit.classroom.contracts import Contract, run_contracts
    from memorykit.classroom.contracts.context import CONTEXT_CONTRACTS, RETRIEVAL_CONTRACTS
    from memorykit.classroom.contracts.runner import missing_override
    from memorykit.classroom.data import load_tuning_data
    from memorykit.evaluation.harness import evaluate
    from memorykit.evaluation.scored import ScoredRetrieval

    name = "12 retrieval policy"
    not_overridden = missing_override(policy_class, ScoredRetrieval, "score",
                                      argument="policy_class", exercise=name)
    if not_overridden is not None:
        return report(not_overridden, show)
    bar = retrieval_threshold()

    def reaches_the_threshold(make: Any) -> None:
        recall = evaluate(make(), load_tuning_data()[0], EXERCISE_BUDGET).summary()["recall"]
        assert recall >= bar["threshold"], (
            f"evidence recall {recall:.3f} at {EXERCISE_BUDGET:,} tokens is under "
            f"{bar['threshold']:.3f}, halfway between memories that ignore the question "
            f"({bar['query_blind_recall']:.3f}) and BM25 ({bar['bm25_recall']:.3f}): score "
            "messages by the question's terms they contain")

    contracts = (*CONTEXT_CONTRACTS, *RETRIEVAL_CONTRACTS, Contract(
        f"evidence recall at {EXERCISE_BUDGET:,} tokens on the lesson's data reaches "
        f"{bar['threshold']:.3f}", reaches_the_threshold))
    return report(run_contracts(policy_class, contracts, exercise=name), show)
