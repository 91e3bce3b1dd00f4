"""Validity intervals and update policies (memorykit/facts/timeline.py)."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from memorykit.facts.statement import Statement
from memorykit.facts.timeline import (UPDATE_POLICIES, FactTimeline, KeepBothDated, KeepStrongest,
                                      LatestWins, UpdatePolicy, Version, superseded_marker,
                                      update_policy)

DAY = 86_400.0


def st(value: str, mid: str, at: float, key: str = "deadline", strength: float = 1.0) -> Statement:
    return Statement(key, value, mid, at, strength)


def test_latest_wins_drops_the_old_value_and_says_why() -> None:
    t = FactTimeline(LatestWins())
    assert t.record(st("friday", "m1", 10.0)) == []
    removed = t.record(st("monday", "m5", 50.0))
    assert [v.statement.message_id for v in removed] == ["m1"]
    assert removed[0].valid_until == 50.0 and removed[0].superseded_by == "m5"
    assert "'friday'" in removed[0].reason and "'monday'" in removed[0].reason
    assert t.current("deadline").statement.value == "monday"
    assert [v.statement.message_id for v in t.versions("deadline")] == ["m5"]


def test_keep_both_dated_keeps_contiguous_intervals() -> None:
    t = FactTimeline("keep-both-dated")
    for value, mid, at in (("friday", "m1", 10.0), ("monday", "m5", 50.0), ("tuesday", "m9", 90.0)):
        assert t.record(st(value, mid, at)) == []
    v1, v2, v3 = t.versions("deadline")
    assert (v1.valid_from, v1.valid_until, v1.superseded_by) == (10.0, 50.0, "m5")
    assert (v2.valid_from, v2.valid_until, v2.superseded_by) == (50.0, 90.0, "m9")
    assert v3.is_current and v3.valid_until is None and t.current("deadline") is v3


def test_keep_strongest_keeps_a_firm_value_against_a_weak_later_one() -> None:
    t = FactTimeline(KeepStrongest())
    t.record(st("friday", "m1", 10.0, strength=0.9))
    removed = t.record(st("monday", "m5", 50.0, strength=0.4))
    assert t.current("deadline").statement.message_id == "m1"
    # the weak one never held: an empty interval, pointing at what stays current
    assert removed[0].statement.message_id == "m5"
    weak = removed[0]
    assert (weak.valid_from, weak.valid_until, weak.superseded_by) == (50.0, 50.0, "m1")
    # a tie goes to the later statement
    removed = t.record(st("sunday", "m7", 70.0, strength=0.9))
    assert t.current("deadline").statement.value == "sunday"
    assert [v.statement.message_id for v in removed] == ["m1"] and removed[0].valid_until == 70.0


def test_a_cancellation_supersedes_and_leaves_no_current_value() -> None:
    t = FactTimeline("latest-wins")
    t.record(st("order 4712", "m1", 10.0, key="order"))
    removed = t.record(st("", "m2", 20.0, key="order"))
    assert removed[0].statement.value == "order 4712" and removed[0].superseded_by == "m2"
    assert t.current("order") is None
    assert t.versions("order")[0].cancelled and t.keys() == ("order",)
    assert t.recently_updated(20.0) == ["order"]


def test_statements_may_arrive_out_of_order() -> None:
    t = FactTimeline("keep-both-dated")
    t.record(st("monday", "m5", 50.0))
    assert t.record(st("friday", "m1", 10.0)) == []  # late, older: kept, dated, not current
    old, new = t.versions("deadline")
    assert old.statement.message_id == "m1"
    assert old.valid_until == 50.0 and old.superseded_by == "m5"
    assert t.current("deadline") is new
    assert t.recently_updated(60.0) == []  # the current value never changed
    lw = FactTimeline("latest-wins")
    lw.record(st("monday", "m5", 50.0))
    assert [v.statement.message_id for v in lw.record(st("friday", "m1", 10.0))] == ["m1"]


def test_recently_updated_is_d2s_inclusive_seven_days() -> None:
    t = FactTimeline()
    t.record(st("a", "m1", 0.0, key="k1"))
    t.record(st("b", "m2", 1 * DAY, key="k1"))
    t.record(st("x", "m3", 2 * DAY, key="k2"))  # stated once: not an update
    t.record(st("y", "m4", 3 * DAY, key="k3"))
    t.record(st("z", "m5", 5 * DAY, key="k3"))
    assert t.recently_updated(8 * DAY) == ["k3", "k1"]  # exactly 7 days counts
    assert t.recently_updated(8 * DAY + 1) == ["k3"]
    assert t.recently_updated(4 * DAY, within=DAY) == []  # k3 changes only later
    assert t.changed_at("k1") == DAY and t.changed_at("k2") is None
    with pytest.raises(ValueError, match="within"):
        t.recently_updated(0.0, within=-1)
    with pytest.raises(TypeError, match="now"):
        t.recently_updated("today")  # type: ignore[arg-type]


def test_bad_input_is_refused_and_changes_nothing() -> None:
    t = FactTimeline()
    t.record(st("friday", "m1", 10.0))
    snapshot = t.versions("deadline")
    with pytest.raises(TypeError, match="'friday'"):
        t.record("friday")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="'m1'"):
        t.record(st("monday", "m1", 20.0))
    with pytest.raises(ValueError, match="'newest'"):
        FactTimeline("newest")
    with pytest.raises(ValueError, match="key"):
        t.current("")
    assert t.versions("deadline") == snapshot and len(t) == 1
    # one message may state several keys
    t.record(st("room 4", "m1", 10.0, key="room"))
    assert t.keys() == ("deadline", "room")


class _Copying(UpdatePolicy):
    """A wrong rule: answers with a new statement instead of one it was given."""

    def choose_current(self, statements):
        return replace(statements[-1], value="made up")


class _Crashing(UpdatePolicy):
    def choose_current(self, statements):
        raise RuntimeError("boom")


@pytest.mark.parametrize("policy", [_Copying(), _Crashing(), UpdatePolicy()])
def test_a_bad_policy_answer_loses_nothing(policy: UpdatePolicy) -> None:
    t = FactTimeline(LatestWins())
    t.record(st("friday", "m1", 10.0))
    t.policy = policy
    with pytest.raises((ValueError, RuntimeError, NotImplementedError)):
        t.record(st("monday", "m5", 50.0))
    assert [v.statement.value for v in t.versions("deadline")] == ["friday"]
    assert t.current("deadline").statement.message_id == "m1"
    t.policy = LatestWins()
    t.record(st("monday", "m5", 50.0))  # the refused statement was not half-recorded
    assert t.current("deadline").statement.value == "monday"


@pytest.mark.parametrize("name", sorted(UPDATE_POLICIES))
@pytest.mark.parametrize("seed", range(5))
def test_nothing_is_lost_without_being_returned(name: str, seed: int) -> None:
    """Every statement recorded is kept or was returned as removed, exactly once; the current
    one is the policy's choice among all statements of the key."""
    rng = random.Random(seed)
    t = FactTimeline(name)
    recorded: dict[str, list[Statement]] = {}
    removed: list[Version] = []
    for i in range(60):
        key = f"k{int(rng.random() * 4)}"
        s = Statement(key, "" if rng.random() < 0.1 else f"v{int(rng.random() * 5)}", f"m{i}",
                      float(int(rng.random() * 100)), strength=0.1 + 0.9 * rng.random())
        recorded.setdefault(key, []).append(s)
        removed += t.record(s)
    kept = [v.statement for k in t.keys() for v in t.versions(k)]
    gone = [v.statement for v in removed]
    assert sorted(map(id, kept + gone)) == sorted(id(s) for ss in recorded.values() for s in ss)
    assert all(v.valid_until is not None and v.superseded_by and v.reason for v in removed)
    policy = update_policy(name)
    for key, ss in recorded.items():
        in_order = sorted(ss, key=lambda s: s.at)  # stable: ties keep the order recorded
        if name == "keep-strongest":
            continue  # its choice depends on what it dropped earlier; checked below
        assert t.versions(key)[-1].statement is policy.choose_current(in_order)
        assert [v for v in t.versions(key) if v.is_current] == [t.versions(key)[-1]]
    if name == "keep-strongest":
        for key, ss in recorded.items():
            cur = next(v for v in t.versions(key) if v.is_current).statement
            assert cur.strength == max(s.strength for s in ss)


def test_update_policy_resolves_names_and_instances() -> None:
    p = KeepBothDated()
    assert update_policy(p) is p and isinstance(update_policy("keep-strongest"), KeepStrongest)
    assert "keep-both-dated" in repr(FactTimeline(p))
    with pytest.raises(ValueError, match="3"):
        update_policy(3)  # type: ignore[arg-type]


def test_forget_stated_and_the_marker() -> None:
    t = FactTimeline("keep-both-dated")
    t.record(st("friday", "m1", 0.0))
    t.record(st("monday", "m5", 86_400.0 * 3 + 3600))
    old = t.versions("deadline")[0]
    assert superseded_marker(old) == "[superseded on 4 January 1970 01:00 by a later message] "
    with pytest.raises(ValueError, match="'m5' is current"):
        superseded_marker(t.versions("deadline")[1])
    assert t.stated("deadline", "m1") and not t.stated("deadline", "m9")
    assert [v.statement.message_id for v in t.forget("deadline")] == ["m1", "m5"]
    assert t.keys() == () and not t.stated("deadline", "m1") and t.changed_at("deadline") is None
    t.record(st("friday", "m1", 0.0))  # forgotten: the same message may state it again
