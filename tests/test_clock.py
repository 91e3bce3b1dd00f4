"""The three time bases (memorykit.clock): a per-turn clock, the basis each memory reports, and
one simulated default across the library."""

from __future__ import annotations

import pytest

from memorykit.buffers import FIFOBuffer
from memorykit.clock import MESSAGE_TIME, StepClock, TurnClock, WallClock, time_basis
from memorykit.entities import Entity, EntityMemory, RelevanceMemory
from memorykit.classroom.lesson04_clocks import SESSION, time_bases_table
from memorykit.longterm.service import MemoryService
from memorykit.messages import MessageFactory
from memorykit.state import restore_state, save_state
from memorykit.workspace import KnowledgeGraph, WorkingMemory


def test_turn_clock_moves_one_step_per_user_turn_only():
    clock = TurnClock(seconds_per_turn=90.0, start=10.0)
    factory = MessageFactory(clock=clock)
    stamped = [factory.system("rules"), factory.user("a"), factory.assistant("b"),
               factory.tool("r", call_id="c1"),
               factory.user("d"), factory.message("user", "summary", summary_depth=1, sources=("m000002",)),
               factory.user("e", turn=7)]
    # system before any turn: 10; turn 1: 100; turn 2: 190; a summary and an explicit turn
    # number do not begin a turn
    assert [m.created_at for m in stamped] == [10.0, 100.0, 100.0, 100.0, 190.0, 190.0, 190.0]
    assert clock.turn == 2 == factory.turn
    assert clock.now() == 190.0 and clock.begin_turn() == 280.0


def test_turn_clock_rejects_bad_settings():
    with pytest.raises(ValueError, match="seconds_per_turn must be > 0, got 0"):
        TurnClock(seconds_per_turn=0)
    with pytest.raises(ValueError, match="start"):
        TurnClock(start=float("nan"))


def test_time_basis_names_each_clock():
    assert [time_basis(c) for c in (WallClock(), StepClock(), TurnClock(), None)] == [
        "wall", "simulated", "per turn", MESSAGE_TIME]

    class Sundial:
        def now(self) -> float:
            return 12.0

    assert time_basis(Sundial()) == "custom"
    with pytest.raises(TypeError, match="clock must have a now"):
        time_basis(object())


def test_the_default_basis_is_simulated_everywhere_and_reported():
    graph = KnowledgeGraph()
    assert MessageFactory().time_basis == "simulated"
    assert "time_basis='simulated'" in repr(MessageFactory())
    for memory in (EntityMemory(), RelevanceMemory(5), WorkingMemory(graph)):
        assert isinstance(memory.clock, StepClock) and memory.clock.now() == 0.0
        assert "time_basis='simulated'" in repr(memory)
    # memories without a clock of their own read the messages' times
    assert "time_basis='message time'" in repr(FIFOBuffer())
    assert "time_basis='message time'" in repr(MemoryService())
    assert "time_basis='wall'" in repr(EntityMemory(clock=WallClock()))


def test_entity_ttl_on_a_turn_clock_counts_turns():
    # seed 000's 5-minute TTL at 60 s a turn: an entity mentioned at turn 1 and never again is
    # kept while idle for exactly 5 turns (strictly greater expires) and gone at 6
    clock = TurnClock()
    factory = MessageFactory(clock=clock)
    memory = EntityMemory(ttl_minutes=5, clock=clock)
    page = Entity("page", "42")
    factory.user("show page 42")
    memory.add(page)
    kept = []
    for _ in range(6):
        factory.user("something else")
        memory.expire()
        kept.append(page.key in memory)
    assert kept == [True, True, True, True, True, False]


def test_default_entity_memory_is_deterministic_and_never_ages_unmoved():
    memory = EntityMemory(ttl_minutes=5)
    memory.add(Entity("page", "42"))
    assert memory.expire() == [] and memory.score_table()["age_minutes"].tolist() == [0.0]


def test_turn_clock_survives_save_and_restore():
    clock = TurnClock(30.0)
    memory = EntityMemory(clock=clock)
    clock.begin_turn()
    restored = restore_state(save_state(memory))
    assert isinstance(restored.clock, TurnClock)
    assert (restored.clock.turn, restored.clock.now()) == (1, 30.0)


def test_time_bases_table_by_hand():
    rows = time_bases_table()
    assert len(rows) == len(SESSION) == 7
    # wall: turns at 0, 1, 2, 3, then 15 minutes of break: 18, 19, 20; page 42 (turn 1) is idle
    # 18 > 5 minutes at turn 5 and forgotten
    assert [r["wall (min)"] for r in rows] == ["0", "1", "2", "3", "18", "19", "20"]
    assert [r["wall: page idle"] for r in rows] == ["0", "1", "2", "3"] + ["forgotten"] * 3
    # simulated, left alone: nothing ages
    assert {r["simulated (min)"] for r in rows} == {r["simulated: page idle"] for r in rows} == {"0"}
    # per turn: 1 minute a turn whatever the break; idle 6 > 5 at turn 7
    assert [r["per turn (min)"] for r in rows] == [str(t) for t in range(1, 8)]
    assert [r["per turn: page idle"] for r in rows] == ["0", "1", "2", "3", "4", "5", "forgotten"]
    # 2-minute turns: idle 2 minutes a turn, forgotten from turn 4 (idle 6 > 5)
    slow = time_bases_table(seconds_per_turn=120.0)
    assert [r["per turn: page idle"] for r in slow] == ["0", "2", "4"] + ["forgotten"] * 4
    with pytest.raises(ValueError, match="ttl_minutes must be > 0, got 0"):
        time_bases_table(ttl_minutes=0)
