"""Lesson 08's exercise checkers: the three columns (``notebooks/08_three_columns.ipynb``).

* ``check_column_limits``: top-notes and max-objects limits that keep at least D2's 8 notes,
  make the prompt at least 40% smaller than the flat buffer of the same state over the 30-day
  workflow of ``data/workflow/`` (``lesson08.default_tables``), never cut an object linked to an
  active task, and show as many objects as such limits can.
* ``check_three_columns`` (build it yourself): the student's assembly of the prompt's lines,
  run through the library's column contracts (``memorykit.classroom.contracts.workspace``) and
  compared with ``three_column_lines`` on generated columns (which it must not call).

Each returns a ``Verdict`` (printed only with ``show=True``) naming the numbers that decided it,
and refuses an answer of the wrong kind with a ``TypeError`` / ``ValueError`` naming the value.
"""

from __future__ import annotations

from typing import Any

from memorykit._validate import require_bool, require_int
from memorykit.classroom.verdict import Verdict, report, require_function


COLUMNS_EXERCISE = {"min_reduction": 0.40, "min_top_notes": 8}
"""Lesson 08: keep at least D2's 8 notes, use >= 40% fewer tokens than the flat buffer of the
same state, never cut an object linked to an active task, and show as many objects as that allows."""


def most_objects_meeting_target(tables: Any, min_top_notes: int, min_reduction: float) -> int:
    """The largest max_objects for which some top_notes >= ``min_top_notes`` meets
    ``min_reduction`` without cutting a task-linked object at any turn (0 when none does)."""
    from memorykit.classroom.replays.columns import limits_grid

    grid = limits_grid(tables)
    ok = (grid["reduction"][min_top_notes:] >= min_reduction) & (grid["dropping"][min_top_notes:] == 0)
    fits = ok.any(axis=0).nonzero()[0]
    return int(fits[-1]) + 1 if fits.size else 0


def check_column_limits(top_notes: Any, max_objects: Any, *, show: bool = False) -> Verdict:
    """Lesson 08: top-notes and max-objects limits that keep at least D2's 8 notes, whose
    three-column prompt is, on average over the 600 turns of the default workflow, at least 40%
    smaller than the flat buffer of the same state, that never drop an object linked to an active
    task, and that show as many objects as any such limits can (the answer is unique)."""
    import numpy as np

    from memorykit.classroom.lesson08 import default_replay, default_tables
    from memorykit.classroom.replays.columns import line_costs, token_comparison

    name = "08 columns"
    ex = COLUMNS_EXERCISE
    require_int("top_notes", top_notes, minimum=0)
    require_int("max_objects", max_objects, minimum=1)
    tables = default_tables()
    cmp = token_comparison(tables, top_notes, max_objects)
    red = cmp.reduction
    best = most_objects_meeting_target(tables, ex["min_top_notes"], ex["min_reduction"])
    details = [
        f"three columns {cmp.columns.mean():.1f} tokens per turn vs {cmp.flat.mean():.1f} for the flat "
        f"buffer of the same state: {red:.1%} fewer (D2 claims 40%)",
        f"task-linked objects need max_objects up to {int(tables.linked_needed.max())} "
        f"(median {int(np.median(tables.linked_needed))}); {cmp.turns_dropping_linked.size} turns drop one "
        f"at max_objects={max_objects}",
    ]
    if cmp.turns_dropping_linked.size:
        replay = default_replay()
        t = int(cmp.turns_dropping_linked[0])
        tl = replay.turns[t - 1]
        kept = set(tl.objects[:max_objects])
        lost = [replay.object_ids[i] for i in tl.task_linked if i not in kept]
        details.append(f"first such turn: {t}, dropping {', '.join(lost[:5])}")
    problems = []
    if top_notes < ex["min_top_notes"]:
        problems.append(f"top_notes={top_notes} hides notes D2's limits show; the exercise keeps at "
                        f"least D2's {ex['min_top_notes']}")
    if red < ex["min_reduction"]:
        costs = line_costs(default_replay())
        problems.append(f"only {red:.1%} fewer tokens than the flat buffer (need {ex['min_reduction']:.0%}): "
                        f"a note line costs {costs['note']:.0f} tokens on average and an object line "
                        f"{costs['object']:.0f}, so every extra note leaves room for fewer objects")
    if cmp.turns_dropping_linked.size:
        problems.append(f"max_objects={max_objects} cuts an object linked to an active task at "
                        f"{cmp.turns_dropping_linked.size} turns: the column must hold up to "
                        f"{int(tables.linked_needed.max())} objects to keep them all")
    if not problems and max_objects < best:
        # Not the number itself: a teaching cell shows this verdict for too few objects, and the
        # answer is that number.
        problems.append("these limits meet both conditions, but the column could show more objects and "
                        "still meet them: objects given away for nothing; raise max_objects until one "
                        "more would break a condition")
    label = f"top_notes={top_notes} max_objects={max_objects}"
    if problems:
        return report(Verdict(name, False, f"{label}: " + "; ".join(problems), tuple(details)), show)
    return report(Verdict(name, True, f"{label}: {red:.1%} fewer tokens than the flat buffer, every "
                           f"task-linked object kept at every turn, and {best} is the most objects any "
                           "such limits show", tuple(details)), show)


def check_three_columns(three_columns: Any, *, show: bool = False) -> Verdict:
    """Lesson 08, build it yourself: ``three_columns(task_lines, note_lines, objects, *,
    max_slots, top_notes, max_objects)`` returns the prompt's lines under the column limits
    (the library's ``three_column_lines``). The workspace contract runs over it (limits held,
    nothing cut silently, the layout), and it must write the library's lines on generated
    columns without calling ``three_column_lines``."""
    from memorykit.classroom.contracts import run_contracts
    from memorykit.classroom.contracts.workspace import COLUMN_CONTRACTS, COLUMNS_AGREE
    from memorykit.classroom.contracts.own_code import own_code
    from memorykit.workspace.render import three_column_lines

    require_bool("show", show)  # before the contracts run: a bad flag fails fast
    require_function("three_columns", three_columns, ("task_lines", "note_lines", "objects"),
              ("max_slots", "top_notes", "max_objects"))
    contracts = (own_code(three_column_lines), *COLUMN_CONTRACTS, COLUMNS_AGREE)
    return report(run_contracts(three_columns, contracts,
                                exercise="08 column assembly"), show)
