"""Lesson 05's exercise checkers (``notebooks/05_task_slots.ipynb``): the admission rule a
student builds (``check_admission_rule``, run against the library's slot contract,
``memorykit.classroom.contracts.tasks``), and the preemption ratio (``check_preemption_ratio``),
replayed on the 30-day workflow of ``data/workflow/``.

Each returns a ``Verdict`` (printed only with ``show=True``) naming the numbers that decided it,
and refuses an answer of the wrong kind with a ``TypeError`` / ``ValueError`` naming the value.
"""

from __future__ import annotations

import math
from typing import Any

from memorykit.classroom.verdict import Verdict, report


def check_admission_rule(slots_class: Any, *, show: bool = False) -> Verdict:
    """Lesson 05, build it yourself: ``slots_class`` subclasses ``TaskSlots`` and overrides only
    ``decide(priority, active)`` with document D2's admission rule. The library's slot contract
    (``memorykit.classroom.contracts.tasks``, which the library's ``TaskSlots`` passes) runs over it, and it
    must decide what the library decides (outcome and demoted task) on random streams of
    arrivals and completions."""
    from memorykit.classroom.contracts import run_contracts
    from memorykit.classroom.contracts.runner import missing_override
    from memorykit.classroom.contracts.tasks import SLOT_CONTRACTS, agrees_with
    from memorykit.workspace.tasks import TaskSlots

    not_overridden = missing_override(slots_class, TaskSlots, "decide", argument="slots_class",
                                      exercise="05 admission rule")
    if not_overridden is not None:
        return report(not_overridden, show)
    if _delegates(slots_class):
        return report(Verdict("05 admission rule", False, f"{slots_class.__name__}.decide calls "
                              "TaskSlots.decide (super().decide): that is the library's rule, not "
                              "yours; write the comparisons from the Background's formula"), show)
    return report(run_contracts(slots_class, (*SLOT_CONTRACTS, agrees_with()),
                                exercise="05 admission rule"), show)


def _delegates(slots_class: type) -> bool:
    """Whether ``slots_class.decide`` hands the decision to ``TaskSlots.decide`` (``super()``
    or by name): it would pass every contract as the library's own rule. Its decide runs on a
    few arrivals (full slots, a free slot, below the threshold) with the library's decide
    spied on; a student's decide that raises here is left for the contracts to report."""
    from unittest import mock

    from memorykit.workspace.tasks import TaskSlots

    calls: list[tuple] = []
    library = TaskSlots.decide

    def spy(self: Any, *args: Any, **kwargs: Any) -> Any:
        calls.append(args)
        return library(self, *args, **kwargs)

    with mock.patch.object(TaskSlots, "decide", spy):
        try:
            slots = slots_class()
        except Exception:  # noqa: BLE001 - the contracts report a class that cannot be made
            return False
        for priority, active in ((0.9, (0.6, 0.7, 0.8, 0.55)), (0.7, (0.6,)), (0.2, ())):
            try:
                slots.decide(priority, active)
            except Exception:  # noqa: BLE001 - a wrong rule is the contracts' business
                pass
    return bool(calls)


PREEMPTION_EXERCISE = {"keeps": "T022", "arrives": "T024", "min_completed": 16, "next": "T030"}
"""Lesson 05: T022 keeps its slot when T024 arrives, and at least 16 tasks still complete (D2's
1.3 completes 17 with month-end urgency on). ``next`` is the preemption a ratio past the
answer's range stops as well, named in the hint."""


def check_preemption_ratio(preemption_ratio: Any, *, show: bool = False) -> Verdict:
    """Lesson 05: a preemption ratio (4 slots, threshold 0.5) under which T024 does not
    preempt T022 on the 30-day workflow, while at least 16 tasks are still completed.

    T024 arrives in the audit fieldwork (urgency 1.3x), which scales both priorities alike and
    leaves their ratio unchanged, so the stored priorities give the bound."""
    from memorykit.classroom.lesson05 import slot_timeline

    name = "05 preemption ratio"
    if isinstance(preemption_ratio, bool) or not isinstance(preemption_ratio, (int, float)):
        raise TypeError(f"preemption_ratio must be a number (a float such as 1.3), got "
                        f"{preemption_ratio!r} ({type(preemption_ratio).__name__})")
    if not math.isfinite(preemption_ratio) or preemption_ratio < 1:
        raise ValueError(f"preemption_ratio must be a finite number >= 1 (1 lets any strictly "
                         f"higher priority preempt), got {preemption_ratio!r}")
    r = round(float(preemption_ratio), 4)
    ex = PREEMPTION_EXERCISE
    tl = slot_timeline(4, 0.5, r)
    index = {tid: i for i, tid in enumerate(tl.task_ids)}
    p_keep = float(tl.priorities[index[ex["keeps"]]])
    p_new = float(tl.priorities[index[ex["arrives"]]])
    lost = any(e.kind == "demoted" and e.task_id == ex["keeps"] and e.other_id == ex["arrives"]
               for e in tl.events)
    s = tl.summary()
    seed = slot_timeline(4, 0.5, 1.3)
    base = seed.summary()
    details = (
        f"{ex['arrives']} ({p_new:.2f}) against {ex['keeps']} ({p_keep:.2f}): {p_new:.2f} "
        f"{'>' if lost else 'is not >'} {r:g} x {p_keep:.2f} = {r * p_keep:.4f}",
        f"{s['preemptions']} preemptions, {s['completed']} tasks completed, "
        f"{s['task_notes_expired']} waiting tasks ran out of time (D2's 1.3: {base['preemptions']}, "
        f"{base['completed']}, {base['task_notes_expired']})",
    )
    if lost:
        return report(Verdict(
            name, False, f"at {r:g}, {ex['arrives']} still preempts {ex['keeps']}: "
            f"{p_new:.2f} > {r * p_keep:.4f}; raise the ratio until {p_new:.2f} is no longer above "
            f"ratio x {p_keep:.2f}", details), show)
    if s["completed"] < ex["min_completed"]:
        blocked = [e for e in tl.events if e.kind == "noted" and "slots full" in e.text]
        return report(Verdict(
            name, False, f"at {r:g}, {ex['keeps']} is safe but only {s['completed']} tasks complete "
            f"(at least {ex['min_completed']} wanted): {len(blocked)} arrivals found all slots full and "
            "could not preempt, so urgent work waited in notes until it expired; a ratio that "
            f"just clears {p_new:.2f} / {p_keep:.2f} keeps more preemptions ({_next_bound(seed, ex['next'])})",
            details), show)
    return report(Verdict(
        name, True, f"at {r:g}, {ex['keeps']} keeps its slot ({p_new:.2f} is not > {r * p_keep:.4f}) "
        f"and {s['completed']} tasks still complete", details), show)


def _next_bound(seed: Any, task_id: str) -> str:
    """The ratio under which ``task_id``'s preemption at D2's 1.3 still happens, on the
    priorities admission compared (scaled by the urgency of its period, capped at 1)."""
    from memorykit.workspace import urgent_priority

    e = next(e for e in seed.events if e.kind == "preempted" and e.task_id == task_id)
    low = float(seed.priorities[seed.task_ids.index(e.other_id)])
    p_m, low_m = urgent_priority(e.priority, e.urgency), urgent_priority(low, e.urgency)
    # Not the quotient itself: a teaching cell shows this verdict, and with the lower bound it
    # would hand out the answer's interval.
    return (f"{task_id}: {e.priority:.2f} vs {low:.2f}, x urgency {e.urgency:g}: {p_m:.2f} vs {low_m:.3f}, "
            "a preemption the ratio must stay low enough to keep")
