"""Kernel-side slider moves of every lesson's explorers: ``python -m bench.lesson_sliders``.

Each notebook's code cells run top to bottom in a fresh Python process (working directory
``notebooks/``, as nbval runs them), then every lesson explorer the notebook left in its namespace
(anything with a ``sliders`` dict and an ``update`` method) gets the same seeded random
single-slider moves as ``bench.sliders``: pick a slider, move it to another value on its grid,
time ``explorer.update(**{name: value})`` (compute + draw into the figure). No browser is
involved: this is the part of a slider round trip the library decides.

``--tree DIR`` runs the notebooks and the library of another checkout (for example the commit
before a refactor), so two versions are compared on the same machine; ``--rounds N`` alternates
the trees N times (interleaved, so load drifts hit both) and reports each explorer's p50 per
round and the ratio new / old of the medians.

    python -m bench.lesson_sliders                        # this checkout, 40 moves per explorer
    python -m bench.lesson_sliders --tree ../base --rounds 3 --json bench/results/lesson-sliders.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent


def _explorers(namespace: dict[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for name, value in namespace.items():
        if name.startswith("_") or isinstance(value, type):
            continue
        if isinstance(getattr(value, "sliders", None), dict) and callable(getattr(value, "update", None)):
            if value.sliders:
                found.setdefault(f"{type(value).__name__} ({name})", value)
    return found


def bench_notebook(path: Path, moves: int, seed: int) -> dict[str, Any]:
    """Run ``path``'s code cells here, then time every explorer it made (in this process)."""
    import importlib.util

    import nbformat

    # bench.sliders of this file's checkout, whichever tree's library is being measured
    spec = importlib.util.spec_from_file_location("_bench_sliders", Path(__file__).with_name("sliders.py"))
    sliders = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sliders)
    time_moves = sliders.time_moves

    nb = nbformat.read(path, as_version=4)
    namespace: dict[str, Any] = {"__name__": "__main__"}
    cwd = os.getcwd()
    os.chdir(path.parent)
    t0 = time.perf_counter()
    try:
        import contextlib
        import io

        with contextlib.redirect_stdout(io.StringIO()):
            for cell in nb.cells:
                if cell.cell_type == "code":
                    exec(compile(cell.source, f"{path.name}", "exec"), namespace)
    finally:
        os.chdir(cwd)
    run_s = time.perf_counter() - t0
    out: dict[str, Any] = {"run_notebook_s": round(run_s, 2), "explorers": {}}
    for label, explorer in _explorers(namespace).items():
        out["explorers"][label] = time_moves(explorer, moves, seed)
    return out


def _child(tree: Path, notebook: str, moves: int, seed: int) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    env.pop("MEMORYKIT_STATIC_FIGURES", None)
    proc = subprocess.run([sys.executable, __file__, "--child", str(tree / "notebooks" / notebook),
                           "--moves", str(moves), "--seed", str(seed)], env=env,
                          capture_output=True, text=True, cwd=str(tree))
    if proc.returncode != 0:
        raise RuntimeError(f"{notebook} in {tree} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def run(trees: list[Path], notebooks: list[str], moves: int, seed: int, rounds: int) -> dict[str, Any]:
    results: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for r in range(rounds):
        order = trees if r % 2 == 0 else list(reversed(trees))
        for nb in notebooks:
            for tree in order:
                if not (tree / "notebooks" / nb).is_file():
                    continue
                got = _child(tree, nb, moves, seed)
                results.setdefault(nb, {}).setdefault(str(tree), []).append(got)
                print(f"round {r + 1} {nb} {tree.name}: " + ", ".join(
                    f"{k} p50 {v['all']['p50_ms']} ms" for k, v in got["explorers"].items()),
                    file=sys.stderr, flush=True)
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    return {"machine": {"platform": platform.machine(), "cpus": os.cpu_count(),
                        "python": platform.python_version(), "node": platform.node(),
                        "loadavg_1_5_15": [round(x, 2) for x in load] if load else None},
            "trees": [str(t) for t in trees], "moves": moves, "seed": seed, "rounds": rounds,
            "results": results}


def summarize(report: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per (notebook, explorer): each tree's median over rounds of the p50 and p95."""
    rows = []
    trees = report["trees"]
    for nb, per_tree in report["results"].items():
        labels: list[str] = []
        for runs in per_tree.values():
            for got in runs:
                # "Class (variable)": a notebook may make two explorers of one class (yours=)
                labels += [k for k in got["explorers"] if k not in labels]
        for label in labels:
            row: dict[str, Any] = {"notebook": nb, "explorer": label}
            for tree in trees:
                p50s, p95s = [], []
                for got in per_tree.get(tree, []):
                    v = got["explorers"].get(label)
                    if v is not None:
                        p50s.append(v["all"]["p50_ms"])
                        p95s.append(v["all"]["p95_ms"])
                row[tree] = ({"p50_ms": round(float(np.median(p50s)), 3),
                              "p95_ms": round(float(np.median(p95s)), 3), "runs": len(p50s)}
                             if p50s else None)
            rows.append(row)
    return rows


def format_markdown(report: dict[str, Any]) -> str:
    trees = report["trees"]
    names = [Path(t).name for t in trees]
    head = "| lesson | explorer | " + " | ".join(f"{n} p50 / p95 ms" for n in names)
    if len(trees) == 2:
        head += f" | p50 ratio {names[0]} / {names[1]}"
    lines = [head + " |", "|" + "---|" * (2 + len(trees) + (len(trees) == 2))]
    for row in summarize(report):
        cells = [f"{row[t]['p50_ms']:.2f} / {row[t]['p95_ms']:.2f}" if row[t] else "-" for t in trees]
        if len(trees) == 2:
            a, b = row[trees[0]], row[trees[1]]
            cells.append(f"{a['p50_ms'] / b['p50_ms']:.2f}" if a and b and b["p50_ms"] else "-")
        lines.append(f"| {row['notebook'][:2]} | {row['explorer']} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.lesson_sliders", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("notebooks", nargs="*", help="notebook file names (default: every lesson)")
    p.add_argument("--tree", action="append", default=[],
                   help="another checkout to compare with (repeatable); this checkout comes first")
    p.add_argument("--moves", type=int, default=40, help="moves per explorer (default 40)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--rounds", type=int, default=1, help="alternate the trees this many times")
    p.add_argument("--json", default=None, help="also write the report to this file")
    p.add_argument("--from", dest="from_json", default=None, help="re-render a saved report")
    p.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        print(json.dumps(bench_notebook(Path(args.child), args.moves, args.seed)))
        return 0
    if args.from_json:
        print(format_markdown(json.loads(Path(args.from_json).read_text(encoding="utf-8"))))
        return 0
    for name in ("moves", "rounds"):
        if getattr(args, name) < 1:
            p.error(f"--{name} must be >= 1, got {getattr(args, name)}")
    trees = [ROOT] + [Path(t).resolve() for t in args.tree]
    for t in trees:
        if not (t / "memorykit" / "__init__.py").is_file():
            p.error(f"--tree must be a memorykit checkout, got {t}")
    notebooks = args.notebooks or sorted(p.name for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")
                                         if not p.name.startswith("00"))
    report = run(trees, notebooks, args.moves, args.seed, args.rounds)
    print(format_markdown(report))
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
