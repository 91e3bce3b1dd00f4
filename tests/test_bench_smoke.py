"""Smoke test for ``python -m bench``: it runs and reports the right structure (no timings)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.buffers import Config, format_markdown, format_text, run_suite  # noqa: E402
from bench.textgen import MAX_WORDS, MIN_WORDS, conversation  # noqa: E402


def test_textgen_is_seeded_and_realistic():
    a, b = conversation(300, seed=7), conversation(300, seed=7)
    assert a == b
    assert conversation(300, seed=8) != a
    assert a[0].role == "system" and {t.role for t in a[1:]} == {"user", "assistant"}
    assert all(MIN_WORDS <= t.words <= MAX_WORDS for t in a)
    assert all(0.0 <= t.importance <= 1.0 for t in a)
    assert conversation(100, seed=7) == a[:100]


def test_quick_suite_structure():
    report = run_suite(Config(sizes=(60, 120), budgets=(300, 5_000), repeat=1, time_limit=30,
                              peer_max_n=60, quiet=True))
    assert report["machine"]["tiktoken"] and report["machine"]["python"]
    rows = report["results"]
    keys = {r["key"] for r in rows}
    assert {"floor", "memorykit-fifo", "memorykit-importance", "memorykit-hybrid",
            "seed-fifo", "seed-importance", "seed-hybrid"} <= keys
    assert {"langchain-trim_messages", "llamaindex-Memory"} <= keys
    for r in rows:
        assert r["n"] in (60, 120)
        if r["status"] == "ok":
            assert r["us_per_msg"] > 0 and r["ratio_to_floor"] > 0
        else:
            assert "skipped" in r["status"] or "capped" in r["status"] or "stopped" in r["status"]
        if r["group"] == "memorykit":
            assert r["status"] == "ok" and r["exact_billed_tokens"] is True
            assert r["window_tokens"] <= r["budget"]
        if r["group"] == "peer" and r["n"] == 120 and "skipped" not in r["status"]:
            assert "capped" in r["status"]
    floor = [r for r in rows if r["key"] == "floor"]
    assert all(r["ratio_to_floor"] == pytest.approx(1.0) for r in floor)
    assert any("billed" in t["target"] for t in report["targets"])
    assert "floor" in format_text(report)
    md = format_markdown(report)
    assert md.count("\n| ") >= 8 and "Machine:" in md


def test_cli_quick_writes_json(tmp_path):
    out = tmp_path / "buffers.json"
    proc = subprocess.run(
        [sys.executable, "-m", "bench", "--quick", "--sizes", "80", "--budgets", "400",
         "--no-peers", "--quiet", "--markdown", "--output", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("Command: `python -m bench")
    report = json.loads(out.read_text())
    assert report["config"]["sizes"] == [80]
    peers = [r for r in report["results"] if r["group"] == "peer"]
    assert peers and all(r["status"].startswith("skipped") for r in peers)
    again = subprocess.run([sys.executable, "-m", "bench", "--from", str(out)], cwd=ROOT,
                           capture_output=True, text=True, timeout=60)
    assert again.returncode == 0 and "memorykit ImportanceBuffer" in again.stdout


def test_browser_bench_table_names_every_slider_and_the_misses():
    from bench.browser import TARGET_P95_MS, _stats, format_markdown as browser_table

    fast = {"slider": "turn", "all": _stats([40, 50, 60]), "first_visit": _stats([40, 60]),
            "to_draw_start": _stats([20]), "draw": _stats([30]), "kb_received_median": 6.6,
            "readout_only": 0, "misses": []}
    slow = {**fast, "slider": "budget", "all": _stats([100, 400]),
            "misses": [{"ok": False, "why": "neither the figure nor the readout changed"}]}
    report = {"target_p95_ms": TARGET_P95_MS, "overall": _stats([40, 50, 60, 100, 400]),
              "notebooks": [{"notebook": "04_entity_memory.ipynb", "sliders": [fast, slow]}]}
    table = browser_table(report)
    rows = [line for line in table.splitlines() if line.startswith("| 04 |")]
    assert rows[0].startswith("| 04 | turn | 50.0 | 59.0 |") and rows[0].endswith("| yes |")
    assert rows[1].startswith("| 04 | budget |") and rows[1].endswith("| **no** |")
    assert "Overall: 5 presses" in table


def test_browser_bench_rejects_a_single_press():
    result = subprocess.run([sys.executable, "-m", "bench.browser", "--moves", "1"], cwd=ROOT,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 2 and "--moves must be >= 2, got 1" in result.stderr


def test_compare_takes_medians_of_ratios_per_implementation(tmp_path):
    from bench.compare import compare, format_markdown

    def report(path, ratios, commit):
        rows = [{"label": "floor", "group": "floor", "budget": None, "n": 100, "status": "ok",
                 "ratio_to_floor": 1.0}]
        rows += [{"label": "memorykit FIFOBuffer", "group": "memorykit", "budget": 2000, "n": 100,
                  "status": "ok", "ratio_to_floor": r} for r in ratios]
        path.write_text(json.dumps({"machine": {"git_commit": commit}, "results": rows}))
        return str(path)

    before = [report(tmp_path / f"b{i}.json", [r], "aaa") for i, r in enumerate((1.0, 1.2, 1.4))]
    after = [report(tmp_path / f"a{i}.json", [r], "bbb") for i, r in enumerate((1.1, 1.8, 1.3))]
    rows = compare(before, after)
    assert len(rows) == 1 and rows[0]["before"] == 1.2 and rows[0]["after"] == 1.3
    assert "| memorykit FIFOBuffer | 2,000 | 100 | 1.20x | 1.30x | 1.08 |" in \
        format_markdown(rows, before, after)


def test_lesson_sliders_times_the_explorers_a_notebook_leaves():
    from bench.lesson_sliders import bench_notebook

    got = bench_notebook(ROOT / "notebooks" / "01_tokens_and_budgets.ipynb", moves=3, seed=0)
    assert set(k.split(" (")[0] for k in got["explorers"]) == {"BudgetExplorer", "EstimateExplorer"}
    for timing in got["explorers"].values():
        assert timing["all"]["n"] == 3 and timing["all"]["p95_ms"] >= timing["all"]["p50_ms"] > 0


def test_minilm_bench_reports_numpy_and_says_what_it_skipped(tmp_path):
    from bench.minilm import format_markdown, run
    from memorykit.longterm.minilm import minilm_available

    if not minilm_available():
        pytest.skip(minilm_available().reason)
    report = run(3, str(tmp_path / "no-such-python"))
    assert report["texts"] == 3 and report["numpy"]["texts_per_s"] > 0
    assert "no reference interpreter" in report["sentence_transformers"]["skipped"]
    table = format_markdown(report)
    assert "numpy" in table and "sentence-transformers skipped: no reference" in table
    assert "ratio_numpy_over_st" not in report


def test_openai_agents_adapter_bench_measures_each_setup_against_the_sdks_trimming():
    pytest.importorskip("agents")
    from bench.adapter_openai_agents import format_markdown, history, run

    items = history(120)
    assert len(items) <= 120 and items[-1].get("type") != "function_call"
    report = run((120,), 1, 300, ("sdk-limit", "memorykit-bm25"))
    cell = report["sizes"]["120"]
    assert set(cell["setups"]) == {"sdk-limit", "memorykit-bm25"}
    for row in cell["setups"].values():
        assert row["stored_items"] == len(items) + 2 * 2  # warm-up and measured turn kept
        assert row["prepare_s"] > 0 and row["prepare_vs_sdk_limit"] > 0
    assert cell["setups"]["sdk-limit"]["prepare_vs_sdk_limit"] == 1.0
    assert cell["setups"]["memorykit-bm25"]["filter_s"] > 0
    table = format_markdown(report, "python -m bench.adapter_openai_agents --sizes 120")
    assert "sdk-limit (N=" in table and "memorykit-bm25" in table
