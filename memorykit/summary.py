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
message whose sentences compete again.

Taught in ``notebooks/03_summary_buffer.ipynb``.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar, Protocol, runtime_checkable

from memorykit._text import STOPWORDS, has_digit, words
from memorykit._validate import require_int, require_non_negative
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
    """

    is_llm: ClassVar[bool] = False

    def __init__(
        self,
        counter: TokenCounter | None = None,
        *,
        label_roles: bool = True,
        importance_weight: float = 0.5,
        fact_bonus: float = 0.25,
    ) -> None:
        if counter is not None and not callable(getattr(counter, "count", None)):
            raise TypeError(f"counter must have a count(text) method, got {counter!r}")
        self.counter: TokenCounter = counter if counter is not None else Tokenizer()
        self.label_roles = bool(label_roles)
        self.importance_weight = require_non_negative("importance_weight", importance_weight)
        self.fact_bonus = require_non_negative("fact_bonus", fact_bonus)
        self.name = f"extractive({getattr(self.counter, 'encoding', '?')})"

    # ---------------------------------------------------------------- scoring
    def _sentences(self, messages: Sequence[Message]) -> list[tuple[Message, str, str]]:
        """(message, text to print, text to score) for every distinct sentence."""
        out: list[tuple[Message, str, str]] = []
        seen: set[str] = set()
        for m in messages:
            if type(m) is not Message:
                raise TypeError(f"messages must hold Message records, got {m!r}")
            for raw in _SENTENCE_END.split(m.content):
                sentence = raw.strip()
                if not sentence:
                    continue
                label = _ROLE_LABEL.match(sentence)
                body = sentence[label.end():] if label else sentence
                key = " ".join(body.lower().split())
                if key in seen:
                    continue
                seen.add(key)
                if self.label_roles and not label and not m.is_summary:
                    sentence = f"{m.role}: {sentence}"
                out.append((m, sentence, body))
        return out

    def score_sentences(self, messages: Sequence[Message]) -> list[ScoredSentence]:
        """Every candidate sentence with its score parts, in original order."""
        raw = self._sentences(messages)
        token_lists = [words(body) for _, _, body in raw]
        content = [
            {w.lower() for w in ws if w.lower() not in STOPWORDS and (len(w) > 2 or has_digit(w))}
            for ws in token_lists
        ]
        freq: Counter[str] = Counter()
        for c in content:
            freq.update(c)
        top = max(freq.values(), default=1)
        out = []
        for i, ((m, text, _), ws, c) in enumerate(zip(raw, token_lists, content)):
            relevance = (sum(freq[w] for w in c) / len(c) / top) if c else 0.0
            n_facts = sum(1 for w in ws if has_digit(w))
            n_facts += sum(
                1 for j, w in enumerate(ws) if j > 0 and w[0].isupper() and w != "I"
            )
            out.append(
                ScoredSentence(
                    i,
                    m.id,
                    text,
                    self.counter.count(text),
                    relevance,
                    self.fact_bonus * min(3, n_facts),
                    self.importance_weight * m.importance,
                )
            )
        return out

    # ------------------------------------------------------------- summarizing
    def summarize(self, messages: Sequence[Message], max_tokens: int) -> str:
        require_int("max_tokens", max_tokens, minimum=0)
        if max_tokens == 0 or not messages:
            return ""
        scored = self.score_sentences(messages)
        if not scored:
            return ""
        ranked = sorted(scored, key=lambda s: (-s.score, s.position))
        chosen: list[ScoredSentence] = []
        used = 0
        for s in ranked:
            # Joining adds at most one token per separator; the exact count is checked below.
            cost = s.tokens + (1 if chosen else 0)
            if used + cost <= max_tokens:
                chosen.append(s)
                used += cost
        while chosen:
            text = " ".join(s.text for s in sorted(chosen, key=lambda s: s.position))
            if self.counter.count(text) <= max_tokens:
                return text
            chosen.remove(min(chosen, key=lambda s: (s.score, -s.position)))
        return self._truncate(ranked[0].text, max_tokens)

    def _truncate(self, sentence: str, max_tokens: int) -> str:
        """The longest word prefix of ``sentence`` that fits with "..." appended."""
        parts = sentence.split()
        lo, hi = 0, len(parts)  # invariant: prefix of lo words fits (0 words: "")
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.counter.count(" ".join(parts[:mid]) + "...") <= max_tokens:
                lo = mid
            else:
                hi = mid - 1
        return " ".join(parts[:lo]) + "..." if lo else ""

    def __repr__(self) -> str:
        return f"ExtractiveSummarizer({self.counter!r}, label_roles={self.label_roles})"


__all__ = ["ExtractiveSummarizer", "ScoredSentence", "Summarizer"]
