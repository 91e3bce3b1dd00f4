"""Baselines every memory must beat, as ContextPolicies the harness scores like any other.

* ``LastMessages(n)``: the newest ``n`` messages (fewer if they exceed the budget).
* ``LastTokens()``: the newest messages that fit in the budget ("last B tokens").
* ``BM25Retrieval()``: every message of the history ranked by BM25 against the
  question (the ``bm25s`` library), packed best first into the budget, sent in
  conversation order.
* ``FullContext()``: the whole history, whatever the budget (the ceiling on
  recall, and the cost of not choosing).

System instructions (role ``system``, not summaries) are placed first when
``keep_system`` is True and they fit, as buffers pin them; the rest of the
budget goes to the baseline's rule. Each baseline has a per-conversation fast
path (``prepare``): token counts, running sums and analyzed text are computed
once per conversation and the BM25 index once per question position, so no
question re-tokenizes or re-indexes the history. A BM25 policy also remembers the
terms of the texts it analyzed (at most ``TERM_MEMO_SIZE`` texts), so an agent calling
``build_context`` with its whole history every turn pays the analyzer only for the
new messages. Budgets are in billed tokens, the reply primer included, as
``Context.tokens`` counts them.

Taught in ``notebooks/12_parameter_tuning.ipynb``.
"""

from __future__ import annotations

import bisect
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

import numpy as np

from memorykit._locks import without_locks
from memorykit._text import STOPWORDS, WORD
from memorykit._validate import require_choice, require_int, require_non_negative, require_real
from memorykit.context import Context, ContextItem, check_request, with_budget_note
from memorykit.evaluation.dataset import EvalConversation
from memorykit.messages import Message, check_history
from memorykit.tokens import ChatFormat

__all__ = [
    "ANALYZERS",
    "BM25Retrieval",
    "FullContext",
    "LastMessages",
    "LastTokens",
    "TERM_MEMO_SIZE",
    "analyze",
    "analyze_stemmed",
    "baseline_policies",
    "resolve_analyzer",
]


def analyze(text: str) -> list[str]:
    """Lower-cased words without common English function words (documents and queries alike).

    The plain analyzer (``analyzer="plain"``): no stemming, so "painting" never matches
    "paint" and "caroline's" never matches "Caroline". ``analyze_stemmed`` is the default."""
    return [w for w in WORD.findall(text.lower()) if w not in STOPWORDS]


_POSSESSIVE = re.compile(r"['’]s$")
_STEMMERS = threading.local()  # a PyStemmer object is not safe to share between threads


@lru_cache(maxsize=1 << 16)
def _stem(word: str) -> str:
    # A chat history repeats its vocabulary: caching the word, not the text, makes stemming free.
    stemmer = getattr(_STEMMERS, "english", None)
    if stemmer is None:
        try:
            import Stemmer
        except ImportError as exc:  # pragma: no cover - the eval extra installs it
            raise ImportError("analyze_stemmed needs PyStemmer: pip install 'memorykit[eval]'") from exc
        stemmer = _STEMMERS.english = Stemmer.Stemmer("english")
    return str(stemmer.stemWord(word))


def analyze_stemmed(text: str) -> list[str]:
    """``analyze`` plus possessives stripped and the Snowball English stem (PyStemmer).

    Why: questions ask about "Caroline's art" and "paintings" while the turns say "Caroline"
    and "painted"; without both, BM25 scores them as unrelated words. The function-word test
    runs before and after stripping ("he's" and "it's" stay out)."""
    out = []
    for w in WORD.findall(text.lower()):
        if w in STOPWORDS:
            continue
        w = _POSSESSIVE.sub("", w)
        if w and w not in STOPWORDS:
            out.append(_stem(w))
    return out


ANALYZERS: dict[str, Callable[[str], list[str]]] = {"stemmed": analyze_stemmed, "plain": analyze}
"""The lexical policies' analyzers by name: ``stemmed`` (default) or ``plain`` (no stemming)."""


def resolve_analyzer(analyzer: str | Callable[[str], list[str]]) -> Callable[[str], list[str]]:
    """An analyzer by name (``ANALYZERS``) or any callable from text to terms."""
    if isinstance(analyzer, str):
        return ANALYZERS[require_choice("analyzer", analyzer, tuple(ANALYZERS))]
    if not callable(analyzer):
        raise TypeError(f"analyzer must be one of {', '.join(ANALYZERS)} or callable, got {analyzer!r}")
    return analyzer


TERM_MEMO_SIZE = 50_000
"""Texts a BM25 policy remembers the terms of (``_TermMemo``): five times a 10,000-message
history, so an agent's whole history and its new turns stay remembered. A chat-sized message
(250 characters) costs about 1 KB (its terms and the text kept as the key), so a full memo
holds about 50 MB. In a history longer than the bound, the texts beyond it are analyzed again
each call."""


class _TermMemo:
    """The analyzed terms of each of the last ``maxsize`` texts, least recently used leave first.

    Why: an agent adapter calls ``build_context`` with the whole history on every model call;
    stemming 10,000 messages again each time cost half of the call. Keyed by the text itself
    (the analyzer is a function of the text alone), so a message whose content changed is
    analyzed again, and a copy of a text under another id is not. Terms are kept as tuples and
    handed out as new lists: no caller can change what the memo holds. Safe from several threads
    (the order is updated under a lock; the analyzer runs outside it). A pickled copy (a process
    pool's) starts empty: it is a cache, not state.
    """

    def __init__(self, analyzer: Callable[[str], list[str]], maxsize: int = TERM_MEMO_SIZE) -> None:
        if not callable(analyzer):
            raise TypeError(f"analyzer must be callable, got {analyzer!r}")
        self.analyzer = analyzer
        self.maxsize = require_int("maxsize", maxsize, minimum=1)
        self._terms: OrderedDict[str, tuple[str, ...]] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._terms)

    def __getstate__(self) -> dict[str, Any]:
        return {**without_locks(self.__dict__), "_terms": OrderedDict()}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def documents(self, texts: Sequence[str]) -> list[list[str]]:
        """The terms of each text (a new list each), analyzing only the texts not remembered."""
        found: dict[str, tuple[str, ...]] = {}
        with self._lock:
            for text in texts:
                terms = self._terms.get(text)
                if terms is not None:
                    self._terms.move_to_end(text)
                    found[text] = terms
        new: dict[str, tuple[str, ...]] = {}
        for text in texts:
            if text not in found and text not in new:  # a repeated text is analyzed once
                new[text] = tuple(self.analyzer(text))
        if new:
            with self._lock:
                self._terms.update(new)
                while len(self._terms) > self.maxsize:
                    self._terms.popitem(last=False)
            found.update(new)
        return [list(found[text]) for text in texts]


class _Prepared:
    """Token counts and running sums of one history, shared by every question on it."""

    def __init__(self, messages: Sequence[Message], keep_system: bool, chat_format: ChatFormat):
        self.messages = check_history(messages)
        self.items = [ContextItem.from_message(m) for m in self.messages]
        self.chat_format = chat_format
        self.primer = chat_format.reply_primer
        pinned = np.array([keep_system and m.pinned for m in self.messages], dtype=bool)
        tokens = np.array([m.billed_tokens for m in self.messages], dtype=np.int64)
        self.tokens = tokens
        self.pinned = pinned
        self.pinned_idx = np.flatnonzero(pinned).tolist()
        self.free_idx = np.flatnonzero(~pinned).tolist()
        # Running sum of the tokens of messages that are not pinned (pinned ones count 0).
        self.cum = np.concatenate(([0], np.cumsum(np.where(pinned, 0, tokens))))

    def system(self, position: int, room: int) -> tuple[list[int], int]:
        """Pinned messages before ``position`` that fit in ``room``, and the room left."""
        chosen = []
        for i in self.pinned_idx:
            if i >= position:
                break
            t = int(self.tokens[i])
            if t <= room:
                chosen.append(i)
                room -= t
        return chosen, room

    def suffix_start(self, position: int, room: int) -> int:
        """Smallest start such that the unpinned messages in [start, position) fit in ``room``."""
        if room < 0:
            return position
        return int(np.searchsorted(self.cum, self.cum[position] - room, side="left"))

    def context(self, indices: list[int], budget: int, policy: str, notes: tuple[str, ...] = ()) -> Context:
        items = tuple(self.items[i] for i in sorted(indices))
        return with_budget_note(Context(items, budget, policy, self.chat_format, notes))


class _Baseline:
    """Shared plumbing: settings checks, the plain path through a throwaway preparation."""

    name: str
    query_independent = True

    def __init__(self, keep_system: bool, chat_format: ChatFormat) -> None:
        if not isinstance(keep_system, bool):
            raise TypeError(f"keep_system must be a bool, got {keep_system!r}")
        if not isinstance(chat_format, ChatFormat):
            raise TypeError(f"chat_format must be a ChatFormat, got {chat_format!r}")
        self.keep_system = keep_system
        self.chat_format = chat_format

    def _prepare(self, messages: Sequence[Message]) -> Any:
        return _State(self, _Prepared(messages, self.keep_system, self.chat_format))

    def prepare(self, conversation: EvalConversation) -> Any:
        if not isinstance(conversation, EvalConversation):
            raise TypeError(f"conversation must be an EvalConversation, got {conversation!r}")
        return self._prepare(conversation.messages)

    def build_context(self, history: Sequence[Message], query: str, budget: int) -> Context:
        check_request(query, budget)
        return self._prepare(history).build_context(len(history), query, budget)

    def _build(self, p: _Prepared, position: int, query: str, budget: int) -> Context:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


class _State:
    def __init__(self, policy: _Baseline, prepared: _Prepared) -> None:
        self.policy = policy
        self.prepared = prepared

    def build_context(self, position: int, query: str, budget: int) -> Context:
        check_request(query, budget)
        if not 0 <= position <= len(self.prepared.messages):
            raise ValueError(f"position must be in [0, {len(self.prepared.messages)}], got {position!r}")
        return self.policy._build(self.prepared, position, query, budget)


class LastTokens(_Baseline):
    """The newest messages that fit in the budget, as a contiguous stretch ("last B tokens")."""

    def __init__(self, *, keep_system: bool = True, chat_format: ChatFormat = ChatFormat(),
                 name: str = "last-tokens") -> None:
        super().__init__(keep_system, chat_format)
        self.name = name

    def _build(self, p: _Prepared, position: int, query: str, budget: int) -> Context:
        system, room = p.system(position, budget - p.primer)
        start = p.suffix_start(position, room)
        chosen = system + [i for i in range(start, position) if not p.pinned[i]]
        return p.context(chosen, budget, self.name)


class LastMessages(_Baseline):
    """The newest ``n`` messages; with ``fit_budget`` (default) only as many of them as fit."""

    def __init__(self, n: int = 20, *, fit_budget: bool = True, keep_system: bool = True,
                 chat_format: ChatFormat = ChatFormat(), name: str | None = None) -> None:
        super().__init__(keep_system, chat_format)
        self.n = require_int("n", n, minimum=1)
        if not isinstance(fit_budget, bool):
            raise TypeError(f"fit_budget must be a bool, got {fit_budget!r}")
        self.fit_budget = fit_budget
        self.name = name if name is not None else f"last-{n}-messages"

    def _build(self, p: _Prepared, position: int, query: str, budget: int) -> Context:
        room = budget - p.primer
        if self.fit_budget:
            system, room = p.system(position, room)
        else:
            system = [i for i in p.pinned_idx if i < position]
        k = bisect.bisect_left(p.free_idx, position)  # unpinned messages before position
        start = p.free_idx[k - self.n] if k > self.n else 0
        if self.fit_budget:
            start = max(start, p.suffix_start(position, room))
        chosen = system + [i for i in range(start, position) if not p.pinned[i]]
        return p.context(chosen, budget, self.name)


class FullContext(_Baseline):
    """The whole history, whatever the budget: the most any memory could cover."""

    def __init__(self, *, chat_format: ChatFormat = ChatFormat(), name: str = "full-context") -> None:
        super().__init__(True, chat_format)
        self.name = name

    def _build(self, p: _Prepared, position: int, query: str, budget: int) -> Context:
        ctx = p.context(list(range(position)), budget, self.name)
        if ctx.over_budget:
            note = f"full context: {ctx.tokens} tokens, over the budget of {budget} by design"
            ctx = Context(ctx.items, budget, self.name, ctx.chat_format, (note,))
        return ctx


class _BM25Prepared(_Prepared):
    def __init__(self, messages: Sequence[Message], keep_system: bool, chat_format: ChatFormat,
                 terms: _TermMemo) -> None:
        super().__init__(messages, keep_system, chat_format)
        self.docs = terms.documents([m.content for m in self.messages])
        self.indexes: dict[int, Any] = {}


class BM25Retrieval(_Baseline):
    """Messages ranked by BM25 against the question, packed best first into the budget.

    Scoring is the ``bm25s`` library's (Lucene variant by default); documents
    and queries go through the same ``analyzer``: a name of ``ANALYZERS`` (default
    ``"stemmed"``: possessives stripped, Snowball stems; ``"plain"``: the old one) or a
    callable from text to terms. Only
    messages scoring above ``min_score`` are candidates; each is taken if it
    still fits (a long one is skipped, not a stop), ties going to the newer
    message. The chosen messages are sent in conversation order. The index
    covers the history at the question's position (future messages never
    influence the scores); it is built once per conversation and position.
    The terms of each text are remembered across calls (``terms``, a ``_TermMemo`` of
    at most ``TERM_MEMO_SIZE`` texts): a policy reused turn after turn analyzes only
    the messages it has not seen.
    """

    query_independent = False

    def __init__(self, *, k1: float = 1.5, b: float = 0.75, method: str = "lucene",
                 min_score: float = 0.0,
                 analyzer: str | Callable[[str], list[str]] = "stemmed",
                 keep_system: bool = True, chat_format: ChatFormat = ChatFormat(),
                 name: str = "bm25") -> None:
        super().__init__(keep_system, chat_format)
        self.k1 = require_non_negative("k1", k1)
        self.b = require_real("b", b)
        if not 0.0 <= self.b <= 1.0:
            raise ValueError(f"b must be in [0, 1], got {b!r}")
        methods = ("lucene", "robertson", "atire", "bm25l", "bm25+")
        if method not in methods:
            raise ValueError(f"method must be one of {', '.join(methods)}, got {method!r}")
        self.method = method
        self.min_score = require_non_negative("min_score", min_score)
        self.analyzer = resolve_analyzer(analyzer)
        self.terms = _TermMemo(self.analyzer)
        """The analyzed terms of the texts this policy has seen (bounded)."""
        self.name = name

    def _prepare(self, messages: Sequence[Message]) -> Any:
        return _State(self, _BM25Prepared(messages, self.keep_system, self.chat_format, self.terms))

    def _index(self, p: _BM25Prepared, position: int) -> Any:
        index = p.indexes.get(position)
        if index is None:
            import bm25s

            index = bm25s.BM25(k1=self.k1, b=self.b, method=self.method)
            if any(p.docs[:position]):
                index.index(p.docs[:position], show_progress=False)
            else:  # no term at all ("ok", "", stopwords): bm25s cannot index it; nothing matches
                index.vocab_dict = {}
            p.indexes[position] = index
        return index

    def scores(self, p: _BM25Prepared, position: int, query: str) -> np.ndarray:
        """BM25 score of each of the first ``position`` messages for ``query``."""
        terms = self.analyzer(query)
        if not position or not terms:
            return np.zeros(position, dtype=np.float32)
        index = self._index(p, position)
        vocab = index.vocab_dict
        ids = [vocab[t] for t in terms if t in vocab]
        if not ids:
            return np.zeros(position, dtype=np.float32)
        return index.get_scores(ids)

    def ranking(self, p: _BM25Prepared, position: int, query: str) -> tuple[np.ndarray, np.ndarray]:
        """``(order, score)``: the candidates ``_build`` packs, best first (messages scoring
        above ``min_score`` that are not pinned; among equal scores the newer first), and the
        score of each of the first ``position`` messages. Others are not ranked at all."""
        scores = self.scores(p, position, query)
        candidates = np.flatnonzero((scores > self.min_score) & ~p.pinned[:position])
        return candidates[np.lexsort((-candidates, -scores[candidates]))], scores

    def _build(self, p: _BM25Prepared, position: int, query: str, budget: int) -> Context:  # type: ignore[override]
        system, room = p.system(position, budget - p.primer)
        order = self.ranking(p, position, query)[0]
        chosen = list(system)
        if order.size and room > 0:
            tokens = p.tokens
            smallest = int(tokens[order].min())
            for i in order.tolist():
                t = int(tokens[i])
                if t <= room:
                    chosen.append(i)
                    room -= t
                    if room < smallest:
                        break
        return p.context(chosen, budget, self.name)


def baseline_policies(n_messages: int = 20) -> dict[str, Any]:
    """The four baselines under their default names (last-N with ``n_messages``)."""
    policies = [LastMessages(n_messages), LastTokens(), BM25Retrieval(), FullContext()]
    return {p.name: p for p in policies}
