"""The replay measures the caller's own memory: its matrices, records and stats are the memory's."""

import itertools
import warnings
from pathlib import Path

import numpy as np
import pytest

from memorykit.clock import StepClock, WallClock
from memorykit.entities import (
    Entity,
    EntityMemory,
    InMemoryStore,
    LargePayloadWarning,
    ReadThroughMemory,
    ReferenceResolver,
    RelevanceMemory,
    RelevanceWeights,
    SlidingWindowMemory,
)
from memorykit.classroom.replays import entity_replay
from memorykit.classroom.replays.entity_replay import replay, replay_lookups, replay_plan
from memorykit.classroom.scenarios import load_scenario
from memorykit.trace import Trace

DATA = Path(__file__).resolve().parent.parent / "data" / "entities"


@pytest.fixture(scope="module")
def small():
    return load_scenario(DATA / "cms_small.jsonl")


def recording(base):
    """A memory class that snapshots its accounting whenever the replay starts a turn."""

    class Recording(base):
        @property
        def turn(self):
            return self._turn

        @turn.setter
        def turn(self, value):
            if hasattr(self, "_slots"):  # the replay starts a turn: the previous one ended
                self.snapshots.append({s.key: (s.last_access, s.access_count) for s in self.states()})
            self._turn = value

    return Recording


@pytest.mark.parametrize("rule, max_size, ttl, readd", list(itertools.product(
    ("fifo", "relevance", "plain"), (1, 3, 8, 500), (None, 1.5), (False, True))))
def test_matrices_are_the_memory_at_the_end_of_every_turn(small, rule, max_size, ttl, readd):
    base = {"fifo": SlidingWindowMemory, "relevance": RelevanceMemory, "plain": EntityMemory}[rule]
    made = []

    def factory(clock):
        memory = recording(base)(max_size, clock=clock, ttl_minutes=ttl,
                                 weights=RelevanceWeights(0.5, 0.5, 0.05, 3))
        memory.snapshots = []
        made.append(memory)
        return memory

    result = replay(small, factory, readd_resolved=readd)
    memory = made[0]
    ends = memory.snapshots[1:] + [{s.key: (s.last_access, s.access_count) for s in memory.states()}]
    assert len(ends) == len(small.turns)
    row = {k: i for i, k in enumerate(result.keys)}
    expected_last = np.full(result.access_count.shape, np.nan)
    expected_count = np.full(result.access_count.shape, np.nan)
    for j, state in enumerate(ends):
        for key, (last, count) in state.items():
            expected_last[row[key], j] = last / 60.0
            expected_count[row[key], j] = count
    np.testing.assert_array_equal(result.last_access_minutes, expected_last)
    np.testing.assert_array_equal(result.access_count, expected_count)
    assert result.evictions == memory.evictions()
    assert result.memory_stats == memory.stats()
    assert result.mean_entities == pytest.approx(np.mean([len(s) for s in ends]))


def test_forward_fill_of_a_change_log():
    # row 0 changes at turns 0 and 2, row 1 enters at turn 1 and leaves at turn 3, row 2 never.
    last, count = entity_replay._forward_filled(
        (3, 5), [0, 1, 0, 1], [0, 1, 2, 3], [1.0, 2.0, 3.0, np.nan], [1, 1, 2, np.nan])
    nan = np.nan
    np.testing.assert_array_equal(last, [[1, 1, 3, 3, 3], [nan, 2, 2, nan, nan], [nan] * 5])
    np.testing.assert_array_equal(count, [[1, 1, 2, 2, 2], [nan, 1, 1, nan, nan], [nan] * 5])


def test_any_memory_subclass_and_resolver_subclass_are_replayed(small):
    class Stubborn(RelevanceMemory):  # a policy of its own: always evicts the newest candidate
        def _choose_victim(self, now, protect):
            victim = super()._choose_victim(now, protect)
            newest = [k for k in self.keys() if k != protect][-1]
            return victim._replace(id=newest, rule="stubborn")

    result = replay(small, lambda c: Stubborn(5, clock=c, ttl_minutes=None))  # capacity only
    assert result.evictions and {e.rule for e in result.evictions} == {"stubborn"}

    class Blind(ReferenceResolver):  # finds no reference at all
        def find(self, text):
            return []

    blind = replay(small, lambda c: RelevanceMemory(5, clock=c), resolver=Blind())
    assert {o.reason for o in blind.outcomes} == {"not detected"}


def test_replay_refuses_what_it_cannot_measure(small):
    def used(c):
        m = RelevanceMemory(5, clock=c)
        m.add(small.entities[0])
        return m

    with pytest.raises(ValueError, match="must return an empty memory"):
        replay(small, used)

    def forgetful(c):
        m = RelevanceMemory(5, clock=c)
        m.trace = Trace(max_events=10)
        return m

    with pytest.raises(ValueError, match="max_events=10"):
        replay(small, forgetful)
    with pytest.raises(TypeError, match="must return an EntityMemory, got 'nope'"):
        replay(small, lambda c: "nope")


def test_the_memory_warns_about_large_payloads_during_a_replay(small):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        replay(small, lambda c: RelevanceMemory(5, clock=c, max_payload_chars=3))
    assert any(issubclass(w.category, LargePayloadWarning) for w in caught)
    with pytest.raises(ValueError, match="max_payload_chars=3"):
        replay(small, lambda c: RelevanceMemory(5, clock=c, max_payload_chars=3, on_large_payload="refuse"))


def test_plans_are_cached_per_vocabulary_bounded_and_never_for_a_resolver_subclass(small):
    a = replay_plan(small)
    assert replay_plan(small) is a and len(a.steps) == len(small.turns)
    for i in range(entity_replay.PLANS_PER_SCENARIO + 2):
        replay_plan(small, ReferenceResolver({"page": "page", f"noun{i}": "page"}))
    assert len(small._plans) == entity_replay.PLANS_PER_SCENARIO
    assert replay_plan(small) is not a  # the oldest plan was dropped, then rebuilt

    class Custom(ReferenceResolver):
        pass

    assert replay_plan(small, Custom()) is not replay_plan(small, Custom())


def test_scores_only_fill_cells_in_memory(small):
    result = replay(small, lambda c: RelevanceMemory(6, clock=c))
    rec, freq, score = result.scores()
    mask = result.in_memory
    assert np.isnan(score[~mask]).all() and not np.isnan(score[mask]).any()
    w = RelevanceWeights()
    ages = result.ages_minutes()
    expected = w.w_recency * np.exp(-w.decay_per_minute * ages) + w.w_frequency * np.minimum(
        result.access_count / w.frequency_cap, 1.0)
    np.testing.assert_allclose(score[mask], expected[mask], rtol=1e-12)
    other = RelevanceWeights(0.2, 0.8, 0.3, 4)
    np.testing.assert_array_equal(result.score(other), result.scores(other)[2])


def test_replay_lookups_follow_the_turns(small):
    memory = RelevanceMemory(5, clock=StepClock())
    rt = ReadThroughMemory(memory, InMemoryStore(small.entities, seed=0))
    lookups = replay_lookups(small, rt, n_turns=10)
    first_ten = small.turns[:10]
    expected = [e.key if hasattr(e, "key") else e.antecedent for t in first_ten for e in t.user_events()]
    assert len(lookups) == len(expected) + sum(len(t.assistant_mentions()) for t in first_ten)
    assert memory.clock.now() == first_ten[-1].t_minutes * 60.0
    stats = rt.stats()
    assert stats["lookups"] == len(lookups) and stats["hits"] + stats["misses"] == len(lookups)
    misses = [x.simulated_ms for x in lookups if x.source != "memory"]
    assert stats["simulated_ms_per_miss"] == pytest.approx(np.mean(misses))
    assert stats["simulated_ms_store_only"] == pytest.approx(np.mean(misses) * len(lookups))
    with pytest.raises(ValueError, match="n_turns must be >= 0, got -1"):
        replay_lookups(small, rt, n_turns=-1)
    with pytest.raises(TypeError, match="must run on a StepClock"):
        replay_lookups(small, ReadThroughMemory(RelevanceMemory(5, clock=WallClock()), InMemoryStore()))


def test_summary_rounds_report_every_round_and_bound_the_notes(small):
    """Rounds fall every ``summarize_every`` turns; every folded entity is a note or counted
    as older; the notes never pass ``max_notes``; the prompt printed is the memory's own."""
    from memorykit.classroom.replays.entity_replay import summary_rounds

    rows, memory = summary_rounds(small, n_turns=40, summarize_every=5, max_notes=3)
    first = small.turns[0].turn
    assert [r["round at turn"] for r in rows] == list(range(first + 4, first + 40, 5))[:len(rows)]
    assert len(rows) >= 7
    assert sum(r["folded"] for r in rows) == rows[-1]["notes"] + rows[-1]["older (counted)"]
    assert max(r["notes"] for r in rows) <= 3
    assert rows[-1]["notes"] == len(memory.notes) and rows[-1]["in memory"] == len(memory.entities)
    assert all(r["prompt tokens"] > 0 for r in rows)
    with pytest.raises(ValueError, match="n_turns must be >= 1, got 0"):
        summary_rounds(small, n_turns=0)
