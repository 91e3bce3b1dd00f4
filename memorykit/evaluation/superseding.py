"""Retrieval that knows a fact was replaced: the current statement in, the old one out or marked.

A plain retriever ranks "the review is on Tuesday" as high as "the review moved to Thursday":
both match "When is the review?". At a small budget it may keep the old one and miss the new
one, and the reader answers Tuesday (the harness's ``stale_only``). ``SupersedingRetrieval``
starts from exactly the context an inner ``HybridRetrieval`` sends, then reads its hits in rank
order and adds what follows each one up (``memorykit.facts.detect``):

* an **update** (the detector is sure: ``find_updates``) of one of the first ``TOP`` hits (unless
  the two are far apart in meaning, cosine below ``FAR``), or of a lower hit whose current
  statement is close to it in meaning (MiniLM cosine at least ``SIMILAR``): its
  current statement, the end of its chain of updates, is scored halfway between its own score
  and the old hit's (``INHERIT``), and the hits taken after the old one and scored below that
  make room for it, the last taken first (a question whose best hit was replaced is most
  likely about that fact; halfway, so a change to another fact the old message also stated
  does not push out what the question needs).
  With ``keep="dated"`` (the default) the old statement stays, marked (a ``ContextItem`` of
  kind ``"superseded"`` whose text starts "[superseded by a later message]") when room is left,
  and always sent before the current one; with ``keep="latest"`` it is left out.
* for one of the first ``TOP`` hits that no update links, a change **in other words**: of the
  later messages that changed some fact (the new end of any link the detector found), the
  closest in meaning to the hit (MiniLM cosine at least ``SIMILAR``, its very next message left
  out) is taken for the hit's fact changed in words the rules do not match ("put him back on
  the walker" after "the cane around the house"); it makes room as an update's current
  statement does, and the hit is never marked on its word.
* any other update of a lower hit, or a **follow-up** (``find_follow_ups``: maybe the same fact, one
  shared word, a weak cue, a new value said in words the rules do not know): the later
  statement is pulled in only with room left, or, when it is close in meaning to the hit
  (``SIMILAR``), making room as an update's current statement does; nothing is marked or
  dropped on its word. A false mark misleads the reader; a needless pull costs only tokens.

So nothing the hybrid sends is displaced except lower hits: by the current statement of a top
hit the detector is sure was replaced, by a later statement linked to any hit and close to it in
meaning, or by a top hit's change in other words; and the budget is never exceeded. Never
displaced: a lower hit that itself changed some fact (the new end of any link; swapping it for
the latest word on another fact of a higher hit cost recall on three of the eleven sets), nor one
said after the statement making room, maybe a newer word on its fact than the rules linked ("at
14" after "make it 15 kids"; since, no setting of ``tune``'s grid has left superseding retrieval
below the hybrid on the thirteen hand-written sets, where three did).

Updates are found once per conversation (``prepare``) and a question at ``position`` uses only
those whose messages both come before it, so ``prepare(conversation)`` answers exactly what
``build_context(history[:position], ...)`` answers: the detector reads each message only in the
light of the ones before it. ``python -m bench.changing_facts`` measures it. Taught in
``notebooks/13_changing_facts.ipynb``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from memorykit._validate import require_choice, require_str
from memorykit.context import Context, ContextItem, check_request
from memorykit.evaluation.dataset import EvalConversation
from memorykit.evaluation.hybrid import HybridRetrieval, _HybridPrepared, make_hybrid
from memorykit.facts.detect import RuleDetector, UpdateDetector
from memorykit.facts.statement import Update
from memorykit.messages import Message, MessageFactory, check_history

__all__ = ["KEEP", "MARKER", "SupersedingRetrieval", "make_superseding"]

KEEP = ("latest", "dated")
"""What happens to a superseded hit: left out, or kept marked before the current statement."""
TOP = 5
"""The current statement of a superseded hit among the first ``TOP`` the inner policy takes
may displace lower hits (unless far from it in meaning, ``FAR``), and a top hit no rule links
looks for its change in other words; a later hit's current statement displaces only when the
two are close in meaning (``SIMILAR``), else it takes only room left. (5, not 3: on the seven
hand-written development sets an old statement ranked 4th or 5th kept its current one out on
two of them and 3 -> 5 lost nothing on any; 8 adds a false mark on one.)"""
INHERIT = 0.5
"""How much of the score gap to its superseded hit a current statement inherits: it displaces
only hits scored below its own score plus that share of the gap (halfway: a statement about
another fact of the same message, its score low, displaces nothing the question needs)."""
SIMILAR = 0.5
"""Cosine (of the inner hybrid's embeddings, MiniLM by default) from which a later message that
changed some fact is taken for a top hit's fact changed in other words, when the rules link that
hit to nothing (0.4 decides as 0.5 on the development set; 0.6 misses one change); and from
which a link of any hit, sure or a follow-up, is backed by meaning (it may make room)."""
FAR = 0.3
"""Cosine below which a sure update displaces no lower hit (even for a top hit) and marks or
drops no hit: the rules matched its words, the meaning says another fact (on the development
sets it removes 4 false marks of a current statement and costs no recall; 0.4 costs recall)."""
MARKER = "[superseded by a later message] "
"""What a kept superseded statement's text starts with (the original text follows verbatim)."""


class _Prepared:
    """One history: the inner retriever's preparation and the links found in it."""

    def __init__(self, inner: _HybridPrepared, updates: Sequence[Update],
                 follow_ups: Sequence[Update], policy: SupersedingRetrieval) -> None:
        self.inner = inner
        index = {m.id: k for k, m in enumerate(inner.messages)}

        def pairs(links: Sequence[Update]) -> list[tuple[int, int]]:
            # unknown ids or a backward link are a detector's mistake: left out, not trusted
            return [(index[u.old], index[u.new]) for u in links
                    if u.old in index and u.new in index and index[u.old] < index[u.new]]

        self.updates = pairs(updates)  # sure: the old one may be marked or dropped
        self.follow_ups = self.updates + pairs(follow_ups)  # maybe: only ever pulled in
        # the messages that changed some fact (the new end of a link), in order
        self.changed = np.array(sorted({new for _, new in self.follow_ups}), dtype=np.int64)
        self.changed_any = frozenset(int(new) for new in self.changed)  # never displaced
        self.chains: dict[tuple[int, bool], dict[int, int]] = {}
        self.marked: dict[int, ContextItem] = {}
        self.factory = MessageFactory(chat_format=policy.inner.chat_format)

    def latest(self, position: int, sure: bool) -> dict[int, int]:
        """Old message index -> the latest message before ``position`` that replaces it
        (``sure``: by the updates alone) or may follow it up (by any link), chains followed."""
        held = self.chains.get((position, sure))
        if held is None:
            step: dict[int, int] = {}
            for old, new in sorted(self.updates if sure else self.follow_ups, key=lambda l: l[1]):
                if new < position:
                    step[old] = new
            held = {}
            for old in step:
                at, seen = step[old], {old}
                while at in step and step[at] not in seen:
                    seen.add(at)
                    at = step[at]
                held[old] = at
            self.chains[(position, sure)] = held
        return held

    def reworded(self, i: int, position: int) -> int | None:
        """Of the later messages before ``position`` that changed some fact (``i``'s next one,
        its echo, left out), the closest in meaning to message ``i`` when its cosine is at least
        ``SIMILAR``: most likely ``i``'s fact, changed in words the rules do not match."""
        later = self.changed[(self.changed >= i + 2) & (self.changed < position)]
        if not len(later):
            return None
        similar = self.inner.vectors[later] @ self.inner.vectors[i]  # unit vectors: cosines
        j = int(np.argmax(similar))
        return int(later[j]) if similar[j] >= SIMILAR else None

    def cosine(self, i: int, j: int) -> float:
        """How close messages ``i`` and ``j`` are in meaning (their embeddings' cosine)."""
        return float(self.inner.vectors[i] @ self.inner.vectors[j])

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
    """Hybrid retrieval that brings in the current statement of its superseded hits.

    ``inner`` ranks (default ``HybridRetrieval()``, MiniLM and BM25); ``keep`` is ``"dated"``
    (the old statement kept, marked when room is left, before the current one) or ``"latest"``
    (left out); ``detector`` finds the updates (default ``RuleDetector()``, LLM-free; its
    ``follow_ups(messages)``, when it has one, gives links only ever pulled in)."""

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
        # a detector may also offer looser links (``RuleDetector.follow_ups``): pulled in, never
        # marked
        more = getattr(self.detector, "follow_ups", None)
        follow_ups = more(inner.messages) if callable(more) else []
        if not isinstance(follow_ups, list) or not all(isinstance(u, Update) for u in follow_ups):
            raise TypeError(f"detector.follow_ups must return a list of Update, got {follow_ups!r}")
        return _State(self, _Prepared(inner, updates, follow_ups, self))

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
        current, follow = sp.latest(position, sure=True), sp.latest(position, sure=False)
        system, room = p.system(position, budget - p.primer)
        chosen = set(system)
        taken: list[int] = []  # the hits in the order taken (the ranking's)
        marked: set[int] = set()
        dropped: set[int] = set()  # superseded hits left out: never taken again
        opened: set[int] = set()  # sessions whose date header is already paid for

        def cost(i: int, tokens: int) -> int:
            """``tokens``, plus the date header of ``i``'s session when not yet paid for."""
            header = p.headers.get(int(p.first[i]))
            return tokens + (header.tokens if header and int(p.first[i]) not in opened else 0)

        def take(i: int) -> bool:
            nonlocal room
            if cost(i, int(p.tokens[i])) > room:
                return False
            room -= cost(i, int(p.tokens[i]))
            chosen.add(i)
            if p.headers.get(int(p.first[i])):
                opened.add(int(p.first[i]))
            return True

        def release(i: int) -> None:
            nonlocal room
            room += sp.marked_item(i).tokens if i in marked else int(p.tokens[i])
            chosen.discard(i)
            marked.discard(i)
            dropped.add(i)  # (its session's header stays paid for: never over the budget)

        def fill() -> None:
            """The inner policy's own packing: hits in rank order, widened, while they fit."""
            if not position or room <= 0:
                return
            smallest = int(p.tokens[:position].min())
            for hit in inner._ranked(p, position, query).hits():
                if room < smallest:
                    break
                for i in inner._widen(p, hit, position):
                    if i not in chosen and i not in dropped and not p.pinned[i] and take(i):
                        taken.append(i)

        def make_room(k: int, j: int) -> bool:
            """Room for message ``j``, the later statement of the ``k``-th hit, by leaving out the
            hits taken after it, said before ``j``, scored below ``j``'s plus ``INHERIT`` of the
            gap to the hit's and that changed no fact, last taken first (none if not enough)."""
            tokens = cost(j, int(p.tokens[j]))
            rank = score[j] + INHERIT * (score[taken[k]] - score[j])
            if room >= tokens:
                return True
            later = [h for h in taken[k + 1:] if h in chosen and score[h] < rank and
                     h < j and h not in sp.changed_any][::-1]
            freed = sum(sp.marked_item(h).tokens if h in marked else int(p.tokens[h])
                        for h in later)
            if room + freed < tokens:
                return False
            for h in later:
                if room >= tokens:
                    break
                release(h)
            return True

        # First the context the inner policy sends, untouched; then what follows each hit up
        # (the module docstring says which displaces what)
        fill()
        score = inner._ranked(p, position, query).score if position else np.zeros(0)
        for k, i in enumerate(taken):
            sure = current.get(i)
            if i not in chosen:
                continue
            if sure is not None and sure not in chosen and (
                    k < TOP and sp.cosine(i, sure) >= FAR or sp.cosine(i, sure) >= SIMILAR):
                if self.keep == "latest":
                    release(i)
                if make_room(k, sure):
                    take(sure)
                elif self.keep == "latest":
                    dropped.discard(i)
                    take(i)
            if sure is None and k < TOP:  # a top hit no update links: changed in other words?
                j = sp.reworded(i, position)
                j = current.get(j, j) if j is not None else None
                if j is not None and j not in chosen and make_room(k, j):
                    take(j)
            now = follow.get(i)
            if now is not None and now not in chosen:
                if sp.cosine(i, now) >= SIMILAR:  # a follow-up the meaning backs makes room
                    make_room(k, now)
                take(now)
            if sure in chosen and i in chosen and i not in marked and sp.cosine(i, sure) >= FAR:
                extra = sp.marked_item(i).tokens - int(p.tokens[i])
                if self.keep == "latest":
                    release(i)
                elif extra <= room:
                    room -= extra
                    marked.add(i)
        return self.inner._context(sp.inner, sorted(chosen), budget,
                                   {i: sp.marked_item(i) for i in marked}, self.name)

    def __repr__(self) -> str:
        return f"SupersedingRetrieval({self.name!r}, keep={self.keep!r}, inner={self.inner!r})"


_SHARED = RuleDetector()  # one per process: a sweep's settings share its reading of each history


def make_superseding(lexical_weight: float = 0.25, neighbours: int = 0) -> SupersedingRetrieval:
    """A ``SupersedingRetrieval`` around ``make_hybrid(lexical_weight, neighbours)`` (picklable
    factory for sweeps: ``tune`` tunes it over the hybrid's grid, so the two are compared
    setting for setting; the rules' links do not depend on the setting and are found once)."""
    return SupersedingRetrieval(make_hybrid(lexical_weight, neighbours), detector=_SHARED)
