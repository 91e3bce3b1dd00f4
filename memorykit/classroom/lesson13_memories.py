"""Lesson 13's memories and what they do with a changed fact, measured once for the explorer.

``MEMORIES``: the memories compared, by the name the explorer shows (each a factory, so every
evaluation starts from a fresh memory); ``UPDATE_POLICIES``: the long-term store's update
policies (``memorykit.facts.timeline``); ``sweep`` evaluates every memory on ``gap_datasets``
at every budget with the harness (``memorykit.evaluation.harness``) and keeps, per gap and
budget, the share of changed questions in each of ``OUTCOMES``. ``rule_sweep`` does the same
for the long-term store under a student's update rule. ``stale_table`` is the table of every
policy ``memorykit tune`` compares on one dataset at one budget.
Taught in ``notebooks/13_changing_facts.ipynb``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from memorykit._validate import require_int
from memorykit.classroom.explorer import Implementation
from memorykit.classroom.memo import memo
from memorykit.evaluation.baselines import BM25Retrieval, LastTokens
from memorykit.evaluation.dataset import EvalDataset
from memorykit.evaluation.harness import EvalResult, evaluate
from memorykit.evaluation.hybrid import HybridRetrieval
from memorykit.evaluation.toolkit import FIXED_POLICIES, fixed_policy
from memorykit.facts.timeline import UPDATE_POLICIES as TIMELINE_POLICIES, UpdatePolicy

OUTCOMES = ("stale only", "both, unclear", "both, marked or ordered", "current only", "neither")
"""Where a changed question's context leaves its reader, exactly one per question: only an old
statement (the old value answers), both and nothing says which is current, both and the old
one marked or placed before the current one, only the current one, or neither."""


def _store(update_policy: Any = None) -> Any:
    from memorykit.longterm.service import MemoryService

    return MemoryService()


MEMORIES: dict[str, Callable[[], Any]] = {
    "recency (last tokens)": LastTokens,
    "summary buffer": lambda: fixed_policy("summary"),
    "bm25": BM25Retrieval,
    "hybrid-retrieval": HybridRetrieval,
}
"""The memories the explorer compares, by name: each a factory of a ``ContextPolicy``."""

UPDATE_POLICIES: dict[str, type[UpdatePolicy] | None] = {"keep all": None, **TIMELINE_POLICIES}
"""The long-term store's update policies, by the name the explorer's dropdown shows ("keep
all": the store's default, no update rule)."""

YOURS = Implementation("an UpdatePolicy subclass (your choose_current)", UpdatePolicy)


def outcomes(result: EvalResult) -> np.ndarray:
    """The share of ``result``'s changed questions in each of ``OUTCOMES`` (zeros: none)."""
    counts = np.zeros(len(OUTCOMES))
    for q in result.questions:
        if q.stale_only is None:  # a control question: nothing was replaced
            continue
        if q.stale_only:
            counts[0] += 1
        elif q.both:
            counts[1 if q.both_unclear else 2] += 1
        else:
            counts[3 if q.n_covered else 4] += 1
    total = counts.sum()
    return counts / total if total else counts


def _recall(result: EvalResult) -> float:
    recall = result.summary()["recall"]
    return 0.0 if recall is None else float(recall)


@memo(maxsize=8)
def gap_datasets(seed: int, conversations: int, gaps: tuple[int, ...]) -> tuple[EvalDataset, ...]:
    """One changing-facts dataset per gap: the same seed, every old and new statement ``gap``
    messages apart."""
    from memorykit.classroom.scenarios.changing_facts import changing_facts_dataset

    return tuple(changing_facts_dataset(seed=seed, conversations=conversations, gap=g)
                 for g in gaps)


@dataclass(frozen=True)
class Sweep:
    """Every memory at every gap and budget: outcome shares and recall."""

    shares: dict[str, np.ndarray]
    """Per memory: shape (gaps, budgets, outcomes)."""
    recall: dict[str, np.ndarray]
    """Per memory: recall over every question, shape (gaps, budgets)."""
    changed: np.ndarray
    """Changed questions per gap."""

    def by_gap(self, name: str, b: int) -> np.ndarray:
        """(stale only, both) at every gap, at budget index ``b``: shape (2, gaps)."""
        s = self.shares[name][:, b]
        return np.stack([s[:, 0], s[:, 1] + s[:, 2]])


@dataclass(frozen=True)
class RuleSweep:
    """One memory (the long-term store under a student's rule) at every gap and budget."""

    shares: np.ndarray
    recall: np.ndarray

    def by_gap(self, b: int) -> np.ndarray:
        s = self.shares[:, b]
        return np.stack([s[:, 0], s[:, 1] + s[:, 2]])


def _measure(make: Callable[[], Any], datasets: Sequence[EvalDataset],
             budgets: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    shares = np.zeros((len(datasets), len(budgets), len(OUTCOMES)))
    recall = np.zeros((len(datasets), len(budgets)))
    for g, data in enumerate(datasets):
        policy, prepared = make(), {}  # prepared once per conversation, read at every budget
        for b, budget in enumerate(budgets):
            result = evaluate(policy, data, budget, prepared=prepared)
            shares[g, b], recall[g, b] = outcomes(result), _recall(result)
    return shares, recall


@memo(maxsize=4)
def sweep(seed: int, conversations: int, gaps: tuple[int, ...],
          budgets: tuple[int, ...]) -> Sweep:
    """Every memory of ``MEMORIES`` and the long-term store under every update policy
    (``"long-term store: keep all"``...), on ``gap_datasets`` at every budget."""
    require_int("seed", seed, minimum=0)
    datasets = gap_datasets(seed, conversations, gaps)
    makers = {**MEMORIES, **{f"long-term store: {name}": (lambda p=policy: _store(p))
                             for name, policy in UPDATE_POLICIES.items()}}
    shares, recall = {}, {}
    for name, make in makers.items():
        shares[name], recall[name] = _measure(make, datasets, budgets)
    changed = np.array([sum(1 for c in d for q in c.questions if q.superseded_ids)
                        for d in datasets])
    return Sweep(shares, recall, changed)


@memo(maxsize=16)
def rule_sweep(rule: type, seed: int, conversations: int, gaps: tuple[int, ...],
               budgets: tuple[int, ...]) -> RuleSweep:
    """The long-term store under ``rule`` (an ``UpdatePolicy`` subclass), as ``sweep``."""
    rule = YOURS.check("rule", rule)
    shares, recall = _measure(lambda: _store(rule()), gap_datasets(seed, conversations, gaps),
                              budgets)
    return RuleSweep(shares, recall)


def stale_table(data: EvalDataset, budget: int = 1000) -> list[dict[str, Any]]:
    """One row per policy ``memorykit tune`` compares at its defaults: recall, the three
    staleness shares (of the questions with a superseded statement) and mean tokens."""
    rows = []
    for name, policy in FIXED_POLICIES.items():
        s = evaluate(policy, data, budget).summary()
        rows.append({"policy": name, "recall": _round(s["recall"]),
                     "stale_only": _round(s["stale_only"]), "both": _round(s["both"]),
                     "both_unclear": _round(s["both_unclear"]), "tokens": int(round(s["tokens"]))})
    return rows


def outcome_table(sw: Sweep, gap: int, budget: int, gaps: Sequence[int],
                  budgets: Sequence[int]) -> list[dict[str, Any]]:
    """``sweep``'s outcome shares at one gap and budget, one row per memory."""
    g, b = list(gaps).index(gap), list(budgets).index(budget)
    return [{"memory": name, **{o: round(float(x), 3) for o, x in zip(OUTCOMES, s[g, b])}}
            for name, s in sw.shares.items()]


def _round(x: float | None) -> float | None:
    return None if x is None else round(float(x), 3)
