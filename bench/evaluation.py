"""``python -m bench.evaluation``: how fast the evaluation harness scores a policy, and sweeps.

    python -m bench.evaluation            # ten 600-turn conversations, 200 questions each
    python -m bench.evaluation --quick    # smoke: two 200-turn conversations

Data: ``memorykit.classroom.scenarios.conversation`` conversations (seeds 0..9, ``fact_every=3``, so 200
planted facts, hence 200 questions, per 600-turn conversation), asked at the end.
Measured (median of ``--repeats`` runs, wall time, preparation included):

1. one configuration over every question: BM25 (``bm25s``) at 1,000 tokens and
   last-B tokens at 1,000 tokens; plus, for the choice of library, the same
   BM25 policy scored by ``rank_bm25`` when it is installed;
2. sweep throughput: a 2x4 BM25 grid (k1 x b) at 1,000 tokens, serial and on a
   process pool of 2 (configurations per second).
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import numpy as np

from memorykit.evaluation.baselines import BM25Retrieval, LastTokens
from memorykit.evaluation.dataset import EvalDataset
from memorykit.evaluation.harness import evaluate
from memorykit.evaluation.sweep import grid, run_sweep
from memorykit.classroom.scenarios.conversation import from_simulated, simulate_conversation


class RankBM25Retrieval(BM25Retrieval):
    """The same policy, scored by ``rank_bm25.BM25Okapi`` instead of ``bm25s`` (comparison only)."""

    def __init__(self, **kw: Any) -> None:
        kw.setdefault("name", "bm25 (rank_bm25)")
        super().__init__(**kw)

    def _index(self, p: Any, position: int) -> Any:
        index = p.indexes.get(position)
        if index is None:
            from rank_bm25 import BM25Okapi

            index = BM25Okapi(p.docs[:position], k1=self.k1, b=self.b)
            p.indexes[position] = index
        return index

    def scores(self, p: Any, position: int, query: str) -> np.ndarray:
        terms = self.analyzer(query)
        if not position or not terms:
            return np.zeros(position)
        return np.asarray(self._index(p, position).get_scores(terms))


def build_dataset(n_conversations: int, n_turns: int) -> EvalDataset:
    convs = [
        from_simulated(simulate_conversation(n_turns, seed=seed, fact_every=3), id=f"sim-{seed}")
        for seed in range(n_conversations)
    ]
    return EvalDataset(f"{n_conversations}x{n_turns}", tuple(convs))


def _time(fn: Any, repeats: int) -> tuple[float, Any]:
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="two 200-turn conversations")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    n_conv, n_turns = (2, 200) if args.quick else (10, 600)
    repeats = 1 if args.quick else args.repeats

    t0 = time.perf_counter()
    data = build_dataset(n_conv, n_turns)
    sim_seconds = time.perf_counter() - t0
    print(f"# Evaluation harness benchmark ({platform.machine()}, {os.cpu_count()} cores, "
          f"Python {platform.python_version()})")
    print(f"data: {len(data)} conversations x {n_turns} turns = {data.n_messages:,} messages, "
          f"{data.n_questions:,} questions, {sum(c.tokens for c in data):,} tokens "
          f"(simulated in {sim_seconds:.1f} s)\n")

    print("| policy | budget | questions | recall | strict | mean tokens | seconds (median) | per question |")
    print("|---|---|---|---|---|---|---|---|")
    policies: list[Any] = [BM25Retrieval(), LastTokens()]
    try:
        import rank_bm25  # noqa: F401

        policies.append(RankBM25Retrieval())
    except ImportError:
        print("(rank_bm25 not installed: comparison skipped)", file=sys.stderr)
    for policy in policies:
        seconds, result = _time(lambda p=policy: evaluate(p, data, 1000), repeats)
        s = result.summary()
        print(f"| {policy.name} | 1,000 | {s['questions']:,} | {s['recall']:.3f} | "
              f"{s['strict_recall']:.3f} | {s['tokens']:.0f} | {seconds:.2f} s | "
              f"{1e6 * seconds / len(result):.0f} us |")

    configs = grid({"k1": [0.9, 1.5], "b": [0.3, 0.5, 0.75, 1.0]})
    sweep_data = data
    print(f"\nsweep: {len(configs)} BM25 configurations (k1 x b) at 1,000 tokens on the same data\n")
    print("| executor | seconds | configurations / second |")
    print("|---|---|---|")
    seconds, serial = _time(
        lambda: run_sweep(BM25Retrieval, configs, sweep_data, 1000, progress=False), 1)
    print(f"| serial | {seconds:.2f} | {len(configs) / seconds:.2f} |")
    with ProcessPoolExecutor(2) as pool:
        pool.submit(int).result()  # start the workers outside the timing
        seconds, parallel = _time(lambda: run_sweep(
            BM25Retrieval, configs, sweep_data, 1000, executor=pool, progress=False,
            chunksize=2), 1)
    print(f"| process pool of 2 | {seconds:.2f} | {len(configs) / seconds:.2f} |")
    strip = {"seconds_per_question", "prepare_seconds", "wall_seconds"}
    same = [{k: v for k, v in r.items() if k not in strip} for r in serial] == [
        {k: v for k, v in r.items() if k not in strip} for r in parallel]
    print(f"\nparallel rows equal serial rows: {same}")
    best = serial.cheapest_reaching(0.9)
    front = serial.pareto_front()
    print(f"Pareto front (tokens, recall): {[(round(r['tokens']), round(r['recall'], 3)) for r in front]}")
    print(f"cheapest configuration reaching 90% recall: "
          f"{None if best is None else {k: best[k] for k in ('k1', 'b', 'tokens', 'recall')}}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
