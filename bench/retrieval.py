"""``python -m bench.retrieval``: evidence recall at 1,000 billed tokens per policy, and speed.

    python -m bench.retrieval                 # the bundled LoCoMo-style fixture
    python -m bench.retrieval --locomo PATH   # a local LoCoMo copy (sha256 checked)
    python -m bench.retrieval --json FILE     # also write the figures as JSON
    python -m bench.retrieval --generated     # a LoCoMo-size generated set (10 conversations)
    python -m bench.retrieval --generated --locomo-lengths   # ... with real LoCoMo's turn lengths

1. Recall: every policy of lesson 12 at its defaults (``FIXED_POLICIES``: toolkit memories and
   baselines), BM25 with the plain analyzer, the hybrid retrieval with and without date headers,
   at 1,000 and 2,000 billed tokens; recall is over categories 1-4 (adversarial questions are
   reported apart by the harness).
2. Embedding cost, once (wall and CPU seconds; CPU does not grow when other jobs share the
   cores): the distinct messages and questions of the data through ``MiniLMEmbedder().embed``
   with no cache; then the path a user hits, the first ``evaluate(HybridRetrieval(), data, 1000)``
   with an empty disk cache (``MEMORYKIT_EMBEDDING_CACHE`` set to a temporary folder: the
   embedding happens inside, one conversation at a time); then ``minilm_embedder()`` from that
   disk cache, then from memory (a second evaluation in the same process).
3. Speed: each policy's ``evaluate`` over about 2,000 questions (LoCoMo has 1,986): the data's
   questions repeated (ids suffixed) until there are at least 2,000, so each conversation's length
   stays the data's (LoCoMo and a ``--generated`` set have that size and are used as they are); wall time
   including per-conversation preparation, embeddings already cached.

``--generated`` writes the fixture generator's LoCoMo-size set (``data/locomo_style/generate.py
--conversations 10 --events 24``) into a temporary folder. Its small talk is shorter than real
LoCoMo turns (24 word pieces against ~33, no long tail), which matters because a text's cost grows
with its length; ``--locomo-lengths`` rewrites every turn to real LoCoMo's length distribution
(see ``locomo_lengths``: its recall figures mean nothing, its times are the point).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from memorykit.entities import EntityContextPolicy
from memorykit.evaluation.baselines import BM25Retrieval
from memorykit.evaluation.dataset import EvalDataset
from memorykit.evaluation.harness import evaluate
from memorykit.evaluation.hybrid import HybridRetrieval, HybridSettings, shared_minilm
from memorykit.evaluation.toolkit import FIXED_POLICIES
from memorykit.classroom.data import load_tuning_data
from memorykit.embeddings import ENV_CACHE_DIR
from memorykit.evaluation.locomo import load_locomo
from memorykit.longterm.minilm import MiniLMEmbedder, minilm_embedder

from bench.tuning_lesson_scale import write_dataset


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


def locomo_lengths(path: Path, seed: int = 0) -> Path:
    """The LoCoMo-schema file at ``path`` with every turn rewritten to real LoCoMo's lengths.

    Real LoCoMo turns run ~25-30 words (mean ~33 word pieces with the speaker's name, a tail to
    ~150) and some carry a ``blip_caption``; the generator's small talk is ~18 words with no tail.
    Each turn gets the next ``n`` words of the set's own text read as one stream, ``n`` drawn from
    a lognormal (median 20 words, sigma 0.6, 2-110 words), and 8% of turns a 10-word caption
    (an assumption: how many real turns share an image was not measured here). Seeded.
    """
    rng = np.random.default_rng(seed)
    data = json.loads(path.read_text(encoding="utf-8"))
    sessions = [turns for sample in data for key, turns in sample["conversation"].items()
                if key.startswith("session_") and isinstance(turns, list)]
    stream = " ".join(t["text"] for turns in sessions for t in turns).split()
    at = 0

    def words(n: int) -> str:
        nonlocal at
        at = 0 if at + n > len(stream) else at
        at += n
        return " ".join(stream[at - n:at])

    for turns in sessions:
        for turn in turns:
            turn["text"] = words(int(np.clip(round(rng.lognormal(np.log(20), 0.6)), 2, 110)))
            turn.pop("blip_caption", None)
            if rng.random() < 0.08:
                turn["blip_caption"] = words(10)
    out = path.with_name(path.stem + "-locomo-lengths.json")
    out.write_text(json.dumps(data), encoding="utf-8")
    return out


def _pieces(texts: list[str]) -> str:
    """Word pieces per text as MiniLM sees them: mean and percentiles."""
    embedder = MiniLMEmbedder()
    n = np.array([len(embedder.token_ids(t)) for t in texts])
    p50, p90, p99 = np.percentile(n, [50, 90, 99])
    return f"mean {n.mean():.1f}, median {p50:.0f}, p90 {p90:.0f}, p99 {p99:.0f}, max {n.max()}"


def _timed(label: str, call: Any, out: dict[str, Any], texts: int = 0) -> Any:
    """Run ``call``; print and record its wall and CPU seconds and the load average around it."""
    load, t0, c0 = os.getloadavg()[0], time.perf_counter(), time.process_time()
    result = call()
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    rate = f", {texts / wall:.1f} texts/s" if texts else ""
    print(f"{label}: {wall:.2f} s wall, {cpu:.2f} s CPU{rate} (load average {load:.1f} -> "
          f"{os.getloadavg()[0]:.1f})", flush=True)
    out.setdefault("embedding", {})[label] = {"wall_s": round(wall, 2), "cpu_s": round(cpu, 2),
                                              "load_before": round(load, 2)}
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--locomo", default=None, help="a local LoCoMo copy (default: the fixture)")
    parser.add_argument("--questions", type=int, default=2000, help="questions of the speed runs")
    parser.add_argument("--json", default=None, help="write the figures to this file")
    parser.add_argument("--skip-cold", action="store_true", help="skip the uncached embedding run")
    parser.add_argument("--generated", action="store_true",
                        help="a LoCoMo-size generated set (10 conversations, ~1,950 questions)")
    parser.add_argument("--locomo-lengths", action="store_true",
                        help="with --generated: turns rewritten to real LoCoMo's lengths")
    args = parser.parse_args(argv)
    if args.locomo_lengths and not args.generated:
        parser.error("--locomo-lengths rewrites the --generated set: pass both")
    if args.generated and args.locomo:
        parser.error("--generated and --locomo name two data sets: pass one")
    with tempfile.TemporaryDirectory(prefix="memorykit-retrieval-") as tmp:
        if not args.skip_cold:  # an empty cache: the first evaluation pays as on a fresh machine
            os.environ[ENV_CACHE_DIR] = str(Path(tmp) / "cache")
        if args.generated:
            path = write_dataset(Path(tmp), 10, 24)
            data = load_locomo(locomo_lengths(path) if args.locomo_lengths else path, verify=False)
            description = (f"generated LoCoMo-schema set{', turns at LoCoMo lengths' if args.locomo_lengths else ''}"
                           f": {len(data)} conversations, {data.n_messages:,} turns, "
                           f"{data.n_questions:,} questions")
        else:
            data, description = load_tuning_data(args.locomo)
        return _run(args, data, description)


def _run(args: argparse.Namespace, data: EvalDataset, description: str) -> int:
    print(f"# Retrieval benchmark ({platform.machine()}, {os.cpu_count()} cores, "
          f"Python {platform.python_version()}, load average {os.getloadavg()[0]:.1f})")
    print(f"data: {description}\n")
    out: dict[str, Any] = {"data": description, "machine": platform.machine(),
                           "cores": os.cpu_count(), "recall": {}, "seconds": {}}

    turns = [m.content for c in data for m in c.messages]
    texts = list(dict.fromkeys(turns + [q.question for c in data for q in c.questions]))
    print(f"{len(texts):,} distinct texts; word pieces of a turn: {_pieces(turns)}")
    if not args.skip_cold:
        embedder = MiniLMEmbedder()
        _timed(f"MiniLMEmbedder().embed of the {len(texts):,} texts, no cache (threads="
               f"{getattr(embedder, 'threads', 1)})", lambda: embedder.embed(texts), out, len(texts))
        _timed("first evaluate(HybridRetrieval(), data, 1000), empty disk cache",
               lambda: evaluate(HybridRetrieval(), data, 1000, progress=False), out, len(texts))
    for run, embedder in (("from the disk cache", minilm_embedder()),
                          ("from memory", shared_minilm()), ("from memory, again", shared_minilm())):
        _timed(f"embedding the {len(texts):,} texts, {run}", lambda: embedder.embed(texts), out)

    print("\n| policy | recall @1,000 | tokens @1,000 | recall @2,000 | tokens @2,000 |")
    print("|---|---|---|---|---|")
    for name, policy in policies().items():
        rows = [evaluate(policy, data, b, progress=False).summary() for b in (1000, 2000)]
        out["recall"][name] = {b: {"recall": round(r["recall"], 3), "tokens": round(r["tokens"])}
                               for b, r in zip((1000, 2000), rows)}
        print(f"| {name} | {rows[0]['recall']:.3f} | {rows[0]['tokens']:.0f} | "
              f"{rows[1]['recall']:.3f} | {rows[1]['tokens']:.0f} |")

    many = data if args.generated or args.locomo else repeated(data, args.questions)
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
