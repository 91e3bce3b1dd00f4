"""Slider round trips of lessons 07 (salience) and 08 (three columns), as the notebooks run them.

    python -m bench.workspace_lessons_salience            # 50 random slider moves per explorer
    python -m bench.workspace_lessons_salience --moves 200

Builds each explorer on the default workflow (``data/workflow/workflow_30d.jsonl``), then
times ``explorer.update(**{slider: value})`` (compute + draw into the FigureWidget, inside
``batch_update``) over random single-slider moves, and reports p50 / p95 / max in ms
(goal p95 < 50 ms). Also reports the one-time costs: the replay and the per-line token
tables of lesson 08, and the explorer construction.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time


def _percentile(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def _moves(explorer, n: int, seed: int) -> list[float]:
    rng = random.Random(seed)
    out = []
    names = list(explorer.sliders)
    for _ in range(n):
        name = rng.choice(names)
        s = explorer.sliders[name]
        if isinstance(s.step, int) or float(s.step).is_integer():
            value = rng.randint(int(s.min), int(s.max))
        else:
            value = round(rng.uniform(s.min, s.max) / s.step) * s.step
        t0 = time.perf_counter()
        explorer.update(**{name: value})
        out.append((time.perf_counter() - t0) * 1000)
    return out


def _report(label: str, ms: list[float]) -> None:
    print(f"{label}: {len(ms)} random slider moves, p50 {statistics.median(ms):.1f} ms, "
          f"p95 {_percentile(ms, 0.95):.1f} ms, max {max(ms):.1f} ms  (goal p95 < 50 ms)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--moves", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    import plotly.graph_objects  # noqa: F401  (the first FigureWidget import is slow; not a slider cost)

    from memorykit.classroom.replays.columns import build_tables

    from memorykit.classroom.lesson08 import ColumnsExplorer, default_replay
    from memorykit.classroom.lesson07 import SalienceExplorer, salience_lesson_data

    t0 = time.perf_counter()
    data = salience_lesson_data()
    t1 = time.perf_counter()
    sal = SalienceExplorer(data)
    t2 = time.perf_counter()
    print(f"lesson 07: replay for salience inputs {t1 - t0:.2f} s, explorer {t2 - t1:.2f} s "
          f"({len(data.inputs.ids)} objects x {data.n_turns} turns)")
    _report("lesson 07 SalienceExplorer.update", _moves(sal, args.moves, args.seed))

    t0 = time.perf_counter()
    replay = default_replay()
    t1 = time.perf_counter()
    tables = build_tables(replay)
    t2 = time.perf_counter()
    cols = ColumnsExplorer(replay, tables)
    t3 = time.perf_counter()
    print(f"lesson 08: replay with per-turn lines {t1 - t0:.2f} s ({len(replay.counter)} distinct lines "
          f"counted once), token tables {t2 - t1:.2f} s, explorer {t3 - t2:.2f} s")
    _report("lesson 08 ColumnsExplorer.update", _moves(cols, args.moves, args.seed))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
