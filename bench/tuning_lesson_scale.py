"""``python -m bench.tuning_lesson_scale``: lesson 12 at LoCoMo's size, cell by cell.

Issue 15 asks lesson 12 to run on a real ten-conversation dataset (about 1,980 questions) in
<= 60 s with embeddings cached on disk, the one-time embedding cost recorded apart. No real
data is on this machine, so the benchmark writes a seeded LoCoMo-*schema* set of that size with
the fixture's own generator (``data/locomo_style/generate.py --conversations 10 --events 24``:
10 conversations, 6,169 turns, 1,950 questions) into a temporary directory (never committed),
then times:

1. the one-time embedding: every text the lesson embeds (the turns and questions of this set,
   of the bundled chat logs and of the bundled fixture the checks read) through MiniLM with an
   empty disk cache (``XDG_CACHE_HOME`` pointed at the temporary directory, so the machine's
   cache is neither used nor changed), which fills that cache as a first run of the lesson
   would; repeated texts (small talk) are embedded once;
2. the lesson's cells on that data, in the notebook's order and through the same calls
   (``memorykit.classroom.lesson12``): statistics, ``precompute(..., workers=2)``, the policy
   table, the comparison notes, the explorer and its three summaries, the Pareto front; then
   the cells that read other data (your own logs: ``explore_file(*CHAT_EXAMPLE)``; the two
   checks, which load the bundled fixture).

    python -m bench.tuning_lesson_scale                 # 10 conversations, 24 events each
    python -m bench.tuning_lesson_scale --serial        # precompute without a process pool
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import platform
import resource
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

GENERATOR = Path(__file__).resolve().parent.parent / "data" / "locomo_style" / "generate.py"


def write_dataset(folder: Path, conversations: int, events: int) -> Path:
    """The fixture generator's LoCoMo-schema set of the given size, written into ``folder``."""
    spec = importlib.util.spec_from_file_location("locomo_style_generate", GENERATOR)
    assert spec is not None and spec.loader is not None
    generator = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generator)
    path = folder / "locomo_scale.json"
    path.write_text(generator.build(conversations, events), encoding="utf-8")
    return path


def _cpu() -> float:
    """CPU seconds of this process and of its finished children (the pool's workers)."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def timed(label: str, call: Callable[[], Any], seconds: dict[str, float]) -> Any:
    """Run ``call``, print its wall and CPU seconds (CPU time, unlike wall time, does not grow
    when other jobs share the cores)."""
    t0, c0 = time.perf_counter(), _cpu()
    out = call()
    seconds[label] = time.perf_counter() - t0
    print(f"| {label} | {seconds[label]:.1f} s | {_cpu() - c0:.1f} s |", flush=True)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=10)
    parser.add_argument("--events", type=int, default=24, help="life events per speaker")
    parser.add_argument("--serial", action="store_true", help="precompute in this process")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="memorykit-scale-") as tmp:
        # an empty embedding cache for this run and the pool's workers (they inherit it)
        os.environ["XDG_CACHE_HOME"] = str(Path(tmp) / "cache")
        from memorykit.evaluation.dataset import dataset_statistics
        from memorykit.evaluation.chatlog import load_chat_logs
        from memorykit.evaluation.locomo import load_locomo
        from memorykit.classroom.lesson12_checks import check_beats_bm25
        from memorykit.classroom.data import CHAT_EXAMPLE, load_tuning_data
        from memorykit.classroom.lesson12 import (TuningExplorer, comparison_notes, explore_file,
                                                  front_rows, policy_table, precompute)
        from memorykit.longterm.minilm import minilm_embedder

        data = load_locomo(write_dataset(Path(tmp), args.conversations, args.events), verify=False)
        description = (f"generated LoCoMo-schema set: {len(data)} conversations, "
                       f"{data.n_messages:,} turns, {data.n_questions:,} questions")
        print(f"# lesson 12 at scale ({platform.machine()}, {os.cpu_count()} cores, Python "
              f"{platform.python_version()}, load average {os.getloadavg()[0]:.1f})")
        print(f"data: {description}\n\n| step | wall | CPU (all processes) |\n|---|---|---|")
        seconds: dict[str, float] = {}
        texts = sorted({t for d in (data, load_chat_logs(*CHAT_EXAMPLE), load_tuning_data()[0])
                        for c in d for t in [*(m.content for m in c.messages),
                                             *(q.question for q in c.questions)]})
        timed(f"one-time: embed the lesson's {len(texts):,} distinct texts with MiniLM into an "
              "empty disk cache", lambda: minilm_embedder().embed(texts), seconds)
        lesson = time.perf_counter()
        timed("dataset statistics", lambda: dataset_statistics(data), seconds)
        sweeps = timed("precompute " + ("serially" if args.serial else "(process pool of 2)"),
                       lambda: precompute(data, description, progress=False,
                                          workers=0 if args.serial else 2), seconds)
        timed("policy table", lambda: policy_table(sweeps, 1000), seconds)
        timed("comparison notes", lambda: comparison_notes(data, 1000), seconds)

        def explore() -> None:
            explorer = TuningExplorer(sweeps, policy="bm25", budget=1000)
            for policy in ("bm25", "attention", "hybrid-retrieval"):
                explorer.update(policy=policy)
                explorer.summary()
            front_rows(sweeps)

        timed("explorer, its three summaries, the Pareto front", explore, seconds)
        on_this_data = time.perf_counter() - lesson
        timed("your own logs (explore_file, the bundled chat logs)",
              lambda: explore_file(*CHAT_EXAMPLE), seconds)
        timed("the two checks (they load the bundled fixture)",
              lambda: [check_beats_bm25(c, show=False) for c in (
                  {"policy": "bm25", "k1": 0.9, "b": 0.5},
                  {"policy": "hybrid-retrieval", "lexical_weight": 0.5, "neighbours": 1})],
              seconds)
        total = time.perf_counter() - lesson
        print(f"\nlesson on this data (statistics to front): {on_this_data:.1f} s; all of the "
              f"lesson's cells: {total:.1f} s (goal 60 s), the one-time embedding apart; "
              f"{sweeps.n_evaluations} evaluations")
        best = {r["policy"]: r["recall"] for r in policy_table(sweeps, 1000)}
        print("recall at 1,000 billed tokens (synthetic text, not a claim about real chat): "
              + ", ".join(f"{p} {r:.3f}" for p, r in list(best.items())[:5]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
