"""Read-through fallback, health metrics, the memory-aware prompt and the hybrid with a summary buffer."""

import pytest

from memorykit.buffers import FIFOBuffer
from memorykit.clock import StepClock
from memorykit.entities import (
    Entity,
    EntityMemory,
    EntitySummaryMemory,
    InMemoryStore,
    ReadThroughMemory,
    RelevanceMemory,
    health_report,
    measure_access_latency,
    render_system_prompt,
)
from memorykit.messages import MessageFactory


def test_read_through_hits_misses_and_simulated_latency():
    store = InMemoryStore([Entity("page", 42, "Home")], seed=1)
    rt = ReadThroughMemory(EntityMemory(5, clock=StepClock()), store)
    first = rt.lookup("page:42")
    assert first.source == "store" and 50.2 <= first.simulated_ms <= 200.2
    assert "page:42" in rt.memory  # remembered
    second = rt.lookup("page:42")
    assert second.source == "memory" and second.simulated_ms == 0.2
    missing = rt.lookup("page:99")
    assert missing.source == "missing" and missing.entity is None
    assert store.fetches == 2
    stats = rt.stats()
    assert stats["hits"] == 1 and stats["misses"] == 2


def test_read_through_history_is_bounded_but_stats_count_every_lookup():
    def run(history):
        store = InMemoryStore([Entity("page", i, f"P{i}") for i in range(6)], seed=3)
        rt = ReadThroughMemory(EntityMemory(2, clock=StepClock()), store, lookup_history=history)
        made = [rt.lookup(f"page:{i % 7}") for i in range(40)]
        return rt, made
    bounded, made = run(5)
    unbounded, _ = run(1000)
    assert list(bounded.lookups) == made[-5:]
    assert bounded.stats() == unbounded.stats() and bounded.stats()["lookups"] == 40
    with pytest.raises(ValueError, match="lookup_history must be >= 1, got 0"):
        ReadThroughMemory(EntityMemory(2), InMemoryStore(), lookup_history=0)


def test_read_through_is_deterministic_and_reports_evictions():
    def run():
        store = InMemoryStore([Entity("page", i, f"P{i}") for i in range(5)], seed=7)
        rt = ReadThroughMemory(EntityMemory(2, clock=StepClock()), store)
        return [rt.lookup(f"page:{i}") for i in range(3)]
    a, b = run(), run()
    assert [x.simulated_ms for x in a] == [x.simulated_ms for x in b]
    assert [e.key for e in a[2].evictions] == ["page:0"]


def _memory(n, size=10):
    mem = EntityMemory(size, clock=StepClock())
    for i in range(n):
        mem.add(Entity("page", i, f"P{i}"))
    return mem


def status(report, name):
    return next(m.status for m in report if m.name == name)


@pytest.mark.parametrize("n, expected", [(3, "warn"), (5, "ok"), (8, "ok"), (9, "warn"), (10, "alert")])
def test_fill_rate_levels(n, expected):
    assert status(health_report(_memory(n)), "fill rate") == expected


def test_eviction_resolution_latency_levels():
    mem = _memory(12, size=10)  # 2 evictions in 12 adds: 16.7% -> warn
    r = health_report(mem, resolution_success=0.95, access_latency_ms=0.0004)
    assert status(r, "eviction rate") == "warn"
    assert status(r, "resolution success") == "ok"
    assert status(r, "access latency ms") == "ok"
    assert status(health_report(_memory(20, size=10)), "eviction rate") == "alert"  # 50%
    assert status(health_report(mem, resolution_success=0.8), "resolution success") == "warn"
    assert status(health_report(mem, resolution_success=0.7), "resolution success") == "alert"
    assert status(health_report(mem, access_latency_ms=3), "access latency ms") == "warn"
    assert status(health_report(mem, access_latency_ms=6), "access latency ms") == "alert"
    assert status(health_report(mem), "resolution success") == "n/a"
    with pytest.raises(ValueError, match="resolution_success must be in \\[0, 1\\], got 1.5"):
        health_report(mem, resolution_success=1.5)


def test_measured_access_latency_is_sub_millisecond():
    mem = _memory(10)
    times = measure_access_latency(mem, mem.keys(), repeats=20)
    assert len(times) == 200 and sorted(times)[100] < 1.0


def test_system_prompt_shows_top_five_most_recent():
    clock = StepClock()
    mem = RelevanceMemory(20, clock=clock)
    for i in range(7):
        clock.advance(10)
        mem.add(Entity("page", i, f"P{i}"))
    prompt = render_system_prompt(mem)
    lines = [x for x in prompt.splitlines() if x.startswith("- ")]
    assert lines == [f'- page "P{i}" (ID: {i})' for i in (6, 5, 4, 3, 2)]
    assert "most recent entity of that type" in prompt
    by_score = render_system_prompt(mem, 2, by="score")
    assert '- page "P6"' in by_score
    assert mem.peek("page:0").access_count == 0  # rendering is not an access
    assert "No entities referenced yet." in render_system_prompt(EntityMemory(3, clock=StepClock()))


def test_hybrid_folds_stale_entities_into_the_summary():
    clock = StepClock()
    factory = MessageFactory(clock=clock)
    hybrid = EntitySummaryMemory(EntityMemory(20, clock=clock), FIFOBuffer(max_tokens=500),
                                 summarize_every=10)
    hybrid.add_entity(Entity("page", 42, "Home"), turn=1)
    hybrid.add_entity(Entity("task", "T-1", "Fix links"), turn=2)
    for turn in range(1, 23):
        hybrid.add_message(factory.user(f"message {turn}"))
        if turn >= 5:
            hybrid.entities.get("task:T-1", turn=turn)
        events = hybrid.end_turn(turn)
        if turn == 20:  # page 42 was last touched at turn 1, before the window 11..20
            assert [e.key for e in events] == ["page:42"]
            assert events[0].rule == "summarized"
        else:
            assert events == []
    assert "page:42" not in hybrid.entities and "task:T-1" in hybrid.entities
    assert 'page 42 "Home"' in hybrid.entity_summary
    request = hybrid.to_openai()
    assert request[0]["role"] == "system" and "Earlier in this session" in request[0]["content"]
    assert len(request) > 1
    with pytest.raises(ValueError, match="summarize_every must be >= 1, got 0"):
        EntitySummaryMemory(EntityMemory(5), FIFOBuffer(), summarize_every=0)


def test_hybrid_rounds_notes_and_overflow_are_readable():
    """``last_round`` moves on every round, even one that folds nothing; notes past
    ``max_notes`` are dropped oldest first and only counted; one access reads "1 access"."""
    clock = StepClock()
    hybrid = EntitySummaryMemory(EntityMemory(20, clock=clock), FIFOBuffer(max_tokens=500),
                                 summarize_every=2, max_notes=2)
    assert hybrid.last_round == 0 and hybrid.notes == () and hybrid.older_notes == 0
    assert hybrid.end_turn(2) == [] and hybrid.last_round == 2  # a round with nothing to fold
    for i in range(3):
        hybrid.add_entity(Entity("page", i, f"P{i}"), turn=3)
    hybrid.entities.get("page:0", turn=3)
    assert hybrid.end_turn(3) == [] and hybrid.last_round == 2  # not a round yet
    folded = hybrid.end_turn(5)  # cutoff turn 3: all three pages are stale
    assert [e.key for e in folded] == ["page:0", "page:1", "page:2"]
    assert [e.key for e, _ in hybrid.notes] == ["page:1", "page:2"] and hybrid.older_notes == 1
    assert hybrid.entity_summary == ('Earlier the user worked on: page 2 "P2" (0 accesses), '
                                     'page 1 "P1" (0 accesses), and 1 older entities.')
    hybrid = EntitySummaryMemory(EntityMemory(20, clock=clock), FIFOBuffer(), summarize_every=1)
    hybrid.add_entity(Entity("page", 7, "Seven"), turn=1)
    hybrid.entities.get("page:7", turn=1)
    hybrid.end_turn(2)
    assert hybrid.entity_summary == 'Earlier the user worked on: page 7 "Seven" (1 access).'
