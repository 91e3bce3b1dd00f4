"""Notes: TTL escalation, expiry and surfacing at hand-computed points."""

from __future__ import annotations

import math

import numpy as np
import pytest

from memorykit.workspace import Note, NoteQueue, NoteSettings, effective_priority, escalation_factor
from memorykit.workspace.notes import remaining_fraction

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


def test_archive_keeps_the_newest_notes_up_to_the_limit():
    q = NoteQueue(NoteSettings(archive_limit=2))
    for i in range(4):
        q.add(Note(f"n{i}", "Send the Q3 budget", 0.0, TTL, 0.3))
        q.resolve(f"n{i}")
    assert [n.id for n in q.archived] == ["n2", "n3"]
    with pytest.raises(ValueError, match="archive_limit must be >= 1, got 0"):
        NoteSettings(archive_limit=0)


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


def _random_queue(rng, n=25, settings=NoteSettings()):
    """Notes of random priority, TTL and creation time (some made after the first ticks)."""
    q = NoteQueue(settings)
    rows = []
    for i in range(n):
        p, c, ttl = float(rng.random()), float(rng.uniform(-5, 20)) * H, float(rng.uniform(1, 30)) * H
        q.add(Note(f"N{i}", "x", c, ttl, p))
        rows.append((f"N{i}", p, c, ttl))
    return q, rows


def _boundaries(rows, s):
    """Every band start and expiry of the notes, exactly and a hair either side."""
    out = []
    for _, _, c, ttl in rows:
        for share in (1 - s.warn_fraction, 1 - s.critical_fraction, 1.0):
            t = c + ttl * share
            out += [np.nextafter(t, -np.inf), t, np.nextafter(t, np.inf)]
        out.append(c)
    return out


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_tick_leaves_exactly_the_vectorized_values_and_events(seed):
    """After tick(now) the queue's values (reused by surfacing and ranking) are those of
    ``effective_priority``; skipping the loop until a note's next change records every band
    crossing at the first tick after it, exactly as the vectorized rule says."""
    rng = np.random.default_rng(seed)
    s = NoteSettings(warn_fraction=0.3, critical_fraction=0.1, surface_cooldown_hours=0.0)
    q, rows = _random_queue(rng, settings=s)
    times = np.sort(np.concatenate([rng.uniform(-5, 60, 300) * H, _boundaries(rows, s)]))
    p, c, ttl = (np.array([r[k] for r in rows]) for k in (1, 2, 3))
    factor = escalation_factor(remaining_fraction(c, ttl, times[:, None]), s)  # (T, N)
    alive = (times[:, None] < c + ttl)
    last = np.ones(len(rows))
    for k, now in enumerate(times):
        events = q.tick(now)
        live = [i for i, r in enumerate(rows) if r[0] in q]
        assert live == [i for i in range(len(rows)) if alive[k, i]]
        expected = effective_priority(p[live], c[live], ttl[live], now, s) if live else []
        got = q.effective_priorities(now)
        assert list(got) == [rows[i][0] for i in live]
        np.testing.assert_array_equal(np.array(list(got.values())), expected)
        # surfacing on priority alone (no context, no cooldown): exactly the notes above it
        above = {rows[i][0] for i, v in zip(live, expected) if v > s.surfacing_threshold}
        assert {e.note_id for e in q.surface(set(), now)} == above
        born = times[:, None][: k + 1] >= c  # alive and made by now: escalations can be recorded
        raised = [rows[i][0] for i in live if factor[k, i] > last[i] and born[-1, i]]
        assert [e.note_id for e in events if e.kind == "note_escalation"] == raised
        for i in live:
            if born[-1, i]:
                last[i] = max(last[i], factor[k, i])


def test_values_after_a_tick_follow_adds_and_resolves():
    q = NoteQueue()
    q.add(Note("a", "x", 0.0, TTL, 0.5))
    q.tick(8.5 * H)
    assert q.effective_priorities(8.5 * H) == {"a": 0.75}
    q.add(Note("b", "y", 8.0 * H, TTL, 0.4))  # a new note: the tick's values no longer cover it
    assert q.effective_priorities(8.5 * H) == {"a": 0.75, "b": 0.4}
    q.resolve("a")
    assert q.effective_priorities(8.5 * H) == {"b": 0.4}
    q.tick(8.6 * H)
    q.resolve("b")
    assert q.effective_priorities(8.6 * H) == {}
    assert q.tick(5 * H) == [] and q.effective_priorities(5 * H) == {}  # an earlier time is evaluated anew


def test_observe_is_a_tick_then_a_surfacing_at_one_instant():
    q = NoteQueue()
    q.add(Note("a", "Call Acme Supplies back", 0.0, TTL, 0.5), {"acme"})
    q.add(Note("b", "Review the Cheyenne variance report", 0.0, TTL, 0.2), {"cheyenne"})
    changes, surfaced = q.observe(set(), 9.7 * H, turn=3)
    assert [e.note_id for e in changes] == ["a", "b"]
    assert [(e.note_id, e.trigger, e.turn) for e in surfaced] == [("a", "priority", 3)]
    changes, surfaced = q.observe({"cheyenne"}, 9.8 * H, turn=4)
    assert changes == [] and [e.note_id for e in surfaced] == ["b"]  # "a" is in its cooldown
    with pytest.raises(TypeError, match="now must be a number"):
        q.observe(set(), "later")
