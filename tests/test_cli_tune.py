"""``python -m memorykit tune`` on the committed example logs, and the library call behind it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memorykit.evaluation.chatlog import load_chat_logs
from memorykit.evaluation.toolkit import TUNABLE
from memorykit.evaluation.tune import tunable_policy_names, tune

ROOT = Path(__file__).resolve().parent.parent
CHATS = ROOT / "data" / "chat_logs" / "support_chats.jsonl"
QUESTIONS = ROOT / "data" / "chat_logs" / "support_questions.jsonl"


def run_cli(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "memorykit", *args], capture_output=True,
                          text=True, env=env, cwd=ROOT, timeout=300)


def test_tune_prints_tables_and_writes_json(tmp_path):
    out = tmp_path / "result.json"
    done = run_cli("tune", str(CHATS), "--questions", str(QUESTIONS), "--budgets", "500", "1000",
                   "--policies", "bm25", "last-20-messages", "--json", str(out), "--no-progress")
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""  # no bar when told so
    text = done.stdout
    assert text.startswith("data: support_chats.jsonl: 6 conversations, 990 messages, 48 questions")
    assert "policies: bm25, last-20-messages; budgets: 500, 1000; evaluations: 62" in text
    payload = json.loads(out.read_text())
    assert payload["data"]["questions"] == 48
    assert payload["data"]["categories"] == {"stated": 12, "reworded": 12, "tool result": 12,
                                             "two messages": 6, "asked soon after": 6}
    rows = payload["rows"]
    assert len(rows) == (6 * 5 + 1) * 2  # bm25's grid and one fixed policy, at two budgets
    assert {r["policy"] for r in rows} == {"bm25", "last-20-messages"}
    best = payload["best"]
    assert [(b["budget"], b["policy"]) for b in best] == [
        (500, "bm25"), (500, "last-20-messages"), (1000, "bm25"), (1000, "last-20-messages")]
    for b in best:  # the best is the highest recall of its policy at its budget, as printed
        mine = [r["recall"] for r in rows if r["policy"] == b["policy"] and r["budget"] == b["budget"]]
        assert b["recall"] == max(mine)
        assert f"| {b['policy']} | {b['configuration']} | {b['budget']} | 48 | {b['recall']:.3f} |" in text
    front = payload["pareto_front"]
    assert sum(p["same_point"] for p in front) >= len(front) >= 1
    assert "## Pareto front" in text and f"json: {out}" in text


def test_tune_without_questions_refuses_and_says_why():
    done = run_cli("tune", str(CHATS))
    assert done.returncode == 2 and done.stdout == ""
    assert "tune needs questions: pass --questions FILE" in done.stderr


def test_tune_names_the_bad_line_and_field(tmp_path):
    bad = tmp_path / "questions.jsonl"
    bad.write_text(QUESTIONS.read_text().splitlines()[0] + "\n"
                   + json.dumps({"conversation": "support-01", "question": "Q?", "evidence": [9999]})
                   + "\n")
    done = run_cli("tune", str(CHATS), "-q", str(bad), "--no-progress")
    assert done.returncode == 2
    assert "questions.jsonl:line 2: evidence[0]: index 9999 is outside conversation 'support-01'" \
        in done.stderr
    done = run_cli("tune", str(CHATS), "-q", str(QUESTIONS), "--budgets", "0")
    assert done.returncode == 2 and "--budgets must be >= 1, got [0]" in done.stderr
    done = run_cli("tune", str(CHATS), "-q", str(QUESTIONS), "--policies", "nope")
    assert done.returncode == 2 and "invalid choice: 'nope'" in done.stderr


def test_example_logs_are_what_the_generator_writes(tmp_path):
    gen = ROOT / "data" / "chat_logs" / "generate.py"
    subprocess.run([sys.executable, str(gen), "--out", str(tmp_path)], check=True, timeout=60)
    for name in (CHATS.name, QUESTIONS.name):
        assert (tmp_path / name).read_bytes() == (ROOT / "data" / "chat_logs" / name).read_bytes()


@pytest.fixture(scope="module")
def data():
    return load_chat_logs(CHATS, QUESTIONS).select(conversations=["support-01", "support-02"])


def test_tune_sweeps_each_tunable_grid_and_fixed_defaults(data):
    result = tune(data, [1000], ["attention", "full-context"])
    grid_size = len(TUNABLE["attention"].values[0]) * len(TUNABLE["attention"].values[1])
    assert len(result.table) == grid_size + 1
    fixed = result.table.where(policy="full-context")[0]
    assert fixed["configuration"] == "defaults" and fixed["params"] == {}
    best = result.best()
    assert sorted(best.column("policy")) == ["attention", "full-context"]
    assert best.column("recall") == sorted(best.column("recall"), reverse=True)
    top_attention = max(result.table.where(policy="attention").column("recall"))
    assert best.where(policy="attention")[0]["recall"] == top_attention
    assert result.to_json()["policies"] == ["attention", "full-context"]


def test_tune_refuses_bad_requests(data):
    assert tunable_policy_names()[:2] == list(TUNABLE)
    with pytest.raises(ValueError, match="policies must name known policies .*, got 'nope'"):
        tune(data, [500], ["nope"])
    with pytest.raises(ValueError, match="budgets must be a non-empty list of ints, got 500"):
        tune(data, 500)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"budgets\[\] must be >= 1, got 0"):
        tune(data, [0])
    with pytest.raises(ValueError, match="has no question: nothing to score"):
        tune(load_chat_logs(CHATS), [500])
