"""Entity working memory: an agent's RAM of recently referenced entities (D0).

* ``records``: ``Entity`` (``type:id`` + label + minimal metadata), ``EntityEviction``.
* ``scoring``: ``RelevanceWeights`` and the vectorized ``relevance_scores``.
* ``memory``: ``EntityMemory`` (accounting, TTL), ``SlidingWindowMemory``, ``RelevanceMemory``.
* ``resolution``: ``ReferenceResolver`` ("this page", "it", "the previous entry").
* ``prompt``: the memory-aware system prompt and its token savings.
* ``store``: read-through fallback with simulated latency.
* ``health``: fill, eviction, resolution and latency with the seed's alert levels.
* ``hybrid``: entities plus a running summary for long sessions.
* ``context``: ``EntityContextPolicy``, entity memory behind ``ContextPolicy.build_context``.

Taught in ``notebooks/04_entity_memory.ipynb``.
"""

from memorykit.entities.context_policy import EntityContextPolicy, IdMentionExtractor
from memorykit.entities.health import (
    HealthMetric,
    HealthThresholds,
    health_report,
    measure_access_latency,
)
from memorykit.entities.hybrid import EntitySummaryMemory
from memorykit.entities.memory import (
    SEED_MAX_SIZE,
    SEED_TTL_MINUTES,
    EntityMemory,
    RelevanceMemory,
    SlidingWindowMemory,
)
from memorykit.entities.prompt import prompt_token_series, render_system_prompt, token_savings
from memorykit.entities.records import (
    Entity,
    EntityEviction,
    EntityState,
    EntityUpdate,
    LargePayloadWarning,
    entity_key,
    parse_key,
)
from memorykit.entities.resolution import DEFAULT_VOCABULARY, Reference, ReferenceResolver, Resolution
from memorykit.entities.scoring import SEED_WEIGHTS, RelevanceWeights, relevance_scores
from memorykit.entities.store import EntityStore, InMemoryStore, Lookup, ReadThroughMemory

__all__ = [
    "DEFAULT_VOCABULARY", "SEED_MAX_SIZE", "SEED_TTL_MINUTES", "SEED_WEIGHTS",
    "Entity", "EntityContextPolicy", "EntityEviction", "EntityMemory", "EntityState", "EntityStore",
    "EntityUpdate",
    "EntitySummaryMemory", "HealthMetric", "HealthThresholds", "IdMentionExtractor", "InMemoryStore",
    "LargePayloadWarning", "Lookup", "ReadThroughMemory", "Reference", "ReferenceResolver",
    "RelevanceMemory", "RelevanceWeights", "Resolution", "SlidingWindowMemory",
    "entity_key", "health_report", "measure_access_latency", "parse_key",
    "prompt_token_series", "relevance_scores", "render_system_prompt", "token_savings",
]
