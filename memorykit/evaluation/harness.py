"""Evidence recall at a token budget: does the context a memory builds hold the answer?

For every question, the harness asks a ``ContextPolicy`` for the context it
would send (``build_context(history, question, budget)``, history being the
messages that exist when the question is asked) and measures:

* **recall**: the share of the question's evidence messages the context
  covers: cited by an item's provenance (``sources``) *and* still said by that
  item's text (a summary that lost a fact is not credited with its turn);
* **strict**: 1 when every evidence message is covered, else 0;
* **answer_recall**: 1 when the context's text contains the reference answer
  (normalised), None for a question without one;
* **tokens**: the context's tokens, billed (``Context.tokens``) or content
  (``HarnessSettings.units``);
* **seconds**: the time the policy took for it;
* for a question naming superseded messages (a fact that changed): **stale_only**, **both**
  and **both_unclear** (``scoring.staleness``), averaged over those questions.

A context over its budget scores 0 on all three and is flagged ``over_budget``.
The rules, precisely: ``memorykit.evaluation.scoring``.

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

import hashlib
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Protocol, runtime_checkable

from memorykit._validate import require_bool, require_choice, require_fraction, require_int
from memorykit.context import BufferPolicy, Context, ContextPolicy
from memorykit.evaluation.dataset import EvalConversation, EvalDataset, as_dataset
from memorykit.evaluation.scoring import (UNITS, answer_in, context_tokens, covered_evidence,
                                          searchable_text, staleness, units_note)
from memorykit.evaluation.table import Table
from memorykit.messages import Message

__all__ = [
    "EvalResult",
    "HarnessSettings",
    "PreparablePolicy",
    "PreparedConversation",
    "QuestionResult",
    "coincidence_note",
    "comparison_notes",
    "coinciding_policies",
    "compare_policies",
    "evaluate",
    "is_query_independent",
    "stale_shares",
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
    units: str = "billed"
    """Tokens reported and checked against the budget: "billed" (content, chat framing and the
    reply primer: what the API charges) or "content" (the items' text alone, as published
    LoCoMo figures count). Policies pack their budget in billed tokens either way."""
    min_overlap: float = 0.5
    """Share of an evidence message's salient terms that an item citing it without quoting it
    (a summary, an episode, a rule) must still contain to be credited with it, in (0, 1]."""

    def __post_init__(self) -> None:
        require_choice("units", self.units, UNITS)
        require_fraction("min_overlap", self.min_overlap)
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
    answer_recall: float | None
    """1.0 when the context's text contains the reference answer (normalised), else 0.0;
    None when the question has no reference answer."""
    tokens: int
    """Tokens of the context in the harness's units (billed: reply primer included)."""
    budget: int
    over_budget: bool
    """tokens > budget: then recall, strict and answer_recall are 0."""
    seconds: float
    """Time the policy took to build this context (shared builds split evenly)."""
    n_superseded: int = 0
    """Superseded messages the question names (``EvalQuestion.superseded_ids``)."""
    stale_only: bool | None = None
    """The context holds a superseded message and none of the evidence (``scoring.staleness``);
    None when the question names no superseded message."""
    both: bool | None = None
    """It holds a superseded message and some evidence; None as above."""
    both_unclear: bool | None = None
    """``both``, and nothing tells the reader which is current; None as above."""
    marked_current: bool = False
    """An item holding the evidence is marked superseded: the context calls the current
    statement replaced (any question)."""


def stale_shares(rows: Sequence[QuestionResult]) -> dict[str, Any]:
    """``changed_questions`` (those naming superseded messages) and, as shares of them,
    ``stale_only``, ``both`` and ``both_unclear``; ``marked_current`` as a share of all
    ``rows``; nothing when no question names a superseded message (data without changed facts
    keeps its tables as they were)."""
    changed = [q for q in rows if q.n_superseded]
    if not changed:
        return {}
    return {"changed_questions": len(changed),
            **{k: _mean([float(getattr(q, k)) for q in changed])
               for k in ("stale_only", "both", "both_unclear")},
            "marked_current": _mean([float(q.marked_current) for q in rows])}


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
                 separate: tuple[str, ...] = ("adversarial",), units: str = "billed") -> None:
        self.policy = policy
        self.budget = budget
        self.questions = tuple(questions)
        self.prepare_seconds = prepare_seconds
        """Time spent in ``prepare`` (once per conversation)."""
        self.wall_seconds = wall_seconds
        """Total time of the evaluation, preparation and bookkeeping included."""
        self.separate = tuple(separate)
        self.units = require_choice("units", units, UNITS)
        """Whether ``tokens`` and the budget are billed or content tokens."""

    def __len__(self) -> int:
        return len(self.questions)

    def fingerprint(self) -> str:
        """A digest of every question's outcome (its id, the evidence covered, the answer found,
        the tokens): two results with the same fingerprint coincide on every question. A sweep
        keeps it instead of the rows, so coincidences are found without evaluating again."""
        outcomes = tuple((q.question_id, q.n_covered, q.answer_recall, q.tokens)
                         + ((q.stale_only, q.both, q.both_unclear) if q.n_superseded else ())
                         + ((True,) if q.marked_current else ())
                         for q in self.questions)
        return hashlib.blake2b(repr(outcomes).encode(), digest_size=16).hexdigest()

    def to_records(self) -> list[dict[str, Any]]:
        """One row per question, with the policy name."""
        return [{"policy": self.policy, **asdict(q)} for q in self.questions]

    def table(self) -> Table:
        return Table(self.to_records(), notes=(units_note(self.units),))

    def _stats(self, rows: Sequence[QuestionResult]) -> dict[str, Any]:
        return {
            "questions": len(rows),
            "recall": _mean([q.recall for q in rows]),
            "strict_recall": _mean([q.strict for q in rows]),
            "answer_recall": _mean([q.answer_recall for q in rows if q.answer_recall is not None]),
            "tokens": _mean([q.tokens for q in rows]),
            "seconds_per_question": _mean([q.seconds for q in rows]),
            **stale_shares(rows),
        }

    def summary(self) -> dict[str, Any]:
        """Overall figures (separated categories excluded), then each separated category's recall.

        ``tokens`` is the mean context size over the overall questions;
        ``over_budget`` the share of all questions whose context exceeded the budget (they
        score 0); ``units`` says whether tokens are billed or content tokens;
        ``wall_seconds`` the whole evaluation, preparation included.
        """
        main = [q for q in self.questions if q.category not in self.separate]
        row: dict[str, Any] = {"policy": self.policy, "budget": self.budget, "units": self.units,
                               **self._stats(main)}
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
            ({"policy": self.policy, "budget": self.budget, "category": cat,
              "separate": cat in self.separate, **self._stats(rows)}
             for cat, rows in order.items()),
            notes=(units_note(self.units),))

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
    prepared: dict[str, PreparedConversation] | None = None,
) -> EvalResult:
    """Evidence recall of ``policy`` at ``budget`` tokens on every question of ``dataset``.

    ``dataset`` is an ``EvalDataset``, one ``EvalConversation`` or a sequence of them.
    ``prepared`` (a dict, by conversation id) keeps what ``policy.prepare`` returned and is read
    back by the next call given the same dict: a sweep evaluating one policy object at several
    budgets prepares each conversation once (a prepared state takes the budget per question).
    Pass it only with the same policy object and dataset.
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
            score = _Scorer(conv, budget, settings)
            if use_prepare:
                t0 = clock()
                state = prepared.get(conv.id) if prepared is not None else None
                if state is None:
                    state = policy.prepare(conv)  # type: ignore[attr-defined]
                    if prepared is not None:
                        prepared[conv.id] = state
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
                        per_question[i] = score(conv.questions[i], position, ctx, each)
                else:
                    for i in members:
                        q = conv.questions[i]
                        t0 = clock()
                        ctx = _checked(build(position, q.question), name)
                        per_question[i] = score(q, position, ctx, clock() - t0)
                if bar is not None:
                    bar.update(len(members))
            results.extend(r for r in per_question if r is not None)
    finally:
        if bar is not None:
            bar.close()
    return EvalResult(name, budget, results, prepare_seconds, time.perf_counter() - started,
                      settings.separate, settings.units)


def _checked(ctx: Any, name: str) -> Context:
    if not isinstance(ctx, Context):
        raise TypeError(f"policy {name!r} returned {type(ctx).__name__}, expected a Context")
    return ctx


class _Scorer:
    """Scores one conversation's contexts (``memorykit.evaluation.scoring``'s rules), keeping
    each message's salient terms across its questions."""

    def __init__(self, conv: EvalConversation, budget: int, settings: HarnessSettings) -> None:
        self.conv = conv
        self.budget = budget
        self.units = settings.units
        self.min_overlap = settings.min_overlap
        self.messages: dict[str, Message] = {m.id: m for m in conv.messages}
        self.terms: dict[str, frozenset[str]] = {}
        self.normalized: dict[str, str] = {}
        """Each item text's normalised form, by content (``scoring.searchable_text``)."""
        self.searchable: tuple[Context, str] | None = None
        """The last context scored and its normalised text: a shared context is read once."""

    def __call__(self, q: Any, position: int, ctx: Context, seconds: float) -> QuestionResult:
        tokens = context_tokens(ctx, self.units)
        n = len(q.evidence_ids)
        over = tokens > self.budget
        stale = (False, False, False, False)
        if over:
            covered, answered = 0, 0.0
        else:
            stale = staleness(ctx, q.evidence_ids, q.superseded_ids, self.messages,
                              self.min_overlap, self.terms)
            covered = len(covered_evidence(ctx, q.evidence_ids, self.messages, self.min_overlap,
                                           self.terms))
            answered = 0.0
            if q.answer is not None:
                if self.searchable is None or self.searchable[0] is not ctx:
                    self.searchable = (ctx, searchable_text(ctx, self.normalized))
                answered = float(answer_in(self.searchable[1], q.answer))
        return QuestionResult(self.conv.id, q.id, q.category, position, n, covered, covered / n,
                              1.0 if covered == n else 0.0,
                              None if q.answer is None else answered, tokens, self.budget, over,
                              seconds, len(q.superseded_ids),
                              *(stale[:3] if q.superseded_ids else (None, None, None)), stale[3])


def _flat_signals(data: EvalDataset, signals: Sequence[str]) -> list[tuple[str, str]]:
    """Of the message fields ``signals``, those holding one value throughout ``data``, each
    with the fact that says so."""
    flat = []
    for signal in dict.fromkeys(signals):
        values = {getattr(m, signal, None) for conv in data for m in conv.messages}
        if len(values) == 1:
            flat.append((signal, f"every message's {signal} is {values.pop()!r}"))
    return flat


def coincidence_note(group: Sequence[str], policies: Mapping[str, Any], data: EvalDataset,
                     where: str) -> str:
    """The note naming policies whose results coincide (``group``) ``where`` (at which
    budgets), and each signal their rules weigh (a policy's ``signals``, looked up in
    ``policies`` by label) that the data holds flat, with the fact that says so."""
    note = f"{', '.join(group)} give identical results on all {data.n_questions} questions {where}"
    weighing: dict[str, list[str]] = {}
    for label in group:
        for signal in getattr(policies.get(label), "signals", ()):
            weighing.setdefault(signal, []).append(label)
    flat = _flat_signals(data, list(weighing))
    for signal, fact in flat:
        note += (f"; the data carries no {signal} signal ({fact}), so {', '.join(weighing[signal])} "
                 "fall back to arrival order")
    return note


def coinciding_policies(results: Mapping[str, EvalResult | str]) -> list[tuple[str, ...]]:
    """Groups (two or more labels, in the given order) of results identical on every question:
    the same evidence covered, the same answer found, the same tokens. A value is an
    ``EvalResult`` or its ``fingerprint()`` (what a sweep keeps)."""
    groups: dict[str, list[str]] = {}
    for label, result in results.items():
        key = result.fingerprint() if isinstance(result, EvalResult) else result
        groups.setdefault(key, []).append(label)
    return [tuple(g) for g in groups.values() if len(g) > 1]


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
    mapping from the name to show to the policy. Both tables' ``notes`` say whether tokens
    are billed or content tokens and name the policies whose results coincide on every
    question, with the signal the data lacks to tell them apart when one is flat.
    """
    if isinstance(policies, Mapping):
        items = list(policies.items())
    elif isinstance(policies, Sequence) and not isinstance(policies, str):
        items = [(str(getattr(p, "name", type(p).__name__)), p) for p in policies]
    else:
        raise TypeError(f"policies must be a mapping or a sequence of policies, got {policies!r}")
    if not items:
        raise ValueError("policies must name at least one policy, got none")
    data = as_dataset(dataset)
    summaries, categories = [], []
    results: dict[str, EvalResult] = {}
    for label, policy in items:
        result = results[label] = evaluate(policy, data, budget, settings=settings,
                                           progress=progress)
        summaries.append({**result.summary(), "policy": label})
        categories.extend({**row, "policy": label} for row in result.by_category())
    notes = comparison_notes(results, dict(items), data, budget,
                             (settings or HarnessSettings()).units)
    return Table(summaries, notes=notes), Table(categories, notes=notes)


def comparison_notes(results: Mapping[str, EvalResult | str], policies: Mapping[str, Any],
                     data: EvalDataset, budget: int, units: str) -> list[str]:
    """The notes of a comparison at ``budget``: the tokens' unit, then each group of policies
    whose results (or fingerprints, as a sweep keeps them) coincide on every question, with
    the signal the data lacks to tell them apart (``coincidence_note``)."""
    require_int("budget", budget, minimum=1)
    return [units_note(units), *(coincidence_note(group, policies, data, f"at {budget} tokens")
                                 for group in coinciding_policies(results))]
