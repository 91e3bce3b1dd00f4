"""The toolkit's short-term memories as ContextPolicies, ready for a side-by-side comparison.

``toolkit_policies()`` returns the registered buffers (FIFO, importance, hybrid,
recency, window, summary: ``memorykit.buffers.registry``) through ``BufferPolicy``, the
attention window through ``AttentionPolicy`` and stemmed BM25 plus MiniLM through
``HybridRetrieval`` ("hybrid-retrieval", not the hybrid buffer), each built with
module-level factories so a process pool can pickle them. ``AttentionPolicy`` has the harness's per-conversation fast
path (``prepare``): every message is embedded once per conversation, not once
per question. Long-term architectures (episodic, semantic, reflection) are
ContextPolicies of their own: add them to the mapping before calling
``compare_policies``.
Taught in ``notebooks/12_parameter_tuning.ipynb``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from memorykit._validate import require_bool, require_int, require_str
from memorykit.buffers import AttentionWindow, MessageBuffer
from memorykit.buffers.registry import policies
from memorykit.context import BufferPolicy, Context, check_request, context_from_messages
from memorykit.evaluation.dataset import EvalConversation
from memorykit.evaluation.hybrid import HybridRetrieval, make_hybrid
from memorykit.embeddings import Embedder, LexicalHashingEmbedder
from memorykit.messages import Message

__all__ = ["FIXED_POLICIES", "TUNABLE", "AttentionPolicy", "Tunable", "fixed_policy",
           "make_attention", "toolkit_policies"]


class AttentionPolicy:
    """The attention window as a ContextPolicy: the messages most similar to the query.

    The whole history goes into an unbounded buffer and ``AttentionWindow``
    selects hits and their neighbours within the budget (less the reply primer).
    """

    query_independent = False

    def __init__(self, embedder: Embedder | None = None, neighbours: int = 1, *,
                 include_pinned: bool = True, name: str = "attention") -> None:
        self.embedder = embedder
        self.neighbours = require_int("neighbours", neighbours, minimum=0)
        self.include_pinned = require_bool("include_pinned", include_pinned)
        self.name = require_str("name", name, non_empty=True)

    def build_context(self, history: Sequence[Message], query: str, budget: int) -> Context:
        check_request(query, budget)
        buffer = _history_buffer(history)
        return self._select(self.window(buffer, budget, self.embedder), query, budget)

    def window(self, buffer: MessageBuffer, budget: int, embedder: Embedder | None,
               vectors: Mapping[str, np.ndarray] | None = None) -> AttentionWindow:
        """The attention window this policy selects with from ``buffer`` at ``budget`` (its
        room is the budget less the reply primer)."""
        room = max(1, budget - buffer.chat_format.reply_primer)
        return AttentionWindow(buffer, embedder, room, self.neighbours,
                               include_pinned=self.include_pinned, vectors=vectors)

    def _select(self, window: AttentionWindow, query: str, budget: int) -> Context:
        buffer = window.buffer
        chosen = window.select(query) if len(buffer) else []
        return context_from_messages(chosen, budget, self.name, buffer.chat_format)

    def prepare(self, conversation: EvalConversation) -> _PreparedAttention:
        """Embed every message of ``conversation`` once; questions then reuse the vectors."""
        if not isinstance(conversation, EvalConversation):
            raise TypeError(f"conversation must be an EvalConversation, got {conversation!r}")
        return _PreparedAttention(self, conversation.messages)

    def __repr__(self) -> str:
        return f"AttentionPolicy({self.name!r})"


def _history_buffer(history: Sequence[Message]) -> MessageBuffer:
    buffer = MessageBuffer(max_tokens=None)
    for m in history:
        buffer.add(m)
    return buffer


class _PreparedAttention:
    """One conversation's embeddings (computed once) and the window of the last position asked.

    The harness asks a position's questions together, positions in order, so keeping the last
    window (whose query-independent layout is then built once per position) is enough.
    """

    def __init__(self, policy: AttentionPolicy, messages: Sequence[Message]) -> None:
        self.policy = policy
        self.messages = tuple(messages)
        self.embedder = policy.embedder if policy.embedder is not None else LexicalHashingEmbedder()
        vectors = np.asarray(self.embedder.embed([m.content for m in self.messages]), dtype=np.float32) \
            if self.messages else np.zeros((0, 1), dtype=np.float32)
        self.vectors = {m.id: v for m, v in zip(self.messages, vectors)}
        self._last: tuple[int, int, AttentionWindow] | None = None

    def build_context(self, position: int, query: str, budget: int) -> Context:
        check_request(query, budget)
        if not 0 <= position <= len(self.messages):
            raise ValueError(f"position must be in [0, {len(self.messages)}], got {position!r}")
        if self._last is None or self._last[:2] != (position, budget):
            buffer = _history_buffer(self.messages[:position])
            self._last = (position, budget,
                          self.policy.window(buffer, budget, self.embedder, self.vectors))
        return self.policy._select(self._last[2], query, budget)


def toolkit_policies(window_size: int = 20) -> dict[str, Any]:
    """Every short-term memory of the toolkit with its default settings, by name.

    The buffers are every policy of the buffer registry (``memorykit.buffers.registry``)
    except presets, built by ``PolicySpec.build`` (picklable, for process pools); the window
    is named for its size. The attention window and the hybrid retrieval (stemmed BM25 plus
    MiniLM, ``memorykit.evaluation.hybrid``) come last.
    """
    require_int("window_size", window_size, minimum=1)
    out: dict[str, Any] = {}
    for spec in policies():
        if spec.kind == "preset":
            continue
        if spec.kind == "window":
            name = f"{spec.name}-{window_size}"
            out[name] = BufferPolicy(partial(spec.build, window_size=window_size), name,
                                     spec.signals)
        else:
            out[spec.name] = BufferPolicy(spec.build, spec.name, spec.signals)
    out["attention"] = AttentionPolicy()
    out["hybrid-retrieval"] = HybridRetrieval()
    return out


# ------------------------------------------------------------ tunable policies
def make_attention(neighbours: int = 1, dimension: int = 512) -> AttentionPolicy:
    """The attention window over a lexical hashing embedder of ``dimension`` (picklable factory)."""
    return AttentionPolicy(LexicalHashingEmbedder(dimension), neighbours)


@dataclass(frozen=True)
class Tunable:
    """A policy with two tunable parameters: its factory, the parameters' grids and defaults."""

    make: Any
    """Picklable factory taking both parameters as keywords."""
    names: tuple[str, str]
    """The two parameters' names."""
    values: tuple[tuple[Any, ...], tuple[Any, ...]]
    """The grid of each parameter, in order."""
    defaults: tuple[Any, Any]
    """Each parameter's default (a value of its grid)."""

    @property
    def default_index(self) -> tuple[int, int]:
        """Where each default sits in its grid (the cell a sweep's arrays hold it in)."""
        return self.values[0].index(self.defaults[0]), self.values[1].index(self.defaults[1])


def _tunable() -> dict[str, Tunable]:
    from memorykit.evaluation.baselines import BM25Retrieval
    from memorykit.evaluation.superseding import make_superseding

    hybrid_grid = ((0.0, 0.25, 0.5, 0.75, 1.0), (0, 1, 2))

    return {
        "bm25": Tunable(BM25Retrieval, ("k1", "b"),
                        ((0.3, 0.6, 0.9, 1.2, 1.5, 2.0), (0.0, 0.25, 0.5, 0.75, 1.0)), (1.5, 0.75)),
        "attention": Tunable(make_attention, ("neighbours", "dimension"),
                             ((0, 1, 2, 3), (64, 128, 256, 512)), (1, 512)),
        "hybrid-retrieval": Tunable(make_hybrid, ("lexical_weight", "neighbours"), hybrid_grid,
                                    (0.25, 0)),
        # the hybrid that notices changed facts, over the same grid: compared setting for setting
        "superseding-retrieval": Tunable(make_superseding, ("lexical_weight", "neighbours"),
                                         hybrid_grid, (0.25, 0)),
    }


TUNABLE: dict[str, Tunable] = _tunable()
"""The policies ``tune`` sweeps (name -> factory and two parameter grids); lesson 12 tunes all
but superseding-retrieval (its conversations' facts do not change: lesson 13's subject)."""


def _fixed() -> dict[str, Any]:
    from memorykit.evaluation.baselines import baseline_policies
    from memorykit.evaluation.superseding import SupersedingRetrieval

    # the hybrid that notices changed facts, beside the plain one (issue 27)
    return {**toolkit_policies(), "superseding-retrieval": SupersedingRetrieval(),
            **baseline_policies()}


FIXED_POLICIES: dict[str, Any] = _fixed()
"""Toolkit memories and baselines at their defaults, compared with the tuned ones. The summary
buffer is among them: the harness credits a summary only with the turns its text still says
(``memorykit.evaluation.scoring``), so it no longer tops a comparison for what it condensed."""


def fixed_policy(name: str) -> Any:
    """A policy of ``FIXED_POLICIES`` by name (a picklable factory for process pools)."""
    if name not in FIXED_POLICIES:
        raise ValueError(f"name must be one of {', '.join(FIXED_POLICIES)}, got {name!r}")
    return FIXED_POLICIES[name]
