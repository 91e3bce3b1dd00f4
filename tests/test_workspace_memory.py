"""WorkingMemory: cross-column moves as explained events, rendering without pointers."""

from __future__ import annotations

import pytest

from memorykit.clock import StepClock
from memorykit.tokens import Tokenizer
from memorykit.workspace import (
    KnowledgeGraph,
    NoteSettings,
    SlotSettings,
    Task,
    WorkingMemory,
    belief,
    entity,
    person,
    salience_matrix,
    temporal,
)
from memorykit.workspace.memory import SalienceHistory


def world():
    g = KnowledgeGraph([
        person("maya", "Maya Chen", 0.95, beliefs=("prefers detailed explanations for financial decisions",)),
        entity("acme", "Acme Supplies", "vendor", aliases=("Acme",)),
        entity("cheyenne", "Cheyenne", "project"),
        belief("gl", "Acme Supplies invoices use GL 5100", 0.88),
        temporal("me", "Month-end close", 1.5),
    ])
    g.link("gl", "acme")
    g.link("maya", "cheyenne")
    clock = StepClock()
    return WorkingMemory(g, clock=clock, slots=SlotSettings(max_slots=1)), clock


def test_render_has_three_columns_and_no_pointers_between_them():
    wm, clock = world()
    wm.add_task(Task("T-77", "Process invoice INV-1042 from Acme Supplies", 0.8))
    wm.add_note("Review the Cheyenne variance report", 0.6, note_id="N-55")
    text = wm.render()
    assert text.index("ACTIVE TASKS") < text.index("NOTES") < text.index("OBJECTS")
    for pointer in ("T-77", "N-55", "see note", "task 1"):
        assert pointer not in text
    assert '"Acme Supplies invoices use GL 5100" (strength 0.88)' in text
    assert "Month-end close (urgency multiplier 1.5x)" in text
    tok = Tokenizer()
    assert tok.count(text) > 0 and tok.count(wm.render_flat()) > 0


def test_top_notes_limit_and_flat_baseline_keeps_everything():
    wm, _ = world()
    wm.top_notes = 2
    for i in range(5):
        wm.add_note(f"Note number {i}", 0.1 * (i + 1))
    text = wm.render()
    assert "NOTES (top 2 of 5" in text and "Note number 4" in text and "Note number 0" not in text
    flat = wm.render_flat()
    assert all(f"Note number {i}" in flat for i in range(5))


def test_resume_task_preempts_under_the_usual_rule_and_explains_it():
    wm, clock = world()
    wm.add_task(Task("A", "Pay Acme Supplies", 0.6))
    wm.add_task(Task("B", "Cheyenne accrual", 0.7))  # 0.7 < 1.3 x 0.6 = 0.78: noted
    (note,) = list(wm.notes)
    assert wm.resume_task(note.id).outcome == "noted" and note.id in wm.notes
    wm.tasks.get("A").priority = 0.5  # lowered later: now 0.7 > 0.65
    clock.advance(10)
    d = wm.resume_task(note.id)
    assert d.outcome == "preempted" and "B" in wm.tasks and note.id not in wm.notes
    kinds = [e.kind for e in wm.trace]
    assert kinds == ["task_admission", "task_admission", "task_admission", "task_demotion", "task_promotion"]
    assert all(e.reason for e in wm.trace)
    with pytest.raises(ValueError, match="holds no task"):
        wm.resume_task(wm.add_note("plain note", 0.3).id)


def test_observe_reports_escalation_expiry_and_surfacing():
    wm, clock = world()
    wm.add_note("Review the Cheyenne variance report", 0.6, urgency="urgent", ttl=100 * 60.0)
    clock.advance(85 * 60)  # 15% left
    r = wm.observe("Anything else?")
    assert [e.multiplier for e in r.escalations] == [1.5] and r.surfacings == ()
    clock.advance(5 * 60)  # 10% left, overlap
    r = wm.observe("How is Cheyenne doing?")
    assert [s.trigger for s in r.surfacings] == ["overlap"]
    clock.advance(10 * 60)
    r = wm.observe("ok")
    assert [e.outcome for e in r.expiries] == ["escalated_to_user"]
    assert {e.kind for e in wm.trace} == {"note_escalation", "note_surfacing", "note_expiry"}


def test_min_shared_entities():
    with pytest.raises(ValueError, match="min_shared_entities must be >= 1"):
        NoteSettings(min_shared_entities=0)
    wm, _ = world()
    wm.notes.settings = NoteSettings(min_shared_entities=2)
    wm.add_note("Ask Maya Chen about Cheyenne", 0.4)
    assert wm.observe("Cheyenne update").surfacings == ()
    assert len(wm.observe("Maya Chen on Cheyenne").surfacings) == 1


def test_constructor_rejects_bad_collaborators():
    g = KnowledgeGraph()
    with pytest.raises(TypeError, match="clock must have a now"):
        WorkingMemory(g, clock=object())
    with pytest.raises(TypeError, match="graph must be a KnowledgeGraph"):
        WorkingMemory({}, clock=StepClock())


def test_salience_history_keeps_what_each_turn_named():
    wm, clock = world()
    history = SalienceHistory(wm.graph)
    wm.add_task(Task("T1", "Pay the Acme Supplies invoice", 0.8))
    for text in ("How is Cheyenne doing?", "Anything else?", "Ask Maya Chen"):
        clock.advance(60)
        history.record(wm, wm.observe(text))
    assert len(history) == 3 and history.mentions == [{"cheyenne"}, set(), {"maya"}]
    inputs = history.inputs()
    assert inputs.shape == (5, 3)
    # the last column is what the memory itself computes now
    assert (salience_matrix(inputs).total[:, -1] == wm.salience().total[:, 0]).all()
    other, _ = world()
    with pytest.raises(ValueError, match="graph this history was made for"):
        history.record(other, other.observe("hi"))
    with pytest.raises(TypeError, match="graph must be a KnowledgeGraph"):
        SalienceHistory({})
