"""Notes: TTL escalation, expiry and surfacing at hand-computed points."""

from __future__ import annotations

import math

import numpy as np
import pytest

from memorykit.workspace import Note, NoteQueue, NoteSettings, effective_priority, escalation_factor

H = 3600.0
TTL = 10 * H  # round numbers keep remaining = (ttl - age) / ttl exact


def note(priority=0.4, ttl=TTL, created=0.0, content="Review the Cheyenne variance report", **kw):
    return Note("N1", content, created, ttl, priority, **kw)


@pytest.mark.parametrize(
    "age_hours, remaining, expected",
    [
        (5.0, 0.50, 0.4),  # half the TTL left: no escalation
        (8.5, 0.15, 0.6),  # 15% left: < 20% -> x1.5
        (9.7, 0.03, 0.8),  # 3% left: < 5% -> x2
    ],
)
def test_escalation_at_hand_computed_points(age_hours, remaining, expected):
    now = age_hours * H
    assert note().remaining_fraction(now) == pytest.approx(remaining)
    assert float(effective_priority(0.4, 0.0, TTL, now)) == pytest.approx(expected)


def test_escalation_is_capped_at_one():
    assert float(effective_priority(0.6, 0.0, TTL, 9.7 * H)) == 1.0  # 0.6 x 2 = 1.2 -> 1
    assert float(effective_priority(0.8, 0.0, TTL, 8.5 * H)) == 1.0  # 0.8 x 1.5 = 1.2 -> 1


def test_band_boundaries_are_strict():
    # exactly 20% left: not yet escalated; exactly 5% left: still x1.5
    assert float(effective_priority(0.4, 0.0, TTL, 8 * H)) == pytest.approx(0.4)
    assert float(effective_priority(0.4, 0.0, TTL, 9.5 * H)) == pytest.approx(0.6)
    assert escalation_factor([0.2, 0.05, 0.199, 0.049]).tolist() == [1.0, 1.5, 1.5, 2.0]


def test_vectorized_notes_by_times_with_nan_outside_lifetime():
    times = np.array([-1.0, 0.0, 5 * H, 8.5 * H, 9.7 * H, 10 * H])
    m = effective_priority([0.4, 0.2], [0.0, 0.0], [TTL, 2 * TTL], times)
    assert m.shape == (2, 6)
    assert math.isnan(m[0, 0]) and math.isnan(m[0, 5])  # before creation, at expiry
    np.testing.assert_allclose(m[0, 1:5], [0.4, 0.4, 0.6, 0.8])
    np.testing.assert_allclose(m[1, 1:6], [0.2] * 5)  # 20 h TTL: 50% left at 10 h


def test_effective_priority_matches_the_loop_version():
    rng = np.random.default_rng(0)
    p, c, ttl = rng.random(30), rng.random(30) * 100, rng.random(30) * 50 + 1
    times = np.linspace(0, 200, 41)
    m = effective_priority(p, c, ttl, times)
    for i in range(30):
        for j, t in enumerate(times):
            r = (c[i] + ttl[i] - t) / ttl[i]
            if t < c[i] or r <= 0:
                assert math.isnan(m[i, j])
            else:
                f = 2.0 if r < 0.05 else 1.5 if r < 0.2 else 1.0
                assert m[i, j] == pytest.approx(min(1.0, p[i] * f))


def test_default_ttls_are_midpoints_of_the_seed_ranges():
    s = NoteSettings()
    assert s.ttl_seconds("urgent") == 3 * H
    assert s.ttl_seconds("normal") == 36 * H
    assert s.ttl_seconds("low") == 168 * H


def test_queue_records_each_band_once_and_expiry_outcomes():
    q = NoteQueue()
    q.add(Note("hi", "Send the Q3 budget to Tom Becker", 0.0, TTL, 0.7))
    q.add(Note("lo", "Tidy the vendor list", 0.0, TTL, 0.3, urgency="low", source="inferred"))
    assert q.tick(5 * H) == []
    ev = q.tick(8.5 * H)
    assert [(e.kind, e.note_id, e.multiplier) for e in ev] == [
        ("note_escalation", "hi", 1.5), ("note_escalation", "lo", 1.5)]
    assert q.tick(8.6 * H) == []  # same band: nothing new
    ev = q.tick(9.7 * H)
    assert [e.multiplier for e in ev] == [2.0, 2.0]
    assert ev[0].effective_priority == 1.0 and "capped" in ev[0].reason
    ev = q.tick(10 * H)  # remaining 0: expired
    assert [(e.note_id, e.outcome) for e in ev] == [("hi", "escalated_to_user"), ("lo", "archived")]
    assert "Q3 budget" in ev[0].question and "prioritize" in ev[0].question
    assert ev[1].question is None
    assert len(q) == 0 and len(q.archived) == 2
    assert len(q.trace) == 6


def test_expiry_cutoff_is_inclusive():
    q = NoteQueue(NoteSettings(high_priority_cutoff=0.5))
    q.add(Note("a", "x", 0.0, H, 0.5))
    assert q.tick(H)[0].outcome == "escalated_to_user"


def test_surfacing_by_priority_and_by_overlap_with_cooldown():
    q = NoteQueue(NoteSettings(surface_cooldown_hours=1.0))
    q.add(Note("cheyenne", "Review the Cheyenne variance report", 0.0, TTL, 0.6), {"project:cheyenne"})
    q.add(Note("q3", "Follow up on the Q3 budget", 0.0, TTL, 0.5), {"budget:q3"})
    q.add(Note("hot", "Call Acme Supplies back", 0.0, TTL, 0.95), {"vendor:acme"})
    ev = q.surface({"project:cheyenne"}, now=H, turn=1)
    assert [(e.note_id, e.trigger) for e in ev] == [("hot", "priority"), ("cheyenne", "overlap")]
    assert ev[1].shared_entities == ("project:cheyenne",)
    assert "pull that up" in ev[1].message
    assert q.surface({"project:cheyenne"}, now=1.5 * H, turn=2) == []  # cooldown
    ev = q.surface({"project:cheyenne", "vendor:acme"}, now=2 * H, turn=3)
    assert [(e.note_id, e.trigger) for e in ev] == [("hot", "priority+overlap"), ("cheyenne", "overlap")]
    # escalation alone can push a note over 0.9: 0.5 x 2 = 1.0 with 3% left
    ev = q.surface(set(), now=9.7 * H, turn=4)
    assert {e.note_id for e in ev} == {"hot", "q3", "cheyenne"}  # 0.6 x 2 = 1.2 -> 1.0 too


def test_surfacing_threshold_is_strict():
    q = NoteQueue()
    q.add(Note("a", "x", 0.0, TTL, 0.9))
    assert q.surface(set(), now=0.0) == []


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(ttl=0.0), "ttl must be > 0"),
        (dict(ttl=-5.0), "ttl must be > 0"),
        (dict(priority=1.2), r"priority must be in \[0, 1\]"),
        (dict(priority=-0.1), r"priority must be in \[0, 1\]"),
        (dict(urgency="soon"), "urgency must be one of"),
    ],
)
def test_bad_notes_are_rejected(kwargs, match):
    with pytest.raises(ValueError, match=match):
        note(**kwargs)


def test_bad_settings_and_arrays_are_rejected():
    with pytest.raises(ValueError, match=r"ttl_hours\['urgent'\] must be > 0"):
        NoteSettings(ttl_hours={"urgent": 0, "normal": 36, "low": 168})
    with pytest.raises(ValueError, match="missing"):
        NoteSettings(ttl_hours={"urgent": 3})
    with pytest.raises(ValueError, match="critical_fraction must be < warn_fraction"):
        NoteSettings(critical_fraction=0.3)
    with pytest.raises(ValueError, match="warn_multiplier must be >= 1"):
        NoteSettings(warn_multiplier=0.5)
    with pytest.raises(ValueError, match="ttl must be > 0"):
        effective_priority([0.5], [0.0], [0.0], [1.0])
    with pytest.raises(ValueError, match="priority must be in"):
        effective_priority([1.5], [0.0], [1.0], [1.0])
