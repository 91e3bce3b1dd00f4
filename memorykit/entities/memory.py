"""Entity working memory: an agent's RAM of recently referenced entities (D0).

``EntityMemory`` owns the accounting, as ``MessageBuffer`` does for messages:
adding and getting entities, access counts and last-access times, TTL expiry,
and the eviction loop ``while len > max_size: evict(choose_victim())``. A policy
only chooses the victim:

* ``SlidingWindowMemory`` (the base's own rule, 'fifo'): the entity added
  longest ago leaves first; re-adding an entity refreshes its place.
* ``RelevanceMemory`` ('relevance'): the lowest seed-000 score
  ``0.6 * exp(-0.1 * age_min) + 0.4 * min(access_count / 10, 1)`` leaves first.

An eviction scores its candidates (about ``max_size`` of them) in plain floats
(``scoring.candidate_scores``): for twenty numbers numpy's per-call overhead costs
more than the arithmetic, and a replay of a long session evicts hundreds of times.

Decisions the seed leaves open, made here:

* Age is minutes since the entity's *last access*; an access is a ``get`` (a
  lookup or a resolved reference) or a later ``add`` of the same entity (a tool
  returned it again). An entity's arrival is not an access: a new entity has
  access_count 0 and scores 0.6 x 1 + 0.4 x 0 = 0.60 at age 0, as D0's
  formula gives. ``count_arrival=True`` is memorykit's earlier variant, where
  arrival counts as the first access (access_count 1, 0.64 at age 0): an entity
  fetched once then ranks with one never used again.
* A ``get`` does not move an entity in the sliding window: FIFO orders by
  insertion, as the seed's sketch does. Only re-adding refreshes.
* The entity just added is never its own victim.
* TTL is idle time, on by default at D0's session timeout of
  ``SEED_TTL_MINUTES`` (5 minutes; ``ttl_minutes=None`` turns it off): an
  entity expires when ``now - last_access > ttl`` (strictly greater: one
  touched exactly ``ttl`` ago is still remembered). The clock is a ``StepClock``
  at 0 unless one is given (the library's simulated default, ``memorykit.clock``):
  time, and so the TTL, moves only when the caller moves it. A live agent passes
  ``WallClock()`` (five real idle minutes forget an entity); an agent loop without
  timestamps shares its ``MessageFactory``'s ``TurnClock`` (five turns at 60 s).
  Expiry is checked for the one key on every ``get`` and swept over the whole
  memory on ``add``, ``recent`` and ``expire``.

Every removal returns and traces an ``EntityEviction`` with the recency,
frequency and score of the victim at that moment (for every rule, FIFO included,
so a notebook can show FIFO throwing away a high-scoring entity).

Changed fields. By default (``update_policy=None``) re-adding an entity with another label or
metadata silently replaces it, as it always did. With an update policy
(``memorykit.facts.timeline``: ``"latest-wins"``, ``"keep-both-dated"``, ``"keep-strongest"`` or
an ``UpdatePolicy``), each version is a statement of the entity's fields (strength: ``add``'s
``strength``, 1.0 by default) and the policy decides which one working memory holds; every
change is traced as an ``EntityUpdate`` naming the old, the new and the kept version
(``updates()``), and ``versions(key)`` lists the versions the policy keeps, with their
validity intervals. A re-add with the same fields is a refresh, not an update. An entity that
leaves memory takes its versions with it (working memory holds references, not history).
Taught in ``notebooks/04_entity_memory.ipynb`` (and ``13_changing_facts.ipynb``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from memorykit._validate import require_bool, require_int, require_positive
from memorykit.clock import Clock, StepClock, time_basis
from memorykit.entities.records import (
    Entity,
    EntityEviction,
    EntityState,
    EntityUpdate,
    check_payload,
    check_payload_settings,
)
from memorykit.facts.statement import Statement
from memorykit.facts.timeline import FactTimeline, UpdatePolicy, Version
from memorykit.facts.timeline import update_policy as update_policy_of
from memorykit.entities.scoring import (
    SEED_WEIGHTS,
    RelevanceWeights,
    candidate_scores,
    components,
    relevance_scores,
)
from memorykit.trace import Trace, Victim

SEED_MAX_SIZE = 20
SEED_TTL_MINUTES = 5.0
"""D0's session timeout: the default idle time after which an entity expires."""


class _Slot:
    __slots__ = ("entity", "added_at", "last_access", "count", "last_turn")

    def __init__(self, entity: Entity, now: float, turn: int, count: int) -> None:
        self.entity = entity
        self.added_at = now
        self.last_access = now
        self.count = count
        self.last_turn = turn

    def state(self) -> EntityState:
        return EntityState(self.entity, self.added_at, self.last_access, self.count, self.last_turn)


class EntityMemory:
    """A bounded set of entity references with explained evictions (FIFO by default).

    ``weights`` are used to *report* each victim's score under every rule, and
    to *choose* victims in ``RelevanceMemory``.
    """

    rule = "fifo"

    def __init__(
        self,
        max_size: int = SEED_MAX_SIZE,
        *,
        ttl_minutes: float | None = SEED_TTL_MINUTES,
        clock: Clock | None = None,
        weights: RelevanceWeights = SEED_WEIGHTS,
        max_payload_chars: int | None = 256,
        on_large_payload: str = "warn",
        count_arrival: bool = False,
        update_policy: str | UpdatePolicy | None = None,
    ) -> None:
        self.max_size = require_int("max_size", max_size, minimum=1)
        self.update_policy = None if update_policy is None else update_policy_of(update_policy)
        """Decides which version of a re-added entity with changed fields is kept (None: the
        new one, silently, as before)."""
        self._timeline = None if self.update_policy is None else FactTimeline(self.update_policy)
        self._version_entity: dict[str, Entity] = {}  # statement message id -> its entity
        self._version_seq = 0
        self.count_arrival = require_bool("count_arrival", count_arrival)
        self.ttl_minutes = None if ttl_minutes is None else require_positive("ttl_minutes", ttl_minutes)
        self._ttl_seconds = None if ttl_minutes is None else self.ttl_minutes * 60.0
        if clock is None:
            clock = StepClock()
        if not callable(getattr(clock, "now", None)):
            raise TypeError(f"clock must have a now() method, got {clock!r}")
        if not isinstance(weights, RelevanceWeights):
            raise TypeError(f"weights must be a RelevanceWeights, got {weights!r}")
        self.clock = clock
        self.weights = weights
        self.max_payload_chars, self.on_large_payload = check_payload_settings(
            max_payload_chars, on_large_payload
        )
        self.trace = Trace()
        self.turn = 0
        # Insertion (FIFO) order; re-adding moves a key to the end.
        self._slots: dict[str, _Slot] = {}
        # Last-access order (oldest first): recency queries and the TTL sweep read it.
        self._by_access: dict[str, None] = {}
        # Keys whose accounting changed since the watcher last emptied the set (None: unwatched).
        self._changed: set[str] | None = None
        self.adds = 0
        """add() calls (new entities and refreshes)."""
        self.inserts = 0
        """Entities that entered memory (an entity evicted and added again counts twice)."""
        self.hits = 0
        self.misses = 0
        self.evicted = 0
        """Capacity evictions (not TTL expiries)."""
        self.expired = 0

    # ----------------------------------------------------------------- reading
    def __len__(self) -> int:
        return len(self._slots)

    def __contains__(self, key: object) -> bool:
        return key in self._slots

    def __iter__(self) -> Iterator[str]:
        """Keys in insertion (FIFO) order, oldest first."""
        return iter(tuple(self._slots))

    def keys(self) -> tuple[str, ...]:
        return tuple(self._slots)

    def peek(self, key: str) -> EntityState | None:
        """The entity's state without counting an access or checking expiry."""
        slot = self._slots.get(key)
        return None if slot is None else slot.state()

    def accounting(self, key: str) -> tuple[float, int] | None:
        """``(last_access, access_count)`` of a remembered entity, else None: what ``peek``
        tells without building a record (a replay reads it for every change of every turn)."""
        slot = self._slots.get(key)
        return None if slot is None else (slot.last_access, slot.count)

    def watch_changes(self) -> set[str]:
        """The keys whose accounting changes from now on (added, refreshed, accessed, removed),
        collected in one live set that the caller reads and empties. A recorder that follows
        the memory turn by turn (``entity_replay``) reads only those entities instead of
        copying the whole memory every turn."""
        if self._changed is None:
            self._changed = set()
        return self._changed

    def states(self) -> list[EntityState]:
        """Every remembered entity's state, in insertion order."""
        return [s.state() for s in self._slots.values()]

    def recent(self, entity_type: str | None = None, n: int | None = None) -> list[Entity]:
        """Entities by last access, most recent first (optionally of one type, at most n).

        Expired entities are swept first; the call itself is not an access.
        """
        if n is not None and (type(n) is not int or n < 0):
            require_int("n", n, minimum=0)  # raises, naming the value
        if self._ttl_seconds is not None:
            self._sweep(self.clock.now())
        out: list[Entity] = []
        slots = self._slots
        for key in reversed(self._by_access):
            entity = slots[key].entity
            if entity_type is None or entity.type == entity_type:
                out.append(entity)
                if n is not None and len(out) >= n:
                    break
        return out

    def score_table(self, now: float | None = None) -> dict[str, Any]:
        """Keys (insertion order) with age, count, recency, frequency and score arrays."""
        now = self.clock.now() if now is None else now
        keys = tuple(self._slots)
        ages, counts = self._arrays(keys, now)
        recency, frequency, score = relevance_scores(ages, counts, self.weights)
        return {"keys": keys, "age_minutes": ages, "access_count": counts,
                "recency": recency, "frequency": frequency, "score": score}

    def top(self, n: int = 5, by: str = "recency") -> list[Entity]:
        """The n entities the prompt should show: most recent, or highest score."""
        require_int("n", n, minimum=0)
        if by == "recency":
            return self.recent(n=n)
        if by != "score":
            raise ValueError(f"by must be 'recency' or 'score', got {by!r}")
        self._sweep(self.clock.now())
        table = self.score_table()
        order = np.argsort(-table["score"], kind="stable")[:n]
        return [self._slots[table["keys"][i]].entity for i in order]

    def evictions(self) -> list[EntityEviction]:
        return [e for e in self.trace if isinstance(e, EntityEviction)]

    def updates(self) -> list[EntityUpdate]:
        """Every re-add with changed fields the update policy decided (none without a policy)."""
        return [e for e in self.trace if isinstance(e, EntityUpdate)]

    def versions(self, key: str) -> list[tuple[Entity, Version]]:
        """The versions of a remembered entity the update policy keeps, in the order added,
        each with its validity interval (empty without a policy)."""
        if self._timeline is None:
            return []
        return [(self._version_entity[v.statement.message_id], v)
                for v in self._timeline.versions(key)]

    def stats(self) -> dict[str, Any]:
        lookups = self.hits + self.misses
        return {
            "entities": len(self._slots),
            "max_size": self.max_size,
            "fill_rate": len(self._slots) / self.max_size,
            "adds": self.adds,
            "inserts": self.inserts,
            "evictions": self.evicted,
            "expirations": self.expired,
            "eviction_rate": self.evicted / self.adds if self.adds else 0.0,
            "hits": self.hits,
            "misses": self.misses,
            "hit_rate": self.hits / lookups if lookups else None,
        }

    # ----------------------------------------------------------------- writing
    def add(self, entity: Entity, *, turn: int | None = None,
            strength: float = 1.0) -> list[EntityEviction]:
        """Remember an entity (or refresh it), then evict until ``len <= max_size``.

        Returns the removals this caused: TTL expiries first, then evictions. With an update
        policy, ``strength`` (in (0, 1]) is how firmly this version's fields are known, and a
        re-add with changed fields is traced as an ``EntityUpdate``.
        """
        if type(entity) is not Entity:
            raise TypeError(f"entity must be an Entity, got {entity!r}")
        if self.max_payload_chars is not None and entity.payload_chars > self.max_payload_chars:
            check_payload(entity, self.max_payload_chars, self.on_large_payload)
        if turn is not None:
            self.turn = require_int("turn", turn, minimum=0)
        now = self.clock.now()
        # checked (strength) before anything changes, expiries included
        version = None if self._timeline is None else self._statement(entity, now, strength)
        events = self._sweep(now) if self._ttl_seconds is not None else []
        key = entity.key
        slots = self._slots
        slot = slots.pop(key, None)
        if slot is None:
            slot = _Slot(entity, now, self.turn, 1 if self.count_arrival else 0)
            self.inserts += 1
            if version is not None:
                self._record(entity, version)
        else:
            if version is not None and entity != slot.entity:
                entity = self._update(slot.entity, entity, version, now)
            slot.entity = entity
            slot.added_at = now
            slot.last_access = now
            slot.count += 1
            slot.last_turn = self.turn
            del self._by_access[key]
        slots[key] = slot
        self._by_access[key] = None
        if self._changed is not None:
            self._changed.add(key)
        self.adds += 1
        while len(slots) > self.max_size:
            victim = self._choose_victim(now, key)
            events.append(self._evict(victim.id, victim.rule, victim.reason, now))
        return events

    def extend(self, entities: Iterable[Entity], *, turn: int | None = None) -> list[EntityEviction]:
        out: list[EntityEviction] = []
        for entity in entities:
            out.extend(self.add(entity, turn=turn))
        return out

    def get(self, key: str, *, turn: int | None = None) -> Entity | None:
        """Look an entity up by ``type:id``: a dict access that counts as an access.

        Returns None on a miss (or when the entity has just expired).
        """
        slot = self._slots.get(key)
        if slot is None:
            self.misses += 1
            return None
        now = self.clock.now()
        if self._ttl_seconds is not None and now - slot.last_access > self._ttl_seconds:
            self._expire(key, now)
            self.misses += 1
            return None
        if turn is not None:
            self.turn = turn
        slot.count += 1
        slot.last_access = now
        slot.last_turn = self.turn
        by_access = self._by_access
        del by_access[key]
        by_access[key] = None
        self.hits += 1
        if self._changed is not None:
            self._changed.add(key)
        return slot.entity

    def touch(self, key: str, *, turn: int | None = None) -> Entity:
        """Like ``get`` but a miss is an error."""
        entity = self.get(key, turn=turn)
        if entity is None:
            raise KeyError(f"key {key!r} is not in working memory")
        return entity

    def expire(self) -> list[EntityEviction]:
        """Remove every entity idle for longer than the TTL (nothing when TTL is None)."""
        return self._sweep(self.clock.now())

    def remove(self, key: str, *, rule: str = "manual", reason: str = "removed on request") -> EntityEviction:
        if key not in self._slots:
            raise KeyError(f"key {key!r} is not in working memory")
        return self._evict(key, rule, reason, self.clock.now())

    def clear(self) -> list[Entity]:
        """Forget everything (end of session); not recorded as evictions."""
        removed = [s.entity for s in self._slots.values()]
        if self._changed is not None:
            self._changed.update(self._slots)
        for key in self._slots:
            self._forget_versions(key)
        self._slots.clear()
        self._by_access.clear()
        self._on_clear()
        return removed

    # --------------------------------------------------------------- internals
    def _arrays(self, keys: tuple[str, ...] | list[str], now: float) -> tuple[np.ndarray, np.ndarray]:
        slots = self._slots
        n = len(keys)
        last = np.fromiter((slots[k].last_access for k in keys), np.float64, n)
        counts = np.fromiter((slots[k].count for k in keys), np.float64, n)
        return (now - last) / 60.0, counts

    def _candidates(self, now: float, protect: str) -> tuple[list[_Slot], list[float]]:
        """Eviction candidates (insertion order, never ``protect``) and their scores now."""
        held = list(self._slots.values())
        if held[-1].entity.key == protect:  # the usual case: the entity just added is the newest
            held.pop()
        else:
            held = [s for s in held if s.entity.key != protect]
        scores = candidate_scores([(now - s.last_access) / 60.0 for s in held],
                                  [s.count for s in held], self.weights)
        return held, scores

    def _evict(self, key: str, rule: str, reason: str, now: float) -> EntityEviction:
        before = len(self._slots)
        slot = self._slots.pop(key)
        del self._by_access[key]
        self._forget_versions(key)
        age = (now - slot.last_access) / 60.0
        recency, frequency, score = components(age, slot.count, self.weights)
        if rule == "ttl":
            self.expired += 1
        elif rule != "manual":
            self.evicted += 1
        event = EntityEviction(
            key, slot.entity.label, rule, reason, recency, frequency, score, age, slot.count,
            before, before - 1, self.max_size, now, self.turn,
        )
        self.trace.append(event)
        self._on_remove(key)
        if self._changed is not None:
            self._changed.add(key)
        return event

    def _expire(self, key: str, now: float) -> EntityEviction:
        idle = (now - self._slots[key].last_access) / 60.0
        return self._evict(
            key, "ttl", f"idle {idle:.2f} min > ttl {self.ttl_minutes:g} min", now
        )

    def _sweep(self, now: float) -> list[EntityEviction]:
        if self._ttl_seconds is None or not self._by_access:
            return []
        events: list[EntityEviction] = []
        limit = self._ttl_seconds
        slots, by_access = self._slots, self._by_access
        while by_access:  # last-access order: stop at the first entity still fresh
            key = next(iter(by_access))
            if now - slots[key].last_access <= limit:
                break
            events.append(self._expire(key, now))
        return events

    def _over_text(self) -> str:
        return f"{len(self._slots)} entities > max_size {self.max_size}"

    # ------------------------------------------------------------ policy hooks
    def _choose_victim(self, now: float, protect: str) -> Victim:
        """FIFO: the entity added longest ago (never ``protect``, the one just added)."""
        held, scores = self._candidates(now, protect)
        mine = scores[0]
        rank = len([s for s in scores if s < mine]) + 1
        minutes = (now - held[0].added_at) / 60.0
        return Victim(
            held[0].entity.key,
            "fifo",
            f"added longest ago ({minutes:.2f} min); its relevance {mine:.3f} ranks {rank} of "
            f"{len(held)} from the bottom; {self._over_text()}",
            mine,
        )

    def _statement(self, entity: Entity, now: float, strength: float) -> Statement:
        """This version of the entity's fields as a statement for the update policy (checks
        ``strength`` before anything changes)."""
        self._version_seq += 1
        return Statement(entity.key, f"label={entity.label!r}, metadata={dict(entity.metadata)!r}",
                         f"{entity.key}@{self._version_seq}", now, strength)

    def _record(self, entity: Entity, version: Statement) -> list[Version]:
        assert self._timeline is not None
        removed = self._timeline.record(version)
        self._version_entity[version.message_id] = entity
        for v in removed:
            del self._version_entity[v.statement.message_id]
        return removed

    def _update(self, old: Entity, new: Entity, version: Statement, now: float) -> Entity:
        """Let the policy choose between the held version and the re-added one; trace the
        change and return the entity memory now holds."""
        assert self._timeline is not None and self.update_policy is not None
        before = {v.statement.message_id for v in self._timeline.versions(version.key)
                  if v.valid_until is not None}
        removed = self._record(new, version)
        held = next(v for v in self._timeline.versions(version.key) if v.is_current)
        current = self._version_entity[held.statement.message_id]
        ended = [*removed, *(v for v in self._timeline.versions(version.key)
                             if v.valid_until is not None and v.statement.message_id not in before)]
        reason = "; ".join(dict.fromkeys(v.reason for v in ended))
        self.trace.append(EntityUpdate(version.key, old, new, current, self.update_policy.name,
                                       reason, now, self.turn))
        return current

    def _forget_versions(self, key: str) -> None:
        if self._timeline is not None:
            for v in self._timeline.forget(key):
                self._version_entity.pop(v.statement.message_id, None)

    def _on_remove(self, key: str) -> None:
        """Forget a removed key (policies with their own index override this)."""

    def _on_clear(self) -> None:
        """Drop every index entry."""

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(entities={len(self._slots)}, max_size={self.max_size}, "
            f"ttl_minutes={self.ttl_minutes}, time_basis={time_basis(self.clock)!r})"
        )


class SlidingWindowMemory(EntityMemory):
    """D0 pattern 1: the last ``max_size`` entities added, FIFO; re-adding refreshes."""

    rule = "fifo"


class RelevanceMemory(EntityMemory):
    """D0 pattern 2: evict the lowest ``w_r * recency + w_f * frequency``.

    Ties go to the entity added longest ago. Every candidate is scored at the
    moment of eviction; the reason names the victim's components and the runner-up.
    """

    rule = "relevance"

    def __init__(self, max_size: int = SEED_MAX_SIZE, weights: RelevanceWeights = SEED_WEIGHTS,
                 **kw: Any) -> None:
        super().__init__(max_size, weights=weights, **kw)

    def _choose_victim(self, now: float, protect: str) -> Victim:
        held, scores = self._candidates(now, protect)
        best = min(scores)
        i = scores.index(best)  # the first minimum: ties go to the oldest insertion
        victim = held[i]
        age = (now - victim.last_access) / 60.0
        recency, frequency, _ = components(age, victim.count, self.weights)
        w = self.weights
        reason = (
            f"lowest relevance {best:.3f} = {w.w_recency:g}*recency {recency:.3f} + "
            f"{w.w_frequency:g}*frequency {frequency:.3f} (age {age:.2f} min, "
            f"{victim.count} accesses) among {len(held)} candidates"
        )
        if len(held) > 1:
            scores[i] = float("inf")
            runner_up = min(scores)
            reason += f"; next lowest {held[scores.index(runner_up)].entity.key} at {runner_up:.3f}"
        return Victim(victim.entity.key, "relevance", reason + f"; {self._over_text()}", best)
