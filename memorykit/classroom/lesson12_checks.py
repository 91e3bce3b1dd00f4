"""Checkers of lesson 12 (``notebooks/12_parameter_tuning.ipynb``): beat the default BM25 at a
token budget on the lesson's data, category by category, and a retrieval policy the student
writes.

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
    """``{"policy": "attention", "neighbours": 2, ...}`` evaluated at ``budget``: its summary row
    and its recall per question category (``by_category``).

    ``policy`` is one of ``lesson12_sweeps.KNOBS`` (parameters left out keep
    their defaults). Raises ValueError naming what is wrong.
    """
    from memorykit.evaluation.harness import evaluate
    from memorykit.classroom.data import load_tuning_data
    from memorykit.evaluation.toolkit import TUNABLE

    # the lesson's three (lesson12_sweeps.KNOBS, which imports this module)
    knobs = {n: k for n, k in TUNABLE.items() if n != "superseding-retrieval"}
    if not isinstance(config, dict):
        raise TypeError(f"config must be a dict like {{'policy': 'bm25', 'k1': 1.2}}, got {config!r}")
    config = dict(config)
    name = config.pop("policy", None)
    if name not in knobs:
        raise ValueError(f"config['policy'] must be one of {', '.join(knobs)}, got {name!r}")
    k = knobs[name]
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
    result = evaluate(k.make(**params), data, budget)
    row = result.summary()
    return {"policy": name, **params, "budget": budget, "recall": row["recall"],
            "tokens": row["tokens"], "max_tokens": row["max_tokens"],
            "by_category": result.recall_by_category()}


def check_beats_bm25(config: Any, *, show: bool = False) -> Verdict:
    """Lesson 12: a configuration of a tunable policy (``evaluation.toolkit.TUNABLE``) that
    beats the default BM25 at 1,000 tokens where BM25 is weak and loses nothing where it is
    strong: in every question category (adversarial included) its evidence recall is at least
    BM25's, and above it in each category where BM25 finds at most half the evidence; no
    context over the budget. The checker evaluates it itself, on the data the lesson's explorer
    shows (``load_tuning_data``: ``MEMORYKIT_LOCOMO`` when set, else the bundled fixture), so
    its verdict never contradicts the explorer; a failing verdict names each category that
    decided it, with both recalls."""
    from memorykit.classroom.data import load_tuning_data

    name = "12 beat BM25"
    data, description = load_tuning_data()
    row = evaluate_configuration(config, data, EXERCISE_BUDGET)  # nonsense raises, naming it
    base = dict(_bm25_default(description))
    mine, theirs = row.pop("by_category"), base.pop("by_category")
    params = ", ".join(f"{k}={row[k]}" for k in row if k not in
                       ("policy", "budget", "recall", "tokens", "max_tokens"))
    label = f"{row['policy']}({params})"
    weak = [c for c, r in theirs if r <= 0.5]
    details = (f"{label}: recall {row['recall']:.3f}, {row['tokens']:.0f} tokens on average, "
               f"at most {row['max_tokens']}",
               f"bm25(k1=1.5, b=0.75): recall {base['recall']:.3f}, {base['tokens']:.0f} tokens",
               *(f"{c}: {mine[c]:.3f} against BM25's {r:.3f}"
                 + (" (BM25 finds at most half: must be above)" if c in weak else "")
                 for c, r in theirs))
    if row["max_tokens"] > EXERCISE_BUDGET:
        return report(Verdict(name, False, f"a context of {row['max_tokens']} tokens is over the "
                               f"{EXERCISE_BUDGET:,}-token budget", details), show)
    lost = [f"{c} {mine[c]:.3f} < {r:.3f}" for c, r in theirs if mine[c] < r]
    flat = [f"{c} {mine[c]:.3f} = {r:.3f}" for c, r in theirs if c in weak and mine[c] == r]
    if lost or flat:
        why = "; ".join([*(["it loses what BM25 finds: " + ", ".join(lost)] if lost else []),
                         *(["it gains nothing where BM25 is weak: " + ", ".join(flat)] if flat else [])])
        hint = (" k1 and b only reorder the turns that share a word with the question: no bm25 "
                "setting reaches evidence worded unlike its question." if row["policy"] == "bm25"
                else f" With neighbours={row['neighbours']}, every hit brings up to "
                     f"{row['neighbours']} turn(s) around it out of the same budget, so fewer "
                     "hits fit." if lost and row.get("neighbours", 0) > 0 else "")
        return report(Verdict(name, False, f"{label}: {why}.{hint} Select it in the explorer: "
                               "compare its red bars with BM25's gray ones category by category",
                               details), show)
    return report(Verdict(name, True, f"{label}: recall {row['recall']:.3f} against BM25's "
                           f"{base['recall']:.3f} at {EXERCISE_BUDGET:,} tokens, above it in "
                           f"{', '.join(weak)} and no lower in any category", details), show)


@memo(maxsize=2)
def _bm25_default(description: str) -> tuple[tuple[str, Any], ...]:
    """The default BM25 at the exercise budget on the lesson's data (its summary and its recall
    per category, in the data's order), once per data."""
    from memorykit.evaluation.baselines import BM25Retrieval
    from memorykit.evaluation.harness import evaluate
    from memorykit.classroom.data import load_tuning_data

    result = evaluate(BM25Retrieval(), load_tuning_data()[0], EXERCISE_BUDGET)
    return (*result.summary().items(), ("by_category", tuple(result.recall_by_category().items())))


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
    borrowed = _library_score(policy_class)
    if borrowed is not None:
        return report(Verdict(name, False, f"{policy_class.__name__}.score takes the library's "
                                           f"ranking ({borrowed}): write the ranking yourself"),
                      show)
    bar = retrieval_threshold()
    reached: dict[str, float] = {}

    def reaches_the_threshold(make: Any) -> None:
        recall = reached["recall"] = evaluate(make(), load_tuning_data()[0],
                                              EXERCISE_BUDGET).summary()["recall"]
        assert recall >= bar["threshold"], (
            f"evidence recall {recall:.3f} at {EXERCISE_BUDGET:,} tokens is under "
            f"{bar['threshold']:.3f}, halfway between memories that ignore the question "
            f"({bar['query_blind_recall']:.3f}) and BM25 ({bar['bm25_recall']:.3f}): score "
            "messages by the question's terms they contain")

    contracts = (*CONTEXT_CONTRACTS, *RETRIEVAL_CONTRACTS, Contract(
        f"evidence recall at {EXERCISE_BUDGET:,} tokens on the lesson's data reaches "
        f"{bar['threshold']:.3f}", reaches_the_threshold))
    verdict = run_contracts(policy_class, contracts, exercise=name)
    if verdict:  # the pass says where the student's recall stands against the bar
        verdict = Verdict(name, True, f"{verdict.reason}; evidence recall {reached['recall']:.3f} "
                          f"at {EXERCISE_BUDGET:,} tokens against the bar of {bar['threshold']:.3f} "
                          f"(BM25 {bar['bm25_recall']:.3f})", verdict.details)
    return report(verdict, show)


def _library_score(policy_class: type) -> str | None:
    """The library's ranking a class takes instead of writing one, if it does: ``score``
    inherited from (or an alias of) a library class's, or a ``score`` that calls a library
    retrieval class by name (``TermOverlapRetrieval.score(self, ...)``)."""
    import memorykit.evaluation.scored as scored

    score = policy_class.score
    if getattr(score, "__module__", "").startswith("memorykit."):
        return score.__qualname__
    library = {n for n, v in vars(scored).items() if isinstance(v, type)
               and issubclass(v, scored.BM25Retrieval) and v is not scored.ScoredRetrieval}
    code = getattr(score, "__code__", None)
    named = library & set((*code.co_names, *code.co_freevars) if code is not None else ())
    return f"{sorted(named)[0]}.score" if named else None
