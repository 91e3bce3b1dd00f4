"""``python -m bench.tuning_misses``: lesson 12's browser for the misses (``MissExplorer``).

Cold: the first visit of each (policy, budget) runs ``explain_misses`` over every question
(memoized afterwards). Warm: every move of the miss slider, and every policy and budget visited
again, through ``MissExplorer.update`` (recompute + redraw inside ``batch_update``; no browser).
Goal for a warm move: p95 < 50 ms. Data: the bundled fixture (notebooks/12_parameter_tuning.ipynb).
"""

from __future__ import annotations

import platform
import sys
import time

import numpy as np

from memorykit.classroom.data import load_tuning_data
from memorykit.classroom.lesson12 import precompute
from memorykit.classroom.lesson12_misses import MISS_POLICIES, MissExplorer, policy_misses


def main() -> int:
    data, description = load_tuning_data()
    sweeps = precompute(data, description, progress=False, workers=2)
    t0 = time.perf_counter()
    explorer = MissExplorer(sweeps)
    cold = {(explorer.params["policy"], explorer.params["budget"]): time.perf_counter() - t0}
    for policy in MISS_POLICIES:
        for budget in sweeps.budgets:
            if (policy, budget) not in cold:
                t0 = time.perf_counter()
                explorer.update(policy=policy, budget=budget)
                cold[policy, budget] = time.perf_counter() - t0
    warm = []
    for _ in range(2):
        for policy in MISS_POLICIES:
            for budget in sweeps.budgets:
                t0 = time.perf_counter()
                explorer.update(policy=policy, budget=budget)
                warm.append(time.perf_counter() - t0)
                for n in range(2, len(policy_misses(data, policy, budget)) + 1):
                    t0 = time.perf_counter()
                    explorer.update(miss=n)
                    warm.append(time.perf_counter() - t0)
    ms = np.array(warm) * 1e3
    print(f"# lesson 12 misses browser ({platform.machine()}, Python {platform.python_version()})")
    print(f"data: {description}")
    print("cold (explain_misses, first visit): " + ", ".join(
        f"{p} at {b}: {s:.2f} s" for (p, b), s in cold.items()))
    print(f"warm, {len(ms)} moves: p50 {np.median(ms):.1f} ms, p95 {np.percentile(ms, 95):.1f} ms, "
          f"max {ms.max():.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
