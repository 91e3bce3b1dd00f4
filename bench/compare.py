"""Compare buffer-benchmark runs of two versions: ``python -m bench.compare``.

Each side is one or more JSON files written by ``python -m bench --output ...``, taken
alternately from the two checkouts (so load drifts hit both). Per implementation, budget and
size the table shows the median over runs of the ratio to the tiktoken floor measured in the
same run, before and after, and after / before.

    python -m bench.compare --before bench/results/buffers-issue11-base-run*.json \\
        --after bench/results/buffers-issue11-main-run*.json
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path
from typing import Any


def _ratios(paths: list[str]) -> dict[tuple[str, int, int], list[float]]:
    out: dict[tuple[str, int, int], list[float]] = {}
    for path in paths:
        report = json.loads(Path(path).read_text(encoding="utf-8"))
        for row in report["results"]:
            if row.get("status") != "ok" or row["group"] == "floor":
                continue
            out.setdefault((row["label"], row["budget"], row["n"]), []).append(row["ratio_to_floor"])
    return out


def _commits(paths: list[str]) -> str:
    commits = {json.loads(Path(p).read_text(encoding="utf-8"))["machine"].get("git_commit")
               for p in paths}
    return ", ".join(sorted(str(c) for c in commits))


def compare(before: list[str], after: list[str]) -> list[dict[str, Any]]:
    """One row per implementation, budget and size present on both sides."""
    b, a = _ratios(before), _ratios(after)
    rows = []
    for key in b:
        if key not in a:
            continue
        mb, ma = statistics.median(b[key]), statistics.median(a[key])
        rows.append({"implementation": key[0], "budget": key[1], "n": key[2], "before": mb,
                     "after": ma, "after_over_before": ma / mb})
    return rows


def format_markdown(rows: list[dict[str, Any]], before: list[str], after: list[str]) -> str:
    lines = [f"before: {_commits(before)} ({len(before)} runs); after: {_commits(after)} "
             f"({len(after)} runs); cells: median ratio to the floor",
             "",
             "| implementation | budget | n | before | after | after / before |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['implementation']} | {r['budget']:,} | {r['n']:,} | {r['before']:.2f}x | "
                     f"{r['after']:.2f}x | {r['after_over_before']:.2f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.compare", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--before", nargs="+", required=True, help="JSON reports of the old version")
    p.add_argument("--after", nargs="+", required=True, help="JSON reports of the new version")
    args = p.parse_args(argv)
    rows = compare(args.before, args.after)
    if not rows:
        p.error("the two sides share no implementation, budget and size")
    print(format_markdown(rows, args.before, args.after))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
