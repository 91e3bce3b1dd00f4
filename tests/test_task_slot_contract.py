"""The task-slot contract over the library's TaskSlots, and what it says about broken rules."""

from __future__ import annotations

import pytest

from memorykit.classroom.contracts import run_contracts
from memorykit.classroom.contracts.tasks import SLOT_CONTRACTS, agrees_with
from memorykit.workspace import SlotSettings, Task, TaskSlots

# The contract lives in the package (memorykit.classroom.contracts.tasks) so that lesson 05's
# build-it-yourself exercise runs exactly these checks over a student's decide().
CONTRACTS = (*SLOT_CONTRACTS, agrees_with())


@pytest.mark.parametrize("contract", CONTRACTS, ids=lambda c: c.name[:40])
def test_task_slots_keep_the_slot_contract(contract):
    contract(TaskSlots)


class OldestTie(TaskSlots):
    """Demotes the oldest of equally low tasks: the wrong tie-break."""

    def decide(self, priority, active):
        s = self.settings
        if priority <= s.activation_threshold:
            return ("deferred" if priority < s.defer_below else "noted"), None
        if len(active) < s.max_slots:
            return "activated", None
        victim = min(range(len(active)), key=lambda i: active[i])
        return ("preempted", victim) if priority > s.preemption_ratio * active[victim] else ("noted", None)


class Overfills(TaskSlots):
    """Activates everything above the threshold, full or not."""

    def decide(self, priority, active):
        if priority <= self.settings.activation_threshold:
            return "noted", None
        return "activated", None


def test_a_wrong_tie_break_fails_the_edges_and_the_agreement():
    verdict = run_contracts(OldestTie, CONTRACTS, exercise="x")
    assert not verdict.passed and "2 of 3 contracts failed" in verdict.reason
    assert "expected preempted demoting T1" in verdict.details[0]
    assert "it decides what the library's TaskSlots decides" in verdict.details[1]


def test_overfilling_the_slots_breaks_the_capacity_with_the_smallest_stream():
    verdict = run_contracts(Overfills, SLOT_CONTRACTS, exercise="x")
    assert not verdict.passed
    assert any("3 tasks are now active in 2 slots" in d and "smallest failing input" in d
               for d in verdict.details)


@pytest.mark.parametrize(("answer", "message"), [
    (("kept", None), "use 'activated', 'preempted', 'noted' or 'deferred'"),
    (("preempted", 9), "the victim must be an index into active"),
    (("noted", 0), "only 'preempted' names a victim"),
    ("noted", "must return (outcome, victim)"),
])
def test_admit_refuses_a_decision_it_cannot_apply(answer, message):
    class Odd(TaskSlots):
        def decide(self, priority, active):
            return answer

    slots = Odd(SlotSettings(max_slots=1))
    with pytest.raises((TypeError, ValueError), match=message.replace("(", r"\(").replace(")", r"\)")):
        slots.admit(Task("a", "a", 0.9), 0.0)


class PlainGreaterThan(TaskSlots):
    """The rule with a plain ``>`` on the 1.3x bound: a float product just under a two-decimal
    priority (1.3 x 0.7 = 0.9099999999999999) lets a tie preempt. Found in the issue-16 review:
    it passed every contract until the edge case was added."""

    def decide(self, priority, active):
        s = self.settings
        if priority <= s.activation_threshold:
            return ("deferred" if priority < s.defer_below else "noted"), None
        if len(active) < s.max_slots:
            return "activated", None
        victim = min(range(len(active)), key=lambda i: (active[i], -i))
        return ("preempted", victim) if priority > s.preemption_ratio * active[victim] else ("noted", None)


def test_a_plain_greater_than_on_the_bound_fails_the_edges():
    verdict = run_contracts(PlainGreaterThan, CONTRACTS, exercise="x")
    assert not verdict.passed
    assert "a task of priority 0.91 arrives" in verdict.details[0]
    assert "strictly_above" in verdict.details[0]
