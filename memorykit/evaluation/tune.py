"""Headless tuning: every policy the toolkit compares, swept over a dataset, in one result.

``tune(dataset, budgets, policies)`` runs, through ``run_sweep`` and the harness, each
tunable policy of ``toolkit.TUNABLE`` over its whole two-parameter grid and each other
policy of ``toolkit.FIXED_POLICIES`` at its defaults, at every budget. ``TuneResult`` keeps
one row per (policy, configuration, budget), the best configuration of each policy at each
budget, and the Pareto front of recall against tokens over all rows. It is what
``python -m memorykit tune`` prints and writes as JSON.

By default the conversations are split (``heldout.split_conversations``, ``holdout=0.3``):
each policy's configuration is picked on the tuning part and its recall reported on the test
part, with a bootstrap interval over conversations, and policies are compared pairwise on the
same questions. A pick scored on the questions it was picked on would be optimistic.
Taught in ``notebooks/12_parameter_tuning.ipynb``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from concurrent.futures import Executor
from typing import Any

import numpy as np

from memorykit._validate import require_int, require_texts
from memorykit.evaluation.dataset import EvalDataset, as_dataset
from memorykit.evaluation.harness import HarnessSettings, coincidence_note, coinciding_policies
from memorykit.evaluation.heldout import (MIN_TEST_CONVERSATIONS, Split, bootstrap_ci,
                                          split_conversations)
from memorykit.evaluation.pareto import pareto_front
from memorykit.evaluation.scoring import units_note
from memorykit.evaluation.sweep import grid, run_sweep
from memorykit.evaluation.table import Table
from memorykit.evaluation.toolkit import FIXED_POLICIES, TUNABLE, fixed_policy

__all__ = ["DEFAULT_BUDGETS", "TuneResult", "tunable_policy_names", "tune"]

DEFAULT_BUDGETS: tuple[int, ...] = (250, 500, 1000, 2000)
"""Budgets a tuning run scores at unless told otherwise (lesson 12's)."""

_SUMMARY_COLUMNS = ("policy", "configuration", "budget", "questions", "recall", "strict_recall",
                    "answer_recall", "tokens", "max_tokens", "over_budget")
_STALE_COLUMNS = ("changed_questions", "stale_only", "both", "both_unclear", "marked_current")
"""Present when the data names superseded messages (``EvalQuestion.superseded_ids``)."""


def tunable_policy_names() -> list[str]:
    """Every policy ``tune`` knows: the swept ones first, then the fixed ones."""
    return [*TUNABLE, *(n for n in FIXED_POLICIES if n not in TUNABLE)]


class TuneResult:
    """Every configuration of a tuning run, each policy's pick and what it scores held out.

    ``splits`` (``heldout.split_conversations``) say where a configuration is picked (the
    tuning part) and where the pick is scored (the test part); with several (k folds) every
    conversation is scored once, by a pick made on the others. Every figure is computed from
    ``outcomes``, each row's per-question results (``sweep.question_outcomes``), so any part's
    recall and its bootstrap interval over conversations come without evaluating again.
    """

    def __init__(self, rows: list[dict[str, Any]], budgets: tuple[int, ...],
                 policies: tuple[str, ...], wall_seconds: float, dataset: EvalDataset,
                 fingerprints: Sequence[str], outcomes: Sequence[np.ndarray],
                 splits: Sequence[Split] = (), *, seed: int = 0) -> None:
        if not len(fingerprints) == len(outcomes) == len(rows):
            raise ValueError(f"fingerprints and outcomes must hold one per row ({len(rows)}), "
                             f"got {len(fingerprints)} and {len(outcomes)}")
        self.dataset = dataset
        """The data the rows were scored on (its flat signals explain coincidences)."""
        self.configurations = [{k: r[k] for k in ("policy", "configuration", "budget", "params")}
                               for r in rows]
        """Each row's policy, configuration label, budget and parameters."""
        self.outcomes = [np.asarray(o, dtype=np.float64) for o in outcomes]
        self.fingerprints = tuple(fingerprints)
        """Each row's ``EvalResult.fingerprint()``: ``notes`` compares policies question by
        question through them."""
        self._fingerprints = {(r["policy"], r["configuration"], r["budget"]): f
                              for r, f in zip(rows, fingerprints)}
        self.splits = tuple(splits)
        """The cuts by conversation (none: picked and scored on the same questions)."""
        self.seed = seed
        """Seed of the bootstrap resamples (and of the split, when ``tune`` made it)."""
        self.units = rows[0].get("units", "billed") if rows else "billed"
        self.budgets = budgets
        self.policies = policies
        self.wall_seconds = wall_seconds
        """Time of all the sweeps together."""
        conv_of, category, main = [], [], []
        for c, conv in enumerate(dataset):
            for q in conv.questions:
                conv_of.append(c)
                category.append(q.category)
                main.append(q.category not in HarnessSettings().separate)
        self._conv = np.array(conv_of, dtype=np.int64)
        self._category = np.array(category, dtype=object)
        self._main = np.array(main, dtype=bool)
        ids = [conv.id for conv in dataset]
        self._tuning = [self._mask(s.tuning, ids) for s in self.splits]
        self._test = [self._mask(s.test, ids) for s in self.splits]
        self._everything = np.ones(len(self._conv), dtype=bool)
        self._changed = any(q.superseded_ids for conv in dataset for q in conv.questions)
        self.table = Table(self._part_rows())
        """One row per policy, configuration, budget and part (``split``: "tuning" and "test"
        for one held-out split, "all" otherwise), with ``recall_ci`` and recall per category."""

    def _mask(self, conversations: Sequence[str], ids: list[str]) -> np.ndarray:
        unknown = sorted(set(conversations) - set(ids))
        if unknown:
            raise ValueError(f"splits name conversations the dataset does not hold: {unknown[:5]}")
        return np.isin(self._conv, [ids.index(c) for c in conversations])

    @property
    def split_kind(self) -> str:
        """"holdout" (one test part), "folds" (k folds) or "none"."""
        return "none" if not self.splits else "holdout" if len(self.splits) == 1 else "folds"

    def figures(self, outcome: np.ndarray, mask: np.ndarray) -> dict[str, Any]:
        """The summary columns of one row's ``outcome`` over the questions in ``mask``."""
        main = mask & self._main
        o = outcome[main]
        answers = o[:, 2][~np.isnan(o[:, 2])]
        row: dict[str, Any] = {
            "questions": int(main.sum()),
            "recall": _mean(o[:, 0]),
            "recall_ci": bootstrap_ci(*self._per_conversation(outcome[:, 0], main), seed=self.seed),
            "strict_recall": _mean(o[:, 1]), "answer_recall": _mean(answers),
            "tokens": _mean(o[:, 3]),
            "max_tokens": int(outcome[mask, 3].max()) if mask.any() else None,
            "over_budget": _mean(outcome[mask, 4])}
        changed = main & ~np.isnan(outcome[:, 5])
        if self._changed:  # data naming superseded messages: every row says how stale
            row["changed_questions"] = int(changed.sum())
            for k, column in (("stale_only", 5), ("both", 6), ("both_unclear", 7)):
                row[k] = _mean(outcome[changed, column])
            row["marked_current"] = _mean(outcome[main, 8])
        for c in dict.fromkeys(self._category[mask]):
            row[f"recall:{c}"] = _mean(outcome[mask & (self._category == c), 0])
        return row

    def _per_conversation(self, values: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        n = len(self.dataset)
        return (np.bincount(self._conv[mask], weights=values[mask], minlength=n),
                np.bincount(self._conv[mask], minlength=n))

    def _part_rows(self) -> list[dict[str, Any]]:
        parts = [("tuning", self._tuning[0]), ("test", self._test[0])] \
            if self.split_kind == "holdout" else [("all", self._everything)]
        return [{**{k: v for k, v in config.items() if k != "params"}, "split": name,
                 **self.figures(outcome, mask), "params": config["params"]}
                for config, outcome in zip(self.configurations, self.outcomes)
                for name, mask in parts]

    def _pick(self, policy: str, budget: int, mask: np.ndarray) -> int:
        """The row of ``policy`` at ``budget`` with the highest recall over ``mask`` (ties:
        fewer tokens, then the first); -1 if there is none."""
        main = mask & self._main
        best, key = -1, (float("-inf"), float("-inf"))
        for i, c in enumerate(self.configurations):
            if c["policy"] == policy and c["budget"] == budget:
                o = self.outcomes[i][main]
                k = _rank({"recall": _mean(o[:, 0]), "tokens": _mean(o[:, 3])})
                if k > key:
                    best, key = i, k
        return best

    def _held_out(self, policy: str, budget: int) -> tuple[int, np.ndarray, np.ndarray]:
        """The reported pick (on the tuning part; for folds or no split, on everything), and the
        per-question outcomes of the picks scored where they were not picked, with its mask."""
        if self.split_kind == "holdout":
            pick = self._pick(policy, budget, self._tuning[0])
            return pick, self.outcomes[pick], self._test[0]
        pick = self._pick(policy, budget, self._everything)
        if self.split_kind == "none":
            return pick, self.outcomes[pick], self._everything
        pooled = np.zeros_like(self.outcomes[pick])
        for tuning, test in zip(self._tuning, self._test):
            pooled[test] = self.outcomes[self._pick(policy, budget, tuning)][test]
        return pick, pooled, self._everything

    def best(self) -> Table:
        """Each policy's pick at each budget and its held-out figures, sorted by budget, then
        held-out recall from high to low.

        ``configuration`` is picked on the tuning part (k folds or no split: on every
        conversation, what you would deploy); ``recall`` and ``recall_ci`` are on the test part
        (k folds: each conversation scored by the pick made without it); ``tuning_recall`` is
        the pick's recall where it was picked, optimistic by construction."""
        split = {"holdout": "test", "folds": f"test, {len(self.splits)} folds",
                 "none": "all (not held out)"}[self.split_kind]
        rows = []
        for budget in self.budgets:
            for policy in self.policies:
                pick, outcome, mask = self._held_out(policy, budget)
                if pick < 0:
                    continue
                tuning = self._tuning[0] if self.split_kind == "holdout" else self._everything
                config = self.configurations[pick]
                f = self.figures(outcome, mask)
                rows.append({"policy": policy, "configuration": config["configuration"],
                             "budget": budget, "split": split, "questions": f["questions"],
                             "recall": f["recall"], "recall_ci": f["recall_ci"],
                             "tuning_recall": self.figures(self.outcomes[pick], tuning)["recall"],
                             **{k: f[k] for k in (*_SUMMARY_COLUMNS[5:], *_STALE_COLUMNS)
                                if k in f}})
        rows.sort(key=lambda r: (r["budget"], -_rank(r)[0], r["tokens"] or 0))
        return Table(rows)

    def compare(self, policy: str, other: str, budget: int) -> dict[str, Any]:
        """``policy`` minus ``other`` at ``budget``: the held-out recall difference on the same
        questions (each at its pick) and its paired bootstrap interval over conversations."""
        if budget not in self.budgets:
            raise ValueError(f"budget must be one of {list(self.budgets)}, got {budget!r}")
        for name in (policy, other):
            if name not in self.policies:
                raise ValueError(f"policy must be one of {list(self.policies)}, got {name!r}")
        _, a, mask = self._held_out(policy, budget)
        _, b, _ = self._held_out(other, budget)
        main = mask & self._main
        diff, counts = self._per_conversation(a[:, 0] - b[:, 0], main)
        return {"budget": budget, "policy": policy, "other": other,
                "questions": int(main.sum()), "difference": _mean(a[main, 0] - b[main, 0]),
                "difference_ci": bootstrap_ci(diff, counts, seed=self.seed)}

    def comparisons(self, against: int = 3) -> Table:
        """At each budget, the policy with the best held-out recall against the next
        ``against`` ones; ``distinguishable`` when the difference's interval excludes 0."""
        against = require_int("against", against, minimum=1)
        best = self.best()
        rows = []
        for budget in self.budgets:
            ranked = best.where(budget=budget).column("policy") if len(best.where(budget=budget)) \
                else []
            for other in ranked[1:1 + against]:
                c = self.compare(ranked[0], other, budget)
                ci = c["difference_ci"]
                rows.append({**c, "distinguishable": None if ci is None else not ci[0] <= 0 <= ci[1]})
        return Table(rows)

    def pareto_front(self) -> Table:
        """Configurations no other one beats on both mean tokens and recall, any budget, on the
        part configurations are picked on (tuning part; else every conversation).

        Configurations that land on the same point (often: a parameter that changes nothing on
        this data) are one row, the first of them, with ``same_point`` counting them all;
        ``overlaps_cheaper`` says the point's recall interval overlaps the next cheaper point's:
        the extra tokens buy no difference these conversations can tell apart.
        """
        part = "tuning" if self.split_kind == "holdout" else "all"
        points: dict[tuple[float, float], dict[str, Any]] = {}
        for r in pareto_front(self.table.where(split=part)):
            held = points.get((r["tokens"], r["recall"]))
            if held is None:
                points[r["tokens"], r["recall"]] = {
                    **{c: r.get(c) for c in (*_SUMMARY_COLUMNS[:3], "split", "questions",
                                            "recall", "recall_ci", *_SUMMARY_COLUMNS[5:],
                                            *_STALE_COLUMNS) if c in r},
                    "same_point": 1}
            else:
                held["same_point"] += 1
        front = list(points.values())
        for cheaper, row in zip([None, *front], front):
            a, b = row["recall_ci"], cheaper and cheaper["recall_ci"]
            row["overlaps_cheaper"] = None if a is None or not b else a[0] <= b[1]
        return Table(front)

    def notes(self) -> list[str]:
        """What to read the tables with: the split, the intervals, the tokens' unit, and which
        policies (at their reported configuration) give identical results on every question at
        every budget: they are one result, not several (compared question by question, not by
        their averages)."""
        n = len(self.dataset)
        if self.split_kind == "holdout":
            s = self.splits[0]
            split = (f"split by conversation (seed {self.seed}): {len(s.tuning)} to tune on, "
                     f"{len(s.test)} held out ({', '.join(s.test)}); each policy's configuration "
                     f"is picked on the tuning part and its recall reported on the test part")
        elif self.split_kind == "folds":
            split = (f"{len(self.splits)} folds by conversation (seed {self.seed}; {n} "
                     f"conversations, too few for a held-out part of "
                     f"{MIN_TEST_CONVERSATIONS}): each conversation is scored by the pick made "
                     f"on the other folds; the configuration shown is the pick on all of them")
        else:
            split = (f"nothing held out ({n} conversation{'s' * (n != 1)}): each configuration is "
                     f"picked and scored on the same questions, which is optimistic")
        notes = [split, "recall_ci: 95% bootstrap interval, resampling conversations (their "
                        "questions are not independent); empty with fewer than 2 conversations"]
        notes += [units_note(self.units)]
        if self._changed:
            notes.append("changed facts: stale_only is the share of the questions about a changed "
                         "fact (changed_questions) whose context holds a replaced statement and "
                         "none of the current one (the reader would answer with the old value); "
                         "both: it holds the two; both_unclear: the two, and nothing marks or "
                         "orders the old one as replaced; marked_current: share of all questions whose "
                         "context marks the current statement as replaced")
        per_budget: dict[str, list[str]] = {}
        for row in sorted(self.best(), key=lambda r: r["budget"]):
            key = (row["policy"], row["configuration"], row["budget"])
            per_budget.setdefault(row["policy"], []).append(self._fingerprints[key])
        where = "at every budget" if len(self.budgets) > 1 else f"at {self.budgets[0]} tokens"
        notes += [coincidence_note(group, FIXED_POLICIES, self.dataset, where)
                  for group in coinciding_policies({p: " ".join(f) for p, f in per_budget.items()})]
        return notes

    def to_json(self) -> dict[str, Any]:
        """Everything as plain JSON types: budgets, policies, the splits, every row, the best,
        the paired comparisons, the front, the notes."""
        def plain(table: Table) -> list[dict[str, Any]]:
            return [{k: list(v) if isinstance(v, tuple) else v for k, v in r.items()}
                    for r in table]

        return {"budgets": list(self.budgets), "policies": list(self.policies),
                "splits": [{"tuning": list(s.tuning), "test": list(s.test)} for s in self.splits],
                "seed": self.seed, "rows": plain(self.table), "best": plain(self.best()),
                "comparisons": plain(self.comparisons()),
                "pareto_front": plain(self.pareto_front()), "notes": self.notes()}

    def __repr__(self) -> str:
        return (f"TuneResult({len(self.table)} rows, policies={list(self.policies)}, "
                f"budgets={list(self.budgets)}, split={self.split_kind})")


def _mean(values: np.ndarray) -> float | None:
    return float(values.mean()) if len(values) else None


def _rank(row: Mapping[str, Any]) -> tuple[float, float]:
    recall = -1.0 if row["recall"] is None else row["recall"]
    return recall, -(row["tokens"] or 0.0)


def _label(params: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in params.items()) if params else "defaults"


def tune(dataset: Any, budgets: Sequence[int] = DEFAULT_BUDGETS,
         policies: Sequence[str] | None = None, *, holdout: float = 0.3,
         folds: int | None = None, seed: int = 0, progress: bool = False,
         executor: Executor | None = None) -> TuneResult:
    """Sweep ``policies`` (default: ``tunable_policy_names()``) over ``dataset`` at ``budgets``.

    ``holdout``, ``folds`` and ``seed`` split the conversations
    (``heldout.split_conversations``; ``holdout=0``: nothing held out). Every configuration is
    evaluated once on every conversation; the split only decides which questions pick and
    which report. ``executor`` (a ``ProcessPoolExecutor``, a Dask client's ``get_executor()``)
    runs the evaluations in parallel; the rows are the same either way. ``progress`` shows
    tqdm bars.
    """
    data: EvalDataset = as_dataset(dataset)
    if data.n_questions == 0:
        raise ValueError(f"dataset {data.name!r} has no question: nothing to score")
    splits = split_conversations([c.id for c in data], holdout, folds=folds, seed=seed)
    if isinstance(budgets, int) or not budgets:
        raise ValueError(f"budgets must be a non-empty list of ints, got {budgets!r}")
    budget_list = [require_int("budgets[]", b, minimum=1) for b in budgets]
    known = tunable_policy_names()
    names = known if policies is None else require_texts("policies", policies)
    for n in names:
        if n not in known:
            raise ValueError(f"policies must name known policies ({', '.join(known)}), got {n!r}")
    names = list(dict.fromkeys(names))
    rows: list[dict[str, Any]] = []
    fingerprints: list[str] = []
    outcomes: list[np.ndarray] = []
    wall = 0.0
    for name in (n for n in names if n in TUNABLE):
        k = TUNABLE[name]
        sweep = run_sweep(k.make, grid(dict(zip(k.names, map(list, k.values)))), data, budget_list,
                          progress=progress, executor=executor)
        wall += sweep.wall_seconds
        fingerprints += sweep.fingerprints
        outcomes += sweep.outcomes
        for r in sweep.to_records():
            params = {p: r.pop(p) for p in k.names}
            del r["config_id"], r["policy"]
            rows.append({"policy": name, "configuration": _label(params), **r,
                         "params": params})
    fixed = [n for n in names if n not in TUNABLE]
    if fixed:
        sweep = run_sweep(fixed_policy, [{"name": n} for n in fixed], data, budget_list,
                          progress=progress, executor=executor)
        wall += sweep.wall_seconds
        fingerprints += sweep.fingerprints
        outcomes += sweep.outcomes
        for r in sweep.to_records():
            del r["config_id"], r["policy"]
            rows.append({"policy": r.pop("name"), "configuration": "defaults", **r, "params": {}})
    return TuneResult(rows, tuple(budget_list), tuple(names), wall, data, fingerprints, outcomes,
                      splits, seed=seed)
