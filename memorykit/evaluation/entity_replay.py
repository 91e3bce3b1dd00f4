"""Replay an entity-memory policy over a labelled CMS scenario, and measure it.

A measurement (here, beside the other evaluations), not part of ``memorykit.entities``:
the memories know nothing of scenarios, and scenarios only build on entity records.

``replay(scenario, make_memory)`` plays a CMS session through an agent loop:

1. at each turn the clock jumps to the turn's simulated time;
2. the user's text is read left to right: an explicit mention ("page 42") is
   added to memory (the tool that fetched it returns the entity); each
   reference the resolver *finds* is resolved against memory (an access);
   with ``readd_resolved=True`` acting on the resolved entity re-adds it, as a
   tool that returns the updated entity would;
3. entities the assistant's answer brings in (lists, authors) are added.

Each labelled reference is scored against its true antecedent: correct,
wrong (another entity) or unresolved (with the resolver's reason, or "not
detected"). After each turn the memory's last-access times and access counts
are written into (entities x turns) arrays, NaN where an entity is not in
memory; ``ReplayResult.scores(weights)`` turns them into recency, frequency and
score heatmaps with one vectorized call, so a weight slider only re-scores.

A slider that changes membership (weights of the relevance policy, max_size,
TTL) needs a new replay, so the replay has a fast path, used automatically for
the library's own policies (``SlidingWindowMemory``, ``RelevanceMemory``) and
resolver: the scenario's per-turn events (mentions and the references the
resolver finds) are prepared once per scenario and cached (``ReplayPlan``);
the memory is a lean stand-in (``_LeanMemory``) that makes exactly the same
decisions and writes the same ``EntityEviction`` records, scoring the ~20
candidates of an eviction in plain floats instead of building numpy arrays;
and the (entities x turns) matrices are written only where an entity changed
during a turn, then forward-filled with numpy instead of copied every turn.
``replay(..., fast=False)`` runs the straightforward loop on a real memory; a
test checks that both give identical results.
Taught in ``notebooks/04_entity_memory.ipynb``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import math

import numpy as np

from memorykit.clock import StepClock
from memorykit.entities.memory import EntityMemory, RelevanceMemory, SlidingWindowMemory
from memorykit.entities.records import Entity, EntityEviction
from memorykit.entities.resolution import ReferenceResolver
from memorykit.entities.scoring import SEED_WEIGHTS, RelevanceWeights, relevance_scores
from memorykit.scenarios.cms import CMSScenario, Mention

MemoryFactory = Callable[[StepClock], EntityMemory]


@dataclass(frozen=True, slots=True)
class ResolutionOutcome:
    """One labelled reference and what the agent made of it."""

    turn: int
    text: str
    form: str
    truth: str
    predicted: str | None
    reason: str
    heuristic_ok: bool
    """Would the most-recent rule be right with unlimited memory?"""
    in_memory: bool
    """Was the true antecedent in working memory when the reference was resolved?"""

    @property
    def correct(self) -> bool:
        return self.predicted == self.truth

    @property
    def outcome(self) -> str:
        if self.correct:
            return "correct"
        return "unresolved" if self.predicted is None else "wrong"


@dataclass
class ReplayResult:
    """Everything one replay measured."""

    policy: str
    keys: tuple[str, ...]
    """Row order of the matrices: entities by first mention, never-mentioned last."""
    turns: np.ndarray
    t_minutes: np.ndarray
    last_access_minutes: np.ndarray
    """(entities, turns): minutes of the last access at the end of each turn; NaN if not in memory."""
    access_count: np.ndarray
    """(entities, turns): access count at the end of each turn; NaN if not in memory."""
    evictions: list[EntityEviction]
    outcomes: list[ResolutionOutcome]
    spurious: int
    """References the resolver found that the scenario does not label."""
    memory_stats: dict[str, Any]

    @property
    def in_memory(self) -> np.ndarray:
        return ~np.isnan(self.access_count)

    def ages_minutes(self) -> np.ndarray:
        return self.t_minutes[None, :] - self.last_access_minutes

    def _cells(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(mask, ages, counts) of the cells where an entity is in memory (cached)."""
        cached = self.__dict__.get("_cells_cache")
        if cached is None:
            mask = ~np.isnan(self.access_count)
            cols = np.nonzero(mask)[1]
            cached = (mask, self.t_minutes[cols] - self.last_access_minutes[mask],
                      self.access_count[mask])
            self.__dict__["_cells_cache"] = cached
        return cached

    def scores(self, weights: RelevanceWeights = SEED_WEIGHTS) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(recency, frequency, score) heatmaps under ``weights``, NaN where absent.

        Membership is the replayed policy's; only the scores change with weights. Only
        the cells where an entity is in memory (about max_size per turn) are computed.
        """
        mask, ages, counts = self._cells()
        out = np.full((3, *mask.shape), np.nan)
        for plane, values in zip(out, relevance_scores(ages, counts, weights)):
            plane[mask] = values
        return out[0], out[1], out[2]

    @property
    def resolution_success(self) -> float:
        return sum(o.correct for o in self.outcomes) / len(self.outcomes) if self.outcomes else float("nan")

    @property
    def eviction_rate(self) -> float:
        return self.memory_stats["eviction_rate"]

    def summary(self) -> dict[str, Any]:
        counts = {"correct": 0, "wrong": 0, "unresolved": 0}
        for o in self.outcomes:
            counts[o.outcome] += 1
        lost = sum(1 for o in self.outcomes if not o.correct and not o.in_memory)
        return {
            "policy": self.policy,
            "references": len(self.outcomes),
            **counts,
            "resolution_success": self.resolution_success,
            "failures_antecedent_evicted": lost,
            "failures_heuristic": sum(1 for o in self.outcomes if not o.correct and o.in_memory),
            "spurious": self.spurious,
            "adds": self.memory_stats["adds"],
            "evictions": self.memory_stats["evictions"],
            "expirations": self.memory_stats["expirations"],
            "eviction_rate": self.eviction_rate,
            "mean_fill_rate": (float(np.mean(self.in_memory.sum(axis=0))) / self.memory_stats["max_size"]
                               if self.memory_stats["max_size"] < 10**6 else None),
        }


def replay(
    scenario: CMSScenario,
    make_memory: MemoryFactory,
    *,
    resolver: ReferenceResolver | None = None,
    readd_resolved: bool = False,
    policy: str | None = None,
    fast: bool | None = None,
) -> ReplayResult:
    """Run one memory policy through the scenario's agent loop (see the module docstring).

    ``fast=None`` takes the fast path when it applies (a fresh ``SlidingWindowMemory``,
    ``RelevanceMemory`` or plain ``EntityMemory``, the stock ``ReferenceResolver``, no
    entity over the payload limit); ``False`` forces the straightforward loop; ``True``
    raises when the fast path does not apply.
    """

    clock = StepClock()
    memory = make_memory(clock)
    if not isinstance(memory, EntityMemory):
        raise TypeError(f"make_memory must return an EntityMemory, got {memory!r}")
    if memory.clock is not clock:
        raise ValueError("make_memory must build the memory on the clock it is given")
    if fast not in (None, True, False):
        raise TypeError(f"fast must be None, True or False, got {fast!r}")
    resolver = resolver or ReferenceResolver()
    if fast is not False:
        why_not = _fast_path_blocker(scenario, memory, resolver)
        if why_not is None:
            return _fast_replay(scenario, memory, clock, resolver, readd_resolved,
                                policy or type(memory).__name__)
        if fast:
            raise ValueError(f"fast=True but the fast path does not apply: {why_not}")
    entity = scenario.entity
    mentioned = scenario.mentioned_keys()
    rest = [e.key for e in scenario.entities if e.key not in set(mentioned)]
    keys = tuple(mentioned + rest)
    row = {k: i for i, k in enumerate(keys)}
    n_turns = len(scenario.turns)
    last = np.full((len(keys), n_turns), np.nan)
    count = np.full((len(keys), n_turns), np.nan)
    outcomes: list[ResolutionOutcome] = []
    spurious = 0
    slots = memory._slots  # read-only use: the snapshot below is the hot loop
    for j, turn in enumerate(scenario.turns):
        clock.set(turn.t_minutes * 60.0)
        memory.turn = turn.turn
        labelled = {r.span: r for r in turn.references}
        found = resolver.find(turn.user)
        found_spans = {r.span for r in found}
        events: list[Any] = [m for m in turn.mentions if m.where == "user"] + found
        events.sort(key=lambda e: e.span[0])
        for event in events:
            if isinstance(event, Mention):
                memory.add(entity(event.key))
                continue
            truth = labelled.get(event.span)
            present = truth is not None and truth.antecedent in slots
            res = resolver.resolve_reference(event, memory)
            if res.entity_key is not None and readd_resolved:
                memory.add(entity(res.entity_key))
            if truth is None:
                spurious += 1
                continue
            outcomes.append(ResolutionOutcome(turn.turn, truth.text, truth.form, truth.antecedent,
                                              res.entity_key, res.reason, truth.heuristic_ok, present))
        for span, truth in labelled.items():
            if span not in found_spans:
                outcomes.append(ResolutionOutcome(turn.turn, truth.text, truth.form, truth.antecedent,
                                                  None, "not detected", truth.heuristic_ok,
                                                  truth.antecedent in slots))
        for m in turn.mentions:
            if m.where == "assistant":
                memory.add(entity(m.key))
        for key, slot in slots.items():
            i = row[key]
            last[i, j] = slot.last_access
            count[i, j] = slot.count
    last /= 60.0
    return ReplayResult(
        policy or type(memory).__name__,
        keys,
        np.array([t.turn for t in scenario.turns]),
        np.array([t.t_minutes * 60.0 for t in scenario.turns]) / 60.0,
        last,
        count,
        memory.evictions(),
        outcomes,
        spurious,
        memory.stats(),
    )


def seed_policies(max_size: int = 20, weights: RelevanceWeights = SEED_WEIGHTS,
                  ttl_minutes: float | None = None) -> dict[str, MemoryFactory]:
    """FIFO and relevance memories with the seed's settings, plus an unlimited baseline."""
    return {
        "fifo": lambda c: SlidingWindowMemory(max_size, clock=c, ttl_minutes=ttl_minutes),
        "relevance": lambda c: RelevanceMemory(max_size, weights, clock=c, ttl_minutes=ttl_minutes),
        "unlimited": lambda c: SlidingWindowMemory(10**9, clock=c, ttl_minutes=ttl_minutes),
    }


def compare_policies(
    scenario: CMSScenario,
    policies: Mapping[str, MemoryFactory] | None = None,
    *,
    readd_resolved: bool = False,
) -> list[dict[str, Any]]:
    """One summary row per policy (resolution success, eviction rate, ...), computed by replay."""
    policies = seed_policies() if policies is None else policies
    rows = []
    for name, factory in policies.items():
        row = replay(scenario, factory, readd_resolved=readd_resolved, policy=name).summary()
        row["readd_resolved"] = readd_resolved
        rows.append(row)
    return rows


# ---------------------------------------------------------------- fast path
@dataclass(frozen=True)
class ReplayPlan:
    """A scenario's agent-loop events, prepared once (they do not depend on the policy).

    ``steps[j]`` is ``(turn, now_seconds, user_events, undetected, assistant_keys)``
    where ``user_events`` are ``(key, None, None)`` for an explicit mention and
    ``(None, reference, truth_or_None)`` for a reference the resolver found, in
    reading order, and ``undetected`` are the labelled references it did not find.
    """

    keys: tuple[str, ...]
    row: dict[str, int]
    entities: dict[str, Entity]
    turns: np.ndarray
    t_minutes: np.ndarray
    steps: tuple[tuple[Any, ...], ...]


def replay_plan(scenario: CMSScenario, resolver: ReferenceResolver | None = None) -> ReplayPlan:
    """The scenario's ``ReplayPlan`` for ``resolver``'s vocabulary (cached on the scenario)."""

    resolver = resolver or ReferenceResolver()
    cache = getattr(scenario, "_plans", None)
    cache_key = (type(resolver), tuple(sorted(resolver.vocabulary.items())))
    if cache is not None and cache_key in cache:
        return cache[cache_key]
    mentioned = scenario.mentioned_keys()
    seen = set(mentioned)
    keys = tuple(mentioned + [e.key for e in scenario.entities if e.key not in seen])
    steps = []
    for turn in scenario.turns:
        labelled = {r.span: r for r in turn.references}
        found = resolver.find(turn.user)
        found_spans = {r.span for r in found}
        events: list[Any] = [m for m in turn.mentions if m.where == "user"] + found
        events.sort(key=lambda e: e.span[0])
        user_events = tuple((e.key, None, None) if isinstance(e, Mention)
                            else (None, e, labelled.get(e.span)) for e in events)
        undetected = tuple(t for span, t in labelled.items() if span not in found_spans)
        assistant = tuple(m.key for m in turn.mentions if m.where == "assistant")
        steps.append((turn.turn, turn.t_minutes * 60.0, user_events, undetected, assistant))
    plan = ReplayPlan(
        keys, {k: i for i, k in enumerate(keys)}, {e.key: e for e in scenario.entities},
        np.array([t.turn for t in scenario.turns]),
        np.array([t.t_minutes * 60.0 for t in scenario.turns]) / 60.0,
        tuple(steps),
    )
    if cache is not None:
        cache[cache_key] = plan
    return plan


_FAST_TYPES = (EntityMemory, SlidingWindowMemory, RelevanceMemory)


def _fast_path_blocker(scenario: Any, memory: EntityMemory, resolver: ReferenceResolver) -> str | None:
    """Why the fast path cannot stand in for this replay, or None when it can."""
    if type(memory) not in _FAST_TYPES:
        return f"{type(memory).__name__} is not one of the stock memories"
    if type(resolver) is not ReferenceResolver:
        return f"{type(resolver).__name__} is not the stock ReferenceResolver"
    if len(memory) or memory.adds or len(memory.trace) or memory.hits or memory.misses:
        return "the memory is not fresh"
    limit = memory.max_payload_chars
    if limit is not None and memory.on_large_payload != "ignore":
        if any(e.payload_chars > limit for e in scenario.entities):
            return "an entity exceeds max_payload_chars (the memory would warn or refuse)"
    return None


class _LeanMemory:
    """Just enough of ``EntityMemory`` for the replay loop and the resolver, same decisions.

    Slots are ``[entity, added_at, last_access, count]`` lists. Every key whose
    slot changed during the current turn is collected in ``dirty``.
    """

    __slots__ = ("max_size", "ttl_minutes", "ttl", "weights", "relevance", "slots", "by_access",
                 "now", "turn", "adds", "inserts", "hits", "misses", "evicted", "expired",
                 "events", "dirty")

    def __init__(self, memory: EntityMemory) -> None:
        self.max_size = memory.max_size
        self.ttl_minutes = memory.ttl_minutes
        self.ttl = memory._ttl_seconds
        self.weights = memory.weights
        self.relevance = type(memory) is RelevanceMemory
        self.slots: dict[str, list[Any]] = {}
        self.by_access: dict[str, None] = {}
        self.now = 0.0
        self.turn = 0
        self.adds = self.inserts = self.hits = self.misses = self.evicted = self.expired = 0
        self.events: list[EntityEviction] = []
        self.dirty: set[str] = set()

    # ---------------------------------------------------- what the resolver uses
    def recent(self, entity_type: str | None = None, n: int | None = None) -> list[Entity]:
        if self.ttl is not None:
            self._sweep()
        out: list[Entity] = []
        slots = self.slots
        for key in reversed(self.by_access):
            entity = slots[key][0]
            if entity_type is None or entity.type == entity_type:
                out.append(entity)
                if n is not None and len(out) >= n:
                    break
        return out

    def get(self, key: str, turn: int | None = None) -> Entity | None:
        slot = self.slots.get(key)
        if slot is None:
            self.misses += 1
            return None
        now = self.now
        if self.ttl is not None and now - slot[2] > self.ttl:
            self._expire(key)
            self.misses += 1
            return None
        if turn is not None:
            self.turn = turn
        slot[3] += 1
        slot[2] = now
        by_access = self.by_access
        del by_access[key]
        by_access[key] = None
        self.hits += 1
        self.dirty.add(key)
        return slot[0]

    # ------------------------------------------------------------- accounting
    def add(self, entity: Entity) -> None:
        now = self.now
        if self.ttl is not None:
            self._sweep()
        key = entity.key
        slots = self.slots
        slot = slots.pop(key, None)
        if slot is None:
            slot = [entity, now, now, 1]
            self.inserts += 1
        else:
            slot[0] = entity
            slot[1] = now
            slot[2] = now
            slot[3] += 1
            del self.by_access[key]
        slots[key] = slot
        self.by_access[key] = None
        self.adds += 1
        self.dirty.add(key)
        while len(slots) > self.max_size:
            if self.relevance:
                self._evict_relevance(key)
            else:
                self._evict_fifo(key)

    def _scores(self, protect: str) -> tuple[list[str], list[float]]:
        """Keys (insertion order, without ``protect``) and their relevance now, computed
        as ``scoring._scores`` does (the same operations in the same order, plain floats)."""
        w = self.weights
        nd = -w.decay_per_minute
        inv_cap = 1.0 / w.frequency_cap
        wr, wf = w.w_recency, w.w_frequency
        now = self.now
        exp = math.exp
        slots = self.slots
        keys = [k for k in slots if k != protect]
        scores = [wr * exp(nd * ((now - s[2]) / 60.0)) + wf * (f if (f := s[3] * inv_cap) < 1.0 else 1.0)
                  for s in map(slots.__getitem__, keys)]
        return keys, scores

    def _components(self, key: str) -> tuple[float, float, float]:
        """(age, recency, frequency) of one candidate, as in ``_scores``."""
        slot = self.slots[key]
        age = (self.now - slot[2]) / 60.0
        f = slot[3] * (1.0 / self.weights.frequency_cap)
        return age, math.exp(-self.weights.decay_per_minute * age), (f if f < 1.0 else 1.0)

    def _over_text(self) -> str:
        return f"{len(self.slots)} entities > max_size {self.max_size}"

    def _evict_fifo(self, protect: str) -> None:
        keys, score = self._scores(protect)
        victim = keys[0]
        mine = score[0]
        rank = sum(1 for s in score if s < mine) + 1
        held = (self.now - self.slots[victim][1]) / 60.0
        reason = (f"added longest ago ({held:.2f} min); its relevance {mine:.3f} ranks {rank} of "
                  f"{len(keys)} from the bottom; {self._over_text()}")
        self._evict(victim, "fifo", reason)

    def _evict_relevance(self, protect: str) -> None:
        keys, score = self._scores(protect)
        best = min(score)
        i = score.index(best)  # the first minimum: ties go to the oldest insertion
        victim = keys[i]
        age, recency, frequency = self._components(victim)
        w = self.weights
        reason = (
            f"lowest relevance {best:.3f} = {w.w_recency:g}*recency {recency:.3f} + "
            f"{w.w_frequency:g}*frequency {frequency:.3f} (age {age:.2f} min, "
            f"{int(self.slots[victim][3])} accesses) among {len(keys)} candidates"
        )
        if len(keys) > 1:
            score[i] = math.inf
            low = min(score)
            j = score.index(low)
            reason += f"; next lowest {keys[j]} at {low:.3f}"
        self._evict(victim, "relevance", reason + f"; {self._over_text()}")

    def _evict(self, key: str, rule: str, reason: str) -> None:
        # EntityMemory._evict and _components, operation for operation.
        before = len(self.slots)
        slot = self.slots.pop(key)
        del self.by_access[key]
        now = self.now
        w = self.weights
        age = (now - slot[2]) / 60.0
        recency = math.exp(-w.decay_per_minute * age)
        frequency = min(slot[3] / w.frequency_cap, 1.0)
        score = w.w_recency * recency + w.w_frequency * frequency
        if rule == "ttl":
            self.expired += 1
        else:
            self.evicted += 1
        self.events.append(EntityEviction(
            key, slot[0].label, rule, reason, recency, frequency, score, age, slot[3],
            before, before - 1, self.max_size, now, self.turn,
        ))
        self.dirty.add(key)

    def _expire(self, key: str) -> None:
        idle = (self.now - self.slots[key][2]) / 60.0
        self._evict(key, "ttl", f"idle {idle:.2f} min > ttl {self.ttl_minutes:g} min")

    def _sweep(self) -> None:
        if not self.by_access:
            return
        limit = self.ttl
        now = self.now
        slots = self.slots
        for key in list(self.by_access):
            if now - slots[key][2] > limit:
                self._expire(key)
            else:
                break

    def stats(self) -> dict[str, Any]:
        lookups = self.hits + self.misses
        return {
            "entities": len(self.slots),
            "max_size": self.max_size,
            "fill_rate": len(self.slots) / self.max_size,
            "adds": self.adds,
            "inserts": self.inserts,
            "evictions": self.evicted,
            "expirations": self.expired,
            "eviction_rate": self.evicted / self.adds if self.adds else 0.0,
            "hits": self.hits,
            "misses": self.misses,
            "hit_rate": self.hits / lookups if lookups else None,
        }


def _fast_replay(scenario: CMSScenario, memory: EntityMemory, clock: StepClock,
                 resolver: ReferenceResolver, readd_resolved: bool, policy: str) -> ReplayResult:
    plan = replay_plan(scenario, resolver)
    lean = _LeanMemory(memory)
    entity = plan.entities
    slots = lean.slots
    dirty = lean.dirty
    row = plan.row
    resolve = resolver.resolve_reference
    outcomes: list[ResolutionOutcome] = []
    spurious = 0
    log_rows: list[int] = []
    log_cols: list[int] = []
    log_last: list[float] = []
    log_count: list[float] = []
    nan = math.nan
    for j, (turn_no, now, user_events, undetected, assistant) in enumerate(plan.steps):
        lean.now = now
        lean.turn = turn_no
        for key, ref, truth in user_events:
            if key is not None:
                lean.add(entity[key])
                continue
            present = truth is not None and truth.antecedent in slots
            res = resolve(ref, lean)
            if res.entity_key is not None and readd_resolved:
                lean.add(entity[res.entity_key])
            if truth is None:
                spurious += 1
                continue
            outcomes.append(ResolutionOutcome(turn_no, truth.text, truth.form, truth.antecedent,
                                              res.entity_key, res.reason, truth.heuristic_ok, present))
        for truth in undetected:
            outcomes.append(ResolutionOutcome(turn_no, truth.text, truth.form, truth.antecedent,
                                              None, "not detected", truth.heuristic_ok,
                                              truth.antecedent in slots))
        for key in assistant:
            lean.add(entity[key])
        if dirty:
            for key in dirty:
                slot = slots.get(key)
                log_rows.append(row[key])
                log_cols.append(j)
                if slot is None:
                    log_last.append(nan)
                    log_count.append(nan)
                else:
                    log_last.append(slot[2])
                    log_count.append(slot[3])
            dirty.clear()
    if plan.steps:
        clock.set(plan.steps[-1][1])
    index = _fill_index((len(plan.keys), len(plan.steps)), log_rows, log_cols)
    last = _take(log_last, index)
    last /= 60.0
    count = _take(log_count, index)
    return ReplayResult(policy, plan.keys, plan.turns.copy(), plan.t_minutes.copy(), last, count,
                        lean.events, outcomes, spurious, lean.stats())


def _fill_index(shape: tuple[int, int], rows: list[int], cols: list[int]) -> np.ndarray:
    """For each cell, the position in the change log of its row's latest entry at or before
    its column (-1 before the first). Logs are in column order, one entry per cell at most."""
    index = np.full(shape, -1, dtype=np.int32 if len(rows) < 2**31 - 1 else np.int64)
    if rows:
        index[np.asarray(rows), np.asarray(cols)] = np.arange(len(rows))
        np.maximum.accumulate(index, axis=1, out=index)
    return index


def _take(values: list[float], index: np.ndarray) -> np.ndarray:
    """The logged values forward-filled along each row (NaN where nothing was logged yet)."""
    table = np.empty(len(values) + 1)
    table[:-1] = values
    table[-1] = np.nan  # index -1
    return table[index]
