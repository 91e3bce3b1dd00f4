"""Slider round trips of lessons 09 (recall) and 10 (architectures), as the notebooks run them.

    python -m bench.recall_lessons             # 60 random single-slider moves per explorer
    python -m bench.recall_lessons --moves 200

Builds each explorer with the notebook's defaults, then times
``explorer.update(**{slider: value})`` (compute + draw into the FigureWidget, inside
``batch_update``) over random single-slider moves on a fresh process (so lesson 10's
per-architecture caches start empty beyond what the explorer captures up front), and reports
p50 / p95 / max in ms (goal p95 < 50 ms), plus the one-time construction costs. Lesson 10's
explorer captures every window of its slider when it is built (the costly part); the
consolidation factor slider re-runs B's ingestion on a cache miss.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time


def _percentile(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def _value(slider, rng: random.Random):
    steps = int(round((slider.max - slider.min) / slider.step))
    value = slider.min + rng.randint(0, steps) * slider.step
    return int(value) if isinstance(slider.step, int) else round(value, 4)


def moves(explorer, n: int, seed: int) -> dict[str, list[float]]:
    """Milliseconds per ``update`` for ``n`` random single-slider moves, by slider."""
    rng = random.Random(seed)
    out: dict[str, list[float]] = {name: [] for name in explorer.sliders}
    names = list(explorer.sliders)
    for _ in range(n):
        name = rng.choice(names)
        value = _value(explorer.sliders[name], rng)
        t0 = time.perf_counter()
        explorer.update(**{name: value})
        out[name].append((time.perf_counter() - t0) * 1000)
    return out


def _line(label: str, ms: list[float]) -> str:
    return (f"{label}: {len(ms)} moves, p50 {statistics.median(ms):.1f} ms, "
            f"p95 {_percentile(ms, 0.95):.1f} ms, max {max(ms):.1f} ms")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--moves", type=int, default=60)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    import plotly.graph_objects  # noqa: F401  (the first FigureWidget import is slow; not a slider cost)

    from memorykit.classroom.lesson10 import ArchitecturesExplorer
    from memorykit.classroom.lesson09 import EpisodicSurfaceExplorer
    from memorykit.classroom.lesson09_semantic import SemanticThresholdExplorer

    for label, make in (("lesson 09 EpisodicSurfaceExplorer", EpisodicSurfaceExplorer),
                        ("lesson 09 SemanticThresholdExplorer", SemanticThresholdExplorer),
                        ("lesson 10 ArchitecturesExplorer", ArchitecturesExplorer)):
        t0 = time.perf_counter()
        explorer = make()
        built = time.perf_counter() - t0
        by_slider = moves(explorer, args.moves, args.seed)
        every = [ms for v in by_slider.values() for ms in v]
        print(f"{_line(label, every)}  (goal p95 < 50 ms); built in {built:.2f} s")
        for name, ms in by_slider.items():
            if ms:
                print("   " + _line(name, ms))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
