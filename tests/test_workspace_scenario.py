"""The workflow scenario: regenerable data, labels, and the measured comparisons."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from data.workflow.generate import generate_workflow_scenario
from memorykit.clock import WallClock
from memorykit.classroom.scenarios.workflow import (
    IMMINENT_FRACTION,
    WORKFLOW_PATH,
    default_workflow,
    load_workflow,
    play,
    run_workflow,
)
from memorykit.workspace import (
    FixedExtractor,
    NoteSettings,
    SlotSettings,
    TaskAdmission,
    TaskDemotion,
    TaskPromotion,
    TaskTransition,
    WorkingMemory,
    effective_priority,
    salience_matrix,
)

ROOT = Path(__file__).resolve().parent.parent
DATA = WORKFLOW_PATH


@pytest.fixture(scope="module")
def small():
    return generate_workflow_scenario(seed=5, days=6, name="small")


@pytest.fixture(scope="module")
def small_run(small):
    return run_workflow(small)


def test_committed_file_is_what_the_generator_writes(tmp_path):
    import data.workflow.generate as gen

    assert gen.main(["--out", str(tmp_path)]) == 0
    assert (tmp_path / "workflow_30d.jsonl").read_bytes() == DATA.read_bytes()
    assert gen.main(["--check"]) == 0


def test_generation_is_seeded_and_round_trips(small):
    again = generate_workflow_scenario(seed=5, days=6, name="small")
    assert again.to_jsonl() == small.to_jsonl()
    assert generate_workflow_scenario(seed=6, days=6).to_jsonl() != small.to_jsonl()
    loaded = type(small).from_jsonl(small.to_jsonl())
    assert loaded.to_jsonl() == small.to_jsonl()
    assert [o.id for o in loaded.graph()] == [o.id for o in small.graph()]


def test_scenario_covers_the_workflow(small):
    kinds = {o["kind"] for o in small.objects}
    assert kinds == {"person", "entity", "belief", "knowledge", "goal", "temporal", "pattern"}
    assert len(small.objects) == 45
    notes = [e for e in small.events if e["type"] == "note"]
    assert {n["urgency"] for n in notes} == {"urgent", "normal", "low"}
    for n in notes:
        lo, hi = {"urgent": (2, 4), "normal": (24, 48), "low": (168, 168)}[n["urgency"]]
        assert lo <= n["ttl_hours"] <= hi
    assert any(t["relevant_notes"] for t in small.turns())
    times = [e["at"] for e in small.events]
    assert times == sorted(times)


def test_labels_follow_the_documented_rule(small):
    notes = {e["id"]: e for e in small.events if e["type"] == "note"}
    for turn in small.turns():
        for nid in turn["relevant_notes"]:
            n = notes[nid]
            left = (n["at"] + n["ttl_hours"] * 3600 - turn["at"]) / (n["ttl_hours"] * 3600)
            assert n["still_wanted"] and 0 < left <= 1
            assert n["matter"] == turn["matter"] or left < IMMINENT_FRACTION


def test_run_measures_precision_recall_and_tokens(small_run):
    s = small_run.summary()
    assert s["surfacings"] == len(small_run.surfacings) > 0
    assert 0 <= s["precision"] <= 1 and 0 <= s["recall"] <= 1
    assert s["relevant_surfacings"] == round(s["precision"] * s["surfacings"])
    # the columns select from the same state, so they are never longer than its flat rendering by much,
    # and the never-forgetting log only grows
    assert s["tokens_columns_mean"] < s["tokens_flat_mean"] < s["tokens_flat_history_mean"]
    assert np.all(np.diff(small_run.tokens_flat_history) > -200)
    surfaced = sum(1 for e in small_run.memory.trace if e.kind == "note_surfacing")
    assert surfaced == s["surfacings"]


def test_stricter_overlap_trades_recall_for_precision(small):
    loose = run_workflow(small, count_tokens=False)
    strict = run_workflow(small, notes=NoteSettings(min_shared_entities=2), count_tokens=False)
    assert len(strict.surfacings) < len(loose.surfacings)
    assert strict.precision >= loose.precision


def test_vectorized_matrices_agree_with_the_live_memory(small_run):
    run = small_run
    wm = run.memory
    # the final column of the salience matrix is the memory's own salience now
    m = salience_matrix(run.inputs, wm.salience_weights)
    live = wm.salience()
    np.testing.assert_allclose(m.total[:, -1], live.total[:, 0])
    assert (m.selected[:, -1] == live.selected[:, 0]).all()
    eff = effective_priority(run.note_table["priority"], run.note_table["created"], run.note_table["ttl"], run.times)
    assert eff.shape == (len(run.note_table["id"]), len(run.times))
    now_eff = wm.notes.effective_priorities(run.times[-1])
    ids = list(run.note_table["id"])
    for nid, value in now_eff.items():
        assert eff[ids.index(nid), -1] == pytest.approx(value, nan_ok=True)


def test_committed_scenario_headline_numbers():
    run = run_workflow(load_workflow(DATA), count_tokens=False)
    assert len(run.times) == 600
    assert 0.3 < run.precision < 0.8  # 164/288 = 57% at the time of writing; see BENCHMARKS.md


def test_default_workflow_is_the_committed_file_loaded_once():
    sc = default_workflow()
    assert sc is default_workflow()
    assert (sc.seed, sc.days, len(sc.turns()), len(sc.tasks())) == (2, 30, 600, 53)
    assert sc.to_jsonl() == DATA.read_text(encoding="utf-8")


def test_play_hands_every_turn_to_on_turn_after_its_work(small):
    seen = []

    def on_turn(turn, memory):
        # the notes the user resolved in this turn are gone, but were live when it was observed
        for nid in turn.event["resolve_notes"]:
            assert nid not in memory.notes
        surfaced = {s.note_id for s in turn.report.surfacings}
        assert surfaced <= {n.id for n in turn.observed_notes}
        seen.append((turn.index, turn.report.turn, turn.report.at, memory.clock.now(), turn.event["text"]))

    memory = small.memory()
    assert play(small, memory, on_turn) is memory
    turns = small.turns()
    assert [s[0] for s in seen] == list(range(len(turns)))
    assert [s[1] for s in seen] == list(range(1, len(turns) + 1))
    assert [s[2] for s in seen] == [s[3] for s in seen] == [float(t["at"]) for t in turns]
    assert [s[4] for s in seen] == [t["text"] for t in turns]
    assert memory.turn == len(turns)
    assert {t.id for t in memory.tasks} | {t.id for t in memory.tasks.completed} <= {t["id"] for t in small.tasks()}


def test_play_runs_what_run_workflow_measures(small, small_run):
    memory = play(small, small.memory())
    assert [repr(e) for e in memory.trace] == [repr(e) for e in small_run.memory.trace]


def _task_decisions(memory):
    return [(e.kind, e.task_id, e.at, e.reason) for e in memory.trace
            if isinstance(e, (TaskAdmission, TaskDemotion, TaskPromotion, TaskTransition))]


@pytest.mark.parametrize("settings", [
    SlotSettings(),
    SlotSettings(max_slots=2, preemption_ratio=1.0),
    SlotSettings(max_slots=6, activation_threshold=0.7, preemption_ratio=1.8),
])
def test_task_slots_do_not_depend_on_user_notes_or_extraction(settings):
    """What lesson 05 relies on to replay the month in a few milliseconds."""
    sc = default_workflow()
    full = play(sc, sc.memory(slots=settings))
    lean = sc.without_user_notes()
    assert len(lean.events) == len(sc.events) - sum(e["type"] == "note" for e in sc.events)
    tasks_only = play(lean, lean.memory(extractor=FixedExtractor({}), slots=settings))
    assert _task_decisions(tasks_only) == _task_decisions(full)


def test_play_rejects_what_it_cannot_drive(small):
    with pytest.raises(TypeError, match="scenario must be a WorkflowScenario"):
        play(small.events, small.memory())
    with pytest.raises(TypeError, match="memory must be a WorkingMemory"):
        play(small, "memory")
    with pytest.raises(TypeError, match="memory.clock must be settable"):
        play(small, WorkingMemory(small.graph(), clock=WallClock()))
    with pytest.raises(TypeError, match="on_turn must be callable"):
        play(small, small.memory(), on_turn=3)
