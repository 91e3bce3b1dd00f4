"""Compression: shrink the oldest part of a buffer instead of evicting it (D1).

A ``Compressor`` maps a run of messages to a shorter run. Every input either
comes out unchanged (same id) or is represented by a new output message whose
``sources`` name the original messages it stands for, so ``Message.covers``
reports what each output covers and nothing is silently lost. Two ship here:

* ``LLMSummaryCompressor``: one summary message (importance 0.8) from a
  ``Summarizer`` capped at about 2-3 sentences, marked as D1 marks it:
  ``[Previous conversation summary]: ...``, so a model reading the window knows
  a summary from a turn. Named after D1's LLM step; with the default
  ``ExtractiveSummarizer`` no LLM is involved, and its ``name``/``is_llm`` say so.
* ``SelectiveCompressor``: keeps messages with importance >= 0.7 and replaces
  the rest by one "[N messages omitted]" note (importance 0.3) whose sources
  list the omitted ids: they count as summarized, not lost.

``CompressionPipeline`` runs compressors in sequence over the oldest third of a
buffer's non-pinned messages once the buffer is above ``compression_threshold``
of its ``max_tokens``, and records each step as a ``Summarization`` event with
rule ``compression:<name>``. Tool calls and their results are never split.

Taught in ``notebooks/03_summary_buffer.ipynb``.
"""

from __future__ import annotations

import hashlib
from dataclasses import replace
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from memorykit._validate import require_fraction, require_int, require_str
from memorykit.buffers.base import MessageBuffer
from memorykit.buffers.summary_buffer import splice, tool_units
from memorykit.messages import Message, MessageFactory, check_importance
from memorykit.summary import ExtractiveSummarizer, Summarizer, check_summary_text
from memorykit.trace import Summarization


@runtime_checkable
class Compressor(Protocol):
    """Maps messages (oldest first) to fewer tokens; see the module docstring's contract."""

    name: str

    def compress(self, messages: Sequence[Message]) -> list[Message]: ...


def _derived_id(prefix: str, messages: Sequence[Message]) -> str:
    """A deterministic id for a message standing for ``messages`` (unique per covered run)."""
    digest = hashlib.blake2b("\x1f".join(m.id for m in messages).encode(), digest_size=6)
    return f"{prefix}-{digest.hexdigest()}"


class LLMSummaryCompressor:
    """Replace the run by one summary message (D1's summarization step).

    ``max_tokens`` caps the summary (default ``sentences x tokens_per_sentence``
    = 3 x 25 = 75 tokens, the seed's "2-3 sentences"). Runs shorter than
    ``min_messages`` (3, as in the seed) come back unchanged. Whether an LLM
    wrote the summary depends on ``summarizer``: ``is_llm`` forwards it.

    The summary's content is ``marker`` + the summarizer's text (default ``MARKER``, D1's
    ``"[Previous conversation summary]: "``; ``""`` for the bare text); the cap is the
    text's, the marker's tokens come on top. A later run that holds this compressor's
    summary gives the summarizer its text without the marker, so markers never pile up.
    """

    MARKER = "[Previous conversation summary]: "

    def __init__(
        self,
        summarizer: Summarizer | None = None,
        *,
        sentences: int = 3,
        tokens_per_sentence: int = 25,
        max_tokens: int | None = None,
        importance: float = 0.8,
        min_messages: int = 3,
        factory: MessageFactory | None = None,
        marker: str = MARKER,
    ) -> None:
        self.factory = factory if factory is not None else MessageFactory()
        if not isinstance(self.factory, MessageFactory):
            raise TypeError(f"factory must be a MessageFactory, got {factory!r}")
        self.marker = require_str("marker", marker)
        if summarizer is None:
            summarizer = ExtractiveSummarizer(self.factory.counter)
        elif not callable(getattr(summarizer, "summarize", None)):
            raise TypeError(f"summarizer must have a summarize(messages, max_tokens) method, "
                            f"got {summarizer!r}")
        self.summarizer = summarizer
        self.sentences = require_int("sentences", sentences, minimum=1)
        self.tokens_per_sentence = require_int(
            "tokens_per_sentence", tokens_per_sentence, minimum=1
        )
        self.max_tokens = (
            sentences * tokens_per_sentence
            if max_tokens is None
            else require_int("max_tokens", max_tokens, minimum=1)
        )
        self.importance = check_importance(importance)
        self.min_messages = require_int("min_messages", min_messages, minimum=1)
        self.name = f"summary[{getattr(summarizer, 'name', type(summarizer).__name__)}]"

    @property
    def is_llm(self) -> bool:
        return bool(getattr(self.summarizer, "is_llm", False))

    def compress(self, messages: Sequence[Message]) -> list[Message]:
        messages = list(messages)
        if len(messages) < self.min_messages:
            return messages
        text = self.summarizer.summarize([self._unmarked(m) for m in messages], self.max_tokens)
        check_summary_text(text, self.summarizer, len(messages))  # before anything is replaced
        return [
            self.factory.summary(
                self.marker + text,
                messages,
                importance=self.importance,
                created_at=max(m.created_at for m in messages),
                id=_derived_id("sum", messages),
            )
        ]


    def _unmarked(self, m: Message) -> Message:
        """``m`` as the summarizer should read it: a summary of ours without its marker."""
        if not (self.marker and m.is_summary and m.content.startswith(self.marker)):
            return m
        text = m.content[len(self.marker):]
        tokens = self.factory.counter.count(text)
        return replace(m, content=text, content_tokens=tokens,
                       billed_tokens=m.billed_tokens - m.content_tokens + tokens)


class SelectiveCompressor:
    """Keep important messages, fold the rest into one "[N messages omitted]" note.

    A tool call and its results are kept or omitted together: kept if any of
    them reaches the threshold. The note comes first, then the kept messages in
    their original order (the seed's layout). N counts the messages omitted from
    this run; an omitted summary contributes its sources to the note's sources.
    """

    def __init__(
        self,
        importance_threshold: float = 0.7,
        *,
        note_importance: float = 0.3,
        factory: MessageFactory | None = None,
    ) -> None:
        self.importance_threshold = check_importance(importance_threshold, "importance_threshold")
        self.note_importance = check_importance(note_importance, "note_importance")
        self.factory = factory if factory is not None else MessageFactory()
        if not isinstance(self.factory, MessageFactory):
            raise TypeError(f"factory must be a MessageFactory, got {factory!r}")
        self.name = f"selective>={self.importance_threshold:g}"

    is_llm = False

    def compress(self, messages: Sequence[Message]) -> list[Message]:
        kept: list[Message] = []
        omitted: list[Message] = []
        for unit in tool_units(list(messages)):
            if max(m.importance for m in unit) >= self.importance_threshold:
                kept.extend(unit)
            else:
                omitted.extend(unit)
        if not omitted:
            return kept
        note = self.factory.summary(
            f"[{len(omitted)} messages omitted]",
            omitted,
            importance=self.note_importance,
            created_at=max(m.created_at for m in omitted),
            id=_derived_id("omit", omitted),
        )
        order = {m.id: i for i, m in enumerate(messages)}
        kept.sort(key=lambda m: order[m.id])
        return [note, *kept]


def check_compression(inputs: Sequence[Message], outputs: Sequence[Message], name: str) -> None:
    """Raise ValueError unless every input is kept or covered by a new output."""
    in_ids = {m.id for m in inputs}
    out_ids = [m.id for m in outputs]
    if len(set(out_ids)) != len(out_ids):
        raise ValueError(f"compressor {name!r} returned the same message id twice: {out_ids}")
    covered = {i for m in outputs if m.id not in in_ids for i in m.covers}
    for m in inputs:
        if m.id not in out_ids and not set(m.covers) <= covered:
            raise ValueError(
                f"compressor {name!r} dropped message {m.id!r} without covering it "
                "in a new output's sources"
            )


class CompressionPipeline:
    """Compress the oldest third of a buffer once it is over ``compression_threshold``.

    ``add(message)`` adds to the buffer then compresses if needed (the seed's
    order). The segment is the oldest third (``len // 3``, as in the seed) of the
    non-pinned messages, never including the message just added or a tool call
    still waiting for results, and cut back so no tool call is separated from
    its results. Returns the ``Summarization`` events it recorded.
    """

    def __init__(
        self,
        buffer: MessageBuffer,
        compressors: Sequence[Compressor],
        compression_threshold: float = 0.8,
        *,
        segment_fraction: float = 1 / 3,
    ) -> None:
        if not isinstance(buffer, MessageBuffer):
            raise TypeError(f"buffer must be a MessageBuffer, got {buffer!r}")
        if buffer.max_tokens is None:
            raise ValueError(
                f"buffer.max_tokens must be set to compress, got {buffer.max_tokens!r}"
            )
        compressors = list(compressors)
        if not compressors:
            raise ValueError(f"compressors must name at least one compressor, got {compressors!r}")
        for c in compressors:
            if not callable(getattr(c, "compress", None)):
                raise TypeError(f"compressors must have a compress(messages) method, got {c!r}")
            require_str("compressor name", getattr(c, "name", None), non_empty=True)
        self.buffer = buffer
        self.compressors = compressors
        self.compression_threshold = require_fraction(
            "compression_threshold", compression_threshold
        )
        self.segment_fraction = require_fraction("segment_fraction", segment_fraction)

    @property
    def threshold_tokens(self) -> float:
        return self.compression_threshold * self.buffer.max_tokens  # type: ignore[operator]

    def should_compress(self) -> bool:
        return self.buffer.tokens > self.threshold_tokens

    def add(self, message: Message) -> list:
        """Add to the buffer, then compress if needed; returns evictions and summarizations."""
        events: list = list(self.buffer.add(message))
        return events + self.compress_if_needed()

    def compress_if_needed(self) -> list[Summarization]:
        return self.compress() if self.should_compress() else []

    def segment(self) -> list[Message]:
        """The oldest ``segment_fraction`` of non-pinned messages, whole tool groups only."""
        b = self.buffer
        window = [m for m in b if not b.is_pinned(m)]
        size = int(len(window) * self.segment_fraction)
        head = window[:size]
        head_ids = {m.id for m in head}
        out: list[Message] = []
        for unit in tool_units(head):
            ids = b._companions.get(unit[0].id)
            whole = ids is None or (set(ids) <= head_ids and not b._waiting.get(ids[0]))
            if not whole or any(m.id == b._newest for m in unit):
                break
            out.extend(unit)
        order = {m.id: i for i, m in enumerate(window)}
        out.sort(key=lambda m: order[m.id])
        return out

    def compress(self) -> list[Summarization]:
        """Compress the segment now, whatever the fill level."""
        b = self.buffer
        segment = self.segment()
        if not segment:
            return []
        newest = b.get(b._newest) if b._newest is not None else None
        trigger = newest if newest is not None else segment[-1]
        now = b._now(trigger)
        tokens = b.tokens
        current = segment
        events: list[Summarization] = []
        for compressor in self.compressors:
            out = list(compressor.compress(current))
            check_compression(current, out, compressor.name)
            in_ids = {m.id for m in current}
            new = [m for m in out if m.id not in in_ids]
            out_ids = {m.id for m in out}
            removed = [m for m in current if m.id not in out_ids]
            before = tokens
            tokens += sum(m.billed_tokens for m in new) - sum(m.billed_tokens for m in removed)
            assigned: set[str] = set()
            for m in new:
                if m.id in b:
                    raise ValueError(f"compressed message id {m.id!r} is already in the buffer")
                sources = set(m.sources)
                mine = [r.id for r in removed if r.id not in assigned and set(r.covers) <= sources]
                assigned.update(mine)
                events.append(
                    Summarization(
                        tuple(mine),
                        m.id,
                        m.sources,
                        m.summary_depth,
                        f"compression:{compressor.name}",
                        f"{b.tokens} tokens > compression threshold "
                        f"{self.compression_threshold:g} x {b.max_tokens} = "
                        f"{self.threshold_tokens:g}; {compressor.name} replaced {len(mine)} of "
                        f"the oldest {len(segment)} messages by {m.billed_tokens} tokens",
                        before,
                        tokens,
                        b.max_tokens,
                        now,
                        trigger.turn,
                    )
                )
            current = out
        if [m.id for m in current] == [m.id for m in segment]:
            return []
        final_ids = {m.id for m in current}
        splice(b, [m.id for m in segment if m.id not in final_ids], current, at=segment[0].id)
        for e in events:
            b.trace.append(e)
        return events


__all__ = [
    "CompressionPipeline",
    "Compressor",
    "LLMSummaryCompressor",
    "SelectiveCompressor",
    "check_compression",
]
