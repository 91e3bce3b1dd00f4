"""Memory held by every memory kind after 10k / 100k / 1M inputs: ``python -m bench.memory``.

Each (kind, size) runs in a fresh interpreter (``--one KIND N``), so one run's heap never
counts in another's: the child builds the kind from ``tests.memory_kinds``
(whose memories carry a bounded ``Trace(max_events=1,000)``) after a 300-input warm-up run
of a throwaway one (the tokenizer loads on first use), notes its resident set size,
feeds it ``N`` inputs of the kind's seeded stream (generated lazily: the stream itself holds
nothing), collects garbage and notes the resident set again. Reported per run:

* ``retained_mb``: RSS after the run minus RSS before the first input (what the memory
  kept, plus allocator slack the process did not give back; never less than what it kept);
* ``peak_mb``: the process's peak RSS minus RSS before the first input (an upper bound:
  the import peak counts when it was higher);
* ``state_mb``: bytes of ``pickle.dumps(memory)`` (what the memory holds, free of allocator
  noise), measured up to ``--state-up-to`` inputs;
* ``us_per_input``: wall time per input, for planning runs (noisy on a shared machine).

The parent prints a Markdown table (kind x size -> MB, growth ratios 100k/10k and 1M/100k,
the target "flat growth and <= 50 MB at 1M" met or missed) and writes the JSON results.
Results and the command are in ``BENCHMARKS.md`` ("Memory at 10k / 100k / 1M inputs").
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import resource
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

SIZES = (10_000, 100_000, 1_000_000)
TARGET_MB = 50.0
"""The issue's goal: no memory over this at 1M inputs."""
FLAT = 1.5
"""Growth ratio (MB at 10x the inputs / MB before) below which growth counts as flat."""
_PAGE = os.sysconf("SC_PAGE_SIZE")


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * _PAGE / 2**20


def measure_one(kind_name: str, n: int, seed: int, state_up_to: int) -> dict[str, Any]:
    """Feed ``n`` inputs to a fresh memory of ``kind_name`` in this process and measure it."""
    import pickle

    from tests.memory_kinds import MEMORY_KINDS

    kind = MEMORY_KINDS[kind_name]
    # a throwaway warm-up run loads what the first input would (the tokenizer's tables,
    # compiled patterns), so the measurement starts from a process that has them
    warm = kind.make()
    for item in kind.stream(seed + 1, 300):
        kind.feed(warm, item)
    del warm, item
    memory = kind.make()
    stream = kind.stream(seed, n)
    gc.collect()
    before = _rss_mb()
    t0 = time.perf_counter()
    for item in stream:
        kind.feed(memory, item)
    seconds = time.perf_counter() - t0
    gc.collect()
    after = _rss_mb()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    state = len(pickle.dumps(memory)) / 2**20 if n <= state_up_to else None
    return {"kind": kind_name, "n": n, "retained_mb": round(after - before, 2),
            "peak_mb": round(max(peak - before, after - before), 2),
            "state_mb": None if state is None else round(state, 3),
            "us_per_input": round(seconds / n * 1e6, 1) if n else None}


def run_child(kind_name: str, n: int, seed: int, state_up_to: int, timeout: float) -> dict[str, Any]:
    cmd = [sys.executable, "-m", "bench.memory", "--one", kind_name, str(n), "--seed", str(seed),
           "--state-up-to", str(state_up_to)]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=True)
    except subprocess.TimeoutExpired:
        return {"kind": kind_name, "n": n, "error": f"not run to the end: over {timeout:g} s"}
    except subprocess.CalledProcessError as exc:
        return {"kind": kind_name, "n": n, "error": exc.stderr.strip().splitlines()[-1]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def _ratio(a: float | None, b: float | None) -> float | None:
    # below 1 MB the RSS delta is allocator noise: a ratio of two noises says nothing
    if a is None or b is None or a < 1.0:
        return None
    return b / a


def verdict(cells: dict[int, dict[str, Any]]) -> str:
    """'met', or 'missed: why', against flat growth and <= TARGET_MB at 1M."""
    big = cells.get(1_000_000)
    if big is None or "error" in big:
        return "not measured at 1M"
    growth = _ratio(cells.get(100_000, {}).get("retained_mb"), big["retained_mb"])
    problems = []
    if big["retained_mb"] > TARGET_MB:
        problems.append(f"{big['retained_mb']:.0f} MB > {TARGET_MB:g} MB")
    if growth is not None and growth > FLAT:
        problems.append(f"grows x{growth:.1f} from 100k to 1M")
    return "missed: " + ", ".join(problems) if problems else "met"


def markdown(results: list[dict[str, Any]], sizes: tuple[int, ...]) -> str:
    by_kind: dict[str, dict[int, dict[str, Any]]] = {}
    for r in results:
        by_kind.setdefault(r["kind"], {})[r["n"]] = r

    def cell(r: dict[str, Any] | None) -> str:
        if r is None:
            return "not run"
        if "error" in r:
            return r["error"]
        state = "" if r["state_mb"] is None else f", state {r['state_mb']:.2f}"
        return f"{r['retained_mb']:.1f} (peak {r['peak_mb']:.1f}{state})"

    def ratio(cells: dict[int, dict[str, Any]], a: int, b: int) -> str:
        before, after = cells.get(a, {}).get("retained_mb"), cells.get(b, {}).get("retained_mb")
        if before is None or after is None:
            return "-"
        value = _ratio(before, after)
        return "< 1 MB" if value is None else f"x{value:.2f}"

    head = " | ".join(f"n = {n:,}" for n in sizes)
    lines = [f"| memory kind | {head} | 100k / 10k | 1M / 100k | flat, <= 50 MB at 1M |",
             "|---|" + "---|" * (len(sizes) + 3)]
    for kind, cells in by_kind.items():
        row = " | ".join(cell(cells.get(n)) for n in sizes)
        lines.append(f"| {kind} | {row} | {ratio(cells, 10_000, 100_000)} | "
                     f"{ratio(cells, 100_000, 1_000_000)} | {verdict(cells)} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="memory per memory kind at 10k / 100k / 1M inputs")
    parser.add_argument("--one", nargs=2, metavar=("KIND", "N"), help="(internal) one run, JSON out")
    parser.add_argument("--kinds", nargs="*", help="memory kinds (default: all of MEMORY_KINDS)")
    parser.add_argument("--sizes", nargs="*", type=int, default=list(SIZES))
    parser.add_argument("--skip-1m", nargs="*", default=[],
                        help="kinds not run at 1M (projected in BENCHMARKS.md instead)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--state-up-to", type=int, default=100_000,
                        help="measure the pickled state up to this many inputs")
    parser.add_argument("--jobs", type=int, default=2, help="runs in parallel (one process each)")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per run")
    parser.add_argument("--out", type=Path, default=Path("bench/results/memory.json"))
    parser.add_argument("--from", dest="source", type=Path, help="re-render saved results")
    args = parser.parse_args(argv)
    if args.source:
        saved = json.loads(args.source.read_text())
        print(json.dumps(saved["meta"]))
        print(markdown(saved["results"], tuple(sorted({r["n"] for r in saved["results"]}))))
        return
    if args.one:
        print(json.dumps(measure_one(args.one[0], int(args.one[1]), args.seed, args.state_up_to)))
        return

    from tests.memory_kinds import MEMORY_KINDS

    kinds = args.kinds or list(MEMORY_KINDS)
    sizes = tuple(sorted(args.sizes))
    runs = [(k, n) for n in sizes for k in kinds if not (n >= 1_000_000 and k in args.skip_1m)]
    started = time.time()
    load = os.getloadavg()[0]
    with ThreadPoolExecutor(args.jobs) as pool:
        results = list(pool.map(
            lambda kn: run_child(kn[0], kn[1], args.seed, args.state_up_to, args.timeout), runs))
    for k in args.skip_1m:
        if 1_000_000 in sizes:
            results.append({"kind": k, "n": 1_000_000, "error": "not run (see projection)"})
    meta = {
        "command": "python -m bench.memory " + " ".join(argv if argv is not None else sys.argv[1:]),
        "date_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime(started)),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, {platform.platform()}; "
                   f"CPython {platform.python_version()}",
        "load_average_start": load, "load_average_end": os.getloadavg()[0],
        "wall_seconds": round(time.time() - started, 1),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"meta": meta, "results": results}, indent=1) + "\n")
    print(json.dumps(meta))
    print(markdown(sorted(results, key=lambda r: kinds.index(r["kind"])), sizes))


if __name__ == "__main__":
    main()
