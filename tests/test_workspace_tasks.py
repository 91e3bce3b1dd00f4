"""Task slots: admission, preemption at the 1.3 boundary, the status machine, bad input."""

from __future__ import annotations

import pytest

from memorykit.clock import StepClock
from memorykit.workspace import (
    KnowledgeGraph,
    SlotSettings,
    Task,
    TaskSlots,
    WorkingMemory,
    entity,
)


def full_slots(priorities, **settings):
    slots = TaskSlots(SlotSettings(**settings))
    for i, p in enumerate(priorities):
        assert slots.admit(Task(f"T{i}", f"task {i}", p), now=float(i)).outcome == "activated"
    return slots


# The admission rule at its edges (threshold, defer_below, exactly 1.3x, ties) moved to
# memorykit/classroom/contracts/tasks.py, run over TaskSlots in tests/test_task_slot_contract.py.


def test_completed_tasks_keep_the_newest_up_to_the_limit():
    slots = TaskSlots(SlotSettings(max_slots=1, completed_limit=2))
    for i in range(5):
        slots.admit(Task(f"T{i}", f"task {i}", 0.9), now=float(i))
        slots.complete(f"T{i}", float(i) + 0.5)
    assert [t.id for t in slots.completed] == ["T3", "T4"]
    assert all(slots.is_completed(f"T{i}") for i in range(5))  # every id is still known
    with pytest.raises(ValueError, match="completed_limit must be >= 1, got 0"):
        SlotSettings(completed_limit=0)


def test_blocking_keeps_the_slot_and_completion_frees_it():
    slots = full_slots([0.6, 0.7], max_slots=2)
    slots.start("T0", 1.0, "look up vendor master")
    slots.block("T0", "waiting for GL code assignment", 2.0)
    t = slots.get("T0")
    assert t.status == "blocked" and t.blocking_reason == "waiting for GL code assignment"
    assert slots.free == 0
    slots.unblock("T0", 3.0)
    assert t.status == "executing" and t.blocking_reason is None
    assert slots.ids() == ("T0", "T1") and not slots.is_completed("T0")
    slots.complete("T0", 4.0)
    assert slots.free == 1 and t.progress == 1.0 and list(slots.completed) == [t]
    assert slots.ids() == ("T1",) and slots.is_completed("T0") and not slots.is_completed("T1")
    assert [(h.from_status, h.to_status) for h in t.history if h.what == "status"] == [
        ("planning", "executing"), ("executing", "blocked"), ("blocked", "executing"), ("executing", "complete")]
    assert [h.at for h in t.history if h.what == "status"] == [1.0, 2.0, 3.0, 4.0]
    assert [e.kind for e in slots.trace] == ["task_transition"] * 4


def test_invalid_transitions_name_task_and_states():
    slots = full_slots([0.6])
    slots.complete("T0", 1.0)
    with pytest.raises(ValueError, match=r"task 'T0' cannot go from 'complete' to 'complete'"):
        slots.complete("T0", 2.0)
    slots = full_slots([0.6])
    slots.block("T0", "no PO number", 1.0)
    with pytest.raises(ValueError, match=r"task 'T0' cannot go from 'blocked' to 'complete'"):
        slots.complete("T0", 2.0)
    slots = full_slots([0.6])
    with pytest.raises(ValueError, match=r"cannot be unblocked: its status is 'planning'"):
        slots.unblock("T0", 1.0)
    with pytest.raises(ValueError, match="to_status must be one of"):
        slots.transition("T0", "done", 1.0)
    with pytest.raises(KeyError, match="'nope'"):
        slots.complete("nope", 1.0)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(max_slots=0), "max_slots must be >= 1"),
        (dict(activation_threshold=1.5), r"activation_threshold must be in \[0, 1\]"),
        (dict(preemption_ratio=0.9), "preemption_ratio must be >= 1"),
    ],
)
def test_bad_slot_settings(kwargs, match):
    with pytest.raises(ValueError, match=match):
        SlotSettings(**kwargs)


def test_bad_tasks():
    with pytest.raises(ValueError, match=r"priority must be in \[0, 1\]"):
        Task("t", "x", 1.1)
    with pytest.raises(ValueError, match=r"progress must be in \[0, 1\]"):
        Task("t", "x", 0.5, progress=2.0)
    with pytest.raises(ValueError, match="status must be one of"):
        Task("t", "x", 0.5, status="paused")
    with pytest.raises(TypeError, match="max_slots must be an integer"):
        SlotSettings(max_slots=2.5)


def memory(max_slots=2):
    g = KnowledgeGraph([entity("acme", "Acme Supplies"), entity("globex", "Globex")])
    clock = StepClock()
    return WorkingMemory(g, clock=clock, slots=SlotSettings(max_slots=max_slots)), clock


def test_demoted_task_becomes_a_note_and_is_promoted_when_a_slot_frees():
    wm, clock = memory(max_slots=2)
    wm.add_task(Task("A", "Process invoice from Acme Supplies", 0.6))
    wm.add_task(Task("B", "Reconcile Globex statement", 0.9))
    wm.start_task("A", "three-way match")
    clock.advance(60)
    d = wm.add_task(Task("C", "Pay Globex before the cutoff", 0.8))  # 0.8 > 1.3 x 0.6 = 0.78
    assert d.outcome == "preempted" and d.demoted.id == "A"
    (note,) = list(wm.notes)
    assert note.task is d.demoted and note.source == "system" and note.urgency == "normal"
    assert note.content.startswith("Resume: Process invoice from Acme Supplies (was executing")
    assert "acme" in wm.notes.entities(note.id)
    kinds = [e.kind for e in wm.trace]
    assert kinds[-2:] == ["task_demotion", "task_admission"]
    demotion = wm.trace[-2]
    assert demotion.by_task_id == "C" and demotion.note_id == note.id and "1.3 x lowest 0.60" in demotion.reason
    clock.advance(60)
    _, promotions = wm.complete_task("B")
    assert [p.task_id for p in promotions] == ["A"] and "A" in wm.tasks and len(wm.notes) == 0


def test_noted_and_deferred_tasks_are_notes_with_urgency_by_priority():
    wm, _ = memory()
    wm.add_task(Task("lo", "Archive Globex emails", 0.2))
    wm.add_task(Task("mid", "Check Acme Supplies credit terms", 0.4))
    urg = {n.task.id: n.urgency for n in wm.notes}
    assert urg == {"lo": "low", "mid": "normal"}
    assert [(e.task_id, e.outcome) for e in wm.trace] == [("lo", "deferred"), ("mid", "noted")]
    assert all(e.note_id for e in wm.trace)


def test_urgent_priority_at_the_documents_month_end_multiplier():
    from memorykit.workspace import urgent_priority

    # seed 002: month-end urgency multiplier 1.5x; priority is an urgency score in [0, 1]
    assert urgent_priority(0.4, 1.5) == pytest.approx(0.6)
    assert urgent_priority(0.8, 1.5) == 1.0  # capped: 1.2 is not a priority
    assert urgent_priority(0.6, 1.0) == 0.6
    with pytest.raises(ValueError, match="urgency_multiplier must be > 0, got 0"):
        urgent_priority(0.4, 0)


def test_month_end_scales_admission_and_preemption():
    from memorykit.workspace import temporal

    g = KnowledgeGraph([temporal("me", "Month-end close", 1.5, active_from=100.0, active_until=200.0)])
    for scaled in (True, False):
        clock = StepClock(150.0)  # inside month-end
        wm = WorkingMemory(g, clock=clock, slots=SlotSettings(max_slots=1, temporal_urgency=scaled))
        d = wm.add_task(Task("A", "reconcile the ledger", 0.4))
        # 0.4 x 1.5 = 0.6 > 0.5: activated at month-end; 0.4 <= 0.5 unscaled
        assert d.outcome == ("activated" if scaled else "noted")
        if scaled:
            assert "priority 0.60 (0.40 x urgency 1.5) > 0.50" in d.reason
            # full slot: 0.55 x 1.5 = 0.825 > 1.3 x 0.6 = 0.78 preempts; unscaled 0.55 <= 0.78 would not
            assert wm.add_task(Task("B", "pay the vendor", 0.55)).outcome == "preempted"
    clock = StepClock(250.0)  # after month-end: the multiplier is 1 again
    wm = WorkingMemory(g, clock=clock, slots=SlotSettings(temporal_urgency=True))
    assert wm.add_task(Task("A", "reconcile the ledger", 0.4)).outcome == "noted"


def test_month_end_urgency_is_on_by_default():
    from memorykit.workspace import temporal

    assert SlotSettings().temporal_urgency is True
    g = KnowledgeGraph([temporal("me", "Month-end close", 1.5, active_from=100.0, active_until=200.0)])
    wm = WorkingMemory(g, clock=StepClock(150.0))  # default SlotSettings, inside month-end
    # seed 002 by hand: 0.4 x 1.5 = 0.6, which clears the 0.5 activation threshold
    d = wm.add_task(Task("A", "reconcile the ledger", 0.4))
    assert d.outcome == "activated" and "priority 0.60 (0.40 x urgency 1.5) > 0.50" in d.reason
    assert wm.tasks.get("A").priority == 0.4  # the stored priority is unchanged: the period ends


def test_completion_rate_at_the_documents_figures():
    from memorykit.workspace import completion_rate

    # seed 002: 82% of tasks completed with three columns, 67% with an undifferentiated buffer
    assert completion_rate(82, 100) == 0.82 and completion_rate(67, 100) == 0.67
    with pytest.raises(ValueError, match="completed must be <= arrived \\(3\\), got 4"):
        completion_rate(4, 3)
    with pytest.raises(ValueError, match="arrived must be >= 1, got 0"):
        completion_rate(0, 0)


def test_working_memory_completion_rate_counts_each_arrival_once():
    wm, clock = memory(max_slots=2)
    with pytest.raises(ValueError, match="none has arrived"):
        wm.completion_rate()
    wm.add_task(Task("A", "Process invoice from Acme Supplies", 0.6))
    wm.add_task(Task("B", "Reconcile Globex statement", 0.9))
    wm.add_task(Task("C", "Pay Globex before the cutoff", 0.8))  # preempts A: A waits in a note
    wm.add_task(Task("D", "Archive Globex emails", 0.2))  # deferred, never done
    wm.complete_task("B")  # A is promoted back into B's slot
    wm.complete_task("A")
    # 2 of the 4 that arrived; A's demotion and promotion do not count it twice
    assert wm.completion_rate() == 0.5
    wm.complete_task("C")
    assert wm.completion_rate() == 0.75
