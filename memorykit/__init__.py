"""memorykit: how LLM agents remember, as a small tested library.

The library keeps an agent's conversation within a token budget and explains every decision
it makes (what it evicted, summarized or kept, and why). ``import memorykit`` gives the names
below and imports nothing heavy: each loads its module on first use. ``docs/API.md`` lists
them with the module each comes from; everything else stays importable from its module
(``from memorykit.buffers.attention import AttentionWindow``) but is not advertised here.

- Tokens and messages: ``Tokenizer`` counts exactly, offline; ``count_chat_tokens`` adds the
  chat framing; ``ContextBudget`` shares a context window; ``MessageFactory`` makes the
  ``Message`` records every memory stores.
- Decisions and time: ``Trace`` explains them; ``StepClock``, ``TurnClock``, ``WallClock``.
- One question every memory answers: ``ContextPolicy`` gives a ``Context`` for a query under
  a budget; ``BufferPolicy`` makes any buffer one.
- Short-term memory: ``FIFOBuffer``, ``ImportanceBuffer``, ``HybridBuffer``,
  ``RecencyWeightedBuffer`` on ``MessageBuffer``; ``policy(name)`` / ``policies()`` is the
  registry with every policy's settings; ``SummaryBuffer`` with ``ExtractiveSummarizer``.
- Embeddings: ``LexicalHashingEmbedder``, ``minilm_embedder()`` (all-MiniLM-L6-v2 in numpy).
- Working memory: ``EntityMemory``; ``WorkingMemory`` (tasks, notes, objects) over a
  ``KnowledgeGraph``.
- Long-term memory: ``EpisodicMemory``, ``SemanticMemory``, ``ReflectionMemory``, and
  ``MemoryService`` (working memory per session plus a long-term store).
- A real model: ``choose_backend()`` (OpenAI-compatible when configured, offline otherwise),
  ``OpenAIChatModel``, ``OpenAISummarizer``, ``OpenAIEmbedder``.
- Facts that change: ``find_updates`` finds the later messages that replace an earlier fact
  (LLM-free rules); ``FactTimeline`` keeps each fact's versions with their validity intervals
  under an update policy; ``SupersedingRetrieval`` sends the current statement and marks the
  replaced one; ``audit_store`` counts what a long-term store holds that it should not.
- Measuring and tuning: ``evaluate``, ``tune``, ``load_chat_logs``, ``load_locomo``
  (``python -m memorykit tune`` on the command line); ``load_policy`` rebuilds the
  policy that ``tune --export`` saved (a ``TunedPolicy``), ready to build contexts.
- Saving: ``dumps`` / ``loads`` (JSON, every future decision intact).

The interfaces the parts meet at are in ``memorykit.protocols``. The lessons are the notebooks
in ``notebooks/`` (``00_index.ipynb`` first); the code that teaches and checks them lives in
``memorykit.classroom``, which the library never imports. Docstrings cite their sources as
D0-D4, the design documents described in ``docs/BIBLIOGRAPHY.md``.
"""

from __future__ import annotations

import importlib

# ``typing.TYPE_CHECKING`` without importing ``typing`` (3 ms): type checkers read this name too
TYPE_CHECKING = False

__version__ = "0.1.0"

# The front door, by concept: (group title, ((name, module that defines it), ...)).
# docs/API.md is generated from it (scripts/write_api_doc.py; tests/test_front_door.py).
_GROUPS: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = (
    ("Tokens and messages", (
        ("Tokenizer", "memorykit.tokens"),
        ("count_chat_tokens", "memorykit.tokens"),
        ("ContextBudget", "memorykit.tokens"),
        ("Message", "memorykit.messages"),
        ("MessageFactory", "memorykit.messages"),
    )),
    ("Decisions and time", (
        ("Trace", "memorykit.trace"),
        ("StepClock", "memorykit.clock"),
        ("TurnClock", "memorykit.clock"),
        ("WallClock", "memorykit.clock"),
    )),
    ("The common context interface", (
        ("ContextPolicy", "memorykit.context"),
        ("Context", "memorykit.context"),
        ("BufferPolicy", "memorykit.context"),
    )),
    ("Conversation buffers", (
        ("MessageBuffer", "memorykit.buffers.base"),
        ("FIFOBuffer", "memorykit.buffers.policies"),
        ("ImportanceBuffer", "memorykit.buffers.policies"),
        ("HybridBuffer", "memorykit.buffers.policies"),
        ("RecencyWeightedBuffer", "memorykit.buffers.policies"),
        ("policy", "memorykit.buffers.registry"),
        ("policies", "memorykit.buffers.registry"),
    )),
    ("Summaries", (
        ("SummaryBuffer", "memorykit.buffers.summary_buffer"),
        ("ExtractiveSummarizer", "memorykit.summary"),
    )),
    ("Embeddings", (
        ("LexicalHashingEmbedder", "memorykit.embeddings"),
        ("minilm_embedder", "memorykit.longterm.minilm"),
    )),
    ("Working memory", (
        ("EntityMemory", "memorykit.entities.memory"),
        ("WorkingMemory", "memorykit.workspace.memory"),
        ("KnowledgeGraph", "memorykit.workspace.graph"),
    )),
    ("Long-term memory", (
        ("EpisodicMemory", "memorykit.longterm.episodic"),
        ("SemanticMemory", "memorykit.longterm.semantic"),
        ("ReflectionMemory", "memorykit.longterm.reflection"),
        ("MemoryService", "memorykit.longterm.service"),
    )),
    ("Language models", (
        ("choose_backend", "memorykit.llm.backend"),
        ("OpenAIChatModel", "memorykit.llm.chat"),
        ("OpenAISummarizer", "memorykit.llm.summarizer"),
        ("OpenAIEmbedder", "memorykit.llm.embedder"),
    )),
    ("Facts that change", (
        ("find_updates", "memorykit.facts.detect"),
        ("FactTimeline", "memorykit.facts.timeline"),
        ("SupersedingRetrieval", "memorykit.evaluation.superseding"),
        ("audit_store", "memorykit.facts.audit"),
    )),
    ("Evaluation and tuning", (
        ("evaluate", "memorykit.evaluation.harness"),
        ("tune", "memorykit.evaluation.tune"),
        ("load_chat_logs", "memorykit.evaluation.chatlog"),
        ("load_locomo", "memorykit.evaluation.locomo"),
        ("load_policy", "memorykit.evaluation.export"),
    )),
    ("Saving and restoring", (
        ("dumps", "memorykit.state"),
        ("loads", "memorykit.state"),
    )),
)

_MODULE_OF: dict[str, str] = {name: module for _, names in _GROUPS for name, module in names}

__all__ = list(_MODULE_OF)  # grouped as in _GROUPS


def __getattr__(name: str) -> Any:
    """Load a front-door name from its module on first use, then keep it here."""
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'memorykit' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The module's own names plus the front door's, loaded or not."""
    return sorted(set(globals()) | set(__all__))


if TYPE_CHECKING:  # what type checkers and editors see; kept equal to _GROUPS by a test
    from typing import Any

    from memorykit.buffers.base import MessageBuffer
    from memorykit.buffers.policies import (FIFOBuffer, HybridBuffer, ImportanceBuffer,
                                            RecencyWeightedBuffer)
    from memorykit.buffers.registry import policies, policy
    from memorykit.buffers.summary_buffer import SummaryBuffer
    from memorykit.clock import StepClock, TurnClock, WallClock
    from memorykit.context import BufferPolicy, Context, ContextPolicy
    from memorykit.embeddings import LexicalHashingEmbedder
    from memorykit.entities.memory import EntityMemory
    from memorykit.evaluation.chatlog import load_chat_logs
    from memorykit.evaluation.export import load_policy
    from memorykit.evaluation.harness import evaluate
    from memorykit.evaluation.locomo import load_locomo
    from memorykit.evaluation.superseding import SupersedingRetrieval
    from memorykit.evaluation.tune import tune
    from memorykit.facts.audit import audit_store
    from memorykit.facts.detect import find_updates
    from memorykit.facts.timeline import FactTimeline
    from memorykit.llm.backend import choose_backend
    from memorykit.llm.chat import OpenAIChatModel
    from memorykit.llm.embedder import OpenAIEmbedder
    from memorykit.llm.summarizer import OpenAISummarizer
    from memorykit.longterm.episodic import EpisodicMemory
    from memorykit.longterm.minilm import minilm_embedder
    from memorykit.longterm.reflection import ReflectionMemory
    from memorykit.longterm.semantic import SemanticMemory
    from memorykit.longterm.service import MemoryService
    from memorykit.messages import Message, MessageFactory
    from memorykit.state import dumps, loads
    from memorykit.summary import ExtractiveSummarizer
    from memorykit.tokens import ContextBudget, Tokenizer, count_chat_tokens
    from memorykit.trace import Trace
    from memorykit.workspace.graph import KnowledgeGraph
    from memorykit.workspace.memory import WorkingMemory
