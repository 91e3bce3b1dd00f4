"""Entity working memory benchmark: ``python -m bench.entities``.

Measures, on this machine:

* a working-memory lookup (``EntityMemory.get``: a dict access plus accounting),
  median and p99 per call, next to a bare dict access;
* the heatmap slider round trip for 200 entities x 1,000 turns: re-scoring the
  replayed matrices under new weights (the slider path), and a full replay of
  the relevance policy under new weights (when membership must change too);
* the lesson explorer's full slider round trip (``EntityHeatmapExplorer.update``:
  replay(s) + re-score + FigureWidget update), p50/p95, for a weight slider (the
  relevance policy is replayed) and a max_size/TTL slider (both policies replayed);
* FIFO vs relevance (and an unlimited baseline) on ``data/entities/cms_large.jsonl``:
  resolution success and eviction rate, computed by replay.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np

from memorykit.clock import StepClock
from memorykit.entities import (
    Entity,
    RelevanceMemory,
    RelevanceWeights,
    relevance_scores,
)
from memorykit.classroom.replays.entity_replay import compare_policies, replay, seed_policies
from memorykit.classroom.scenarios import load_scenario

DATA = Path(__file__).resolve().parent.parent / "data" / "entities" / "cms_large.jsonl"


def per_call_ns(fn, keys, rounds: int) -> np.ndarray:
    clock = time.perf_counter_ns
    out = np.empty(rounds * len(keys), dtype=np.int64)
    i = 0
    for _ in range(rounds):
        for key in keys:
            t0 = clock()
            fn(key)
            out[i] = clock() - t0
            i += 1
    return out


def timer_overhead_ns(n: int = 200_000) -> float:
    clock = time.perf_counter_ns
    samples = np.empty(n, dtype=np.int64)
    for i in range(n):
        t0 = clock()
        samples[i] = clock() - t0
    return float(np.median(samples))


def median_ms(fn, repeats: int) -> tuple[float, float]:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times), max(times)


def explorer_round_trip(scenario, n: int) -> None:
    """Slider round trips of the lesson 04 explorer: compute + FigureWidget update."""
    from memorykit.classroom.lesson04_heatmap import EntityHeatmapExplorer, policy_replay

    explorer = EntityHeatmapExplorer(scenario)
    rows = {"weight slider (relevance replayed, FIFO cached)": [],
            "max_size / TTL slider (both replayed)": []}
    weights = np.linspace(0.05, 0.95, n)  # never a cached value: the relevance memory is replayed
    for i in range(n):
        t0 = time.perf_counter()
        explorer.update(w_recency=float(weights[i]))
        rows["weight slider (relevance replayed, FIFO cached)"].append((time.perf_counter() - t0) * 1e3)
        policy_replay.cache_clear()  # both policies replayed
        t0 = time.perf_counter()
        if i % 2:
            explorer.update(max_size=10 + i % 31)
        else:
            explorer.update(ttl_minutes=(i % 60) + 1)
        rows["max_size / TTL slider (both replayed)"].append((time.perf_counter() - t0) * 1e3)
    print(f"\n## lesson 04 explorer slider round trip (replay + re-score + FigureWidget update), n={n} each")
    for name, times in rows.items():
        print(f"{name:<50} p50 {np.percentile(times, 50):.1f} ms  p95 {np.percentile(times, 95):.1f} ms")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="entity working memory benchmark")
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    args = parser.parse_args(argv)
    rounds = 200 if args.quick else 2000

    # 1. Lookup latency.
    memory = RelevanceMemory(20, clock=StepClock())
    for i in range(20):
        memory.add(Entity("page", i, f"P{i}"))
    keys = list(memory.keys())
    plain = {k: Entity.from_key(k) for k in keys}
    overhead = timer_overhead_ns()
    get_ns = per_call_ns(memory.get, keys, rounds) - overhead
    dict_ns = per_call_ns(plain.get, keys, rounds) - overhead
    print("## lookup (per call, timer overhead of %.0f ns subtracted)" % overhead)
    print(f"EntityMemory.get  median {np.median(get_ns):.0f} ns  p99 {np.percentile(get_ns, 99):.0f} ns "
          f"(n={len(get_ns)})")
    print(f"dict.get          median {np.median(dict_ns):.0f} ns  p99 {np.percentile(dict_ns, 99):.0f} ns")

    # 2. Heatmap round trip.
    scenario = load_scenario(DATA)
    result = replay(scenario, seed_policies()["relevance"])
    shape = result.access_count.shape
    slider = RelevanceWeights(w_recency=0.5, w_frequency=0.5, decay_per_minute=0.05)
    rep = 20 if args.quick else 100
    ages, counts = result.ages_minutes(), result.access_count
    med, worst = median_ms(lambda: relevance_scores(ages, counts, slider), rep)
    print(f"\n## heatmap {shape[0]} entities x {shape[1]} turns")
    print(f"relevance_scores on the matrices       median {med:.2f} ms  max {worst:.2f} ms")
    med, worst = median_ms(lambda: result.scores(slider), rep)
    print(f"ReplayResult.scores (slider re-score)  median {med:.2f} ms  max {worst:.2f} ms")
    factory = lambda c: RelevanceMemory(20, slider, clock=c)  # noqa: E731
    med, worst = median_ms(lambda: replay(scenario, factory).scores(slider), 5 if args.quick else 20)
    print(f"full replay + re-score (new policy)    median {med:.2f} ms  max {worst:.2f} ms")
    explorer_round_trip(scenario, 10 if args.quick else 60)

    # 3. FIFO vs relevance on the scenario.
    print(f"\n## FIFO vs relevance on {DATA.name} (max_size 20, seed weights)")
    print("| agent loop | policy | references | correct | wrong | unresolved | resolution success "
          "| lost to eviction | evictions / adds | eviction rate |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for readd in (False, True):
        loop = "resolve = get; tool re-adds" if readd else "resolve = get only"
        for row in compare_policies(scenario, readd_resolved=readd):
            print(f"| {loop} | {row['policy']} | {row['references']} | {row['correct']} | {row['wrong']} | "
                  f"{row['unresolved']} | {row['resolution_success']:.1%} | "
                  f"{row['failures_antecedent_evicted']} | {row['evictions']} / {row['adds']} | "
                  f"{row['eviction_rate']:.1%} |")


if __name__ == "__main__":
    main()
