"""Seed 003's recall benchmark and its scenarios: inject, distract, probe; adaptability;
the tidy table."""

from __future__ import annotations

import pytest

from memorykit.classroom.replays.recall_benchmark import SEED_003_RECALL, BenchmarkResult, run_benchmark
from memorykit.llm.chat import ScriptedChatModel
from memorykit.classroom.scenarios.probes import probe_conversation


def test_probe_conversation_plants_unique_keys_before_the_distractors():
    conv = probe_conversation(10, n_facts=4, seed=2)
    assert len(conv.facts) == 4 and conv.messages[0].role == "system"
    ids = [m.id for m in conv.messages]
    assert len(set(ids)) == len(ids)
    for fact in conv.facts:
        holders = [m.id for m in conv.messages if fact.key in m.content]
        assert holders == [fact.message_id]
        assert ids.index(fact.message_id) <= 8  # the facts come first
    assert probe_conversation(10, seed=2).messages == conv.messages  # seeded


def test_default_offline_run_is_tidy_and_shows_the_expected_shape():
    result = run_benchmark()
    assert isinstance(result, BenchmarkResult)
    assert [r["distractors"] for r in result.rows] == [10] * 4 + [25] * 4 + [50] * 4 + [100] * 4
    assert list(result.rows[0]) == list(BenchmarkResult.COLUMNS)
    by = {(r["architecture"][0], r["distractors"]): r for r in result.rows}
    for n in (10, 25, 50, 100):
        assert by["A", n]["recall_key"] == 0.0  # the window erased the facts
        assert by["D", n]["adaptability"] and not any(by[a, n]["adaptability"] for a in "ABC")
        assert by["D", n]["recall_key"] == by["C", n]["recall_key"]  # D recalls as C does
        assert by["D", n]["critic_tokens"] > 0 and by["C", n]["critic_tokens"] == 0
        for r in (by[a, n] for a in "ABCD"):
            assert r["recall_model"] is None  # no reader model offline
            assert r["recall_key"] <= r["recall_evidence"]  # a key only arrives with its evidence
    summary = result.summary()
    assert [s["seed_003_recall"] for s in summary] == [SEED_003_RECALL[a] for a in "ABCD"]
    table = result.to_markdown(summary=True)
    assert table.startswith("| architecture |") and "A context-window" in table
    assert result.config["critic"].startswith("scripted-critic")
    assert "not an LLM" in result.config["actor"]


def test_answer_model_column_and_bad_arguments():
    reader = ScriptedChatModel(default="I do not remember.", label="reader")
    result = run_benchmark([10], answer_model=reader)
    assert all(r["recall_model"] == 0.0 for r in result.rows)
    with pytest.raises(ValueError, match="distractors must be a non-empty list"):
        run_benchmark([])
    with pytest.raises(ValueError, match="distractors\\[\\] must be >= 0, got -1"):
        run_benchmark([-1])
    with pytest.raises(ValueError, match="n_facts must be <= 8, got 9"):
        probe_conversation(5, n_facts=9)
