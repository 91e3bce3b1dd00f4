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
from pathlib import Path
from typing import Any

import numpy as np

from memorykit._validate import require_int
from memorykit.classroom.explorer import Implementation
from memorykit.classroom.memo import memo
from memorykit.evaluation.baselines import BM25Retrieval, LastTokens
from memorykit.evaluation.chatlog import load_chat_logs
from memorykit.evaluation.dataset import EvalDataset
from memorykit.evaluation.harness import (EvalResult, comparison_notes, evaluate,
                                          is_query_independent)
from memorykit.evaluation.hybrid import HybridRetrieval
from memorykit.evaluation.superseding import SupersedingRetrieval
from memorykit.evaluation.toolkit import FIXED_POLICIES, fixed_policy
from memorykit.facts.detect import find_updates
from memorykit.facts.statement import Update
from memorykit.facts.timeline import FactTimeline, UpdatePolicy
from memorykit.messages import Message
from memorykit.longterm.service import (UPDATE_POLICY_NAMES, LongTermSettings, MemoryService,
                                        Session)

_DATA = Path(__file__).resolve().parent.parent.parent / "data" / "changing_facts"
CHANGING_FACTS = (_DATA / "changing_facts.jsonl", _DATA / "changing_facts_questions.jsonl")
"""The bundled set: its conversations and its questions (``data/changing_facts/``)."""

OUTCOMES = ("stale only", "both, unclear", "both, marked or ordered", "current only", "neither")
"""Where a changed question's context leaves its reader, exactly one per question: only an old
statement (the old value answers), both and nothing says which is current, both and the old
one marked or placed before the current one, only the current one, or neither."""


def _store(update_policy: str = "keep-all") -> MemoryService:
    """The long-term store (D4's memory service, its defaults) under ``update_policy``."""
    return MemoryService(settings=LongTermSettings(update_policy=update_policy))


class RuleStore(MemoryService):
    """The long-term store whose facts are tracked under ``rule`` (an ``UpdatePolicy``
    instance, a student's included) instead of a policy named in its settings: each session's
    ``FactTimeline`` is made with it. Superseded entries are dropped or kept dated as the rule's
    ``keeps_superseded`` says, exactly as under the library's policies."""

    def __init__(self, rule: UpdatePolicy) -> None:
        if not isinstance(rule, UpdatePolicy):
            raise TypeError(f"rule must be an UpdatePolicy instance, got {rule!r}")
        named = "keep-both-dated" if rule.keeps_superseded else "latest-wins"
        super().__init__(settings=LongTermSettings(update_policy=named))
        self.rule = rule

    def session(self, session_id: str) -> Session:
        s = super().session(session_id)
        if s.timeline is None:
            s.timeline = FactTimeline(self.rule)
        return s


MEMORIES: dict[str, Callable[[], Any]] = {
    "recency (last tokens)": LastTokens,
    "summary buffer": lambda: fixed_policy("summary"),
    "bm25": BM25Retrieval,
    "hybrid-retrieval": HybridRetrieval,
    "superseding, latest": lambda: SupersedingRetrieval(keep="latest"),
    "superseding, dated": lambda: SupersedingRetrieval(keep="dated"),
}
"""The memories the explorer compares, by name: each a factory of a ``ContextPolicy``."""

UPDATE_POLICIES = UPDATE_POLICY_NAMES
"""The long-term store's update policies, as its settings name them ("keep-all", its default:
nothing is detected)."""

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


class KnownUpdates:
    """An update detector that runs ``find_updates`` once per conversation and answers for any
    prefix of it: the updates whose two messages are both in ``messages``.

    Exact because the rules read each message only in the light of the ones before it
    (``memorykit.facts.detect``): the updates of a prefix are the conversation's updates with
    both ends in it. The explorer's stores share it, so a conversation is read once, not once
    per store and message written (the superseding rows keep their own detector, which also
    offers looser follow-up links)."""

    def find(self, messages: Sequence[Message]) -> list[Update]:
        ids = {m.id for m in messages}
        return [u for u in _updates(self._conversation(messages)) if u.old in ids and u.new in ids]

    __call__ = find

    def __init__(self, conversation: Sequence[Message] | None = None) -> None:
        self.conversation = None if conversation is None else tuple(conversation)

    def _conversation(self, messages: Sequence[Message]) -> tuple[Message, ...]:
        whole = self.conversation
        if whole is None or [m.id for m in whole[:len(messages)]] != [m.id for m in messages]:
            return tuple(messages)  # not a prefix of the conversation given: read it as it is
        return whole


@memo(maxsize=64)
def _updates(messages: tuple[Message, ...]) -> tuple[Update, ...]:
    return tuple(find_updates(list(messages)))


class _EveryBudget:
    """A memory read at every budget of a sweep in one replay of each conversation.

    A memory that stores as it goes (a buffer, the long-term store) replays a conversation from
    the start whenever the harness asks for an earlier position, as it does at each new budget;
    this preparation asks the memory (a fresh one per conversation) for the contexts at every
    budget at each position, in order, and the harness reads them back budget by budget."""

    def __init__(self, make: Callable[[], Any], budgets: Sequence[int]) -> None:
        self.make, self.budgets = make, tuple(budgets)
        self.name = str(getattr(make(), "name", "memory"))

    def prepare(self, conversation: Any) -> _BudgetContexts:
        memory = self.make()
        if isinstance(memory, MemoryService):  # the conversation's updates, found once
            memory.detector = KnownUpdates(conversation.messages)
        return _BudgetContexts(memory, conversation.messages, self.budgets)


class _BudgetContexts:
    def __init__(self, memory: Any, messages: Sequence[Any], budgets: tuple[int, ...]) -> None:
        self.memory, self.messages, self.budgets = memory, messages, budgets
        self.shared = is_query_independent(memory)  # one context per position serves every query
        self.built: dict[tuple[int, str], dict[int, Any]] = {}

    def build_context(self, position: int, query: str, budget: int) -> Any:
        key = (position, "" if self.shared else query)
        if key not in self.built:
            history = self.messages[:position]
            self.built[key] = {b: self.memory.build_context(history, query, b)
                               for b in self.budgets}
        return self.built[key][budget]


def _measure(make: Callable[[], Any], datasets: Sequence[EvalDataset],
             budgets: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    shares = np.zeros((len(datasets), len(budgets), len(OUTCOMES)))
    recall = np.zeros((len(datasets), len(budgets)))
    for g, data in enumerate(datasets):
        policy = make()
        if not callable(getattr(policy, "prepare", None)):
            policy = _EveryBudget(make, budgets)
        prepared: dict[str, Any] = {}  # prepared once per conversation, read at every budget
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
    makers = {**MEMORIES, **{f"long-term store: {name}": (lambda p=name: _store(p))
                             for name in UPDATE_POLICIES}}
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
    shares, recall = _measure(lambda: RuleStore(rule()), gap_datasets(seed, conversations, gaps),
                              budgets)
    return RuleSweep(shares, recall)


def stale_table(data: EvalDataset, budget: int = 1000
                ) -> tuple[list[dict[str, Any]], list[str]]:
    """Every policy ``memorykit tune`` compares at its defaults, then the long-term store under
    each update policy, on ``data`` at ``budget``: one row each (recall, the three staleness
    shares of the questions with a superseded statement, the share of all questions whose
    context marks the current statement as replaced, mean tokens), and the comparison's
    notes (the tokens' unit, the policies whose results coincide on every question)."""
    policies = {**FIXED_POLICIES, **{f"long-term store: {name}": _store(name)
                                     for name in UPDATE_POLICIES}}
    rows, results = [], {}
    for name, policy in policies.items():
        result = results[name] = evaluate(policy, data, budget)
        s = result.summary()
        rows.append({"policy": name, "recall": _round(s["recall"]),
                     "stale_only": _round(s["stale_only"]), "both": _round(s["both"]),
                     "both_unclear": _round(s["both_unclear"]),
                     "marked_current": _round(s["marked_current"]),
                     "tokens": int(round(s["tokens"]))})
    return rows, comparison_notes(results, policies, data, budget, "billed")


def _round(x: float | None) -> float | None:
    return None if x is None else round(float(x), 3)


def load_changing_facts() -> EvalDataset:
    """The bundled changing-facts set (``CHANGING_FACTS``), as ``memorykit tune`` reads it."""
    return load_chat_logs(*CHANGING_FACTS)


def change_example(data: EvalDataset, category: str = "corrected") -> None:
    """Print the first question of ``category`` with what it replaced: each superseded
    statement, then the current one (its evidence), each with its index in the conversation."""
    for conv in data:
        index = {m.id: (i, m) for i, m in enumerate(conv.messages)}
        for q in conv.questions:
            if q.category != category or not q.superseded_ids:
                continue
            print(f"conversation {conv.id}, question {q.id} ({q.category}, gap "
                  f"{q.metadata.get('gap')}): {q.question!r} -> {q.answer!r}")
            for label, ids in (("superseded", q.superseded_ids), ("current", q.evidence_ids)):
                for mid in ids:
                    i, m = index[mid]
                    print(f"  {label:>10} [{i}] {m.role}: {m.content}")
            return
    raise ValueError(f"no question of category {category!r} names a superseded statement; "
                     f"categories: {', '.join(data.categories())}")


def audit_rows(data: EvalDataset, conversation: int = 0) -> list[dict[str, Any]]:
    """The write-quality audit (``memorykit.facts.audit``) of one conversation of ``data``
    stored under every storage scope and every update policy: one row each."""
    from memorykit.facts.audit import audit_settings_grid

    messages = list(data.conversations[require_int("conversation", conversation, minimum=0,
                                                   maximum=len(data) - 1)].messages)
    return audit_settings_grid(messages, update_policies=UPDATE_POLICIES)


def audit_examples(data: EvalDataset, conversation: int = 0,
                   update_policy: str = "keep-all") -> list[dict[str, Any]]:
    """What the audit found in one conversation stored whole under ``update_policy``: each
    kind's count and a few examples (``StoreAudit.rows``)."""
    from memorykit.facts.audit import audit_store

    store = _store(update_policy)
    messages = data.conversations[require_int("conversation", conversation, minimum=0,
                                              maximum=len(data) - 1)].messages
    for m in messages:
        store.add("audit", m)
    store.flush("audit", reason="audit: every message written")
    return audit_store(store, "audit").rows()
