"""Headless tuning: every policy the toolkit compares, swept over a dataset, in one result.

``tune(dataset, budgets, policies)`` runs, through ``run_sweep`` and the harness, each
tunable policy of ``toolkit.TUNABLE`` over its whole two-parameter grid and each other
policy of ``toolkit.FIXED_POLICIES`` at its defaults, at every budget. ``TuneResult`` keeps
one row per (policy, configuration, budget), the best configuration of each policy at each
budget, and the Pareto front of recall against tokens over all rows. It is what
``python -m memorykit tune`` prints and writes as JSON.

The best configuration is picked on the same questions it is scored on: with few questions
that is optimistic, so hold some questions out and check the pick on them before trusting it.
Taught in ``notebooks/12_parameter_tuning.ipynb``.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Executor
from typing import Any

from memorykit._validate import require_int, require_texts
from memorykit.evaluation.dataset import EvalDataset, as_dataset
from memorykit.evaluation.harness import coincidence_note, coinciding_policies
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


def tunable_policy_names() -> list[str]:
    """Every policy ``tune`` knows: the swept ones first, then the fixed ones."""
    return [*TUNABLE, *(n for n in FIXED_POLICIES if n not in TUNABLE)]


class TuneResult:
    """Every row of a tuning run, and the views a reader starts from."""

    def __init__(self, rows: list[dict[str, Any]], budgets: tuple[int, ...],
                 policies: tuple[str, ...], wall_seconds: float, dataset: EvalDataset,
                 fingerprints: Sequence[str]) -> None:
        if len(fingerprints) != len(rows):
            raise ValueError(f"fingerprints must hold one per row ({len(rows)}), "
                             f"got {len(fingerprints)}")
        self.table = Table(rows)
        """One row per policy, configuration and budget (recall per category included)."""
        self.dataset = dataset
        """The data the rows were scored on (its flat signals explain coincidences)."""
        self.fingerprints = tuple(fingerprints)
        """Each row's ``EvalResult.fingerprint()``: ``notes`` compares policies question by
        question through them."""
        self._fingerprints = {(r["policy"], r["configuration"], r["budget"]): f
                              for r, f in zip(rows, fingerprints)}
        self.budgets = budgets
        self.policies = policies
        self.wall_seconds = wall_seconds
        """Time of all the sweeps together."""

    def best(self) -> Table:
        """The highest-recall configuration of each policy at each budget (ties: fewer tokens),
        sorted by budget, then recall from high to low."""
        chosen: dict[tuple[str, int], dict[str, Any]] = {}
        for row in self.table:
            key = (row["policy"], row["budget"])
            held = chosen.get(key)
            if held is None or _rank(row) > _rank(held):
                chosen[key] = row
        rows = sorted(chosen.values(), key=lambda r: (r["budget"], -_rank(r)[0], r["tokens"] or 0))
        return Table({c: r.get(c) for c in _SUMMARY_COLUMNS} for r in rows)

    def pareto_front(self) -> Table:
        """Configurations no other one beats on both mean tokens and recall, any budget.

        Configurations that land on the same point (often: a parameter that changes nothing on
        this data) are one row, the first of them, with ``same_point`` counting them all.
        """
        points: dict[tuple[float, float], dict[str, Any]] = {}
        for r in pareto_front(self.table):
            held = points.get((r["tokens"], r["recall"]))
            if held is None:
                points[r["tokens"], r["recall"]] = {**{c: r.get(c) for c in _SUMMARY_COLUMNS},
                                                   "same_point": 1}
            else:
                held["same_point"] += 1
        return Table(points.values())

    def notes(self) -> list[str]:
        """What to read the tables with: the tokens' unit, and which policies (at their best
        configuration) give identical results on every question at every budget: they are one
        result, not several (compared question by question, not by their averages)."""
        notes = [units_note(u) for u in dict.fromkeys(r["units"] for r in self.table)]
        per_budget: dict[str, list[str]] = {}
        for row in sorted(self.best(), key=lambda r: r["budget"]):
            key = (row["policy"], row["configuration"], row["budget"])
            per_budget.setdefault(row["policy"], []).append(self._fingerprints[key])
        where = "at every budget" if len(self.budgets) > 1 else f"at {self.budgets[0]} tokens"
        notes += [coincidence_note(group, FIXED_POLICIES, self.dataset, where)
                  for group in coinciding_policies({p: " ".join(f) for p, f in per_budget.items()})]
        return notes

    def to_json(self) -> dict[str, Any]:
        """Everything as plain JSON types: budgets, policies, every row, the best, the front,
        the notes."""
        return {"budgets": list(self.budgets), "policies": list(self.policies),
                "rows": self.table.to_records(), "best": self.best().to_records(),
                "pareto_front": self.pareto_front().to_records(), "notes": self.notes()}

    def __repr__(self) -> str:
        return (f"TuneResult({len(self.table)} rows, policies={list(self.policies)}, "
                f"budgets={list(self.budgets)})")


def _rank(row: dict[str, Any]) -> tuple[float, float]:
    recall = -1.0 if row["recall"] is None else row["recall"]
    return recall, -(row["tokens"] or 0.0)


def _label(params: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in params.items()) if params else "defaults"


def tune(dataset: Any, budgets: Sequence[int] = DEFAULT_BUDGETS,
         policies: Sequence[str] | None = None, *, progress: bool = False,
         executor: Executor | None = None) -> TuneResult:
    """Sweep ``policies`` (default: ``tunable_policy_names()``) over ``dataset`` at ``budgets``.

    ``executor`` (a ``ProcessPoolExecutor``, a Dask client's ``get_executor()``) runs the
    evaluations in parallel; the rows are the same either way. ``progress`` shows tqdm bars.
    """
    data: EvalDataset = as_dataset(dataset)
    if data.n_questions == 0:
        raise ValueError(f"dataset {data.name!r} has no question: nothing to score")
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
    wall = 0.0
    for name in (n for n in names if n in TUNABLE):
        k = TUNABLE[name]
        sweep = run_sweep(k.make, grid(dict(zip(k.names, map(list, k.values)))), data, budget_list,
                          progress=progress, executor=executor)
        wall += sweep.wall_seconds
        fingerprints += sweep.fingerprints
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
        for r in sweep.to_records():
            del r["config_id"], r["policy"]
            rows.append({"policy": r.pop("name"), "configuration": "defaults", **r, "params": {}})
    return TuneResult(rows, tuple(budget_list), tuple(names), wall, data, fingerprints)
