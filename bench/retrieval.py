"""``python -m bench.retrieval``: evidence recall at 1,000 billed tokens per policy, and speed.

    python -m bench.retrieval                 # the bundled LoCoMo-style fixture
    python -m bench.retrieval --locomo PATH   # a local LoCoMo copy (sha256 checked)
    python -m bench.retrieval --json FILE     # also write the figures as JSON

1. Recall: every policy of lesson 12 at its defaults (``FIXED_POLICIES``: toolkit memories and
   baselines), BM25 with the plain analyzer, the hybrid retrieval with and without date headers,
   at 1,000 and 2,000 billed tokens; recall is over categories 1-4 (adversarial questions are
   reported apart by the harness).
2. Embedding cost, once: every message and question of the data through MiniLM with no cache
   (what a fresh machine pays once), then through ``minilm_embedder()`` from its disk cache
   (a new process), then from its memory (a second evaluation in the same process).
3. Speed: each policy's ``evaluate`` over about 2,000 questions: the data's questions repeated
   (ids suffixed) until there are at least 2,000, so each conversation's length stays the data's;
   wall time including per-conversation preparation, embeddings already cached.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import sys
import time
from typing import Any

from memorykit.entities import EntityContextPolicy
from memorykit.evaluation.baselines import BM25Retrieval
from memorykit.evaluation.dataset import EvalDataset
from memorykit.evaluation.harness import evaluate
from memorykit.evaluation.hybrid import HybridRetrieval, HybridSettings, shared_minilm
from memorykit.evaluation.toolkit import FIXED_POLICIES
from memorykit.classroom.data import load_tuning_data
from memorykit.longterm.minilm import MiniLMEmbedder, minilm_embedder


def policies() -> dict[str, Any]:
    out = {n: p for n, p in FIXED_POLICIES.items() if n != "hybrid-retrieval"}
    out["bm25 (plain analyzer)"] = BM25Retrieval(analyzer="plain", name="bm25-plain")
    out["hybrid-retrieval"] = HybridRetrieval()
    out["hybrid-retrieval, no dates"] = HybridRetrieval(HybridSettings(dates=False),
                                                       name="hybrid-no-dates")
    out["hybrid-retrieval, neighbours 0"] = HybridRetrieval(HybridSettings(neighbours=0),
                                                           name="hybrid-n0")
    out["entity-memory"] = EntityContextPolicy()
    return out


def repeated(data: EvalDataset, at_least: int) -> EvalDataset:
    """``data`` with its questions repeated (ids suffixed) until there are ``at_least``."""
    times = max(1, -(-at_least // max(1, data.n_questions)))
    convs = tuple(dataclasses.replace(c, questions=tuple(
        dataclasses.replace(q, id=f"{q.id}#{k}") for k in range(times) for q in c.questions))
        for c in data)
    return EvalDataset(f"{data.name} x{times}", convs)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--locomo", default=None, help="a local LoCoMo copy (default: the fixture)")
    parser.add_argument("--questions", type=int, default=2000, help="questions of the speed runs")
    parser.add_argument("--json", default=None, help="write the figures to this file")
    parser.add_argument("--skip-cold", action="store_true", help="skip the uncached embedding run")
    args = parser.parse_args(argv)
    data, description = load_tuning_data(args.locomo)
    print(f"# Retrieval benchmark ({platform.machine()}, {os.cpu_count()} cores, "
          f"Python {platform.python_version()}, load average {os.getloadavg()[0]:.1f})")
    print(f"data: {description}\n")
    out: dict[str, Any] = {"data": description, "machine": platform.machine(),
                           "cores": os.cpu_count(), "recall": {}, "seconds": {}}

    texts = [m.content for c in data for m in c.messages] + [q.question for c in data for q in c.questions]
    cold = MiniLMEmbedder() if not args.skip_cold else None
    for run, embedder in (("no cache (one-time cost)", cold), ("from the disk cache", minilm_embedder()),
                          ("from memory", shared_minilm()), ("from memory, again", shared_minilm())):
        if embedder is None:
            continue
        t0 = time.perf_counter()
        embedder.embed(texts)
        seconds = time.perf_counter() - t0
        print(f"embedding {len(texts):,} texts with MiniLM, {run}: {seconds:.2f} s")
        out.setdefault("embedding_seconds", {})[run] = round(seconds, 2)

    print("\n| policy | recall @1,000 | tokens @1,000 | recall @2,000 | tokens @2,000 |")
    print("|---|---|---|---|---|")
    for name, policy in policies().items():
        rows = [evaluate(policy, data, b, progress=False).summary() for b in (1000, 2000)]
        out["recall"][name] = {b: {"recall": round(r["recall"], 3), "tokens": round(r["tokens"])}
                               for b, r in zip((1000, 2000), rows)}
        print(f"| {name} | {rows[0]['recall']:.3f} | {rows[0]['tokens']:.0f} | "
              f"{rows[1]['recall']:.3f} | {rows[1]['tokens']:.0f} |")

    many = repeated(data, args.questions)
    print(f"\nspeed: {many.n_questions:,} questions ({many.name}), 1,000 tokens, wall time of evaluate\n")
    print("| policy | seconds | per question |")
    print("|---|---|---|")
    for name, policy in policies().items():
        t0 = time.perf_counter()
        result = evaluate(policy, many, 1000, progress=False)
        seconds = time.perf_counter() - t0
        out["seconds"][name] = round(seconds, 3)
        print(f"| {name} | {seconds:.2f} s | {1e3 * seconds / len(result):.2f} ms |")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
