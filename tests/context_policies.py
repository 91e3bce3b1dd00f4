"""The context policies the contract suite runs over: every ``ContextPolicy`` memorykit ships.

``POLICIES`` is the one list (``tests/test_context_contract.py`` runs over all of it; the
long-term tests pick the long-term entries from it by class). Each entry builds a fresh policy,
because some policies keep state between requests. The buffers are every policy of the buffer
registry (``memorykit.buffers.registry``, with the buffer contract's settings from
``buffer_policies``) behind ``BufferPolicy``; the baselines are
``memorykit.evaluation.baseline_policies()``; the rest are the other classes with a
``build_context``, each once. A contract test fails when a class that answers
``build_context`` has no entry here, so a new policy cannot miss the contract.
"""

from __future__ import annotations

from collections.abc import Callable

from memorykit.buffers import BufferWindow
from memorykit.clock import StepClock
from memorykit.context import BufferPolicy, ContextPolicy
from memorykit.entities.context_policy import EntityContextPolicy
from memorykit.evaluation.baselines import baseline_policies
from memorykit.evaluation.export import TunedPolicy
from memorykit.embeddings import LexicalHashingEmbedder
from memorykit.evaluation.hybrid import HybridRetrieval
from memorykit.evaluation.scored import TermOverlapRetrieval
from memorykit.evaluation.superseding import SupersedingRetrieval
from memorykit.evaluation.toolkit import AttentionPolicy
from memorykit.longterm.architectures import (
    AttentionArchitecture,
    ContextWindowArchitecture,
    EpisodicArchitecture,
    ReflectionArchitecture,
    SemanticArchitecture,
)
from memorykit.longterm.episodic import EpisodicSettings
from memorykit.longterm.service import MemoryService, MemorySettings
from memorykit.classroom.lesson13_memories import RuleStore
from memorykit.classroom.scenarios.probes import booking_critic
from memorykit.facts.timeline import KeepBothDated
from memorykit.workspace.context_policy import WorkspaceContextPolicy

from buffer_policies import POLICIES as BUFFERS

PolicyMaker = Callable[[], ContextPolicy]

RETRIEVAL = ("bm25", "hybrid-retrieval", "term-overlap", "superseding-retrieval")
"""The policies that rank messages against the question (the retrieval contract's subjects)."""

BASELINE_MESSAGES = 6
"""Messages the last-N baseline keeps (as short as the long-term windows: a 30-turn test
conversation must overflow it)."""


def _buffer(name: str) -> PolicyMaker:
    make = BUFFERS[name]
    return lambda: BufferPolicy(lambda budget: make(budget, StepClock()), f"buffer-{name}")


def _baseline(name: str) -> PolicyMaker:
    return lambda: baseline_policies(BASELINE_MESSAGES)[name]


POLICIES: dict[str, PolicyMaker] = {
    **{f"buffer-{name}": _buffer(name) for name in BUFFERS},
    **{name: _baseline(name) for name in baseline_policies(BASELINE_MESSAGES)},
    "toolkit-attention": lambda: AttentionPolicy(),
    # The lexical embedder stands in for MiniLM: the contract is about the context, not the model.
    "hybrid-retrieval": lambda: HybridRetrieval(embedder=LexicalHashingEmbedder()),
    "superseding-retrieval": lambda: SupersedingRetrieval(
        HybridRetrieval(embedder=LexicalHashingEmbedder()), keep="dated"),
    "term-overlap": lambda: TermOverlapRetrieval(),
    "entity": lambda: EntityContextPolicy(),
    "workspace": lambda: WorkspaceContextPolicy(),
    "A": lambda: ContextWindowArchitecture(6),
    "B": lambda: EpisodicArchitecture(EpisodicSettings(stm_limit=6)),
    "C": lambda: SemanticArchitecture(6),
    "D": lambda: ReflectionArchitecture(SemanticArchitecture(6), booking_critic()),
    "attention": lambda: AttentionArchitecture(),
    "service": lambda: MemoryService(lambda: BufferWindow(6)),
    "service-system-memory": lambda: MemoryService(
        lambda: BufferWindow(6), memory=MemorySettings(system_memory="You are a travel agent.")),
    "service-no-history": lambda: MemoryService(
        lambda: BufferWindow(6), memory=MemorySettings(include_history=False)),
    # what `tune --export` saved and `load_policy` rebuilt (issue 28): BM25 at its tuned
    # settings, asked at any budget like every policy here
    "tuned-bm25": lambda: TunedPolicy("bm25", {"k1": 0.9, "b": 0.5}, budget=1000),
    # lesson 13's store tracking facts under an update rule (a student's, in the lesson)
    "service-update-rule": lambda: RuleStore(KeepBothDated()),
}
