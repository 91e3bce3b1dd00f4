"""What a student waits for: slider round trips in a real JupyterLab in Chromium.

``python -m bench.browser`` opens every lesson in JupyterLab (Debian's ``/usr/bin/chromium``
driven by playwright), runs all cells, and for every slider of every explorer presses arrow keys
on its handle. Each press is timed in the page, from the ``keydown`` event to the moment the
``Plotly.update`` that the kernel sent back has finished drawing (the promise resolved and the
next animation frame painted): slider value to kernel, recompute, figure message to the
browser, plotly.js redraw. That is the whole round trip a student feels; the kernel-side
figures of ``bench.sliders`` and friends are one part of it.

Per slider: ``--moves`` presses, the first half stepping right from the notebook's setting (new
values, nothing memoized), the second half stepping back left (revisits). A slider at the end of
its range steps the other way first. p50 / p95 / max per slider, per lesson and overall; the
target is p95 <= 150 ms for every slider on a quiet 2-core machine. A press after which no
figure redraws within ``--timeout`` seconds is reported as a miss, never dropped.

    python -m bench.browser                         # every lesson, 10 presses per slider
    python -m bench.browser --notebooks 04 07 --moves 20
    python -m bench.browser --json bench/results/browser.json --markdown
    python -m bench.browser --from run1.json run2.json run3.json   # one table over runs
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
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.browser import labdriver  # noqa: E402

TARGET_P95_MS = 150.0

JS_SLIDERS = """() => Array.from(document.querySelectorAll('.widget-slider')).map((s, i) => {
  const label = s.querySelector('.widget-label');
  const readout = s.querySelector('.widget-readout');
  const cell = s.closest('.jp-Cell');
  const cells = Array.from(document.querySelectorAll('.jp-Notebook .jp-Cell'));
  return {index: i, label: label ? label.textContent.trim() : '',
          value: readout ? readout.textContent.trim() : null, cell: cells.indexOf(cell)};
})"""


def _stats(xs: list[float]) -> dict[str, Any]:
    if not xs:
        return {"n": 0}
    a = np.asarray(xs, dtype=float)
    return {"n": int(a.size), "p50_ms": round(float(np.percentile(a, 50)), 1),
            "p95_ms": round(float(np.percentile(a, 95)), 1), "max_ms": round(float(a.max()), 1)}


# Times (performance.now()) at which an explorer's readout table changed.
JS_WATCH_READOUTS = """() => {
  window.__mkReadouts = [];
  document.querySelectorAll('.memorykit-readout').forEach(r => {
    new MutationObserver(() => window.__mkReadouts.push(performance.now()))
      .observe(r.parentElement, {childList: true, subtree: true, characterData: true});
  });
}"""


def _press_and_time(session: labdriver.NotebookSession, slider_index: int, key: str,
                    timeout: float, quiet_ms: float = 400.0) -> dict[str, Any]:
    """Press ``key`` on a slider; time until the figure (and the readout) show the result.

    The round trip ends when the first ``Plotly.update`` after the key press has painted; a
    move that leaves the figure's data unchanged (plotly then sends nothing) ends when the
    readout table changed. Waits until the kernel is idle and nothing redrew for ``quiet_ms``.
    """
    page = session.page
    handle = page.locator(".widget-slider .noUi-handle").nth(slider_index)
    readout = page.locator(".widget-slider").nth(slider_index).locator(".widget-readout")
    before_value = readout.first.text_content() if readout.count() else None
    n_keys = page.evaluate("() => window.__mkKeys.length")
    handle.focus()
    handle.press(key)
    if readout.count() and readout.first.text_content() == before_value:
        return {"ok": None, "why": "end of its range", "value": before_value,
                "from": before_value}
    deadline = time.monotonic() + timeout
    key_t = None
    while time.monotonic() < deadline:
        snap = page.evaluate(
            """(n) => ({keys: window.__mkKeys.slice(n), draws: window.__mkDraws.slice(-50),
                        readouts: (window.__mkReadouts || []).slice(-50),
                        recv: window.__mkRecv.slice(-400), now: performance.now()})""", n_keys)
        if snap["keys"]:
            key_t = snap["keys"][0]
            after = [d for d in snap["draws"] if d["start"] >= key_t]
            updates = [d for d in after if d["fn"] in ("update", "react", "newPlot")]
            readouts = [t for t in snap["readouts"] if t >= key_t]
            last = max([d["end"] for d in after] + readouts, default=None)
            if last is not None and snap["now"] - last > quiet_ms and session.kernel_idle():
                value = readout.first.text_content() if readout.count() else None
                if not updates:
                    return {"ok": True, "ms": round(readouts[0] - key_t, 1), "figure": False,
                            "value": value, "from": before_value}
                first = updates[0]
                received = [r for r in snap["recv"] if key_t <= r["t"] <= first["start"]]
                return {"ok": True, "ms": round(first["end"] - key_t, 1), "figure": True,
                        "draw_ms": round(first["end"] - first["start"], 1),
                        "draw_sync_ms": round(first["syncEnd"] - first["start"], 1),
                        "to_draw_start_ms": round(first["start"] - key_t, 1),
                        "bytes_received": sum(r["bytes"] for r in received),
                        "last_draw_ms": round(max(d["end"] for d in after) - key_t, 1),
                        "draws": len(after), "value": value, "from": before_value}
        page.wait_for_timeout(20)
    value = readout.first.text_content() if readout.count() else None
    if value == before_value:  # the explorer put the slider back (lesson 03: target < threshold)
        return {"ok": None, "why": "held at its limit by the explorer", "value": value,
                "from": before_value}
    return {"ok": False, "ms": None, "value": value, "from": before_value,
            "why": "no key event seen" if key_t is None
            else f"neither the figure nor the readout changed within {timeout:.0f} s"}


def bench_notebook(browser: Any, lab: dict[str, Any], nb_path: Path, moves: int,
                   timeout: float) -> dict[str, Any]:
    session = labdriver.NotebookSession(browser, lab, nb_path)  # draw-timing hook installed
    try:
        session.open()
        session.clear_outputs()
        session.run_all(timeout=240)
        session.wait_settled()
        session.page.evaluate(JS_WATCH_READOUTS)
        sliders = session.page.evaluate(JS_SLIDERS)
        out = []
        for s in sliders:
            handle = session.page.locator(".widget-slider .noUi-handle").nth(s["index"])
            handle.scroll_into_view_if_needed(timeout=5000)
            half = max(1, moves // 2)
            presses: list[dict[str, Any]] = []
            direction = "ArrowRight"
            for phase in ("first visit", "revisit"):
                for _ in range(half):
                    r = _press_and_time(session, s["index"], direction, timeout)
                    if r["ok"] is None:  # at the end of its range: go the other way
                        direction = "ArrowLeft" if direction == "ArrowRight" else "ArrowRight"
                        r = _press_and_time(session, s["index"], direction, timeout)
                    r["phase"] = phase
                    presses.append(r)
                direction = "ArrowLeft" if direction == "ArrowRight" else "ArrowRight"
            ok = [p["ms"] for p in presses if p["ok"]]
            first = [p["ms"] for p in presses if p["ok"] and p["phase"] == "first visit"]
            out.append({"slider": s["label"], "start": s["value"], "cell": s["cell"],
                        "all": _stats(ok), "first_visit": _stats(first),
                        "misses": [p for p in presses if p["ok"] is False],
                        "presses": presses})
            drawn = [p for p in presses if p["ok"] and p["figure"]]
            out[-1]["readout_only"] = sum(1 for p in presses if p["ok"] and not p["figure"])
            out[-1]["draw"] = _stats([p["draw_ms"] for p in drawn])
            out[-1]["draw_sync"] = _stats([p["draw_sync_ms"] for p in drawn])
            out[-1]["to_draw_start"] = _stats([p["to_draw_start_ms"] for p in drawn])
            kb = [p["bytes_received"] / 1000 for p in drawn]
            out[-1]["kb_received_median"] = round(float(np.median(kb)), 1) if kb else None
            print(f"  {nb_path.stem[:2]} {s['label'][:34]:<34} p50 {out[-1]['all'].get('p50_ms')} "
                  f"p95 {out[-1]['all'].get('p95_ms')} ms (first visits p95 "
                  f"{out[-1]['first_visit'].get('p95_ms')}; key->draw start p50 "
                  f"{out[-1]['to_draw_start'].get('p50_ms')}, draw p50 "
                  f"{out[-1]['draw'].get('p50_ms')} (sync {out[-1]['draw_sync'].get('p50_ms')}), "
                  f"{out[-1]['kb_received_median']} kB), misses {len(out[-1]['misses'])}",
                  flush=True)
        return {"notebook": nb_path.name, "sliders": out}
    finally:
        session.close()


def machine() -> dict[str, Any]:
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    try:
        chromium = subprocess.run([labdriver.CHROMIUM, "--version"], capture_output=True,
                                  text=True, timeout=30).stdout.strip()
    except OSError:
        chromium = None
    try:
        rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                             capture_output=True, text=True, timeout=10).stdout.strip()
    except OSError:
        rev = None
    import plotly
    import ipywidgets
    return {"cpus": os.cpu_count(), "load_before": [round(x, 2) for x in load] if load else None,
            "python": platform.python_version(), "platform": platform.platform(),
            "chromium": chromium, "plotly": plotly.__version__, "ipywidgets": ipywidgets.__version__,
            "git": rev}


def run(notebooks: list[Path], moves: int, timeout: float) -> dict[str, Any]:
    info = machine()
    results = []
    root = Path(os.path.commonpath([str(p.parent) for p in notebooks]))
    with labdriver.lab_server(root) as lab, labdriver.chromium() as browser:
        for nb in notebooks:
            print(f"{nb.name}", flush=True)
            results.append(bench_notebook(browser, lab, nb, moves, timeout))
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    info["load_after"] = [round(x, 2) for x in load] if load else None
    every = [p["ms"] for r in results for s in r["sliders"] for p in s["presses"] if p["ok"]]
    return {"machine": info, "moves_per_slider": moves, "target_p95_ms": TARGET_P95_MS,
            "overall": _stats(every), "notebooks": results}


def format_markdown(report: dict[str, Any]) -> str:
    lines = ["| lesson | slider | p50 ms | p95 ms | max ms | first-visit p95 | key to draw start "
             "p50 | plotly.js draw p50 | kB per move | presses | figure unchanged | misses | "
             "p95 <= 150 ms |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in report["notebooks"]:
        for s in r["sliders"]:
            a, f = s["all"], s["first_visit"]
            met = "yes" if a.get("p95_ms") is not None and a["p95_ms"] <= report["target_p95_ms"] \
                and not s["misses"] else "**no**"
            lines.append(f"| {r['notebook'][:2]} | {s['slider']} | {a.get('p50_ms', '-')} | "
                         f"{a.get('p95_ms', '-')} | {a.get('max_ms', '-')} | "
                         f"{f.get('p95_ms', '-')} | {s['to_draw_start'].get('p50_ms', '-')} | "
                         f"{s['draw'].get('p50_ms', '-')} | {s['kb_received_median'] or '-'} | "
                         f"{a.get('n', 0) + len(s['misses'])} | {s['readout_only']} | "
                         f"{len(s['misses'])} | {met} |")
    o = report["overall"]
    lines.append("")
    lines.append(f"Overall: {o.get('n', 0)} presses, p50 {o.get('p50_ms')} ms, p95 "
                 f"{o.get('p95_ms')} ms, max {o.get('max_ms')} ms.")
    return "\n".join(lines)


def format_runs(reports: list[dict[str, Any]]) -> str:
    """One row per slider over several runs: p50 and p95 of each, draw split, verdict."""
    target = reports[0]["target_p95_ms"]
    runs = len(reports)
    head = ("| lesson | slider | " + " | ".join(f"run {i + 1} p50 / p95 ms" for i in range(runs))
            + " | key to draw start p50 | plotly.js draw p50 | kB per move | p95 <= "
            f"{target:.0f} ms |")
    lines = [head, "|---|---|" + "---:|" * runs + "---:|---:|---:|---|"]
    by_key: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for report in reports:
        for r in report["notebooks"]:
            for s in r["sliders"]:
                by_key.setdefault((r["notebook"][:2], s["slider"]), []).append(s)
    for (lesson, slider), rows in by_key.items():
        cells = [f"{s['all'].get('p50_ms', '-')} / {s['all'].get('p95_ms', '-')}" for s in rows]
        missed = sum(1 for s in rows if s["misses"] or s["all"].get("p95_ms") is None
                     or s["all"]["p95_ms"] > target)
        verdict = "yes" if not missed else f"**no** in {missed} of {len(rows)} runs"
        last = rows[-1]
        lines.append(f"| {lesson} | {slider} | " + " | ".join(cells) + f" | "
                     f"{last['to_draw_start'].get('p50_ms', '-')} | {last['draw'].get('p50_ms', '-')} | "
                     f"{last['kb_received_median'] or '-'} | {verdict} |")
    overall = ", ".join(f"run {i + 1}: p50 {r['overall'].get('p50_ms')} ms, p95 "
                        f"{r['overall'].get('p95_ms')} ms" for i, r in enumerate(reports))
    met = sum(1 for rows in by_key.values()
              if all(not s["misses"] and s["all"].get("p95_ms") is not None
                     and s["all"]["p95_ms"] <= target for s in rows))
    lines += ["", f"All presses: {overall}. Sliders meeting the target in every run: {met} of "
              f"{len(by_key)}."]
    return "\n".join(lines)


def _pick(names: list[str]) -> list[Path]:
    all_nbs = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    if not names:
        return all_nbs
    picked = []
    for n in names:
        match = [p for p in all_nbs if p.name.startswith(n) or p.stem == n]
        if not match:
            raise SystemExit(f"no notebook matches {n!r} (have {', '.join(p.stem for p in all_nbs)})")
        picked.extend(match)
    return picked


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.browser", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--notebooks", nargs="*", default=[], help="lesson numbers or stems (default all)")
    p.add_argument("--moves", type=int, default=10, help="presses per slider (default 10)")
    p.add_argument("--timeout", type=float, default=15.0, help="seconds to wait for a redraw")
    p.add_argument("--json", type=Path, default=None, help="write the full report here")
    p.add_argument("--markdown", action="store_true", help="print the table for BENCHMARKS.md")
    p.add_argument("--from", dest="from_json", nargs="+", type=Path, default=None,
                   help="no run: print one table over these saved reports (several runs)")
    args = p.parse_args(argv)
    if args.from_json:
        print(format_runs([json.loads(path.read_text()) for path in args.from_json]))
        return 0
    if args.moves < 2:
        p.error(f"--moves must be >= 2, got {args.moves}")
    if not Path(labdriver.CHROMIUM).exists():
        p.error(f"{labdriver.CHROMIUM} is missing (apt-get install chromium)")
    report = run(_pick(args.notebooks), args.moves, args.timeout)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=1))
    if args.markdown:
        print(format_markdown(report))
    o = report["overall"]
    print(f"overall: {o.get('n', 0)} presses, p50 {o.get('p50_ms')} ms, p95 {o.get('p95_ms')} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
