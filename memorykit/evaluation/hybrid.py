"""Hybrid retrieval: stemmed BM25 and MiniLM cosine together, hits with their session neighbours.

``HybridRetrieval`` scores every message of the history for the question as
``lexical_weight * BM25 / max BM25 + (1 - lexical_weight) * cosine``: BM25 finds the rare
name or number a question repeats, the sentence embedding finds the paraphrase BM25 misses
("adopt" against "a forever home"). These steps then turn ranked turns into readable
context:

* smoothing: each message adds ``smoothing`` times the mean score of its same-session
  neighbours, so a turn whose neighbours match (the answer to a matching question) rises;
* neighbours: each hit brings up to ``neighbours`` same-session messages on each side (nearest
  first) while they fit, because an answer often sits in the reply to the matching turn;
* session keys (LongMemEval's session-level keys beside turn-level ones): each session is
  also scored as one document and a share of its score added to its turns, so the turns of a
  session about the question rise together, their words apart;
* speaker focus: when the question names exactly one speaker of the conversation (read from
  ``metadata["speaker"]``), the other speakers' turns count for less: a question about a person
  is answered by what that person said (96% of LoCoMo's evidence for such questions);
* diversity (maximal marginal relevance): a turn much like one already taken gives way, so
  the budget holds more distinct evidence (list questions, evidence over many sessions);

With ``dates`` each session present in the context is introduced by a header item carrying its
day ("8 May 2023"; "Session 3" for a session without a date), so a "When did...?" question can
be answered from the context and not only "covered"; headers cost tokens and count against
the budget. Sessions are read from each message's ``metadata["session"]`` and dates from
``created_at`` (the LoCoMo loader stamps both), so the plain path and the per-conversation fast
path (``prepare``: every message and every question of a conversation embedded once, in one
batch) agree.
Taught in ``notebooks/12_parameter_tuning.ipynb``.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

import numpy as np

from memorykit._validate import (require_bool, require_int, require_non_negative,
                                 require_str, require_unit_interval)
from memorykit.context import Context, ContextItem, check_request, with_budget_note
from memorykit.embeddings import Embedder
from memorykit.evaluation.baselines import BM25Retrieval, _Baseline, _BM25Prepared, _State
from memorykit.evaluation.dataset import EvalConversation
from memorykit.messages import Message, MessageFactory
from memorykit.tokens import ChatFormat

__all__ = ["HybridRetrieval", "HybridSettings", "make_hybrid", "shared_minilm"]


@dataclass(frozen=True)
class HybridSettings:
    """How ``HybridRetrieval`` weighs, smooths and widens its hits."""

    lexical_weight: float = 0.25
    """Weight of the max-normalised BM25 score; the cosine gets ``1 - lexical_weight``
    (1: BM25 alone, 0: MiniLM alone). 0.25, not 0.5: better on both data sets of
    ``bench/retrieval_ideas.py`` (BENCHMARKS.md, issue 26)."""
    smoothing: float = 0.5
    """Share of the mean score of a message's same-session neighbours added to its own, in
    [0, 1] (0: none; above 1 the neighbours would outweigh the message itself)."""
    neighbours: int = 0
    """Same-session messages taken on each side of a hit, nearest first, when they fit (0, not
    1, since issue 26: a neighbour costs a turn of budget that a hit elsewhere uses better)."""
    dates: bool = True
    """Introduce each session in the context by a header item with its date (costs tokens)."""
    k1: float = 1.5
    """BM25 term-frequency saturation."""
    b: float = 0.75
    """BM25 length normalisation."""
    analyzer: str = "stemmed"
    """The lexical analyzer by name (``memorykit.evaluation.baselines.ANALYZERS``)."""
    diversity: float = 0.5
    """Maximal marginal relevance over the top candidates: each next hit's score (scaled to
    [0, 1] over them) less ``diversity`` times its highest cosine to a hit already taken, the
    part above 0.5 scaled to [0, 1], so near-duplicate turns give way to distinct evidence;
    0: plain score order. At 1 an exact copy of a taken hit is worth nothing more."""
    session_weight: float = 0.6
    """Share of the score of the message's session, scored as one document (BM25 over its
    text and the cosine of its mean vector, blended as turns are), added to the message's own,
    in [0, 1]; 0: none. Measured on real conversations (BENCHMARKS.md, issue 26)."""
    other_speakers: float = 0.8
    """When the question names exactly one speaker, the other speakers' scores are scaled by
    this above the lowest score, in [0, 1] (1: no focus; 0: only the named speaker's turns
    rank above the rest)."""

    def __post_init__(self) -> None:
        require_unit_interval("lexical_weight", self.lexical_weight)
        require_unit_interval("smoothing", self.smoothing)
        require_int("neighbours", self.neighbours, minimum=0, maximum=50)
        require_bool("dates", self.dates)
        require_non_negative("k1", self.k1)
        require_unit_interval("b", self.b)
        require_str("analyzer", self.analyzer)
        require_unit_interval("diversity", self.diversity)
        require_unit_interval("session_weight", self.session_weight)
        require_unit_interval("other_speakers", self.other_speakers)


_SHARED: dict[str, Embedder] = {}


def shared_minilm() -> Embedder:
    """One MiniLM embedder (memo + disk cache) per process: every hybrid policy of a sweep
    reuses its remembered vectors instead of reading the disk cache again."""
    if "minilm" not in _SHARED:
        from memorykit.longterm.minilm import minilm_embedder

        _SHARED["minilm"] = minilm_embedder()
    return _SHARED["minilm"]


def _session_date(created_at: float) -> str:
    when = datetime.fromtimestamp(created_at, tz=timezone.utc)
    return f"{when.day} {when:%B %Y}"


class _HybridPrepared(_BM25Prepared):
    """One history's BM25 documents, vectors, sessions and date headers."""

    def __init__(self, messages: Sequence[Message], policy: HybridRetrieval,
                 questions: Sequence[str] = ()) -> None:
        super().__init__(messages, policy.keep_system, policy.chat_format, policy.bm25.terms)
        self.embedder = policy.embedder if policy.embedder is not None else shared_minilm()
        texts = [m.content for m in self.messages]
        asked = list(dict.fromkeys(questions))
        vectors = _unit(np.asarray(self.embedder.embed(texts + asked), dtype=np.float32)) \
            if texts or asked else np.zeros((0, 1), dtype=np.float32)
        self.vectors = vectors[:len(texts)]
        self.queries = dict(zip(asked, vectors[len(texts):]))
        keys = [m.metadata.get("session") for m in self.messages]
        # A session is a run of messages with the same key; messages without one form no session.
        self.session = np.array([hash(k) if k is not None else -1 for k in keys], dtype=np.int64)
        self.same_as_next = np.zeros(len(keys), dtype=bool)
        if len(keys) > 1:
            self.same_as_next[:-1] = (self.session[:-1] == self.session[1:]) & (self.session[:-1] != -1)
        factory = MessageFactory(chat_format=policy.chat_format)
        self.headers: dict[int, ContextItem] = {}
        for i, (m, k) in enumerate(zip(self.messages, keys)):
            if policy.settings.dates and k is not None and (i == 0 or not self.same_as_next[i - 1]):
                # the day alone (9 billed tokens, half of "Session 3, 8 May 2023 13:56"): what a
                # "When...?" answer needs; the number and the hour bought no evidence (issue 26)
                text = _session_date(m.created_at) if m.created_at > 0 else f"Session {k}"
                header = factory.system(text)
                self.headers[i] = ContextItem("system", text, header.billed_tokens, (), "date")
        self.first = np.zeros(len(keys), dtype=np.int64)  # index of each message's session start
        for i in range(1, len(keys)):
            self.first[i] = self.first[i - 1] if self.same_as_next[i - 1] else i
        self.speaker = np.array([str(m.metadata.get("speaker") or "") for m in self.messages],
                                dtype=object)
        self.speakers = sorted({n for n in self.speaker if n})
        self.session_documents: dict[int, tuple[Any, np.ndarray, np.ndarray]] = {}  # by position
        self.similar: np.ndarray | None = None
        self.rankings: dict[tuple[int, str], _Ranked] = {}

    def similarity(self, among: np.ndarray | None = None) -> np.ndarray:
        """Cosine of every pair of messages (of ``among``, indices, when given). Up to 4,000
        messages (64 MB) it is one product kept for every question: small products per
        question are slow when other jobs share the cores; a longer history pays them."""
        if self.similar is None and len(self.vectors) <= 4000:
            self.similar = self.vectors @ self.vectors.T
        if self.similar is not None:
            return self.similar if among is None else self.similar[np.ix_(among, among)]
        chosen = self.vectors if among is None else self.vectors[among]
        return chosen @ chosen.T

    def sessions(self, position: int, policy: HybridRetrieval) -> tuple[Any, np.ndarray, np.ndarray]:
        """The sessions before ``position`` as documents, built once per position: BM25 over
        each session's text, each session's unit mean vector, and each message's session."""
        held = self.session_documents.get(position)
        if held is None:
            import bm25s

            starts = np.flatnonzero(self.first[:position] == np.arange(position))
            bounds = [*starts.tolist(), position]
            index = bm25s.BM25(k1=policy.settings.k1, b=policy.settings.b)
            corpus = [sum(self.docs[a:b], []) for a, b in zip(bounds, bounds[1:])]
            if any(corpus):
                index.index(corpus, show_progress=False)
            else:  # no term at all ("ok", "", stopwords): bm25s cannot index it; nothing matches
                index.vocab_dict = {}
            held = (index, _unit(np.add.reduceat(self.vectors[:position], starts)),
                    np.searchsorted(starts, self.first[:position]))
            self.session_documents[position] = held
        return held

    def named_speaker(self, query: str) -> str | None:
        """The one speaker of this history the question names as a word, else None."""
        named = [n for n in self.speakers if re.search(rf"(?<!\w){re.escape(n)}(?!\w)", query)]
        return named[0] if len(named) == 1 else None

    def query_vector(self, query: str) -> np.ndarray:
        vector = self.queries.get(query)
        if vector is None:
            vector = _unit(np.asarray(self.embedder.embed([query]), dtype=np.float32))[0]
        return vector


_DIVERSE = 128
"""Candidates ``diversity`` re-ranks: more messages than 2,000 tokens hold."""
_NEAR = 0.5
"""The cosine above which ``diversity`` counts a message as partly a copy of a taken hit (MiniLM
gives turns on one topic 0.3-0.5): penalising all likeness pushed out the second turn of a
support conversation for one on another topic (BENCHMARKS.md, issue 26)."""


def _greedy(gain: np.ndarray, copied: np.ndarray) -> Iterator[int]:
    """Maximal marginal relevance, one pick at a time: repeatedly the candidate of highest
    ``gain`` less its highest ``copied`` share with one already picked (ties: the earlier).
    ``gain`` is non-increasing, as the candidates come in score order. A candidate that copies
    no other keeps its gain, so only the linked ones are compared anew after each pick: the same
    order as scoring every candidate at every step, for less work."""
    is_linked = copied.any(axis=1)
    linked = np.flatnonzero(is_linked)
    free = np.flatnonzero(~is_linked).tolist()  # in order: their gains fall
    gains = gain.tolist()
    value, among = gain[linked], copied[np.ix_(linked, linked)]
    penalty = np.zeros(len(linked))
    f, left, best = 0, len(linked), None
    while f < len(free) or left:
        if best is None and left:
            k = int((value - penalty).argmax())
            best = (float(value[k] - penalty[k]), int(linked[k]), k)
        if best is None or f < len(free) and (gains[free[f]] > best[0] or
                                              gains[free[f]] == best[0] and free[f] < best[1]):
            yield free[f]
            f += 1
        else:
            yield best[1]
            value[best[2]] = -np.inf
            np.maximum(penalty, among[best[2]], out=penalty)
            left, best = left - 1, None


class _Ranked:
    """One question's hits in order, produced only as far as a budget reads them (diversity's
    re-ranking is the costly part, and 1,000 tokens read about 30 of its 128), kept for the
    next budget of a sweep."""

    def __init__(self, score: np.ndarray, hits: Iterator[int]) -> None:
        self.score = score
        self._source = hits
        self._seen: list[int] = []

    def hits(self) -> Iterator[int]:
        k = 0
        while k < len(self._seen) or self._more():
            yield self._seen[k]
            k += 1

    def _more(self) -> bool:
        hit = next(self._source, None)
        if hit is not None:
            self._seen.append(hit)
        return hit is not None

    def order(self) -> np.ndarray:
        self._seen.extend(self._source)
        return np.asarray(self._seen, dtype=np.intp)


def _unit(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms > 0, norms, 1.0)


class HybridRetrieval(_Baseline):
    """Messages ranked by a blend of BM25 and MiniLM cosine, smoothed within sessions,
    each hit packed with its same-session neighbours, sessions introduced by their dates.

    ``embedder`` defaults to all-MiniLM-L6-v2 in numpy with its disk cache
    (``shared_minilm``); any ``Embedder`` works (tests pass a lexical one). Ranking ties go
    to the newer message; the context is sent in conversation order.
    """

    query_independent = False

    def __init__(self, settings: HybridSettings | None = None, *, embedder: Embedder | None = None,
                 keep_system: bool = True, chat_format: ChatFormat = ChatFormat(),
                 name: str = "hybrid-retrieval") -> None:
        super().__init__(keep_system, chat_format)
        settings = settings if settings is not None else HybridSettings()
        if not isinstance(settings, HybridSettings):
            raise TypeError(f"settings must be a HybridSettings, got {settings!r}")
        if embedder is not None and not callable(getattr(embedder, "embed", None)):
            raise TypeError(f"embedder must have an embed(texts) method, got {embedder!r}")
        self.settings = settings
        self.embedder = embedder
        self.bm25 = BM25Retrieval(k1=settings.k1, b=settings.b, analyzer=settings.analyzer,
                                  keep_system=keep_system, chat_format=chat_format)
        self.name = require_str("name", name, non_empty=True)

    def _prepare(self, messages: Sequence[Message]) -> Any:
        return _State(self, _HybridPrepared(messages, self))

    def prepare(self, conversation: EvalConversation) -> Any:
        if not isinstance(conversation, EvalConversation):
            raise TypeError(f"conversation must be an EvalConversation, got {conversation!r}")
        return _State(self, _HybridPrepared(conversation.messages, self,
                                            [q.question for q in conversation.questions]))

    def scores(self, p: _HybridPrepared, position: int, query: str) -> np.ndarray:
        """The blended, smoothed score of each of the first ``position`` messages, plus its
        session's share, focused on a named speaker."""
        s = self.settings
        if not position:
            return np.zeros(0)
        lexical = np.asarray(self.bm25.scores(p, position, query), dtype=np.float64)
        vector = p.query_vector(query)
        cosine = p.vectors[:position] @ vector
        score = self._blend(lexical, cosine)
        if s.smoothing and position > 1:
            link = p.same_as_next[:position - 1]  # message i and i + 1 share a session
            left = np.zeros(position)
            right = np.zeros(position)
            left[1:] = np.where(link, score[:-1], 0.0)
            right[:-1] = np.where(link, score[1:], 0.0)
            count = np.zeros(position)
            count[1:] += link
            count[:-1] += link
            score = score + s.smoothing * (left + right) / np.maximum(count, 1)
        if s.session_weight:
            score = score + s.session_weight * self._session_scores(p, position, query, vector)
        named = p.named_speaker(query) if s.other_speakers < 1 else None
        if named is not None:
            low = score.min()
            score = np.where(p.speaker[:position] == named, score,
                             low + s.other_speakers * (score - low))
        return score

    def _session_scores(self, p: _HybridPrepared, position: int, query: str,
                        vector: np.ndarray) -> np.ndarray:
        """Each message's session scored as one document (BM25 of its text, cosine of its mean
        vector, blended as turns are), spread back onto its messages."""
        index, vectors, of = p.sessions(position, self)
        ids = [index.vocab_dict[t] for t in self.bm25.analyzer(query) if t in index.vocab_dict]
        lexical = np.asarray(index.get_scores(ids), dtype=np.float64) if ids else \
            np.zeros(len(vectors))
        spread = self._blend(lexical, vectors @ vector)[of]
        return np.where(p.session[:position] != -1, spread, 0.0)  # a lone message is no session

    def _blend(self, lexical: np.ndarray, cosine: np.ndarray) -> np.ndarray:
        w = self.settings.lexical_weight
        top = lexical.max() if lexical.size else 0.0
        return w * (lexical / top if top > 0 else lexical) + (1.0 - w) * cosine

    def ranking(self, p: _HybridPrepared, position: int, query: str) -> tuple[np.ndarray, np.ndarray]:
        """``(order, score)``: the first ``position`` message indices in the order ``_build``
        considers them as hits (each then widened by its neighbours while they fit), and each
        message's score from ``scores``. ``order`` is that score's order (ties to the newer
        message), then re-ranked by ``diversity`` when it is on: that changes the order, not
        the score."""
        ranked = self._ranked(p, position, query)
        return ranked.order(), ranked.score

    def _ranked(self, p: _HybridPrepared, position: int, query: str) -> _Ranked:
        known = p.rankings.get((position, query))  # a sweep asks again at each budget
        if known is not None:
            return known
        score = self.scores(p, position, query)
        score.flags.writeable = False  # shared by the cache
        order = np.lexsort((-np.arange(position), -score))
        hits: Iterator[int] = iter(order.tolist())
        if self.settings.diversity and position > 1:
            head = order[:_DIVERSE]
            # how much of a copy each candidate is of each other: its cosine's part above _NEAR
            copied = np.maximum(p.similarity(head) - _NEAR, 0.0) / (1.0 - _NEAR)
            np.fill_diagonal(copied, 0.0)
            if copied.any():  # otherwise the order stays the score's
                gain = score[head] - score[head].min()  # relevance scaled to [0, 1] over the
                gain /= gain.max() if gain.max() > 0 else 1.0  # head: one value fits any blend
                picks = _greedy(gain, copied * self.settings.diversity)
                hits = itertools.chain((int(head[j]) for j in picks), order[_DIVERSE:].tolist())
        ranked = p.rankings[(position, query)] = _Ranked(score, hits)
        return ranked

    def _widen(self, p: _HybridPrepared, hit: int, position: int) -> list[int]:
        """``hit`` and its same-session neighbours before ``position``, nearest first."""
        out = [hit]
        start = p.first[hit]
        for d in range(1, self.settings.neighbours + 1):
            if hit - d >= start and p.session[hit] != -1:
                out.append(hit - d)
            if hit + d < position and p.first[hit + d] == start and p.session[hit] != -1:
                out.append(hit + d)
        return out

    def _build(self, p: _HybridPrepared, position: int, query: str, budget: int) -> Context:  # type: ignore[override]
        system, room = p.system(position, budget - p.primer)
        chosen = set(system)
        if position and room > 0:
            order = self._ranked(p, position, query).hits()
            tokens = p.tokens
            smallest = int(tokens[:position].min())
            opened: set[int] = set()  # sessions whose header is already paid for
            for hit in order:
                if room < smallest:
                    break
                for i in self._widen(p, hit, position):
                    if i in chosen or p.pinned[i]:
                        continue
                    start = int(p.first[i])
                    header = p.headers.get(start)
                    cost = int(tokens[i]) + (header.tokens if header and start not in opened else 0)
                    if cost <= room:
                        chosen.add(i)
                        room -= cost
                        if header:
                            opened.add(start)
        return self._context(p, sorted(chosen), budget)

    def _context(self, p: _HybridPrepared, indices: list[int], budget: int,
                 swap: Mapping[int, ContextItem] | None = None, name: str | None = None) -> Context:
        """The messages at ``indices`` (in order) under their sessions' date headers; ``swap``
        sends another item in some message's place (a superseded one, marked), under ``name``
        (default this policy's)."""
        items: list[ContextItem] = []
        opened: set[int] = set()
        for i in indices:
            start = int(p.first[i])
            header = p.headers.get(start)
            if header is not None and start not in opened:
                items.append(header)
                opened.add(start)
            items.append(swap[i] if swap and i in swap else p.items[i])
        return with_budget_note(Context(tuple(items), budget, name or self.name, p.chat_format))

    def __repr__(self) -> str:
        return f"HybridRetrieval({self.name!r}, {self.settings!r})"


def make_hybrid(lexical_weight: float = 0.25, neighbours: int = 0, **settings: Any) -> HybridRetrieval:
    """A ``HybridRetrieval`` over the shared MiniLM embedder (picklable factory for sweeps)."""
    return HybridRetrieval(HybridSettings(lexical_weight=lexical_weight, neighbours=neighbours,
                                          **settings))
