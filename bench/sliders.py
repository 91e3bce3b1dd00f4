"""Slider round trips of the lesson explorers 01-03: ``python -m bench.sliders``.

For each explorer (lesson 01's ``BudgetExplorer`` and ``EstimateExplorer``, lesson 02's
``PruningExplorer``, lesson 03's ``SummaryExplorer``) on the default conversation (500 turns,
seed 7), time random single-slider moves: pick a slider at random, move it to a random other
value on its grid, call ``explorer.update`` (compute + draw into the FigureWidget inside
``batch_update``). Reports p50/p95/max in milliseconds over all moves and, for the memoized
explorers (02, 03), over the moves that needed a fresh replay (a setting not seen before), and
for the same moves repeated from the same start ("revisit": every setting memoized).
No browser is involved: this is the kernel side of the round trip.

    python -m bench.sliders                 # 60 moves per explorer, seed 0
    python -m bench.sliders --moves 200 --json bench/results/sliders.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import time
from typing import Any, Callable

import numpy as np


def _grid(slider: Any) -> list[Any]:
    if not hasattr(slider, "max"):  # a SelectionSlider: its options' values
        return list(slider._options_values)
    steps = int(round((slider.max - slider.min) / slider.step))
    values = [slider.min + k * slider.step for k in range(steps + 1)]
    if isinstance(slider.value, int):
        return [int(round(v)) for v in values]
    return [round(v, 6) for v in values]


def time_moves(explorer: Any, moves: int, seed: int,
               cache_size: Callable[[], int] | None = None) -> dict[str, Any]:
    """Time ``moves`` random single-slider moves of ``explorer`` (ms)."""
    rng = random.Random(seed)
    names = list(explorer.sliders)
    all_ms: list[float] = []
    fresh_ms: list[float] = []
    per_slider: dict[str, list[float]] = {n: [] for n in names}
    for _ in range(moves):
        name = rng.choice(names)
        slider = explorer.sliders[name]
        options = [v for v in _grid(slider) if v != slider.value
                   and not (isinstance(v, float) and abs(v - slider.value) <= 1e-9)]
        value = rng.choice(options)
        before = cache_size() if cache_size else None
        t0 = time.perf_counter()
        explorer.update(**{name: value})
        ms = (time.perf_counter() - t0) * 1000
        all_ms.append(ms)
        per_slider[name].append(ms)
        if cache_size is not None and cache_size() != before:
            fresh_ms.append(ms)

    def stats(xs: list[float]) -> dict[str, Any]:
        if not xs:
            return {"n": 0}
        a = np.asarray(xs)
        return {"n": int(a.size), "p50_ms": round(float(np.percentile(a, 50)), 3),
                "p95_ms": round(float(np.percentile(a, 95)), 3),
                "max_ms": round(float(a.max()), 3)}

    out = {"all": stats(all_ms), "per_slider": {n: stats(v) for n, v in per_slider.items()}}
    if cache_size is not None:
        out["fresh_replays"] = stats(fresh_ms)
    return out


def run(moves: int = 60, seed: int = 0) -> dict[str, Any]:
    from memorykit.classroom import lesson02 as pruning_app, lesson03 as summary_app
    from memorykit.classroom.data import default_conversation
    from memorykit.classroom.lesson02 import PruningExplorer
    from memorykit.classroom.lesson03 import SummaryExplorer
    from memorykit.classroom.lesson01 import BudgetExplorer, EstimateExplorer

    conv = default_conversation()
    explorers = [
        ("01 BudgetExplorer", lambda: BudgetExplorer(conv.messages), None),
        ("01 EstimateExplorer", lambda: EstimateExplorer(conv.messages), None),
        ("02 PruningExplorer", lambda: PruningExplorer(conv), pruning_app._replay.cache_len),
        ("03 SummaryExplorer", lambda: SummaryExplorer(conv), summary_app._replay.cache_len),
    ]
    results = {}
    for label, make, cache in explorers:
        t0 = time.perf_counter()
        explorer = make()
        build_ms = (time.perf_counter() - t0) * 1000
        start = dict(explorer.params)
        results[label] = {"build_ms": round(build_ms, 1),
                          **time_moves(explorer, moves, seed, cache)}
        if cache is not None:
            # The same moves again from the same start: every setting is memoized now.
            for name, value in start.items():
                explorer.update(**{name: value})
            again = time_moves(explorer, moves, seed, cache)
            results[label]["revisit"] = again["all"]
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    return {
        "machine": {"platform": platform.machine(), "cpus": os.cpu_count(),
                    "python": platform.python_version(),
                    "loadavg_1_5_15": [round(x, 2) for x in load] if load else None},
        "moves_per_explorer": moves, "seed": seed, "conversation": "default_500",
        "results": results,
    }


def format_text(report: dict[str, Any]) -> str:
    m = report["machine"]
    lines = [f"machine {m['platform']}, {m['cpus']} cpus, python {m['python']}, "
             f"load average {m['loadavg_1_5_15']}; {report['moves_per_explorer']} random "
             f"single-slider moves per explorer (seed {report['seed']})",
             f"{'explorer':<22}{'build ms':>10}{'p50 ms':>9}{'p95 ms':>9}{'max ms':>9}"
             f"{'fresh n':>9}{'fresh p50':>11}{'fresh p95':>11}{'revisit p50':>13}"
             f"{'revisit p95':>13}"]
    for label, r in report["results"].items():
        a = r["all"]
        f = r.get("fresh_replays", {"n": "-"})
        lines.append(f"{label:<22}{r['build_ms']:>10}{a['p50_ms']:>9}{a['p95_ms']:>9}"
                     f"{a['max_ms']:>9}{f['n']:>9}{f.get('p50_ms', '-'):>11}"
                     f"{f.get('p95_ms', '-'):>11}"
                     f"{r.get('revisit', {}).get('p50_ms', '-'):>13}"
                     f"{r.get('revisit', {}).get('p95_ms', '-'):>13}")
        for name, s in r["per_slider"].items():
            if s["n"]:
                lines.append(f"    {name:<20}n={s['n']:<4}p50 {s['p50_ms']:>7} ms  "
                             f"p95 {s['p95_ms']:>7} ms")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.sliders", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--moves", type=int, default=60, help="moves per explorer (default 60)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", default=None, help="also write the report to this file")
    args = p.parse_args(argv)
    if args.moves < 1:
        p.error(f"--moves must be >= 1, got {args.moves}")
    report = run(args.moves, args.seed)
    print(format_text(report))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(report, fh, indent=2)
            fh.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
