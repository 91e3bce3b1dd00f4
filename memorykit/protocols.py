"""Every interface of memorykit in one place: the small ``typing.Protocol``s the parts meet at.

Anything with the right methods fits (nothing to inherit); the deterministic doubles the
package ships (``memorykit.classroom.doubles.openai_server``, the lexical embedder, the extractive summarizer)
fit them too. A test keeps this list complete: a Protocol defined anywhere in the package
and missing here fails it.

=========================  ==================================  ===============================
protocol                   defined in                          what fits it
=========================  ==================================  ===============================
``Clock``                  ``memorykit.clock``                 ``now()`` in seconds
``TokenCounter``           ``memorykit.tokens``                ``count(text)`` in an encoding
``ContextPolicy``          ``memorykit.context``               what a memory would send for a
                                                               query under a budget
``Summarizer``             ``memorykit.summary``               messages -> text within a cap
``Compressor``             ``memorykit.buffers.compression``   messages -> fewer tokens
``Embedder``               ``memorykit.embeddings``            texts -> unit vectors
``VectorStore``            ``memorykit.longterm.vectorstore``  vectors + payloads, cosine search
``ChatModel``              ``memorykit.llm.chat``              chat messages -> one reply
``Critic``                 ``memorykit.llm.critic``            history -> rules with provenance
``EntityStore``            ``memorykit.entities.store``        the system of record for entities
``EntityExtractor``        ``memorykit.workspace.extract``     text -> entity ids it mentions
``PreparablePolicy``       ``memorykit.evaluation.harness``    a ContextPolicy with a
                                                               per-conversation fast path
``PreparedConversation``   ``memorykit.evaluation.harness``    what ``prepare`` returns
``UpdateDetector``         ``memorykit.facts.detect``          messages -> the later ones that
                                                               replace an earlier fact
=========================  ==================================  ===============================
"""

from __future__ import annotations

from memorykit.buffers.compression import Compressor
from memorykit.clock import Clock
from memorykit.context import ContextPolicy
from memorykit.embeddings import Embedder
from memorykit.entities.store import EntityStore
from memorykit.evaluation.harness import PreparablePolicy, PreparedConversation
from memorykit.facts.detect import UpdateDetector
from memorykit.llm.chat import ChatModel
from memorykit.llm.critic import Critic
from memorykit.longterm.vectorstore import VectorStore
from memorykit.summary import Summarizer
from memorykit.tokens import TokenCounter
from memorykit.workspace.extract import EntityExtractor

__all__ = [
    "ChatModel", "Clock", "Compressor", "ContextPolicy", "Critic", "Embedder", "EntityExtractor",
    "EntityStore", "PreparablePolicy", "PreparedConversation", "Summarizer", "TokenCounter",
    "UpdateDetector", "VectorStore",
]
