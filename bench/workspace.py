"""Three-column working memory: surfacing precision, token savings, slider speed.

    python -m bench.workspace            # the committed scenario, full report
    python -m bench.workspace --quick    # fewer slider repetitions

Replays ``data/workflow/workflow_30d.jsonl`` through a ``WorkingMemory`` with
the seed's defaults and reports (1) surfacing precision and recall against the
scenario's ground-truth labels, (2) prompt tokens of the three rendered
columns against an undifferentiated buffer of the same state and against a
buffer that never forgets, and (3) the round trip a notebook slider costs:
recomputing effective priority over all notes x turns and salience (with its
components and top-20 selection) over all objects x turns under new
parameters, p50/p95 over many random parameter draws.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from pathlib import Path

from memorykit.classroom.scenarios.workflow import load_workflow, run_workflow
from memorykit.workspace import NoteSettings, SalienceWeights, effective_priority, salience_matrix

DATA = Path(__file__).resolve().parent.parent / "data" / "workflow" / "workflow_30d.jsonl"


def _percentile(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def slider_round_trips(run, repeats: int, seed: int = 0) -> list[float]:
    """Milliseconds to recompute both matrices under freshly drawn parameters."""
    rng = random.Random(seed)
    table = run.note_table
    times = run.times
    out = []
    for _ in range(repeats):
        notes = NoteSettings(
            warn_fraction=rng.uniform(0.1, 0.4), warn_multiplier=rng.uniform(1.0, 2.0),
            critical_fraction=rng.uniform(0.01, 0.09), critical_multiplier=rng.uniform(2.0, 3.0),
        )
        weights = SalienceWeights(
            recent_mention=rng.uniform(0, 1), active_task_link=rng.uniform(0, 1), note_link=rng.uniform(0, 1),
            relationship=rng.uniform(0, 1), belief_strength=rng.uniform(0, 1),
            recency_turns=rng.randint(1, 10), link_hops=rng.randint(0, 2), max_objects=rng.randint(5, 30),
        )
        t0 = time.perf_counter()
        effective_priority(table["priority"], table["created"], table["ttl"], times, notes)
        salience_matrix(run.inputs, weights)
        out.append((time.perf_counter() - t0) * 1000)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    scenario = load_workflow(DATA)
    t0 = time.perf_counter()
    run = run_workflow(scenario)
    replay_s = time.perf_counter() - t0
    s = run.summary()
    strict = run_workflow(scenario, notes=NoteSettings(min_shared_entities=2), count_tokens=False)
    n_notes, n_turns = len(run.note_table["id"]), len(run.times)
    print(f"scenario {scenario.name}: {scenario.days} days, {n_turns} turns, {s['tasks_arrived']} tasks "
          f"({s['tasks_completed']} completed), {n_notes} notes held, {s['objects_in_graph']} objects; "
          f"mean {s['mean_active_tasks']:.2f} active tasks, {s['mean_live_notes']:.1f} live notes")
    print(f"replay incl. 3 renders + token counts per turn: {replay_s:.2f} s")
    print(f"surfacing (seed rule, any shared entity): {s['relevant_surfacings']}/{s['surfacings']} relevant = "
          f"precision {s['precision']:.1%}, recall {s['recall']:.1%}  (seed 002: 41/47 = 87%)")
    for trig, (rel, tot) in s["by_trigger"].items():
        print(f"  trigger {trig}: {rel}/{tot}")
    rel2 = sum(x["relevant"] for x in strict.surfacings)
    print(f"surfacing (min_shared_entities=2): {rel2}/{len(strict.surfacings)} = precision {strict.precision:.1%}, "
          f"recall {strict.recall:.1%}")
    print(f"tokens per turn (cl100k_base): three columns {s['tokens_columns_mean']:.0f}, flat buffer of the same "
          f"state {s['tokens_flat_mean']:.0f} ({s['token_reduction']:.1%} fewer), never-forgetting flat log "
          f"{s['tokens_flat_history_mean']:.0f} ({s['token_reduction_vs_history']:.1%} fewer)  (seed 002: 40%)")
    repeats = 50 if args.quick else 500
    ms = slider_round_trips(run, repeats)
    print(f"slider round trip (effective priority {n_notes}x{n_turns} + salience {len(run.inputs.ids)}x{n_turns} "
          f"with components and top-k), {repeats} draws: p50 {statistics.median(ms):.2f} ms, "
          f"p95 {_percentile(ms, 0.95):.2f} ms, max {max(ms):.2f} ms  (goal < 50 ms)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
