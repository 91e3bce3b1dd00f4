"""Seed 003's architecture benchmark: A-D on inject / distract / probe, plus adaptability.

    python -m bench.architectures                       # offline: lexical, extractive, scripted
    python -m bench.architectures --markdown            # the BENCHMARKS.md tables
    python -m bench.architectures --embedder minilm     # all-MiniLM-L6-v2 in numpy (memorykit.longterm.minilm)
    python -m bench.architectures --model gpt-4o-mini   # a real model as actor, reader, critic and
                                                        # summarizer (needs OPENAI_API_KEY; OPENAI_BASE_URL
                                                        # for any OpenAI-compatible endpoint)
    python -m bench.architectures --embedder openai:text-embedding-3-small

The benchmark itself lives in ``memorykit.classroom.replays.recall_benchmark`` (notebook 10
calls ``run_benchmark`` directly); this script picks the components, runs it, writes
``bench/results/architectures*.json`` and prints the tables. Offline, nothing
here is a language model, and the output says so.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from memorykit.classroom.replays.recall_benchmark import (
    DEFAULT_DISTRACTORS,
    SEED_003_ADAPTABILITY,
    SEED_003_RECALL,
    BenchmarkResult,
    run_benchmark,
)


def _ints(text: str) -> tuple[int, ...]:
    try:
        values = tuple(int(p) for p in text.split(",") if p.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}")
    if not values or min(values) < 0:
        raise argparse.ArgumentTypeError(f"expected non-negative integers, got {text!r}")
    return values


def make_embedder(spec: str) -> Any:
    if spec == "lexical":
        return None
    if spec == "minilm":
        from memorykit.longterm.minilm import minilm_embedder

        return minilm_embedder()
    if spec.startswith("openai:"):
        from memorykit.llm.embedder import OpenAIEmbedder

        return OpenAIEmbedder(spec.split(":", 1)[1])
    raise SystemExit(f"--embedder must be lexical, minilm or openai:MODEL, got {spec!r}")


def components(model: str | None) -> dict[str, Any]:
    if model is None:
        return {}
    from memorykit.llm.chat import OpenAIChatModel
    from memorykit.llm.critic import OpenAICritic
    from memorykit.llm.summarizer import OpenAISummarizer
    from memorykit.llm.client import configured

    if not configured():
        raise SystemExit("--model needs the openai package and OPENAI_API_KEY (see memorykit.llm)")
    chat = OpenAIChatModel(model)
    return {
        "actor": chat,
        "answer_model": chat,
        "critic": OpenAICritic(chat),
        "summarizer": OpenAISummarizer(chat),
    }


def to_json(result: BenchmarkResult, command: str, seconds: float) -> dict[str, Any]:
    return {
        "benchmark": "architectures",
        "command": command,
        "when": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "python": platform.python_version(),
        "machine": platform.machine(),
        "seconds": round(seconds, 3),
        "config": result.config,
        "rows": result.rows,
        "summary": result.summary(),
    }


def markdown(result: BenchmarkResult) -> str:
    lines = ["Per distractor count:", "", result.to_markdown(), "",
             "Mean over the distractor counts (latency: median), with seed 003's recall:", "",
             result.to_markdown(summary=True)]
    base = next((s for s in result.summary() if s["architecture"].startswith("A")), None)
    if base and base["latency_ms"] > 0:
        ratios = ", ".join(
            f"{s['architecture'][0]} {s['latency_ms'] / base['latency_ms']:.1f}x"
            for s in result.summary()
        )
        lines += ["", f"Latency per question relative to A: {ratios}."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.architectures", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--distractors", type=_ints, default=DEFAULT_DISTRACTORS,
                   help="comma-separated distractor turn counts (default 10,25,50,100)")
    p.add_argument("--facts", type=int, default=4, help="facts injected at the start (1-8)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--budget", type=int, default=2000, help="context budget in billed tokens")
    p.add_argument("--window", type=int, default=20, help="short-term window in messages")
    p.add_argument("--embedder", default="lexical", help="lexical | minilm | openai:MODEL")
    p.add_argument("--model", default=None, help="a chat model for actor, reader, critic, summarizer")
    p.add_argument("--markdown", action="store_true", help="print the BENCHMARKS.md tables")
    p.add_argument("--output", default=None, help="JSON path (default bench/results/architectures"
                                                   "[-EMBEDDER][-MODEL].json)")
    args = p.parse_args(argv)
    command = "python -m bench.architectures " + " ".join(sys.argv[1:] if argv is None else argv)
    start = time.perf_counter()
    result = run_benchmark(
        args.distractors, n_facts=args.facts, seed=args.seed, budget=args.budget,
        window=args.window, embedder=make_embedder(args.embedder), **components(args.model),
    )
    seconds = time.perf_counter() - start
    suffix = "" if args.embedder == "lexical" else "-" + args.embedder.replace(":", "-")
    suffix += "" if args.model is None else "-" + args.model.replace("/", "-")
    output = Path(args.output or f"bench/results/architectures{suffix}.json")
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps(to_json(result, command.strip(), seconds), indent=1) + "\n")
    print(f"wrote {output} ({seconds:.2f} s)", file=sys.stderr)
    cfg = result.config
    print(f"embedder: {cfg['embedder']}; summarizer: {cfg['summarizer']}; critic: {cfg['critic']}; "
          f"actor: {cfg['actor']}; reader model: {cfg['answer_model'] or 'none (offline)'}")
    if args.markdown:
        print(markdown(result))
    else:
        for row in result.summary():
            print(row)
        print("seed 003 recall:", SEED_003_RECALL, "adaptability:", SEED_003_ADAPTABILITY)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
