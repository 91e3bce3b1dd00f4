"""``python -m bench.scoring``: what the harness's scoring rules cost and what they report.

1. The cost of scoring: BM25 at 1,000 tokens over the 2,000 simulated questions of
   ``bench.evaluation``, timed as a whole ``evaluate`` and as the same contexts built without
   scoring (prepare + ``build_context`` for every question); the difference is the scoring
   (evidence rule, answer containment, units). Median of ``--repeats`` runs.
2. Billed against content tokens: lesson 12's fixed-setting policies on the bundled fixture at
   1,000 tokens, recall, answer containment, mean tokens and the over-budget share in each unit.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time

from memorykit.classroom.scenarios.conversation import from_simulated
from memorykit.evaluation.baselines import BM25Retrieval
from memorykit.evaluation.harness import HarnessSettings, evaluate
from memorykit.evaluation.dataset import as_dataset
from memorykit.evaluation.toolkit import FIXED_POLICIES
from memorykit.classroom.data import load_tuning_data
from memorykit.classroom.scenarios.conversation import simulate_conversation


def _median_seconds(run, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        run()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _contexts_only(policy: BM25Retrieval, data, budget: int) -> None:
    for conv in data:
        state = policy.prepare(conv)
        for q in conv.questions:
            state.build_context(conv.position(q), q.question, budget)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    print(f"# scoring benchmark ({platform.machine()}, Python {platform.python_version()})")
    data = as_dataset([from_simulated(simulate_conversation(600, seed=s, fact_every=3))
                       for s in range(10)])
    bm25 = BM25Retrieval()
    whole = _median_seconds(lambda: evaluate(bm25, data, 1000), args.repeats)
    built = _median_seconds(lambda: _contexts_only(bm25, data, 1000), args.repeats)
    n = data.n_questions
    print(f"bm25 at 1,000 tokens, {n:,} questions: evaluate {whole:.2f} s, contexts alone "
          f"{built:.2f} s, scoring {whole - built:.2f} s ({(whole - built) / n * 1e6:.0f} us per question)")
    fixture, description = load_tuning_data()
    print(f"\n{description}, budget 1,000\n")
    print("| policy | units | recall | answer_recall | mean tokens | over_budget |")
    print("|---|---|---|---|---|---|")
    for name, policy in FIXED_POLICIES.items():
        for units in ("billed", "content"):
            s = evaluate(policy, fixture, 1000, settings=HarnessSettings(units=units)).summary()
            print(f"| {name} | {units} | {s['recall']:.3f} | {s['answer_recall']:.3f} | "
                  f"{s['tokens']:.0f} | {s['over_budget']:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
