"""``python -m bench``: run the conversation-buffer benchmark and print the table.

    python -m bench                      # 1k, 10k, 100k messages; budgets 2,000 and 128,000
    python -m bench --quick              # CI smoke: small sizes, one repeat
    python -m bench --sizes 1k,10k       # chosen sizes
    python -m bench --markdown           # print the table for BENCHMARKS.md
    python -m bench --from bench/results/buffers.json --markdown   # re-render, no run
"""

from __future__ import annotations

import argparse
import json
import sys

from bench.buffers import (
    DEFAULT_BUDGETS,
    DEFAULT_SIZES,
    QUICK_SIZES,
    Config,
    format_markdown,
    format_text,
    main_argv,
    run_suite,
    write_json,
)


def _sizes(text: str) -> tuple[int, ...]:
    out = []
    for part in text.split(","):
        part = part.strip().lower().replace("_", "")
        if not part:
            continue
        scale = 1
        if part.endswith("k"):
            part, scale = part[:-1], 1000
        try:
            value = int(float(part) * scale)
        except ValueError:
            raise argparse.ArgumentTypeError(f"sizes must be numbers like 1000 or 10k, got {text!r}")
        if value < 2:
            raise argparse.ArgumentTypeError(f"each size must be >= 2, got {value}")
        out.append(value)
    if not out:
        raise argparse.ArgumentTypeError(f"sizes must name at least one size, got {text!r}")
    return tuple(sorted(set(out)))


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m bench", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true",
                   help=f"smoke run: sizes {','.join(map(str, QUICK_SIZES))}, one repeat")
    p.add_argument("--sizes", type=_sizes, default=None,
                   help="comma-separated message counts (default 1k,10k,100k)")
    p.add_argument("--budgets", type=_sizes, default=None,
                   help="comma-separated token budgets (default 2000,128000)")
    p.add_argument("--repeat", type=int, default=None, help="runs per cell, best kept (default 3)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--peer-max-n", type=int, default=10_000,
                   help="largest n the quadratic peers run at (default 10000)")
    p.add_argument("--time-limit", type=float, default=180.0,
                   help="seconds one seed-style or peer run may take (default 180)")
    p.add_argument("--no-peers", action="store_true", help="skip LangChain and LlamaIndex")
    p.add_argument("--only", default="", help="comma-separated runner keys (the floor always runs)")
    p.add_argument("--markdown", action="store_true", help="print the BENCHMARKS.md table")
    p.add_argument("--output", default=None,
                   help="where to write the JSON (default bench/results/buffers.json, "
                        "buffers-quick.json with --quick)")
    p.add_argument("--from", dest="from_file", default=None,
                   help="render an earlier results JSON instead of running")
    p.add_argument("--quiet", action="store_true", help="no progress lines")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.from_file:
        with open(args.from_file) as fh:
            report = json.load(fh)
    else:
        sizes = args.sizes or (QUICK_SIZES if args.quick else DEFAULT_SIZES)
        repeat = args.repeat if args.repeat is not None else (1 if args.quick else 3)
        if repeat < 1:
            raise SystemExit(f"--repeat must be >= 1, got {repeat}")
        config = Config(
            sizes=sizes,
            budgets=args.budgets or DEFAULT_BUDGETS,
            repeat=repeat,
            seed=args.seed,
            peer_max_n=args.peer_max_n,
            time_limit=args.time_limit,
            peers=not args.no_peers,
            only=tuple(s.strip() for s in args.only.split(",") if s.strip()),
            quiet=args.quiet,
            extra={"command": main_argv() if argv is None else " ".join(["python -m bench", *argv])},
        )
        log = lambda s: print(s, file=sys.stderr, flush=True)  # noqa: E731
        report = run_suite(config, log=log)
        output = args.output or (
            "bench/results/buffers-quick.json" if args.quick else "bench/results/buffers.json"
        )
        path = write_json(report, output)
        print(f"wrote {path}", file=sys.stderr)
    print(format_markdown(report) if args.markdown else format_text(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
