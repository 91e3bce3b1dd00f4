"""Evidence recall at a token budget: does the context a memory builds hold the answer?

For every question, the harness asks a ``ContextPolicy`` for the context it
would send (``build_context(history, question, budget)``, history being the
messages that exist when the question is asked) and measures:

* **recall**: the share of the question's evidence messages the context
  covers, directly or through an item whose provenance (``sources``) cites
  them (a summary, an episode, a rule...);
* **strict**: 1 when every evidence message is covered, else 0;
* **tokens**: the context's billed tokens (``Context.tokens``);
* **seconds**: the time the policy took for it.

``EvalResult`` keeps one row per question; ``summary()`` averages them and
``by_category()`` breaks them down. Categories listed in
``HarnessSettings.separate`` (LoCoMo's ``adversarial`` by default) are
reported on their own and left out of the overall figures.

Two ways to be fast without changing what is measured:

* a policy may implement ``prepare(conversation)`` (``PreparablePolicy``),
  returning a per-conversation state whose ``build_context(position, query,
  budget)`` reuses work (token counts, an index) across questions; the harness
  uses it when present and falls back to plain ``build_context`` otherwise;
* a policy whose context does not depend on the query (a ``BufferPolicy``,
  or any policy with ``query_independent = True``) is asked once per distinct
  question position, and its time is shared among those questions.

Taught in ``notebooks/12_parameter_tuning.ipynb``.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Protocol, runtime_checkable

from memorykit._validate import require_bool, require_int
from memorykit.context import BufferPolicy, Context, ContextPolicy
from memorykit.evaluation.dataset import EvalConversation, EvalDataset, as_dataset
from memorykit.evaluation.table import Table

__all__ = [
    "EvalResult",
    "HarnessSettings",
    "PreparablePolicy",
    "PreparedConversation",
    "QuestionResult",
    "compare_policies",
    "evaluate",
    "is_query_independent",
]


class PreparedConversation(Protocol):
    """A policy's per-conversation state: contexts for questions asked at any position."""

    def build_context(self, position: int, query: str, budget: int) -> Context: ...


@runtime_checkable
class PreparablePolicy(Protocol):
    """Optional fast path: work done once per conversation, reused for each question.

    ``prepare(conversation).build_context(position, query, budget)`` must return
    what ``build_context(conversation.messages[:position], query, budget)`` would.
    """

    name: str

    def prepare(self, conversation: EvalConversation) -> PreparedConversation: ...


@dataclass(frozen=True)
class HarnessSettings:
    """How the harness runs and reports."""

    separate: tuple[str, ...] = ("adversarial",)
    """Categories reported on their own and left out of the overall recall."""
    use_prepare: bool = True
    """Use a policy's ``prepare`` fast path when it has one (False: always plain build_context)."""
    reuse_query_independent: bool = True
    """Ask a query-independent policy once per question position instead of once per question."""

    def __post_init__(self) -> None:
        require_bool("use_prepare", self.use_prepare)
        require_bool("reuse_query_independent", self.reuse_query_independent)
        if isinstance(self.separate, str) or not all(isinstance(c, str) for c in self.separate):
            raise TypeError(f"separate must be a tuple of category names, got {self.separate!r}")
        object.__setattr__(self, "separate", tuple(self.separate))


@dataclass(frozen=True, slots=True)
class QuestionResult:
    """What one question's context covered, and what it cost."""

    conversation_id: str
    question_id: str
    category: str
    position: int
    """Messages in the history when it was asked."""
    n_evidence: int
    n_covered: int
    recall: float
    """n_covered / n_evidence."""
    strict: float
    """1.0 when every evidence message is covered, else 0.0."""
    tokens: int
    """Billed tokens of the context, reply primer included."""
    budget: int
    over_budget: bool
    seconds: float
    """Time the policy took to build this context (shared builds split evenly)."""


def is_query_independent(policy: Any) -> bool:
    """True when the policy says its context ignores the query (or is a BufferPolicy)."""
    flag = getattr(policy, "query_independent", None)
    if isinstance(flag, bool):
        return flag
    return isinstance(policy, BufferPolicy)


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


class EvalResult:
    """Per-question results of one policy at one budget, and their summaries."""

    def __init__(self, policy: str, budget: int, questions: Sequence[QuestionResult],
                 prepare_seconds: float = 0.0, wall_seconds: float = 0.0,
                 separate: tuple[str, ...] = ("adversarial",)) -> None:
        self.policy = policy
        self.budget = budget
        self.questions = tuple(questions)
        self.prepare_seconds = prepare_seconds
        """Time spent in ``prepare`` (once per conversation)."""
        self.wall_seconds = wall_seconds
        """Total time of the evaluation, preparation and bookkeeping included."""
        self.separate = tuple(separate)

    def __len__(self) -> int:
        return len(self.questions)

    def to_records(self) -> list[dict[str, Any]]:
        """One row per question, with the policy name."""
        return [{"policy": self.policy, **asdict(q)} for q in self.questions]

    def table(self) -> Table:
        return Table(self.to_records())

    def _stats(self, rows: Sequence[QuestionResult]) -> dict[str, Any]:
        return {
            "questions": len(rows),
            "recall": _mean([q.recall for q in rows]),
            "strict_recall": _mean([q.strict for q in rows]),
            "tokens": _mean([q.tokens for q in rows]),
            "seconds_per_question": _mean([q.seconds for q in rows]),
        }

    def summary(self) -> dict[str, Any]:
        """Overall figures (separated categories excluded), then each separated category's recall.

        ``tokens`` is the mean context size over the overall questions;
        ``over_budget`` the share of all questions whose context exceeded the budget;
        ``wall_seconds`` the whole evaluation, preparation included.
        """
        main = [q for q in self.questions if q.category not in self.separate]
        row: dict[str, Any] = {"policy": self.policy, "budget": self.budget, **self._stats(main)}
        row["max_tokens"] = max((q.tokens for q in self.questions), default=None)
        row["over_budget"] = _mean([float(q.over_budget) for q in self.questions])
        for category in self.separate:
            rows = [q for q in self.questions if q.category == category]
            if rows:
                row[f"{category}_questions"] = len(rows)
                row[f"{category}_recall"] = _mean([q.recall for q in rows])
        row["prepare_seconds"] = self.prepare_seconds
        row["wall_seconds"] = self.wall_seconds
        return row

    def recall_by_category(self) -> dict[str, float]:
        """Mean recall per category, in order of first appearance (separated ones included)."""
        return {r["category"]: r["recall"] for r in self.by_category()}

    def by_category(self) -> Table:
        """One row per category: questions, recall, strict recall, tokens, and whether separated."""
        order: dict[str, list[QuestionResult]] = {}
        for q in self.questions:
            order.setdefault(q.category, []).append(q)
        return Table(
            {"policy": self.policy, "budget": self.budget, "category": cat,
             "separate": cat in self.separate, **self._stats(rows)}
            for cat, rows in order.items()
        )

    def __repr__(self) -> str:
        s = self.summary()
        recall = "n/a" if s["recall"] is None else f"{s['recall']:.3f}"
        return f"EvalResult({self.policy!r}, budget={self.budget}, questions={len(self)}, recall={recall})"


def _check_policy(policy: Any) -> None:
    if not callable(getattr(policy, "build_context", None)) and not callable(
        getattr(policy, "prepare", None)
    ):
        raise TypeError(f"policy must be a ContextPolicy (build_context), got {policy!r}")


def _progress_bar(total: int, enabled: bool, desc: str) -> Any:
    if not require_bool("progress", enabled):
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, leave=False)


def evaluate(
    policy: ContextPolicy,
    dataset: Any,
    budget: int,
    *,
    settings: HarnessSettings | None = None,
    progress: bool = False,
) -> EvalResult:
    """Evidence recall of ``policy`` at ``budget`` tokens on every question of ``dataset``.

    ``dataset`` is an ``EvalDataset``, one ``EvalConversation`` or a sequence of them.
    """
    _check_policy(policy)
    data: EvalDataset = as_dataset(dataset)
    # token counts are summed in numpy's int64: a budget past it is a typo, not a budget
    budget = require_int("budget", budget, minimum=1, maximum=sys.maxsize)
    settings = settings if settings is not None else HarnessSettings()
    if not isinstance(settings, HarnessSettings):
        raise TypeError(f"settings must be a HarnessSettings, got {settings!r}")
    name = str(getattr(policy, "name", type(policy).__name__))
    shared = settings.reuse_query_independent and is_query_independent(policy)
    use_prepare = settings.use_prepare and callable(getattr(policy, "prepare", None))
    bar = _progress_bar(data.n_questions, progress, name)
    started = time.perf_counter()
    prepare_seconds = 0.0
    results: list[QuestionResult] = []
    clock = time.perf_counter
    try:
        for conv in data:
            if use_prepare:
                t0 = clock()
                state = policy.prepare(conv)  # type: ignore[attr-defined]
                prepare_seconds += clock() - t0
                build: Callable[[int, str], Context] = (
                    lambda pos, q, _s=state: _s.build_context(pos, q, budget))
            else:
                messages = conv.messages
                build = lambda pos, q: policy.build_context(messages[:pos], q, budget)  # noqa: E731
            groups: dict[int, list[int]] = {}
            for i, q in enumerate(conv.questions):
                groups.setdefault(conv.position(q), []).append(i)
            per_question: list[QuestionResult | None] = [None] * len(conv.questions)
            for position in sorted(groups):
                members = groups[position]
                if shared:
                    t0 = clock()
                    ctx = _checked(build(position, conv.questions[members[0]].question), name)
                    each = (clock() - t0) / len(members)
                    for i in members:
                        per_question[i] = _score(conv, conv.questions[i], position, ctx, budget, each)
                else:
                    for i in members:
                        q = conv.questions[i]
                        t0 = clock()
                        ctx = _checked(build(position, q.question), name)
                        per_question[i] = _score(conv, q, position, ctx, budget, clock() - t0)
                if bar is not None:
                    bar.update(len(members))
            results.extend(r for r in per_question if r is not None)
    finally:
        if bar is not None:
            bar.close()
    return EvalResult(name, budget, results, prepare_seconds, time.perf_counter() - started,
                      settings.separate)


def _checked(ctx: Any, name: str) -> Context:
    if not isinstance(ctx, Context):
        raise TypeError(f"policy {name!r} returned {type(ctx).__name__}, expected a Context")
    return ctx


def _score(conv: EvalConversation, q: Any, position: int, ctx: Context, budget: int,
           seconds: float) -> QuestionResult:
    covered_ids = ctx.covered_ids()
    covered = sum(1 for e in q.evidence_ids if e in covered_ids)
    n = len(q.evidence_ids)
    tokens = ctx.tokens
    return QuestionResult(conv.id, q.id, q.category, position, n, covered, covered / n,
                          1.0 if covered == n else 0.0, tokens, budget, tokens > budget, seconds)


def compare_policies(
    policies: Mapping[str, ContextPolicy] | Sequence[ContextPolicy],
    dataset: Any,
    budget: int,
    *,
    settings: HarnessSettings | None = None,
    progress: bool = False,
) -> tuple[Table, Table]:
    """Every policy on the same data and budget: (one summary row each, one row per category).

    ``policies`` is a sequence of policies (named by their ``name``) or a
    mapping from the name to show to the policy.
    """
    if isinstance(policies, Mapping):
        items = list(policies.items())
    elif isinstance(policies, Sequence) and not isinstance(policies, str):
        items = [(str(getattr(p, "name", type(p).__name__)), p) for p in policies]
    else:
        raise TypeError(f"policies must be a mapping or a sequence of policies, got {policies!r}")
    if not items:
        raise ValueError("policies must name at least one policy, got none")
    summaries, categories = [], []
    for label, policy in items:
        result = evaluate(policy, dataset, budget, settings=settings, progress=progress)
        summaries.append({**result.summary(), "policy": label})
        categories.extend({**row, "policy": label} for row in result.by_category())
    return Table(summaries), Table(categories)
