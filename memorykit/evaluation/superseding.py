"""Retrieval that knows a fact was replaced: the current statement in, the old one out or marked.

A plain retriever ranks "the review is on Tuesday" as high as "the review moved to Thursday":
both match "When is the review?". At a small budget it may keep the old one and miss the new
one, and the reader answers Tuesday (the harness's ``stale_only``). ``SupersedingRetrieval``
ranks with an inner ``HybridRetrieval`` and packs the context as it does, with one change: a
hit that a later message (before the question) supersedes is replaced by the *current*
statement, the end of its chain of updates (``memorykit.facts.detect``). With
``keep="dated"`` (the default) the old statement is kept, marked (a ``ContextItem`` of kind
``"superseded"`` whose text starts "[superseded by a later message]") and sent before the
current one, so a reader can tell which is which and still answer "what was it before?"; with
``keep="latest"`` it is left out. Both always stay within the budget: a current statement that
does not fit is not taken (and with ``keep="latest"`` the old one is not taken either).

Why "dated" by default: the detector is a set of rules, and when it takes a current statement
for a replaced one, "latest" drops evidence on its word. On a held-out set written apart from
the detector (``tests/fixtures/changing_facts_independent``) that cost "latest" recall below
the plain hybrid's; "dated" kept it (``python -m bench.changing_facts``, BENCHMARKS.md).

Updates are found once per conversation (``prepare``) and a question at ``position`` uses only
those whose messages both come before it, so ``prepare(conversation)`` answers exactly what
``build_context(history[:position], ...)`` answers: the detector reads each message only in the
light of the ones before it. Taught in ``notebooks/13_changing_facts.ipynb``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memorykit._validate import require_choice, require_str
from memorykit.context import Context, ContextItem, check_request, with_budget_note
from memorykit.evaluation.dataset import EvalConversation
from memorykit.evaluation.hybrid import HybridRetrieval, _HybridPrepared
from memorykit.facts.detect import RuleDetector, UpdateDetector
from memorykit.facts.statement import Update
from memorykit.messages import Message, MessageFactory, check_history

__all__ = ["KEEP", "MARKER", "SupersedingRetrieval"]

KEEP = ("latest", "dated")
"""What happens to a superseded hit: left out, or kept marked before the current statement."""
MARKER = "[superseded by a later message] "
"""What a kept superseded statement's text starts with (the original text follows verbatim)."""


class _Prepared:
    """One history: the inner retriever's preparation and the updates found in it."""

    def __init__(self, inner: _HybridPrepared, updates: Sequence[Update],
                 policy: SupersedingRetrieval) -> None:
        self.inner = inner
        index = {m.id: k for k, m in enumerate(inner.messages)}
        # (old index, new index) of each update, in the order found; unknown ids are a
        # detector's mistake and are left out rather than trusted
        self.links = [(index[u.old], index[u.new]) for u in updates
                      if u.old in index and u.new in index and index[u.old] < index[u.new]]
        self.current: dict[int, dict[int, int]] = {}  # by position: old index -> current index
        self.marked: dict[int, ContextItem] = {}
        self.factory = MessageFactory(chat_format=policy.inner.chat_format)

    def current_at(self, position: int) -> dict[int, int]:
        """Old message index -> the index of the latest message before ``position`` replacing
        it (its chain of updates followed)."""
        held = self.current.get(position)
        if held is None:
            step: dict[int, int] = {}
            for old, new in self.links:
                if new < position:
                    step[old] = new
            held = {}
            for old in step:
                at, seen = step[old], {old}
                while at in step and step[at] not in seen:
                    seen.add(at)
                    at = step[at]
                held[old] = at
            self.current[position] = held
        return held

    def marked_item(self, i: int) -> ContextItem:
        """Message ``i`` as a marked superseded item (its text verbatim after ``MARKER``)."""
        item = self.marked.get(i)
        if item is None:
            m = self.inner.messages[i]
            text = MARKER + m.content
            role = m.role if m.role in ("user", "assistant") else "system"
            billed = self.factory.message(role, text).billed_tokens
            item = self.marked[i] = ContextItem(role, text, billed, (m.id,), "superseded")
        return item


class _State:
    def __init__(self, policy: SupersedingRetrieval, prepared: _Prepared) -> None:
        self.policy = policy
        self.prepared = prepared

    def build_context(self, position: int, query: str, budget: int) -> Context:
        check_request(query, budget)
        if not 0 <= position <= len(self.prepared.inner.messages):
            raise ValueError(f"position must be in [0, {len(self.prepared.inner.messages)}], "
                             f"got {position!r}")
        return self.policy._build(self.prepared, position, query, budget)


class SupersedingRetrieval:
    """Hybrid retrieval whose superseded hits give way to the current statement.

    ``inner`` ranks (default ``HybridRetrieval()``, MiniLM and BM25); ``keep`` is ``"dated"``
    (the old statement kept, marked, before the current one) or ``"latest"`` (left out);
    ``detector`` finds the updates (default ``RuleDetector()``, LLM-free)."""

    query_independent = False

    def __init__(self, inner: HybridRetrieval | None = None, keep: str = "dated",
                 detector: UpdateDetector | None = None, *,
                 name: str = "superseding-retrieval") -> None:
        inner = inner if inner is not None else HybridRetrieval()
        if not isinstance(inner, HybridRetrieval):
            raise TypeError(f"inner must be a HybridRetrieval (its ranking is reused), got {inner!r}")
        detector = detector if detector is not None else RuleDetector()
        if not callable(getattr(detector, "find", None)):
            raise TypeError(f"detector must have a find(messages) method, got {detector!r}")
        self.inner = inner
        self.keep = require_choice("keep", keep, KEEP)
        self.detector = detector
        self.name = require_str("name", name, non_empty=True)

    def _prepare(self, messages: Sequence[Message], questions: Sequence[str] = ()) -> _State:
        inner = _HybridPrepared(messages, self.inner, questions)
        updates = self.detector.find(inner.messages)
        if not isinstance(updates, list) or not all(isinstance(u, Update) for u in updates):
            raise TypeError(f"detector.find must return a list of Update, got {updates!r}")
        return _State(self, _Prepared(inner, updates, self))

    def prepare(self, conversation: EvalConversation) -> Any:
        """The per-conversation fast path: ranking state and updates computed once."""
        if not isinstance(conversation, EvalConversation):
            raise TypeError(f"conversation must be an EvalConversation, got {conversation!r}")
        return self._prepare(conversation.messages, [q.question for q in conversation.questions])

    def build_context(self, history: Sequence[Message], query: str, budget: int) -> Context:
        check_request(query, budget)
        history = check_history(history)
        return self._prepare(history).build_context(len(history), query, budget)

    def _build(self, sp: _Prepared, position: int, query: str, budget: int) -> Context:
        inner, p = self.inner, sp.inner
        current = sp.current_at(position)
        system, room = p.system(position, budget - p.primer)
        chosen = set(system)
        marked: set[int] = set()
        opened: set[int] = set()  # sessions whose date header is already paid for

        def take(i: int, cost_of_item: int) -> bool:
            nonlocal room
            start = int(p.first[i])
            header = p.headers.get(start)
            cost = cost_of_item + (header.tokens if header and start not in opened else 0)
            if cost > room:
                return False
            room -= cost
            if header:
                opened.add(start)
            return True

        if position and room > 0:
            smallest = int(p.tokens[:position].min())
            for hit in inner._ranked(p, position, query).hits():
                if room < smallest:
                    break
                for i in inner._widen(p, hit, position):
                    if p.pinned[i]:
                        continue
                    now = current.get(i)
                    if now is None:  # nothing replaces it: taken as the inner policy would
                        if i not in chosen and i not in marked and take(i, int(p.tokens[i])):
                            chosen.add(i)
                        continue
                    # superseded: the current statement first, then (dated) the old one marked
                    if now not in chosen and take(now, int(p.tokens[now])):
                        chosen.add(now)
                    if self.keep == "dated" and now in chosen and i not in marked and \
                            i not in chosen and take(i, sp.marked_item(i).tokens):
                        marked.add(i)
        return self._context(sp, sorted(chosen | marked), marked, budget)

    def _context(self, sp: _Prepared, indices: list[int], marked: set[int], budget: int) -> Context:
        p = sp.inner
        items: list[ContextItem] = []
        opened: set[int] = set()
        for i in indices:
            start = int(p.first[i])
            header = p.headers.get(start)
            if header is not None and start not in opened:
                items.append(header)
                opened.add(start)
            items.append(sp.marked_item(i) if i in marked else p.items[i])
        return with_budget_note(Context(tuple(items), budget, self.name, p.chat_format))

    def __repr__(self) -> str:
        return f"SupersedingRetrieval({self.name!r}, keep={self.keep!r}, inner={self.inner!r})"
