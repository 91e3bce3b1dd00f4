"""``python -m bench.tuning_lesson``: lesson 12's explorer round trip (re-slice + redraw), p50/p95.

The sweeps are precomputed once, serially and on a process pool of 2 (timed separately: it is the
notebook's slow cell); then every
widget move (budget, the two parameters, the policy) is timed through ``TuningExplorer.update``,
which re-slices the arrays and redraws the FigureWidget inside ``batch_update`` (no browser, so
the time to send the update to a frontend is not included). Goal: p95 < 50 ms.
Data: the bundled fixture ``data/locomo_style/locomo_style.json`` (notebooks/12_parameter_tuning.ipynb).
"""

from __future__ import annotations

import platform
import statistics
import sys
import time

import numpy as np

from memorykit.classroom.data import load_tuning_data
from memorykit.classroom.lesson12 import TuningExplorer, precompute


def main() -> int:
    data, description = load_tuning_data()
    t0 = time.perf_counter()
    sweeps = precompute(data, description, progress=False)
    pre = time.perf_counter() - t0
    t0 = time.perf_counter()
    pooled = precompute(data, description, progress=False, workers=2)
    pre_pool = time.perf_counter() - t0
    same = pooled.points == sweeps.points
    explorer = TuningExplorer(sweeps)
    moves = []
    for policy in sweeps.surfaces:
        moves.append({"policy": policy})
        n1 = len(sweeps.surfaces[policy].knobs.values[0])
        n2 = len(sweeps.surfaces[policy].knobs.values[1])
        for budget in sweeps.budgets:
            moves.append({"budget": budget})
            for i in range(n1):
                moves.append({"p1": i})
            for j in range(n2):
                moves.append({"p2": j})
    times = []
    for _ in range(3):
        for move in moves:
            t = time.perf_counter()
            explorer.update(**move)
            times.append(time.perf_counter() - t)
    ms = np.array(times) * 1e3
    print(f"# lesson 12 explorer ({platform.machine()}, Python {platform.python_version()})")
    print(f"data: {description}")
    print(f"precompute: {sweeps.n_evaluations} evaluations in {pre:.1f} s serial, "
          f"{pre_pool:.1f} s on a process pool of 2 (as the notebook runs it; same rows: {same})")
    print(f"round trip over {len(ms)} widget moves: p50 {statistics.median(ms):.2f} ms, "
          f"p95 {np.percentile(ms, 95):.2f} ms, max {ms.max():.2f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
