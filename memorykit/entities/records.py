"""Entity records: what working memory holds about a page, an entry, a user or a task.

Working memory stores *references*, not contents (D0's "storing too much"
pitfall): a record is ``type:id`` plus a short label and a little metadata, and
the memory warns about or refuses a record whose payload is large. Every removal
is an ``EntityEviction`` carrying the score components at that moment and the
rule that fired. Taught in ``notebooks/04_entity_memory.ipynb``.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Mapping

from memorykit._validate import require_choice, require_int, require_str

_EMPTY: Mapping[str, Any] = MappingProxyType({})

PAYLOAD_POLICIES: tuple[str, ...] = ("warn", "refuse", "ignore")


class LargePayloadWarning(UserWarning):
    """An entity carries more than a reference: working memory should hold ids, not contents."""


def _check_type(entity_type: Any) -> str:
    require_str("entity type", entity_type, non_empty=True)
    if ":" in entity_type or entity_type != entity_type.strip():
        raise ValueError(
            f"entity type must not contain ':' or surrounding spaces, got {entity_type!r}"
        )
    return entity_type


def _check_id(entity_id: Any) -> str:
    if isinstance(entity_id, bool) or not isinstance(entity_id, (str, int)):
        raise TypeError(f"entity id must be a str or an int, got {entity_id!r}")
    text = str(entity_id)
    if not text.strip():
        raise ValueError(f"entity id must be non-empty, got {entity_id!r}")
    return text


def entity_key(entity_type: str, entity_id: str | int) -> str:
    """The memory key ``type:id`` (``entity_key('page', 42) == 'page:42'``)."""
    return f"{_check_type(entity_type)}:{_check_id(entity_id)}"


def parse_key(key: str) -> tuple[str, str]:
    """Split ``'page:42'`` into ``('page', '42')``; the id may itself contain ':'."""
    require_str("key", key, non_empty=True)
    entity_type, sep, entity_id = key.partition(":")
    if not sep:
        raise ValueError(f"key must look like 'type:id', got {key!r}")
    return _check_type(entity_type), _check_id(entity_id)


@dataclass(frozen=True, slots=True)
class Entity:
    """A reference to something the agent is working with.

    Ints are accepted as ids and stored as strings, so ``Entity('page', 42)``
    and ``Entity('page', '42')`` are the same entity.
    """

    type: str
    """The kind of thing: 'page', 'entry', 'user', 'task', ..."""
    id: str
    """Its identifier in the system of record (the CMS database)."""
    label: str = ""
    """A short human name ("Pricing"), shown in the memory-aware prompt."""
    metadata: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)
    """Minimal extra facts (status, author id...). Never the content itself."""
    key: str = field(init=False, repr=False, compare=False)
    """``type:id``, the memory key. Computed once: every add and eviction reads it."""
    payload_chars: int = field(init=False, repr=False, compare=False)
    """Characters of label and metadata: what the memory would hold besides the key.
    Computed once (the record is frozen): every ``EntityMemory.add`` checks it."""

    def __post_init__(self) -> None:
        _check_type(self.type)
        object.__setattr__(self, "id", _check_id(self.id))
        require_str("label", self.label)
        if not isinstance(self.metadata, Mapping):
            raise TypeError(f"metadata must be a mapping, got {self.metadata!r}")
        if type(self.metadata) is not MappingProxyType:
            object.__setattr__(self, "metadata", MappingProxyType(dict(self.metadata)))
        object.__setattr__(self, "key", f"{self.type}:{self.id}")
        object.__setattr__(self, "payload_chars", len(self.label) + sum(
            len(str(k)) + len(str(v)) for k, v in self.metadata.items()))

    def __reduce__(self) -> tuple[Any, ...]:
        # through the constructor (checked, key recomputed); a mapping proxy cannot be pickled
        return (Entity, (self.type, self.id, self.label, dict(self.metadata)))

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, "id": self.id, "label": self.label, "metadata": dict(self.metadata)}

    @classmethod
    def from_key(cls, key: str, label: str = "", **metadata: Any) -> Entity:
        entity_type, entity_id = parse_key(key)
        return cls(entity_type, entity_id, label, metadata)


def check_payload(entity: Entity, max_chars: int | None, on_large: str) -> None:
    """Warn about, refuse or ignore an entity whose payload exceeds ``max_chars``."""
    if max_chars is None or on_large == "ignore":
        return
    size = entity.payload_chars
    if size <= max_chars:
        return
    message = (
        f"entity {entity.key} carries {size} characters of label/metadata, more than "
        f"max_payload_chars={max_chars}: store a reference (type, id, short label), "
        "not the content; fetch the content from the store when it is needed"
    )
    if on_large == "refuse":
        raise ValueError(message)
    warnings.warn(message, LargePayloadWarning, stacklevel=4)


def check_payload_settings(max_chars: Any, on_large: Any) -> tuple[int | None, str]:
    if max_chars is not None:
        require_int("max_payload_chars", max_chars, minimum=1)
    return max_chars, require_choice("on_large_payload", on_large, PAYLOAD_POLICIES)


@dataclass(frozen=True, slots=True)
class EntityState:
    """A snapshot of one remembered entity and its accounting."""

    entity: Entity
    added_at: float
    """Clock seconds when it entered memory (or was last re-added)."""
    last_access: float
    """Clock seconds of its last add or get: recency is measured from here."""
    access_count: int
    """Adds and gets since it entered memory (1 on arrival)."""
    last_turn: int
    """Turn of its last add or get."""

    @property
    def key(self) -> str:
        return self.entity.key


@dataclass(frozen=True, slots=True)
class EntityEviction:
    """One entity removed from working memory, and why, with the numbers at that moment."""

    key: str
    label: str
    """The entity's label, so a trace table reads without a lookup."""
    rule: str
    """What fired: 'fifo', 'relevance', 'ttl', 'summarized' or 'manual'."""
    reason: str
    """A sentence with the numbers that decided it."""
    recency: float
    """exp(-decay * age_minutes) at the moment of removal."""
    frequency: float
    """min(access_count / frequency_cap, 1) at the moment of removal."""
    score: float
    """w_recency * recency + w_frequency * frequency at the moment of removal."""
    age_minutes: float
    """Minutes since its last access."""
    access_count: int
    size_before: int
    size_after: int
    max_size: int
    at: float
    """Clock seconds of the decision."""
    turn: int
    """The turn during which it happened."""

    kind = "entity_eviction"


@dataclass(frozen=True, slots=True)
class EntityUpdate:
    """An entity re-added with changed fields, and what the memory's update policy kept."""

    key: str
    old: Entity
    """The version current before the re-add."""
    new: Entity
    """The version re-added."""
    current: Entity
    """What working memory holds now (``new``, unless the policy kept ``old``)."""
    policy: str
    """The update policy's name (``memorykit.facts.timeline``)."""
    reason: str
    """The policy's sentence: which version replaced which, and until when the old one held."""
    at: float
    turn: int

    kind = "entity_update"
