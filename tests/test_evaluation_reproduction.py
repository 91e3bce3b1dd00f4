"""Seed 003's comparison reproduced (memorykit.classroom.replays.reproduction): the protocol with the
offline stand-ins and with chat models that lose keys or fail, and a small run against the real
local model (skipped with the reason when it is not installed, failed when CI=true)."""

from __future__ import annotations

import os
import re

import pytest
from ports import free_port

from memorykit.classroom.replays.recall_benchmark import answer_contains_key
from memorykit.classroom.replays.reproduction import (
    LETTERS,
    MeteredChatModel,
    ReproductionResult,
    ReproductionSettings,
    run_reproduction,
    wilson_interval,
)
from memorykit.llm.backend import memory_reader_reply
from memorykit.llm.chat import Usage
from memorykit.llm.client import LLMCallFailed
from memorykit.classroom.scenarios.probes import SEED_003_FACT_BANK, probe_conversation
from memorykit.tokens import Tokenizer

SMALL = ReproductionSettings(conversations=2, n_facts=4, distractors=20)


def test_wilson_interval_known_values_and_bad_input():
    lo, hi = wilson_interval(0, 30)
    assert lo == 0.0 and hi == pytest.approx(0.1135, abs=1e-4)
    lo, hi = wilson_interval(15, 30)
    assert (lo, hi) == (pytest.approx(0.3315, abs=1e-4), pytest.approx(0.6685, abs=1e-4))
    assert wilson_interval(30, 30)[1] == 1.0 and wilson_interval(30, 30)[0] < 1.0
    with pytest.raises(ValueError, match="successes"):
        wilson_interval(31, 30)
    with pytest.raises(ValueError, match="n must be"):
        wilson_interval(0, 0)


def test_settings_name_a_bad_value():
    with pytest.raises(ValueError, match="n_facts"):
        ReproductionSettings(n_facts=11)
    with pytest.raises(ValueError, match="seconds_per_message"):
        ReproductionSettings(seconds_per_message=0)
    with pytest.raises(ValueError, match="threshold"):
        ReproductionSettings(threshold=1.5)


def test_seed_003_probes_name_the_fact_by_its_own_words():
    assert ("The keys are in locker {key}.", "Where are keys?", "platform") in SEED_003_FACT_BANK
    for sentence, question, _recipe in SEED_003_FACT_BANK:
        asked = set(re.findall(r"[a-z]+", question.lower())) - {"what", "where", "is", "are", "the"}
        assert asked <= set(re.findall(r"[a-z]+", sentence.lower())), question


def test_script_speed_spans_minutes_not_hours():
    conv = probe_conversation(50, n_facts=10, seed=1, bank=SEED_003_FACT_BANK,
                              seconds_per_message=5.0)
    times = [m.created_at for m in conv.messages]
    assert times == [5.0 * k for k in range(len(times))]
    slow = probe_conversation(50, n_facts=10, seed=1, bank=SEED_003_FACT_BANK)
    assert slow.messages[-1].created_at > 10 * 3600  # the simulated pace: hours
    assert [m.content for m in slow.messages] == [m.content for m in conv.messages]
    with pytest.raises(ValueError, match="seconds_per_message"):
        probe_conversation(5, seconds_per_message=-1.0)
    with pytest.raises(ValueError, match="n_facts must be <= 2, got 3"):
        probe_conversation(5, n_facts=3, bank=SEED_003_FACT_BANK[:2])
    with pytest.raises(ValueError, match="bank must be a non-empty sequence"):
        probe_conversation(5, bank=())
    with pytest.raises(ValueError, match="distractor_words low must be <= high"):
        probe_conversation(5, distractor_words=(9, 3))


def test_answer_contains_key_is_exact_but_ignores_case_and_spacing():
    assert answer_contains_key("It's blue_falcon_12.", "Blue_Falcon_12")
    assert answer_contains_key("call +44  7700 954141", "+44 7700 954141")
    assert not answer_contains_key("It is a code.", "Blue_Falcon_12")
    assert not answer_contains_key("Blue Falcon 12", "Blue_Falcon_12")


@pytest.fixture(scope="module")
def standins() -> ReproductionResult:
    return run_reproduction(SMALL)


def test_standin_run_counts_every_probe_and_a_window_forgets(standins):
    n = SMALL.conversations * SMALL.n_facts
    assert [r["architecture"].split()[0] for r in standins.rows] == list(LETTERS)
    for r in standins.rows:
        assert r["probes"] == n and 0 <= r["correct"] <= n
        assert r["interval"] == list(wilson_interval(r["correct"], n))
        assert r["tokens"] > 0
    a = standins.rows[0]
    assert a["correct"] == 0 and a["key_in_context"] == 0  # 20 turns push the facts out of A
    assert len(standins.probes) == n * (len(LETTERS) + 1)  # and the control
    for p in standins.probes:
        assert p["correct"] == answer_contains_key(p["answer"], p["key"])
    assert standins.config["model_calls"] == {"reader": n * (len(LETTERS) + 1), "summarizer": 0,
                                              "critic": 0}
    assert standins.failures == []


def test_result_round_trips_through_json(standins):
    again = ReproductionResult.from_json(standins.to_json())
    assert again.table() == standins.table() and again.explain() == standins.explain()
    with pytest.raises(ValueError, match="missing"):
        ReproductionResult.from_json({"rows": []})


class LossyModel:
    """A chat model stand-in whose summaries drop every code (no digits survive), whose
    critic finds nothing and whose reader quotes its context; it reports usage like a
    server."""

    name = "lossy-test-model"
    is_scripted = False

    def __init__(self) -> None:
        self.summaries = 0
        self.last_usage: Usage | None = None

    def complete(self, messages, *, max_tokens=None):
        system = str(messages[0]["content"])
        if system.startswith("You summarize"):
            self.summaries += 1
            reply = "The user gave some codes and numbers; they chatted about other things."
        elif system.startswith("You are a critical observer"):
            reply = '{"rules": []}'
        else:
            reply = memory_reader_reply(messages)
        self.last_usage = Usage(100, 10)
        return reply


def test_a_summary_that_drops_keys_is_measured_and_b_prime_reuses_it():
    model = LossyModel()
    r = run_reproduction(SMALL, chat=model)
    covered = [e for e in r.episodes if e["episode"] is not None]
    assert covered and not any(e["summary_kept_key"] for e in covered)
    rows = {row["architecture"].split()[0]: row for row in r.rows}
    assert rows["B"]["correct"] == rows["B'"]["correct"] == 0
    # B' reads B's summaries (memoized): the model summarized once per consolidation of B
    assert model.summaries == r.config["model_calls"]["summarizer"]
    assert rows["B'"]["tokens"] == rows["B"]["tokens"]  # the same summaries, the same readers
    assert r.config["tokens_reported_by_endpoint"]
    line = next(x for x in r.explain() if x.startswith("B:"))
    assert f"summaries kept 0 of {len(covered)} keys" in line


class DeadModel:
    name = "dead-test-model"
    is_scripted = False

    def complete(self, messages, *, max_tokens=None):
        raise LLMCallFailed("connection refused", kind="connection")


def test_model_failures_are_recorded_never_a_crash():
    r = run_reproduction(ReproductionSettings(conversations=1, n_facts=2, distractors=20),
                         chat=DeadModel())
    roles = {f["role"].split()[0] for f in r.failures}
    assert roles == {"summarizer", "critic", "reader"}
    assert all(row["correct"] == 0 for row in r.rows) and r.control["correct"] == 0
    assert any(e["summary"].startswith("(no summary") for e in r.episodes if e["summary"])


def test_meter_counts_locally_when_the_model_reports_no_usage():
    class Silent:
        name = "silent"

        def complete(self, messages, *, max_tokens=None):
            return "four words in reply"

    meter = MeteredChatModel(Silent(), Tokenizer())
    meter.complete([{"role": "user", "content": "hello there"}])
    assert meter.output_tokens == Tokenizer().count("four words in reply")
    assert meter.input_tokens > Tokenizer().count("hello there")  # chat overhead included
    assert not meter.reported_by_endpoint and meter.calls == 1
    with pytest.raises(TypeError, match="complete"):
        MeteredChatModel(object(), Tokenizer())


# ------------------------------------------------------------- the real local model
def _real_model_or_skip():
    from memorykit.llm.local_server import local_model_available

    available = local_model_available()
    if not available:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"CI must run the real-model reproduction: {available.reason}")
        pytest.skip(f"the local model is not installed: {available.reason}")


def test_a_small_reproduction_against_the_real_local_model():
    _real_model_or_skip()
    from bench.reproduce_003 import make_chat
    from memorykit.llm.local_server import LocalModelServer

    # one fact, 16 turns: one consolidation and two critiques, six answers (~10 model calls)
    settings = ReproductionSettings(conversations=1, n_facts=1, distractors=16)
    # a generous timeout: on a loaded 2-core machine a 120-token critique can take minutes,
    # and a timed-out call bills nothing, which would void the token comparison below
    with LocalModelServer(free_port()) as server:
        r = run_reproduction(settings, chat=make_chat(server.base_url, timeout=900.0))
    # every model call answered (a critique that is not JSON is the model's own failure, kept)
    unanswered = [f for f in r.failures if "request failed" in f["error"]]
    assert not unanswered, unanswered
    assert r.config["reader"] == "openai:smollm2"
    assert r.config["tokens_reported_by_endpoint"]
    assert r.config["model_calls"]["reader"] == len(LETTERS) + 1
    assert r.config["model_calls"]["summarizer"] >= 1 and r.config["model_calls"]["critic"] >= 1
    rows = {row["architecture"].split()[0]: row for row in r.rows}
    assert rows["A"]["key_in_context"] == 0 and rows["A"]["correct"] == 0
    assert rows["D"]["tokens"] > rows["C"]["tokens"]  # the critic's calls are billed to D
    for p in r.probes:
        assert p["correct"] == answer_contains_key(p["answer"], p["key"])


# ------------------------------------------------------------- lesson 10's section
def test_lesson_section_reads_a_saved_result_beside_a_live_standin_run(tmp_path, monkeypatch):
    import json

    from memorykit.classroom import lesson10_reproduction as app

    saved = run_reproduction(SMALL, chat=LossyModel())
    path = tmp_path / "reproduce_003.json"
    path.write_text(json.dumps({"command": "python -m bench.reproduce_003 --test", "when": "-",
                                "machine": "test", "seconds": 1.0, **saved.to_json()}))
    monkeypatch.setattr(app, "RESULTS", path)
    app._record.cache_clear()
    app.standins.cache_clear()
    try:
        rows = app.side_by_side()
        assert [r["arch"] for r in rows][-1] == "control (fact in context)"
        assert len(rows) == len(LETTERS) + 1
        # the stand-ins ran the saved settings: the same number of probes
        assert all(r["stand-ins"].split(" = ")[0].endswith(f"/{saved.rows[0]['probes']}")
                   for r in rows)
        assert app.provenance()["command"] == "python -m bench.reproduce_003 --test"
        lost = app.dropped_keys(limit=100)
        assert lost and all(row["key"] not in row["summary"] for row in lost)
        misses = app.reader_misses(limit=100)
        assert all(row["key"].lower() not in row["answer"].lower() for row in misses)
        monkeypatch.setattr(app, "RESULTS", tmp_path / "missing.json")
        app._record.cache_clear()
        with pytest.raises(FileNotFoundError, match="bench.reproduce_003"):
            app.reproduced()
    finally:
        app._record.cache_clear()
        app.standins.cache_clear()
