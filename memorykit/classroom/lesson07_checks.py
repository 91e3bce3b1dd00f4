"""Lesson 07's exercise checkers: objects and salience (``notebooks/07_objects_salience.ipynb``).

* ``check_salience_weights``: salience weights under which, at turn 551 of the 30-day workflow
  of ``data/workflow/`` (``lesson07.salience_lesson_data``), the belief the turn needs and the
  user Maya Chen are both among the first six objects the column shows, while every object the
  active tasks name stays in the column (the work in hand: switching the link weights off is
  not an answer), with the recency window and ``max_objects`` at the seed's 5 and 20.
* ``check_object_salience`` (build it yourself): the student's salience of one object at one
  turn, run through the library's salience contracts
  (``memorykit.classroom.contracts.workspace``) and compared with ``salience_matrix`` on
  generated objects and weights; a function that calls ``salience_matrix`` is refused.

Each returns a ``Verdict`` (printed only with ``show=True``) naming the numbers that decided it,
and refuses an answer of the wrong kind with a ``TypeError`` / ``ValueError`` naming the value.
"""

from __future__ import annotations

from typing import Any

from memorykit._validate import require_between, require_bool
from memorykit.classroom.verdict import Verdict, report, require_function


SALIENCE_EXERCISE = {"turn": 551, "target": "b_acme_gl", "keep": "maya", "top": 6}
"""Lesson 07: at turn 551 ("Acme Supplies sent INV-1118; can you check it?") the belief
"Acme Supplies invoices use GL 5100" and the user Maya Chen must both be in the top 6. Neither is
named by a task or note at that turn, so under direct links each stands on its own weight. Two of
the six places are pinned whatever the weights (the month-end close and the active task's
pattern, D2's ``get_relevant_patterns``), so four are won by ranking. What the active tasks name
(their vendors, people and GL code) must stay among the ``max_objects`` shown: the belief and the
user are lifted by trading weight, not by dropping the work in hand."""

KEPT = {"recency_turns": 5, "max_objects": 20}
"""The windows lesson 07's exercise 1 keeps at the seed's values (a longer column or a shorter
window would change the question, not answer it)."""


SALIENCE_KEYS = ("recent_mention", "active_task_link", "note_link", "relationship", "belief_strength",
                 "recency_turns", "max_objects")
"""What lesson 07's exercise may set: the five weights (sliders in [0, 1]) and the two windows."""


def check_salience_weights(weights: Any, *, show: bool = False) -> Verdict:
    """Lesson 07: salience weights (a dict of the five weights; recency_turns and max_objects
    may be given at the seed's 5 and 20) under which, at turn 551 of the default workflow, the
    belief "Acme Supplies invoices use GL 5100" and the user Maya Chen are both among the first 6
    objects shown, and every object an active task names is still shown."""
    from memorykit.classroom.lesson07 import salience_lesson_data
    from memorykit.workspace import SalienceWeights
    from memorykit.workspace.objects import SALIENCE_COMPONENTS
    from memorykit.classroom.replays.salience import format_top_objects, object_rank

    name = "07 salience"
    ex = SALIENCE_EXERCISE
    if not isinstance(weights, dict):
        raise TypeError(f"weights must be a dict such as {{'belief_strength': 0.5}}, got {weights!r}")
    unknown = sorted(set(weights) - set(SALIENCE_KEYS))
    if unknown:
        raise ValueError(f"unknown weight(s) {', '.join(map(repr, unknown))}: this exercise sets only "
                         f"{', '.join(SALIENCE_KEYS)}")
    for k, v in weights.items():
        if k in SALIENCE_COMPONENTS:
            require_between(k, v, 0.0, 1.0)  # slider values; TypeError/ValueError name the value
    w = SalienceWeights(**weights)
    data = salience_lesson_data()
    view = data.view(ex["turn"], w)
    target, keep = object_rank(view, ex["target"]), object_rank(view, ex["keep"])
    named = data.inputs.task_hops[:, ex["turn"] - 1] == 0  # what the active tasks name
    dropped = [data.names[i] for i in named.nonzero()[0] if object_rank(view, data.inputs.ids[i]) is None]
    label = " ".join(f"{k}={getattr(w, k):g}" for k in ("recent_mention", "active_task_link", "note_link",
                                                         "relationship", "belief_strength"))
    place = {None: "not shown at all"}
    details = (
        f"turn {ex['turn']}: the belief ranks {place.get(target, f'#{target}')}, Maya Chen "
        f"{place.get(keep, f'#{keep}')} (need both <= {ex['top']})",
        f"top {ex['top'] + 1} under these weights:\n    "
        + format_top_objects(view.top[:ex["top"] + 1]).replace("\n", "\n    "),
    )
    problems = [f"{k} must stay at {v} in this exercise, got {weights[k]!r}"
                for k, v in KEPT.items() if k in weights and weights[k] != v]
    if dropped:
        problems.append(f"the work in hand left the column: {', '.join(dropped)} (named by the active tasks) "
                        f"{'is' if len(dropped) == 1 else 'are'} no longer shown; the link weights keep "
                        "what the tasks name in view, and lifting the belief and the user must not cost that")
    if target is None or target > ex["top"]:
        problems.append(f"the GL 5100 belief is not in the top {ex['top']}: no task or note names it at this turn (the "
                        "notes name Acme Supplies, the vendor, not the belief), so under "
                        "D2's direct links it earns only 0.88 x the belief weight, while the vendors "
                        "and people the tasks and notes name start with active_task_link + note_link")
    if keep is None or keep > ex["top"]:
        problems.append(f"Maya Chen fell out of the top {ex['top']}: no task or note names her here either, so "
                        "her score is relationship x 0.95 alone, and every belief (and person) you lift "
                        f"competes with her for the same {ex['top']} places")
    if problems:
        return report(Verdict(name, False, f"{label}: " + "; ".join(problems), details), show)
    return report(Verdict(name, True, f"{label}: the GL 5100 belief is #{target} and Maya Chen #{keep} at "
                           f"turn {ex['turn']}, and all {int(named.sum())} objects the active tasks name are "
                           "still shown", details), show)


def check_object_salience(object_salience: Any, *, show: bool = False) -> Verdict:
    """Lesson 07, build it yourself: ``object_salience(turns_since_mention, task_hops, note_hops,
    relationship_value, strength, weights)`` returns one object's salience at one turn: the
    recent-mention weight if it was named fewer than ``weights.recency_turns`` turns ago, the
    task- and note-link weights if it is within ``weights.link_hops`` hops, plus relationship x
    relationship_value and belief_strength x strength. The library's salience contracts run over
    it, and it must agree with ``salience_matrix`` on generated objects and weights, without
    calling it (``own_code``)."""
    from memorykit.classroom.contracts import run_contracts
    from memorykit.classroom.contracts.own_code import own_code
    from memorykit.classroom.contracts.workspace import SALIENCE_AGREES, SALIENCE_CONTRACTS
    from memorykit.workspace import SalienceWeights, salience_matrix

    require_bool("show", show)  # before the contracts run: a bad flag fails fast
    require_function("object_salience", object_salience, ("turns_since_mention", "task_hops", "note_hops",
                                                   "relationship_value", "strength", "weights"))
    # first: a one-object SalienceInputs handed to salience_matrix passes the rest
    own = own_code(salience_matrix, what="the five terms", probe=lambda object_salience:
                   object_salience(0.0, 0.0, 1.0, 0.5, 0.0, SalienceWeights()))
    contracts = (own, *SALIENCE_CONTRACTS, SALIENCE_AGREES)
    return report(run_contracts(object_salience, contracts,
                                exercise="07 salience rule"), show)

