"""Entity working memory's update policy: which version of a re-added entity it holds."""

from __future__ import annotations

import pytest

from memorykit.clock import StepClock
from memorykit.entities.memory import EntityMemory, RelevanceMemory
from memorykit.entities.records import Entity, EntityUpdate


def page(status: str, label: str = "Pricing") -> Entity:
    return Entity("page", 1, label, {"status": status})


def test_the_default_replaces_silently_as_before():
    m = EntityMemory(3)
    m.add(page("draft"))
    m.add(page("published"))
    assert m.peek("page:1").entity == page("published")
    assert m.updates() == [] and m.versions("page:1") == [] and m.update_policy is None


@pytest.mark.parametrize("policy", ["latest-wins", "keep-both-dated"])
def test_latest_policies_hold_the_new_version_and_say_what_it_replaced(policy):
    clock = StepClock()
    m = RelevanceMemory(3, clock=clock, update_policy=policy)
    m.add(page("draft"))
    clock.advance(30)
    m.add(page("draft"))  # same fields: a refresh, not an update
    assert m.updates() == []
    clock.advance(30)
    m.add(page("published"))
    assert m.peek("page:1").entity == page("published")
    [u] = m.updates()
    assert (u.old, u.new, u.current, u.policy) == (page("draft"), page("published"),
                                                   page("published"), policy)
    assert "'draft'" in u.reason and "'published'" in u.reason and u.at == 60.0
    versions = m.versions("page:1")
    if policy == "keep-both-dated":
        assert [(e, v.valid_from, v.valid_until) for e, v in versions] == [
            (page("draft"), 0.0, 60.0), (page("published"), 60.0, None)]
    else:
        assert [e for e, _ in versions] == [page("published")]


def test_keep_strongest_holds_a_firm_version_against_a_weak_later_one():
    m = EntityMemory(3, update_policy="keep-strongest")
    m.add(page("draft"), strength=0.9)
    m.add(page("published"), strength=0.4)
    assert m.peek("page:1").entity == page("draft")
    [u] = m.updates()
    assert u.new == page("published") and u.current == page("draft") and "never current" in u.reason
    assert m.peek("page:1").access_count == 1  # still an access: it was referenced again
    m.add(page("archived"), strength=0.9)  # a tie goes to the later version
    assert m.peek("page:1").entity == page("archived")


def test_versions_leave_with_the_entity_and_bad_strength_changes_nothing():
    m = EntityMemory(1, update_policy="keep-both-dated")
    m.add(page("draft"))
    m.add(page("published"))
    m.add(Entity("page", 2, "Docs"))  # evicts page:1, and its versions with it
    assert m.versions("page:1") == [] and len(m._version_entity) == 1
    m.add(page("archived"))  # a new arrival, not an update
    assert [e for e, _ in m.versions("page:1")] == [page("archived")] and len(m.updates()) == 1
    with pytest.raises(ValueError, match="strength"):
        m.add(page("gone"), strength=0.0)
    assert m.peek("page:1").entity == page("archived") and len(m.updates()) == 1
    m.clear()
    assert m._version_entity == {}


def test_a_bad_policy_name_is_refused():
    with pytest.raises(ValueError, match="'newest'"):
        EntityMemory(3, update_policy="newest")
    assert isinstance(EntityUpdate.kind, str)
