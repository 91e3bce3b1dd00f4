"""Read-through fallback: working memory first, then the slower store.

``ReadThroughMemory.lookup(key)`` checks working memory (a dict access), and on
a miss fetches from an ``EntityStore`` and remembers the result, as D0's
production practice says. Latency is *simulated* (no sleeping): each lookup is
charged the seed's figures, 0.2 ms for memory and 50-200 ms (seeded uniform)
for the database, so a notebook can show the contrast honestly and label it as
simulated. Real access time of the dict lookup is measured separately by the
benchmark (``python -m bench.entities``). ``InMemoryStore`` is the
deterministic test double: a dict that also holds the full contents that
working memory must *not* hold. Taught in ``notebooks/04_entity_memory.ipynb``.
"""

from __future__ import annotations

import random
import sys
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from memorykit._validate import require_int, require_non_negative
from memorykit.entities.memory import EntityMemory
from memorykit.entities.records import Entity, EntityEviction

SEED_MEMORY_LATENCY_MS = 0.2
SEED_STORE_LATENCY_MS = (50.0, 200.0)


@runtime_checkable
class EntityStore(Protocol):
    """The system of record (database, CMS API): slow, complete."""

    def fetch(self, key: str) -> Entity | None: ...

    def latency_ms(self) -> float:
        """Simulated cost of the fetch just made."""
        ...


class InMemoryStore:
    """A dict standing in for the database, with seeded simulated latency."""

    def __init__(self, entities: Iterable[Entity] = (), *,
                 latency_ms: tuple[float, float] = SEED_STORE_LATENCY_MS, seed: int = 0,
                 contents: dict[str, str] | None = None) -> None:
        low, high = latency_ms
        require_non_negative("latency_ms low", low)
        if high < low:
            raise ValueError(f"latency_ms must be (low, high) with low <= high, got {latency_ms!r}")
        self._entities = {e.key: e for e in entities}
        self.contents = dict(contents or {})
        """Full contents (HTML, body text) by key: what working memory must not hold."""
        self._range = (float(low), float(high))
        self._rng = random.Random(require_int("seed", seed, minimum=0))
        self.fetches = 0

    def put(self, entity: Entity, content: str = "") -> None:
        self._entities[entity.key] = entity
        if content:
            self.contents[entity.key] = content

    def fetch(self, key: str) -> Entity | None:
        self.fetches += 1
        return self._entities.get(key)

    def latency_ms(self) -> float:
        return self._rng.uniform(*self._range)


@dataclass(frozen=True, slots=True)
class Lookup:
    """The outcome of one read-through lookup."""

    key: str
    entity: Entity | None
    source: str
    """'memory' (hit), 'store' (miss, fetched and remembered) or 'missing' (nowhere)."""
    simulated_ms: float
    """Simulated latency charged for this lookup (memory check plus any store fetch)."""
    evictions: tuple[EntityEviction, ...] = ()


class ReadThroughMemory:
    """Working memory in front of a store; every lookup is charged simulated time.

    ``lookups`` keeps the newest ``lookup_history`` lookups (10,000 by default) so an agent
    that runs for days stays bounded; ``stats`` counts every lookup ever made.
    """

    def __init__(self, memory: EntityMemory, store: EntityStore, *,
                 memory_latency_ms: float = SEED_MEMORY_LATENCY_MS,
                 lookup_history: int = 10_000) -> None:
        if not isinstance(memory, EntityMemory):
            raise TypeError(f"memory must be an EntityMemory, got {memory!r}")
        if not isinstance(store, EntityStore):
            raise TypeError(f"store must have fetch(key) and latency_ms(), got {store!r}")
        self.memory = memory
        self.store = store
        self.memory_latency_ms = require_non_negative("memory_latency_ms", memory_latency_ms)
        self.lookups: deque[Lookup] = deque(
            maxlen=require_int("lookup_history", lookup_history, minimum=1, maximum=sys.maxsize))
        """The newest ``lookup_history`` lookups, oldest first."""
        # running totals, so stats cover the lookups the bounded history dropped
        self._count = 0
        self._hits = 0
        self._ms_total = 0.0
        self._ms_missed = 0.0

    def lookup(self, key: str, *, turn: int | None = None) -> Lookup:
        entity = self.memory.get(key, turn=turn)
        if entity is not None:
            result = Lookup(key, entity, "memory", self.memory_latency_ms)
        else:
            fetched = self.store.fetch(key)
            cost = self.memory_latency_ms + self.store.latency_ms()
            if fetched is None:
                result = Lookup(key, None, "missing", cost)
            else:
                events = self.memory.add(fetched, turn=turn)
                result = Lookup(key, fetched, "store", cost, tuple(events))
        self.lookups.append(result)
        self._count += 1
        self._ms_total += result.simulated_ms
        if result.source == "memory":
            self._hits += 1
        else:
            self._ms_missed += result.simulated_ms
        return result

    def stats(self) -> dict[str, float | int | None]:
        """Lookups, hits and misses, and their simulated cost; ``simulated_ms_store_only`` is
        what the same lookups would have cost with no working memory in front of the store
        (every hit charged the mean cost of a miss; None until something missed)."""
        n, hits, total = self._count, self._hits, self._ms_total
        miss_mean = self._ms_missed / (n - hits) if n > hits else None
        return {"lookups": n, "hits": hits, "misses": n - hits,
                "hit_rate": hits / n if n else None,
                "simulated_ms_total": total,
                "simulated_ms_mean": total / n if n else None,
                "simulated_ms_per_miss": miss_mean,
                "simulated_ms_store_only": None if miss_mean is None else self._ms_missed + hits * miss_mean}
