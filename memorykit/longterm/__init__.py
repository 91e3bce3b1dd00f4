"""Long-term memory: D3's four architectures and D4's memory service.

* ``episodic``: episodes consolidated from short-term overflow, scored by
  keyword overlap and recency (architecture B); ``episode_scores`` is the formula.
* ``semantic``: sentences embedded in a vector store, recalled by cosine (C).
* ``reflection``: rules a critic draws from mistakes, injected as instructions (D).
* ``architectures``: A-D (and the attention window) as ``ContextPolicy``s.
* ``vectorstore``: exact numpy cosine search; the same protocol on Qdrant.
* ``service``: working memory per session + a long-term store (D4).
* ``search_tool``: the service's recall offered to the agent as a ``search`` tool (D4).
* ``minilm``: all-MiniLM-L6-v2 offline in numpy (no PyTorch), from the packaged weights.
* ``sentence_embedder``: the same model through sentence-transformers (the reference; PyTorch).

D3's benchmark over A-D is ``memorykit.classroom.replays.recall_benchmark`` (its scenarios:
``memorykit.classroom.scenarios.probes``).

Every memory item keeps the ids of the messages it came from, so recall is
scored against the evidence even when the item is a summary or a rule.

Taught in ``notebooks/10_architectures.ipynb``.
"""

from memorykit.longterm.architectures import (
    Architecture,
    AttentionArchitecture,
    ContextWindowArchitecture,
    EpisodicArchitecture,
    ReflectionArchitecture,
    SemanticArchitecture,
    make_architectures,
)
from memorykit.longterm.episodic import (
    Episode,
    EpisodeScore,
    EpisodicMemory,
    EpisodicSettings,
    episode_scores,
    extract_keywords,
    keyword_overlap,
    query_terms,
)
from memorykit.longterm.events import Recall, RuleLearned, Stored, StoreFailed, Trimmed
from memorykit.longterm.minilm import MiniLMEmbedder, minilm_available, minilm_embedder
from memorykit.longterm.reflection import RULE_PREFIX, ReflectionMemory, ReflectionSettings
from memorykit.longterm.semantic import Recollection, SemanticMemory, SemanticSettings, split_units
from memorykit.longterm.sentence_embedder import (
    SentenceTransformerEmbedder,
    sentence_transformers_available,
)
from memorykit.longterm.search_tool import (
    MEMORY_SEARCH_TOOL,
    SEARCH_TYPES,
    answer_memory_search,
    memory_search_tool,
)
from memorykit.longterm.service import (
    STORAGE_SCOPES,
    LongTermSettings,
    LongTermWriteFailed,
    MemoryService,
    MemorySettings,
    Session,
)
from memorykit.longterm.vectorstore import (
    Hit,
    NumpyVectorStore,
    QdrantVectorStore,
    VectorStore,
    qdrant_available,
)

__all__ = [
    "MEMORY_SEARCH_TOOL",
    "RULE_PREFIX",
    "SEARCH_TYPES",
    "STORAGE_SCOPES",
    "Architecture",
    "AttentionArchitecture",
    "ContextWindowArchitecture",
    "Episode",
    "EpisodeScore",
    "EpisodicArchitecture",
    "EpisodicMemory",
    "EpisodicSettings",
    "Hit",
    "LongTermSettings",
    "LongTermWriteFailed",
    "MemoryService",
    "MemorySettings",
    "MiniLMEmbedder",
    "NumpyVectorStore",
    "QdrantVectorStore",
    "Recall",
    "Recollection",
    "ReflectionArchitecture",
    "ReflectionMemory",
    "ReflectionSettings",
    "RuleLearned",
    "SemanticArchitecture",
    "SemanticMemory",
    "SemanticSettings",
    "SentenceTransformerEmbedder",
    "Session",
    "StoreFailed",
    "Stored",
    "Trimmed",
    "VectorStore",
    "answer_memory_search",
    "episode_scores",
    "extract_keywords",
    "keyword_overlap",
    "make_architectures",
    "memory_search_tool",
    "minilm_available",
    "minilm_embedder",
    "qdrant_available",
    "query_terms",
    "sentence_transformers_available",
    "split_units",
]
