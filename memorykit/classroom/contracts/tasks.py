"""The task-slot contract: what every admission rule of document D2's active task slots keeps.

The subject is a ``SlotsMaker``, ``SlotSettings -> TaskSlots``: the test suite runs these
contracts over the library's ``TaskSlots`` (``tests/test_task_slot_contract.py``), and lesson
05's build-it-yourself exercise runs them over the student's ``decide`` (a ``TaskSlots``
subclass; ``memorykit.classroom.lesson05_checks.check_admission_rule``).

The streams are random but reproducible (Hypothesis with a fixed seed): tasks arriving with
two-decimal priorities (ties and products on the 1.3x bound are common, as in the lesson's
month) in periods of urgency 1, 1.2, 1.3 or 1.5, and active tasks completing, under 1-5 slots,
thresholds 0.3-0.7 and ratios 1.0-2.0.

Taught in ``notebooks/05_task_slots.ipynb``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memorykit.classroom.contracts.runner import Contract
from memorykit.workspace.tasks import AdmissionDecision, SlotSettings, Task, TaskSlots, urgent_priority

SlotsMaker = Callable[[SlotSettings], TaskSlots]

_PROPERTY = settings(max_examples=80, deadline=None, derandomize=True, database=None,
                     report_multiple_bugs=False, suppress_health_check=[HealthCheck.too_slow])

SETTINGS = st.builds(SlotSettings, max_slots=st.sampled_from([2, 4, 3, 1, 5]),
                     activation_threshold=st.sampled_from([0.5, 0.3, 0.7]),
                     preemption_ratio=st.sampled_from([1.3, 1.0, 1.5, 2.0]))
Step = tuple[str, int, float]
ARRIVE = st.tuples(st.just("arrive"),
                   # mostly a coarse grid: equal priorities and products on the bound
                   st.one_of(*[st.sampled_from([95, 60, 78, 55, 72, 30])] * 3,
                             st.integers(0, 100)),
                   st.sampled_from([1.0, 1.0, 1.2, 1.3, 1.5]))
STEP = st.one_of(ARRIVE, ARRIVE, ARRIVE, st.tuples(st.just("complete"), st.integers(0, 4),
                                                   st.just(1.0)))
"""(``"arrive"``, priority in hundredths, urgency) or (``"complete"``, which active task, 1)."""
FILL = st.lists(st.tuples(st.just("arrive"), st.sampled_from([60, 72, 55]), st.just(1.0)),
                min_size=5, max_size=5)
STEPS = st.tuples(FILL, st.lists(STEP, min_size=1, max_size=55)).map(lambda p: p[0] + p[1])
"""Five arrivals that fill the slots (ties likely), then anything."""


def _state(slots: TaskSlots, m: float) -> str:
    tasks = ", ".join(f"{t.id} {urgent_priority(t.priority, m):.2f}" for t in slots)
    return f"[{tasks}] in {slots.settings.max_slots} slots"


Arrival = tuple[TaskSlots, Task, float, str, set[str], AdmissionDecision]


def _arrivals(make: SlotsMaker, s: SlotSettings, steps: list[Step]) -> Iterator[Arrival]:
    """Play ``steps``; after every arrival yield (slots, task, urgency, the slots before as
    text and as ids, decision)."""
    slots = make(s)
    for n, (kind, value, m) in enumerate(steps):
        if kind == "complete":
            if len(slots):
                slots.complete(slots.ids()[value % len(slots)], float(n))
            continue
        task = Task(f"T{n}", f"task {n}", value / 100)
        before, previous = _state(slots, m), set(slots.ids())
        yield slots, task, m, before, previous, slots.admit(task, float(n), m)


def _holds_after_every_arrival(make: SlotsMaker) -> None:
    @_PROPERTY
    @given(s=SETTINGS, steps=STEPS)
    def stream(s: SlotSettings, steps: list[Step]) -> None:
        for slots, task, m, before, previous, d in _arrivals(make, s, steps):
            now = set(slots.ids())
            p = urgent_priority(task.priority, m)
            what = (f"{task.id} (priority {p:.2f}) arrived at {before} (threshold "
                    f"{s.activation_threshold:g}, ratio {s.preemption_ratio:g}): {d.outcome}")
            full = len(previous) >= s.max_slots
            assert len(slots) <= s.max_slots, (
                f"{what}, and {len(slots)} tasks are now active in {s.max_slots} slots: with "
                "every slot full a task may only take the slot of the task it preempts")
            gone = previous - now
            demoted = {d.demoted.id} if d.demoted is not None else set()
            assert gone == demoted, (
                f"{what}, and {sorted(gone)} left the slots without a demotion event: only a "
                "preemption removes an active task, and it names the one it demotes")
            if d.activated:
                assert p > s.activation_threshold, (
                    f"{what}: only a priority above activation_threshold "
                    f"{s.activation_threshold:g} takes a slot")
                assert d.outcome == "activated" or full, (
                    f"{what} although a slot was free: preempt only when every slot is full")
                if d.outcome == "preempted":
                    low = urgent_priority(d.demoted.priority, m)
                    assert p > s.preemption_ratio * low, (
                        f"{what} {d.demoted.id} ({low:.2f}): preempting needs a priority above "
                        f"{s.preemption_ratio:g} x {low:.2f} = {s.preemption_ratio * low:.4f}")
            else:
                assert task.id not in slots and gone == set(), (
                    f"{what}, but the slots changed: a task that is not activated leaves them "
                    "as they were")
                assert full or p <= s.activation_threshold, (
                    f"{what} although a slot was free and {p:.2f} > {s.activation_threshold:g}: "
                    "a free slot goes to any task above the threshold")
                expected = "deferred" if p < s.defer_below else "noted"
                assert d.outcome == expected or p > s.activation_threshold, (
                    f"{what}: a task below the threshold is deferred when its priority is below "
                    f"defer_below {s.defer_below:g}, noted otherwise")

    stream()


def _full_slots(make: SlotsMaker, priorities: list[float], **overrides: float) -> TaskSlots:
    slots = make(SlotSettings(**overrides))
    for i, p in enumerate(priorities):
        d = slots.admit(Task(f"T{i}", f"task {i}", p), float(i))
        assert d.outcome == "activated", (
            f"with {i} of {slots.settings.max_slots} slots used, a task of priority {p} was "
            f"{d.outcome}: a free slot goes to any task above the threshold")
    return slots


def _boundaries(make: SlotsMaker) -> None:
    """The rule at its edges (moved from tests/test_workspace_tasks.py)."""
    slots = make(SlotSettings(max_slots=2))
    for p, expected, why in ((0.51, "activated", "0.51 > 0.5 and a slot is free"),
                             (0.5, "noted", "exactly 0.5 is not above the threshold 0.5"),
                             (0.29, "deferred", "0.29 is below defer_below 0.3"),
                             (0.3, "noted", "0.3 is not below defer_below 0.3")):
        d = slots.admit(Task(f"p{p}", "task", p), 0.0)
        assert d.outcome == expected, f"a task of priority {p} was {d.outcome}, expected {expected}: {why}"
    for lows, p, expected, victim, why in (
            ([0.6, 0.8, 0.9, 0.7], 0.78, "noted", None,
             "1.3 x 0.6 = 0.78 exactly: a tie does not preempt (compare with strictly_above)"),
            ([0.6, 0.8, 0.9, 0.7], 0.7801, "preempted", "T0", "0.7801 > 1.3 x 0.6 = 0.78"),
            ([0.55, 0.9, 0.9, 0.9], 0.715, "noted", None, "1.3 x 0.55 = 0.715 exactly: no preemption"),
            ([0.55, 0.9, 0.9, 0.9], 0.72, "preempted", "T0", "0.72 > 1.3 x 0.55 = 0.715"),
            ([0.6, 0.6, 0.9, 0.9], 0.95, "preempted", "T1",
             "T0 and T1 tie at 0.6: the most recently activated (T1) is demoted"),
            ([0.7, 0.9, 0.9, 0.9], 0.91, "noted", None,
             "1.3 x 0.7 = 0.91 exactly, computed as 0.9099999999999999: a plain > preempts on "
             "the tie, strictly_above does not")):
        slots = _full_slots(make, lows)
        d = slots.admit(Task("new", "new", p), 10.0)
        got = d.demoted.id if d.demoted is not None else None
        assert (d.outcome, got) == (expected, victim), (
            f"slots {lows} full, a task of priority {p} arrives: you gave {d.outcome}"
            + (f" demoting {got}" if got else "") + f", expected {expected}"
            + (f" demoting {victim}" if victim else "") + f" ({why})")


SLOT_CONTRACTS: tuple[Contract[SlotsMaker], ...] = (
    Contract("the rule at its edges: the 0.5 threshold, defer_below 0.3, exactly 1.3x, ties",
             _boundaries),
    Contract("after every arrival: never more active tasks than slots, nobody leaves a slot "
             "without a demotion, a free slot goes to any task above the threshold, preemption "
             "only when full and above ratio x the demoted task", _holds_after_every_arrival),
)
"""The contract every admission rule of the task slots keeps."""


def agrees_with(reference: SlotsMaker = TaskSlots,
                what: str = "the library's TaskSlots") -> Contract[SlotsMaker]:
    """The subject decides what ``reference`` decides (outcome and demoted task) at every
    arrival of a random stream: lesson 05's exercise checks the student's rule against the
    library's."""

    def check(make: SlotsMaker) -> None:
        @_PROPERTY
        @given(s=SETTINGS, steps=STEPS)
        def stream(s: SlotSettings, steps: list[Step]) -> None:
            for theirs, ours in zip(_arrivals(make, s, steps), _arrivals(reference, s, steps)):
                _, task, m, before, _, d = theirs
                e = ours[5]
                got = (d.outcome, d.demoted.id if d.demoted else None)
                expected = (e.outcome, e.demoted.id if e.demoted else None)
                assert got == expected, (
                    f"{task.id} (priority {urgent_priority(task.priority, m):.2f}) arrives at "
                    f"{before} (threshold {s.activation_threshold:g}, ratio "
                    f"{s.preemption_ratio:g}): yours {got}, {what} {expected}")

        stream()

    return Contract(f"it decides what {what} decides", check)
