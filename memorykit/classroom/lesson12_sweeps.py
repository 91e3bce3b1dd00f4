"""Lesson 12's sweeps: every configuration the explorer shows, evaluated once, as arrays.

* ``precompute(dataset)``: every sweep of the lesson, run once with ``run_sweep``: the tunable
  policies (``KNOBS``: ``toolkit.TUNABLE`` but superseding-retrieval) over their two-parameter
  grids, and the toolkit's memories and the baselines with their defaults, at every budget of
  ``BUDGETS``. ``TuningSweeps``
  holds numpy arrays indexed (parameter 1, parameter 2, budget), so a widget only re-slices
  them, the comparison notes the sweeps' results give, and the dataset they ran on.
* ``sweep_yours(dataset, policy_class, budgets)``: a student's retrieval policy (a
  ``ScoredRetrieval`` subclass) evaluated the same way at every budget, memoized.
* ``policy_table``, ``comparison_notes``: the printed tables (the held-out ones, read from
  ``TuningSweeps.tuned``, are in ``memorykit.classroom.lesson12_heldout``);
  ``bm25_sensitivity``: why BM25's recall surface moves or not (per evidence turn).

The explorer that draws them is ``memorykit.classroom.lesson12.TuningExplorer``.
Taught in ``notebooks/12_parameter_tuning.ipynb``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from memorykit._validate import require_int
from memorykit.classroom.data import load_tuning_data
from memorykit.classroom.lesson12_checks import EXERCISE_BUDGET
from memorykit.classroom.memo import memo
from memorykit.evaluation.dataset import EvalDataset
from memorykit.evaluation.harness import compare_policies
from memorykit.evaluation.sweep import grid, run_sweep
from memorykit.evaluation.pareto import pareto_front
from memorykit.evaluation.heldout import split_conversations
from memorykit.evaluation.toolkit import FIXED_POLICIES, TUNABLE, Tunable, fixed_policy
from memorykit.evaluation.tune import TuneResult

BUDGETS: tuple[int, ...] = (250, 500, 1000, 2000)
"""Token budgets every configuration is evaluated at."""

HOLDOUT, SEED = 0.3, 0
"""The split by conversation (``tune``'s defaults): 30% held out, or k folds when that leaves
fewer than 3 conversations to test on (the bundled fixture's 3 make 3 folds)."""

KNOBS: dict[str, Tunable] = {n: k for n, k in TUNABLE.items() if n != "superseding-retrieval"}
"""The policies swept over their grids. Lesson 13's superseding-retrieval (the hybrid, plus
updates of changed facts) is left to it: these conversations' facts do not change."""

FIXED: dict[str, Any] = {n: p for n, p in FIXED_POLICIES.items() if n not in TUNABLE}
"""The policies swept at their defaults only: a tunable one (bm25, attention, hybrid-retrieval)
at its defaults is already a cell of its grid, and swept again by name it was listed twice."""


# ------------------------------------------------------------------ sweeps
@dataclass(frozen=True)
class Surface:
    """One tunable policy's sweep as arrays indexed (parameter 1, parameter 2, budget)."""

    name: str
    knobs: Tunable
    recall: np.ndarray
    tokens: np.ndarray
    answer_recall: np.ndarray
    over_budget: np.ndarray
    """Share of questions whose context exceeded the budget (they score 0)."""
    category_recall: np.ndarray
    """(category, parameter 1, parameter 2, budget); NaN where a category has no question."""


@dataclass(frozen=True)
class TuningSweeps:
    """Everything the explorer shows, computed once."""

    description: str
    budgets: tuple[int, ...]
    categories: tuple[str, ...]
    separate: tuple[str, ...]
    surfaces: dict[str, Surface]
    points: list[dict[str, Any]]
    """Every (policy, configuration, budget): label, policy, budget, tokens, recall,
    answer_recall, over_budget (the front and "cheapest" skip rows over their budget)."""
    front: list[dict[str, Any]]
    n_evaluations: int
    units: str
    """The tokens' unit (billed), printed with every table."""
    notes: dict[int, list[str]]
    """Per budget, the fixed-setting policies' comparison notes, read from the sweep's results."""
    dataset: EvalDataset | None = field(default=None, repr=False, compare=False)
    """The data the sweeps ran on (a student's policy is evaluated on it too)."""
    tuned: TuneResult | None = field(default=None, repr=False, compare=False)
    """The same evaluations as ``tune`` reads them: picked on tuning conversations, scored
    on held-out ones, with bootstrap intervals (nothing evaluated again)."""


def _label(name: str, params: dict[str, Any]) -> str:
    return name + ("(" + ", ".join(f"{k}={v}" for k, v in params.items()) + ")" if params else "")


def precompute(dataset: EvalDataset | None = None, description: str | None = None, *,
               budgets: tuple[int, ...] = BUDGETS, progress: bool = True,
               executor: Any = None, workers: int = 0) -> TuningSweeps:
    """Run every sweep of the lesson (see the module docstring); ``progress`` shows tqdm bars.

    ``executor`` is any ``concurrent.futures.Executor`` (a Dask client's ``get_executor()``
    too); ``workers=n`` (n >= 2) instead opens a ``ProcessPoolExecutor(n)`` for the call, its
    workers started with ``spawn`` (forking a Jupyter kernel, which runs threads, is unsafe).
    The rows are the same either way (``run_sweep`` keeps configuration order).
    """
    if require_int("workers", workers, minimum=0) >= 2 and executor is None:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor
        with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) as pool:
            return precompute(dataset, description, budgets=budgets, progress=progress,
                              executor=pool)
    if dataset is None:
        dataset, description = load_tuning_data()
    categories = tuple(dataset.categories())
    separate = tuple(c for c in ("adversarial",) if c in categories)
    surfaces: dict[str, Surface] = {}
    points: list[dict[str, Any]] = []
    n_eval = 0
    # tune's rows, their fingerprints and per-question outcomes, for the held-out figures
    tuning: tuple[list[Any], list[str], list[np.ndarray]] = ([], [], [])
    for name, k in KNOBS.items():
        configs = grid({k.names[0]: list(k.values[0]), k.names[1]: list(k.values[1])})
        sweep = run_sweep(k.make, configs, dataset, list(budgets), progress=progress,
                          executor=executor, chunksize=1 if executor is None else len(budgets))
        n_eval += len(rows := sweep.to_records())
        columns = ("recall", "tokens", "answer_recall", "over_budget")
        arrays = sweep.grid_arrays(dict(zip(k.names, k.values)), budgets,
                                   (*columns, *(f"recall:{c}" for c in categories)))
        surfaces[name] = Surface(name, k, *(arrays[c] for c in columns),
                                 np.stack([arrays[f"recall:{c}"] for c in categories]))
        points += [_point(_label(name, {n: r[n] for n in k.names}), name, r) for r in rows]
        _collect(tuning, sweep, name, k.names)
    sweep = run_sweep(fixed_policy, [{"name": n} for n in FIXED], dataset, list(budgets),
                      progress=progress, executor=executor)
    points += [_point(r["name"], r["name"], r) for r in sweep.to_records()]
    _collect(tuning, sweep, None, ())
    n_eval += len(sweep)
    tuned = TuneResult(tuning[0], tuple(budgets), (*KNOBS, *FIXED), 0.0, dataset, tuning[1],
                       tuning[2], split_conversations([c.id for c in dataset], HOLDOUT, seed=SEED),
                       seed=SEED)
    _SWEPT[:] = [(dataset, TuningSweeps(
        description or dataset.name, tuple(budgets), categories, separate, surfaces, points,
        pareto_front(points), n_eval, sweep.units,
        sweep.comparison_notes("name", FIXED, dataset), dataset, tuned))]
    return _SWEPT[0][1]


def _collect(into: tuple[list[Any], list[str], list[np.ndarray]], sweep: Any,
             policy: str | None, names: tuple[str, ...]) -> None:
    """A sweep's rows as ``tune`` keeps them (policy, configuration label, budget, parameters),
    with their fingerprints and per-question outcomes."""
    for r, f, o in zip(sweep.to_records(), sweep.fingerprints, sweep.outcomes):
        params = {n: r[n] for n in names}
        label = ", ".join(f"{n}={v}" for n, v in params.items()) or "defaults"
        into[0].append({"policy": policy or r["name"], "configuration": label,
                        "budget": r["budget"], "units": r["units"], "params": params})
        into[1].append(f)
        into[2].append(o)


_SWEPT: list[tuple[EvalDataset, TuningSweeps]] = []  # the last precompute (comparison_notes)


def _point(label: str, policy: str, row: dict[str, Any]) -> dict[str, Any]:
    return {"label": label, "policy": policy,
            **{c: row[c] for c in ("budget", "tokens", "recall", "answer_recall", "over_budget")}}


@dataclass(frozen=True)
class YourSweep:
    """A student's retrieval policy at every budget of the sweeps (arrays indexed by budget)."""

    name: str
    recall: np.ndarray
    tokens: np.ndarray
    over_budget: np.ndarray
    category_recall: np.ndarray
    """(category, budget); NaN where a category has no question."""


@memo(maxsize=16)
def sweep_yours(dataset: EvalDataset, policy_class: type, budgets: tuple[int, ...],
                categories: tuple[str, ...]) -> YourSweep:
    """``policy_class()`` evaluated on ``dataset`` at every budget, as ``precompute`` evaluates
    each configuration of the library's policies (one ``run_sweep``, no progress bar)."""
    rows = run_sweep(policy_class, [{}], dataset, list(budgets), progress=False).to_records()

    def column(key: str) -> np.ndarray:
        return np.array([np.nan if r.get(key) is None else r[key] for r in rows], dtype=float)

    return YourSweep(policy_class.__name__, column("recall"), column("tokens"),
                     column("over_budget"), np.stack([column(f"recall:{c}") for c in categories]))


@memo(maxsize=4)
def bm25_sensitivity(dataset: EvalDataset, budgets: tuple[int, ...] = BUDGETS
                     ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Why BM25's recall surface moves, or not, on ``dataset``: every (k1, b) of its grid run
    over every question recall counts (adversarial ones aside), read per evidence turn.

    Returns facts (whether k1 and b move the scores and the packing order; how often a question
    word repeats in its evidence turn, the only thing k1 saturates; how many evidence turns
    rank first at every setting; how many turns hold the rarest word an evidence turn shares
    with its question, for the turns sent at every budget and setting and for the others) and
    one row per budget: evidence turns in the context at every setting, at none, or depending
    on k1 and b."""
    from memorykit.evaluation.baselines import BM25Retrieval, analyze_stemmed

    if not isinstance(dataset, EvalDataset):
        raise TypeError(f"dataset must be an EvalDataset (load_tuning_data()[0]), got {dataset!r}")
    if isinstance(budgets, (str, bytes)) or not isinstance(budgets, (tuple, list)) or not budgets:
        raise TypeError(f"budgets must be a non-empty tuple of token budgets, got {budgets!r}")
    budgets = tuple(require_int("budget", b, minimum=1) for b in budgets)
    k = TUNABLE["bm25"]
    settings = [dict(zip(k.names, (v1, v2))) for v1 in k.values[0] for v2 in k.values[1]]
    analyzed: dict[str, tuple[str, ...]] = {}  # BM25's own analyzer, run once per text

    def analyzer(text: str) -> list[str]:
        if text not in analyzed:
            analyzed[text] = tuple(analyze_stemmed(text))
        return list(analyzed[text])

    pairs = score_moves = rank_moves = repeated = matched = 0
    turns: list[tuple[tuple[int, ...], bool, int | None]] = []  # (times sent per budget, ...)
    for conv in dataset:
        states = [BM25Retrieval(**s, analyzer=analyzer).prepare(conv) for s in settings]
        docs = states[0].prepared.docs
        for q in conv.questions:
            if q.category == "adversarial":
                continue
            pos, words = conv.position(q), set(states[0].policy.analyzer(q.question))
            scores = np.array([st.policy.scores(st.prepared, pos, q.question) for st in states])
            ranks = np.empty(scores.shape, dtype=int)  # the packing order: best, then newest
            for row, s in zip(ranks, scores):
                row[np.lexsort((-np.arange(pos), -s))] = np.arange(1, pos + 1)
            scored = scores[0] > 0
            pairs += int(scored.sum())
            score_moves += int((np.ptp(scores[:, scored], axis=0) > 1e-9).sum())
            rank_moves += int((np.ptp(ranks[:, scored], axis=0) > 0).sum())
            sent = [[{i for item in st.build_context(pos, q.question, b).items
                      for i in item.sources} for st in states] for b in budgets]
            for e in q.evidence_ids:
                i = conv.index_of(e)
                shared = words & set(docs[i])
                matched += len(shared)
                repeated += sum(docs[i].count(w) > 1 for w in shared)
                turns.append((tuple(sum(e in ids for ids in at) for at in sent),
                              bool(scored[i] and (ranks[:, i] == 1).all()),
                              min((sum(w in d for d in docs[:pos]) for w in shared), default=None)))

    def held_by(group: list[tuple[Any, bool, int | None]]) -> str:
        rare = sorted(t[2] for t in group if t[2] is not None)
        none = len(group) - len(rare)
        return ((f"{rare[0]}-{rare[-1]} turns" if rare else "-")
                + (f" ({none} share no word)" if none else ""))

    always = [t for t in turns if min(t[0]) == len(settings)]
    facts = {"bm25_settings_run": f"{len(settings)} (k1 x b)",
             "scored_turns_whose_score_moves_with_k1_b": f"{score_moves:,} of {pairs:,}",
             "scored_turns_whose_rank_moves_with_k1_b": f"{rank_moves:,} of {pairs:,}",
             "question_words_repeated_in_their_evidence_turn": f"{repeated} of {matched}",
             "evidence_turns_ranked_first_at_every_k1_b": f"{sum(t[1] for t in turns)} of {len(turns)}",
             "evidence_turns_sent_at_every_budget_and_k1_b": f"{len(always)} of {len(turns)}",
             f"rarest_shared_question_word_of_those_{len(always)}": f"held by {held_by(always)}",
             f"rarest_shared_question_word_of_the_other_{len(turns) - len(always)}":
                 f"held by {held_by([t for t in turns if min(t[0]) < len(settings)])}"}
    rows = [{"budget": b, "evidence turns": len(turns),
             "sent at every k1, b": sum(t[0][n] == len(settings) for t in turns),
             "at no k1, b": sum(t[0][n] == 0 for t in turns),
             "depending on k1, b": sum(0 < t[0][n] < len(settings) for t in turns)}
            for n, b in enumerate(budgets)]
    return facts, rows


def comparison_notes(dataset: EvalDataset, budget: int = EXERCISE_BUDGET) -> tuple[str, ...]:
    """The tokens' unit, and which fixed-setting policies coincide on every question and why:
    read from the last ``precompute`` of this dataset (no policy evaluated again), else computed."""
    swept = next((s for d, s in _SWEPT if d is dataset and budget in s.notes), None)
    return tuple(swept.notes[budget]) if swept else \
        compare_policies(FIXED, dataset, budget)[0].notes


def policy_table(sweeps: TuningSweeps, budget: int = EXERCISE_BUDGET) -> list[dict[str, Any]]:
    """Every fixed policy and each tunable one at its defaults, at ``budget`` (over budget: 0)."""
    if budget not in sweeps.budgets:
        raise ValueError(f"budget must be one of {sweeps.budgets}, got {budget!r}")
    k = sweeps.budgets.index(budget)
    points = [p for p in sweeps.points if p["budget"] == budget and p["policy"] not in sweeps.surfaces]
    for name, s in sweeps.surfaces.items():  # at its defaults, labelled with them
        i, j = s.knobs.default_index
        points.append({"label": _label(name, dict(zip(s.knobs.names, s.knobs.defaults))),
                       "tokens": s.tokens[i, j, k], "recall": s.recall[i, j, k],
                       "answer_recall": s.answer_recall[i, j, k], "over_budget": s.over_budget[i, j, k]})
    rows = [{"policy": p["label"], f"{sweeps.units}_tokens": int(round(p["tokens"])),
             "over_budget": round(float(p["over_budget"]), 3), "recall": round(float(p["recall"]), 3),
             "answer_recall": round(float(p["answer_recall"]), 3)} for p in points]
    return sorted(rows, key=lambda r: (-r["recall"], r[f"{sweeps.units}_tokens"]))
