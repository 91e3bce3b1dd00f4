"""Summarizers: turn a run of messages into a shorter text that stands for them.

``Summarizer`` is the protocol every summary buffer and compressor calls:
``summarize(messages, max_tokens) -> str``. It says what it is (``name``) and
whether a language model wrote the text (``is_llm``), so a notebook can state
honestly what produced a summary. An OpenAI-backed summarizer fits the same
protocol; this module ships only the offline one:

``ExtractiveSummarizer`` is **extractive, not an LLM**. It copies whole
sentences out of the messages, picked by a transparent score (how much of the
segment's vocabulary a sentence shares, a bonus for numbers and names because
facts live there, a bonus for the message's importance), and keeps them in
their original order until ``max_tokens`` is reached. It is deterministic and
needs no network, which makes summary buffers testable and their notebooks
reproducible. A summary of summaries works the same way: a summary is just a
message whose sentences compete again. Each sentence's analysis is remembered, so
re-reading a summary costs little.

``MemoSummarizer`` wraps any summarizer and remembers the summaries it wrote (bounded),
for replays that ask for the same summary again.

Taught in ``notebooks/03_summary_buffer.ipynb``.
"""

from __future__ import annotations

import re
from collections import Counter, OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain
from operator import itemgetter
from typing import Any, ClassVar, NamedTuple, Protocol, runtime_checkable

from memorykit._text import STOPWORDS, has_digit, words
from memorykit._validate import require_bool, require_int, require_non_negative
from memorykit.messages import Message
from memorykit.tokens import TokenCounter, Tokenizer


@runtime_checkable
class Summarizer(Protocol):
    """Anything that writes a summary of messages within a token cap.

    ``summarize`` must return a string whose token count (in the summarizer's
    encoding) is at most ``max_tokens``; an empty string is allowed when nothing
    fits. ``is_llm`` is True when a language model wrote the text.
    """

    name: str
    is_llm: ClassVar[bool]

    def summarize(self, messages: Sequence[Message], max_tokens: int) -> str: ...


def check_summary_text(text: Any, summarizer: Any, count: int) -> str:
    """``text`` when it can stand in for ``count`` messages: a str with something in it.

    An empty or blank "summary" would replace the messages by nothing, so it is refused with
    a ValueError naming the summarizer; the caller keeps the messages.
    """
    require_int("count", count, minimum=1)
    if not isinstance(text, str):
        raise TypeError(f"summarizer returned {text!r}, expected a str")
    if not text.strip():
        name = getattr(summarizer, "name", type(summarizer).__name__)
        raise ValueError(f"summarizer {name} returned an empty summary ({text!r}) for {count} "
                         f"messages: refused, the messages are kept")
    return text


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\s*\n+\s*")
_ROLE_LABEL = re.compile(r"^(system|user|assistant|tool):\s+")


@dataclass(frozen=True, slots=True)
class ScoredSentence:
    """One candidate sentence and the parts of its score (for tables in the notebook)."""

    position: int
    """Order of the sentence in the segment (message order, then sentence order)."""
    message_id: str
    text: str
    """The sentence as it would appear in the summary (with its role label, if any)."""
    tokens: int
    relevance: float
    """Mean frequency of the sentence's content words in the segment, over the top frequency."""
    facts: float
    """Bonus for numbers and proper nouns (0.25 each, at most 0.75)."""
    importance: float
    """Bonus for the message's importance (0.5 x importance)."""

    @property
    def score(self) -> float:
        return self.relevance + self.facts + self.importance


class _Sentence(NamedTuple):
    """What a sentence contributes to any segment's scores, fixed by its printed text."""

    key: str
    """The sentence without its role label, lowercased, spaces collapsed: repeats share it."""
    text: str
    """The sentence as it would appear in the summary (with its role label, if any)."""
    content: tuple[str, ...]
    """Its distinct content words, lowercased (stop words and 1-2 letter words left out)."""
    facts: int
    """Numbers and proper nouns (capitalised words not opening the sentence, "I" aside),
    counted up to 3 (the most the fact bonus rewards)."""
    tokens: int


_Ranked = tuple[float, int, float, _Sentence, Message]
"""A candidate in a segment: minus its score, position, relevance, the sentence, its message."""


class ExtractiveSummarizer:
    """An extractive summarizer (not an LLM): picks whole sentences, deterministically.

    Score of a sentence = relevance + facts + importance bonus, where

    * relevance = mean segment frequency of its distinct content words (stop
      words removed) divided by the highest such frequency, in [0, 1];
    * facts = 0.25 per number or proper noun (a capitalised word not opening the
      sentence), capped at 0.75;
    * importance bonus = ``importance_weight`` x the message's importance.

    Sentences are taken best first (ties: earlier first), skipping any that no
    longer fit, then printed in their original order. Each sentence is prefixed
    with its speaker (``user: ...``) when ``label_roles`` is True, because "I
    live in Paris" means different things from the user and from the assistant;
    sentences of earlier summaries keep the labels they already carry. Repeated
    sentences are kept once. If no sentence fits whole, the best one is cut at a
    word boundary and ends with "...".

    Only relevance depends on the segment; everything else about a sentence (its words,
    facts and token count) depends on its printed text alone, and a summary buffer
    re-reads the same sentences every round (the previous summary is summarized again).
    So each message's split is remembered by its content and the speaker label it adds
    (its role, unless it is a summary or ``label_roles`` is off), which fix its
    sentences; each sentence's analysis by its printed text, which fixes it for this
    summarizer's counter (read-only); and the split of each summary written, for the
    round that reads it again. Both memos are bounded: each holds at most
    ``cache_size`` entries and is cleared when full (``cache_size=0`` turns them off).
    Summaries are the same with or without them.
    """

    is_llm: ClassVar[bool] = False

    def __init__(
        self,
        counter: TokenCounter | None = None,
        *,
        label_roles: bool = True,
        importance_weight: float = 0.5,
        fact_bonus: float = 0.25,
        cache_size: int = 16_384,
    ) -> None:
        if counter is not None and not callable(getattr(counter, "count", None)):
            raise TypeError(f"counter must have a count(text) method, got {counter!r}")
        self._counter: TokenCounter = counter if counter is not None else Tokenizer()
        self._label_roles = require_bool("label_roles", label_roles)
        self.importance_weight = require_non_negative("importance_weight", importance_weight)
        self.fact_bonus = require_non_negative("fact_bonus", fact_bonus)
        self.cache_size = require_int("cache_size", cache_size, minimum=0)
        """Entries each memo (message splits, sentence analyses) holds before it is cleared."""
        self.name = f"extractive({getattr(self._counter, 'encoding', '?')})"
        self._splits: dict[tuple[str, str, bool], tuple[_Sentence, ...]] = {}
        self._analysed: dict[str, _Sentence] = {}

    @property
    def counter(self) -> TokenCounter:
        """Counts sentence and summary tokens (read-only: the memos hold its counts)."""
        return self._counter

    @property
    def label_roles(self) -> bool:
        """Whether sentences are printed with their speaker (read-only: the memos depend on it)."""
        return self._label_roles

    # ---------------------------------------------------------------- analysis
    def _split(self, m: Message) -> tuple[_Sentence, ...]:
        """The sentences of one message, analysed (remembered by what fixes them: the
        content, and the speaker label added to sentences without one, if any)."""
        label = m.role if self._label_roles and not m.summary_depth else ""
        memo_key = (m.content, label)
        found = self._splits.get(memo_key)
        if found is not None:
            return found
        sentences = []
        for raw in _SENTENCE_END.split(m.content):
            sentence = raw.strip()
            if not sentence:
                continue
            if label and not _ROLE_LABEL.match(sentence):
                sentence = f"{label}: {sentence}"
            sentences.append(self._analyse(sentence))
        found = tuple(sentences)
        self._remember(self._splits, memo_key, found)
        return found

    def _expect_summary(self, text: str, sentences: list[_Sentence]) -> None:
        """Remember the split of a summary just written from ``sentences``: the next round
        summarizes it again. Splitting ``text`` gives exactly them when every sentence but
        the last ends one (sentences hold no break of their own, and are joined by a space);
        a summary's sentences get no label."""
        if all(s.text[-1] in ".!?" for s in sentences[:-1]):
            self._remember(self._splits, (text, ""), tuple(sentences))

    def _analyse(self, text: str) -> _Sentence:
        """A printed sentence's key, content words, facts and tokens. Its body (the text
        without a role label) is found again from the text: roles are one of four words,
        and a label is either the sentence's own or the ``"role: "`` added above."""
        found = self._analysed.get(text)
        if found is not None:
            return found
        label = _ROLE_LABEL.match(text)
        body = text[label.end():] if label else text
        ws = words(body)
        content = tuple({
            w.lower() for w in ws if w.lower() not in STOPWORDS and (len(w) > 2 or has_digit(w))
        })
        n_facts = sum(1 for w in ws if has_digit(w))
        n_facts += sum(1 for j, w in enumerate(ws) if j > 0 and w[0].isupper() and w != "I")
        found = _Sentence(" ".join(body.lower().split()), text, content, min(3, n_facts),
                          self._counter.count(text))
        self._remember(self._analysed, text, found)
        return found

    def _remember(self, memo: dict[Any, Any], key: Any, value: Any) -> None:
        if len(memo) >= self.cache_size:
            memo.clear()
        if self.cache_size:
            memo[key] = value

    def _distinct(self, messages: Sequence[Message]) -> list[tuple[Message, _Sentence]]:
        """(message, sentence) for every distinct sentence of the segment, in order."""
        out: list[tuple[Message, _Sentence]] = []
        seen: set[str] = set()
        for m in messages:
            if type(m) is not Message:
                raise TypeError(f"messages must hold Message records, got {m!r}")
            for sentence in self._split(m):
                key = sentence[0]  # .key (hot loop: plain indexing)
                if key not in seen:
                    seen.add(key)
                    out.append((m, sentence))
        return out

    def _ranked(self, messages: Sequence[Message]) -> list[_Ranked]:
        """(-score, position, relevance, sentence, message) per distinct sentence, in order.

        Sorting these tuples ranks best first, ties earlier first (positions are unique)."""
        distinct = self._distinct(messages)
        freq = Counter(chain.from_iterable([s[2] for _, s in distinct]))  # s.content
        top = max(freq.values(), default=1)
        get = freq.__getitem__
        bonus, weight = self.fact_bonus, self.importance_weight
        out = []
        for i, (m, s) in enumerate(distinct):
            content = s[2]
            relevance = (sum(map(get, content)) / len(content) / top) if content else 0.0
            out.append((-(relevance + bonus * s[3] + weight * m.importance), i, relevance, s, m))
        return out

    def score_sentences(self, messages: Sequence[Message]) -> list[ScoredSentence]:
        """Every candidate sentence with its score parts, in original order."""
        return [
            ScoredSentence(i, m.id, s.text, s.tokens, relevance, self.fact_bonus * s.facts,
                           self.importance_weight * m.importance)
            for _, i, relevance, s, m in self._ranked(messages)
        ]

    # ------------------------------------------------------------- summarizing
    def summarize(self, messages: Sequence[Message], max_tokens: int) -> str:
        require_int("max_tokens", max_tokens, minimum=0)
        if max_tokens == 0 or not messages:
            return ""
        ranked = self._ranked(messages)
        if not ranked:
            return ""
        ranked.sort()  # best first
        chosen = []
        used = 0
        for entry in ranked:
            # Joining adds at most one token per separator; the exact count is checked below.
            cost = entry[3][4] + (1 if chosen else 0)  # sentence.tokens
            if used + cost <= max_tokens:
                chosen.append(entry)
                used += cost
        count = self._counter.count
        while chosen:
            in_order = [e[3] for e in sorted(chosen, key=_position)]
            text = " ".join([s[1] for s in in_order])  # sentence.text
            if count(text) <= max_tokens:
                self._expect_summary(text, in_order)
                return text
            chosen.remove(max(chosen))  # the weakest: lowest score, latest on ties
        return self._truncate(ranked[0][3].text, max_tokens)

    def _truncate(self, sentence: str, max_tokens: int) -> str:
        """The longest word prefix of ``sentence`` that fits with "..." appended."""
        parts = sentence.split()
        lo, hi = 0, len(parts)  # invariant: prefix of lo words fits (0 words: "")
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self._counter.count(" ".join(parts[:mid]) + "...") <= max_tokens:
                lo = mid
            else:
                hi = mid - 1
        return " ".join(parts[:lo]) + "..." if lo else ""

    def __repr__(self) -> str:
        return f"ExtractiveSummarizer({self._counter!r}, label_roles={self._label_roles})"


_position = itemgetter(1)
"""A ranked candidate's position in the segment."""


class MemoSummarizer:
    """A summarizer that remembers the last ``maxsize`` summaries it wrote.

    Replays ask for the same summary again (a lesson's slider rebuilds a memory over one
    conversation under many settings, and most settings summarize the same first
    segments). A summary is remembered under the cap and, for every message of the
    segment, its id, role, content, importance and summary depth: every field the
    summarizers of memorykit read, so a message with a reused id but another text or
    weight is summarized afresh. (A summarizer reading other fields, such as times or
    metadata, must not be wrapped.) Summaries are exactly the wrapped summarizer's;
    ``name`` and ``is_llm`` are its too.

    Bounded: at most ``maxsize`` summaries are remembered, the least recently used
    leave first.
    """

    def __init__(self, summarizer: Summarizer | None = None, *, maxsize: int = 4096) -> None:
        if summarizer is not None and not callable(getattr(summarizer, "summarize", None)):
            raise TypeError(f"summarizer must have a summarize(messages, max_tokens) method, "
                            f"got {summarizer!r}")
        self.summarizer: Summarizer = (summarizer if summarizer is not None
                                       else ExtractiveSummarizer())
        """The summarizer asked for summaries not remembered."""
        self.maxsize = require_int("maxsize", maxsize, minimum=1)
        """Summaries remembered at most (least recently used leave first)."""
        self.name: str = getattr(self.summarizer, "name", type(self.summarizer).__name__)
        self.is_llm: bool = bool(getattr(self.summarizer, "is_llm", False))
        self._summaries: OrderedDict[tuple[Any, ...], str] = OrderedDict()

    def summarize(self, messages: Sequence[Message], max_tokens: int) -> str:
        require_int("max_tokens", max_tokens, minimum=0)
        for m in messages:
            if type(m) is not Message:
                raise TypeError(f"messages must hold Message records, got {m!r}")
        key = (max_tokens, tuple([(m.id, m.role, m.content, m.importance, m.summary_depth)
                                  for m in messages]))
        memo = self._summaries
        text = memo.get(key)
        if text is not None:
            memo.move_to_end(key)
            return text
        text = memo[key] = self.summarizer.summarize(messages, max_tokens)
        if len(memo) > self.maxsize:
            memo.popitem(last=False)
        return text

    def __repr__(self) -> str:
        return f"MemoSummarizer({self.summarizer!r}, maxsize={self.maxsize})"


__all__ = ["ExtractiveSummarizer", "MemoSummarizer", "ScoredSentence", "Summarizer",
           "check_summary_text"]
