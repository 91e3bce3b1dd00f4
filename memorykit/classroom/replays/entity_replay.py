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
TTL) needs a new replay, so a replay does only what the session needs: the
scenario's per-turn events (mentions and the references the resolver finds) are
prepared once per scenario and resolver vocabulary (``replay_plan``), and the
matrices are written only where an entity changed during a turn (it was added,
accessed or removed: ``EntityMemory.watch_changes``), then forward-filled with
numpy instead of copied every turn. The memory is the caller's own
``EntityMemory``: its decisions are the ones measured.

``summary_rounds(scenario)`` feeds the same session's mentions to seed 000's third pattern,
``EntitySummaryMemory``, and reports each summary round (what it folded, the notes held, the
system prompt's tokens).
Taught in ``notebooks/04_entity_memory.ipynb``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from memorykit._history import memory_on_fresh_clock
from memorykit._validate import require_int
from memorykit.clock import StepClock
from memorykit.buffers.policies import BufferWindow
from memorykit.entities.hybrid import EntitySummaryMemory
from memorykit.entities.memory import EntityMemory, RelevanceMemory, SlidingWindowMemory
from memorykit.entities.records import Entity, EntityEviction
from memorykit.entities.resolution import ReferenceResolver
from memorykit.entities.scoring import SEED_WEIGHTS, RelevanceWeights, relevance_scores
from memorykit.entities.store import Lookup, ReadThroughMemory
from memorykit.classroom.scenarios.cms import CMSScenario, Mention
from memorykit.tokens import Tokenizer, count_chat_tokens

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

    def score(self, weights: RelevanceWeights = SEED_WEIGHTS) -> np.ndarray:
        """The score heatmap of ``scores(weights)`` alone (a slider redraws only this one)."""
        mask, ages, counts = self._cells()
        out = np.full(mask.shape, np.nan)
        out[mask] = relevance_scores(ages, counts, weights)[2]
        return out

    @property
    def mean_entities(self) -> float:
        """Entities in memory at the end of a turn, averaged over the turns."""
        n_turns = self.access_count.shape[1]
        return int(np.count_nonzero(~np.isnan(self.access_count))) / n_turns if n_turns else float("nan")

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
            "mean_fill_rate": (self.mean_entities / self.memory_stats["max_size"]
                               if self.memory_stats["max_size"] < 10**6 else None),
        }


def replay(
    scenario: CMSScenario,
    make_memory: MemoryFactory,
    *,
    resolver: ReferenceResolver | None = None,
    readd_resolved: bool = False,
    policy: str | None = None,
) -> ReplayResult:
    """Run one memory policy through the scenario's agent loop (see the module docstring).

    ``make_memory(clock)`` must return an empty ``EntityMemory`` on ``clock`` whose trace
    keeps every event (the result lists every eviction from it).
    """
    clock, memory = memory_on_fresh_clock(make_memory, EntityMemory)
    if len(memory) or len(memory.trace):
        raise ValueError(f"make_memory must return an empty memory, got {memory!r}")
    if memory.trace.max_events is not None:
        raise ValueError("replay lists every eviction from the memory's trace: the memory's trace "
                         f"must keep every event, got max_events={memory.trace.max_events}")
    resolver = resolver or ReferenceResolver()
    plan = replay_plan(scenario, resolver)
    entity, row = plan.entities, plan.row
    add, resolve, accounting = memory.add, resolver.resolve_reference, memory.accounting
    changed = memory.watch_changes()
    outcomes: list[ResolutionOutcome] = []
    spurious = 0
    # The change log: (row, turn, last access, count) of every entity that changed in a turn.
    log_rows: list[int] = []
    log_cols: list[int] = []
    log_last: list[float] = []
    log_count: list[float] = []
    for j, (turn_no, now, user_events, undetected, assistant) in enumerate(plan.steps):
        clock.set(now)
        memory.turn = turn_no
        for key, ref, truth in user_events:
            if key is not None:
                add(entity[key])
                continue
            present = truth is not None and truth.antecedent in memory
            found = resolve(ref, memory)
            if found.entity_key is not None and readd_resolved:
                add(entity[found.entity_key])
            if truth is None:
                spurious += 1
                continue
            outcomes.append(ResolutionOutcome(turn_no, truth.text, truth.form, truth.antecedent,
                                              found.entity_key, found.reason, truth.heuristic_ok, present))
        for truth in undetected:
            outcomes.append(ResolutionOutcome(turn_no, truth.text, truth.form, truth.antecedent,
                                              None, "not detected", truth.heuristic_ok,
                                              truth.antecedent in memory))
        for key in assistant:
            add(entity[key])
        for key in changed:
            state = accounting(key)
            log_rows.append(row[key])
            log_cols.append(j)
            log_last.append(math.nan if state is None else state[0])
            log_count.append(math.nan if state is None else state[1])
        changed.clear()
    last, count = _forward_filled((len(plan.keys), len(plan.steps)), log_rows, log_cols,
                                  log_last, log_count)
    last /= 60.0
    return ReplayResult(policy or type(memory).__name__, plan.keys, plan.turns.copy(),
                        plan.t_minutes.copy(), last, count, memory.evictions(),
                        outcomes, spurious, memory.stats())


def seed_policies(max_size: int = 20, weights: RelevanceWeights = SEED_WEIGHTS,
                  ttl_minutes: float | None = None, count_arrival: bool = False) -> dict[str, MemoryFactory]:
    """FIFO and relevance memories with the seed's settings, plus an unlimited baseline
    (``count_arrival``: see ``EntityMemory``; True is memorykit's arrival-as-access variant)."""
    return {
        "fifo": lambda c: SlidingWindowMemory(max_size, clock=c, ttl_minutes=ttl_minutes,
                                              count_arrival=count_arrival),
        "relevance": lambda c: RelevanceMemory(max_size, weights, clock=c, ttl_minutes=ttl_minutes,
                                               count_arrival=count_arrival),
        "unlimited": lambda c: SlidingWindowMemory(10**9, clock=c, ttl_minutes=ttl_minutes,
                                                   count_arrival=count_arrival),
    }


def arrival_comparison(scenario: CMSScenario, max_size: int = 20,
                       weights: RelevanceWeights = SEED_WEIGHTS) -> list[dict[str, Any]]:
    """Seed 000's access count (a new entity has 0) against memorykit's variant where arrival
    counts as the first access: the score of a new entity at age 0, after one and after nine
    lookups (same minute), and the relevance memory replayed on ``scenario`` (no TTL) each way."""
    rows = []
    for count_arrival in (False, True):
        first = 1 if count_arrival else 0
        replayed = compare_policies(scenario, {"relevance": seed_policies(
            max_size, weights, count_arrival=count_arrival)["relevance"]})[0]
        rows.append({
            "count_arrival": count_arrival,
            "count at arrival": first,
            "score new": f"{weights.score(0.0, first)[2]:.2f}",
            "1 lookup": f"{weights.score(0.0, first + 1)[2]:.2f}",
            "9 lookups": f"{weights.score(0.0, first + 9)[2]:.2f}",
            "evictions": replayed["evictions"],
            "success": f"{replayed['resolution_success']:.1%}",
            "lost to eviction": replayed["failures_antecedent_evicted"],
        })
    return rows


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


def summary_rounds(scenario: CMSScenario, *, n_turns: int = 80, max_size: int = 20,
                   summarize_every: int = 10, max_notes: int = 12,
                   encoding: str = "cl100k_base") -> tuple[list[dict[str, Any]], EntitySummaryMemory]:
    """``EntitySummaryMemory`` (a relevance memory of ``max_size``, TTL off, so only the
    summary rounds clear entities) fed the mentions of the first ``n_turns`` turns.

    One row per summary round: entities still in working memory after it, entities it
    folded into notes, notes held, entities whose notes were dropped past ``max_notes``
    (only counted), and the billed tokens of the system prompt the model would be sent.
    Returns the rows and the memory as it ends, so a reader can print its prompt.
    """
    require_int("n_turns", n_turns, minimum=1)
    clock = StepClock()
    memory = EntitySummaryMemory(RelevanceMemory(max_size, clock=clock, ttl_minutes=None),
                                 BufferWindow(2 * summarize_every),
                                 summarize_every=summarize_every, max_notes=max_notes)
    counter = Tokenizer(encoding)
    rows = []
    for turn in scenario.turns[:n_turns]:
        clock.set(turn.t_minutes * 60.0)
        for m in sorted(turn.mentions, key=lambda m: (m.where != "user", m.span[0])):
            memory.add_entity(scenario.entity(m.key), turn=turn.turn)
        before = memory.last_round
        folded = memory.end_turn(turn.turn)
        if memory.last_round == before:
            continue
        system = {"role": "system", "content": memory.system_prompt()}
        rows.append({"round at turn": turn.turn, "in memory": len(memory.entities),
                     "folded": len(folded), "notes": len(memory.notes),
                     "older (counted)": memory.older_notes,
                     "prompt tokens": count_chat_tokens([system], counter)})
    return rows, memory


def replay_lookups(scenario: CMSScenario, read_through: ReadThroughMemory,
                   n_turns: int | None = None) -> list[Lookup]:
    """Look up, through ``read_through``, every entity the first ``n_turns`` turns act on
    (what the user names or refers to, in reading order, then what the answer names), the
    memory's clock following the turns. Returns the lookups this made."""
    clock = read_through.memory.clock
    if not isinstance(clock, StepClock):
        raise TypeError(f"the read-through memory must run on a StepClock, got {clock!r}")
    if n_turns is not None:
        require_int("n_turns", n_turns, minimum=0)
    made: list[Lookup] = []  # not read back from read_through.lookups: that history is bounded
    for turn in scenario.turns[:n_turns]:
        clock.set(turn.t_minutes * 60.0)
        keys = [e.key if isinstance(e, Mention) else e.antecedent for e in turn.user_events()]
        for key in keys + [m.key for m in turn.assistant_mentions()]:
            made.append(read_through.lookup(key, turn=turn.turn))
    return made


# ------------------------------------------------------------------- plans
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


PLANS_PER_SCENARIO = 8
"""Plans a scenario keeps (one per resolver vocabulary; the oldest is dropped first)."""


def replay_plan(scenario: CMSScenario, resolver: ReferenceResolver | None = None) -> ReplayPlan:
    """The scenario's ``ReplayPlan`` for ``resolver``.

    Plans of the stock ``ReferenceResolver`` are cached on the scenario by vocabulary (at
    most ``PLANS_PER_SCENARIO``); a resolver subclass may find references its own way, so
    its plan is built afresh each time.
    """
    resolver = resolver or ReferenceResolver()
    cache = getattr(scenario, "_plans", None) if type(resolver) is ReferenceResolver else None
    cache_key = tuple(sorted(resolver.vocabulary.items()))
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
        while len(cache) >= PLANS_PER_SCENARIO:
            del cache[next(iter(cache))]
        cache[cache_key] = plan
    return plan


def _forward_filled(shape: tuple[int, int], rows: list[int], cols: list[int],
                    *logs: list[float]) -> list[np.ndarray]:
    """Each log of values as an (entities, turns) matrix: a cell holds its row's latest logged
    value at or before its column, NaN before the first. The log has at most one entry per
    cell. Every row is cut into runs (NaN from its start, then one run per entry), so one
    ``np.repeat`` writes each matrix."""
    n_rows, n_cols = shape
    starts = np.concatenate([np.arange(0, n_rows * n_cols, n_cols, dtype=np.int64),
                             np.asarray(rows, dtype=np.int64) * n_cols + np.asarray(cols, dtype=np.int64)])
    order = np.argsort(starts, kind="stable")  # a row's NaN run sorts before an entry at column 0
    lengths = np.diff(starts[order], append=n_rows * n_cols)
    head = np.full(n_rows, np.nan)
    return [np.repeat(np.concatenate([head, np.asarray(log, dtype=np.float64)])[order], lengths)
            .reshape(shape) for log in logs]
