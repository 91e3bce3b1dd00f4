"""Slider round trips of the lesson 05 and 06 explorers (``explorer.update``: compute + draw).

    python -m bench.workspace_lessons            # 50 random slider moves per explorer
    python -m bench.workspace_lessons --moves 200

Each move sets one slider, chosen at random, to a random value on its grid, as
a student dragging sliders would, and times ``explorer.update`` (the pure
recomputation and the redraw into the FigureWidget inside ``batch_update``).

* ``SlotExplorer`` (05_task_slots): every new (max_slots, threshold, ratio)
  is the month played through ``WorkingMemory`` (``scenarios.workflow.play``,
  without the user notes, which never change a slot); replays are memoized, so
  it is timed twice: with the memo cleared before every move (cold: what the
  first visit to a setting costs) and on settings already visited (warm).
* ``EscalationExplorer`` (06_notes_ttl): three curves of ~480 points from
  the vectorized ``effective_priority`` plus the scenario count (memoized: ``surfacers``).
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from memorykit.classroom import lesson05 as tasks_app, lesson06 as notes_app
from memorykit.classroom.scenarios.workflow import default_workflow


def _percentile(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def _random_move(explorer, rng: random.Random) -> dict:
    name = rng.choice(sorted(explorer.sliders))
    s = explorer.sliders[name]
    steps = int(round((s.max - s.min) / s.step))
    return {name: s.min + rng.randint(0, steps) * s.step}


def slider_moves(explorer, moves: int, seed: int = 0, before=None) -> list[float]:
    """Milliseconds per ``explorer.update`` over ``moves`` random single-slider moves."""
    rng = random.Random(seed)
    out = []
    for _ in range(moves):
        move = _random_move(explorer, rng)
        if before is not None:
            before()
        t0 = time.perf_counter()
        explorer.update(**move)
        out.append((time.perf_counter() - t0) * 1000)
    return out


def _line(label: str, ms: list[float]) -> str:
    return (f"{label}: p50 {statistics.median(ms):.1f} ms, p95 {_percentile(ms, 0.95):.1f} ms, "
            f"max {max(ms):.1f} ms over {len(ms)} moves (goal p95 < 50 ms)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--moves", type=int, default=50)
    args = parser.parse_args(argv)

    slots = tasks_app.SlotExplorer()
    cold = slider_moves(slots, args.moves, seed=1, before=tasks_app._slot_timeline.cache_clear)
    # warm: replay the same move sequence once to fill the memo, then time it
    slider_moves(slots, args.moves, seed=2)
    warm = slider_moves(slots, args.moves, seed=2)
    t0 = time.perf_counter()
    tasks_app.replay_slots(default_workflow().without_user_notes())
    replay_ms = (time.perf_counter() - t0) * 1000
    print(f"05 SlotExplorer: one replay of the month's task side {replay_ms:.0f} ms")
    print(_line("05 SlotExplorer, cold (memo cleared before every move)", cold))
    print(_line("05 SlotExplorer, warm (settings already visited)", warm))

    notes = notes_app.EscalationExplorer()
    print(_line("06 EscalationExplorer", slider_moves(notes, args.moves, seed=3)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
