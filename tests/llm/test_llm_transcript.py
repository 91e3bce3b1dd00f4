"""Record/replay of a chat model (memorykit.classroom.doubles.transcript), the fallback summarizer, and the
loop's handling of a real model's failures (cut off, empty, off-topic, a dead endpoint)."""

from __future__ import annotations

import json

import pytest
from ports import free_port

from memorykit.classroom.replays import service_loop
from memorykit.classroom import lesson11 as L
from memorykit.llm.client import LLMCallFailed
from memorykit.llm.chat import OpenAIChatModel, ScriptedChatModel
from memorykit.llm.calibration import calibrate
from memorykit.llm.summarizer import FallbackSummarizer, OpenAISummarizer, SummarizationFailed
from memorykit.classroom.doubles.openai_server import Behaviour, FakeOpenAIServer
from memorykit.classroom.doubles.transcript import (
    RecordingChatModel,
    ReplayChatModel,
    Transcript,
    TranscriptMiss,
    replay_or_live,
    request_key,
)
from memorykit.messages import MessageFactory

pytest.importorskip("openai")

ASK = [{"role": "user", "content": "Say something long about parcels and numbers."}]


def test_replay_returns_what_was_recorded_usage_and_failures_included(tmp_path):
    with FakeOpenAIServer() as server:
        live = OpenAIChatModel("memorykit-fake-chat", server.client())
        rec = RecordingChatModel(live, Transcript("memorykit-fake-chat", note="test"))
        full = rec.complete(ASK)
        cut = rec.complete(ASK, max_tokens=2)  # the server cuts it: finish_reason 'length'
        assert rec.last_finish_reason == "length" and rec.last_usage.completion_tokens == 2
        server.behave(Behaviour.empty_content())
        empty_ask = [{"role": "user", "content": "nothing"}]
        with pytest.raises(LLMCallFailed):
            rec.complete(empty_ask)
    path = tmp_path / "t.json"
    rec.transcript.save(path)
    replay = ReplayChatModel(Transcript.load(path))
    assert replay.complete(ASK) == full and replay.last_finish_reason == "stop"
    assert replay.complete(ASK, max_tokens=2) == cut and replay.last_finish_reason == "length"
    assert replay.last_usage == rec.last_usage
    with pytest.raises(LLMCallFailed) as info:
        replay.complete(empty_ask)
    assert info.value.kind == "empty reply"
    with pytest.raises(TranscriptMiss, match=request_key(ASK, 3)) as miss:
        replay.complete(ASK, max_tokens=3)
    assert "re-record" in str(miss.value) and replay.calls == 4
    assert replay.name == "openai:memorykit-fake-chat (replayed)"


def test_transcript_file_and_key_are_checked(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"format": "other", "model": "m", "exchanges": {}}))
    with pytest.raises(ValueError, match="'other'"):
        Transcript.load(bad)
    with pytest.raises(ValueError, match="role"):
        request_key([{"role": "robot", "content": "x"}], None)
    with pytest.raises(ValueError, match="max_tokens"):
        ReplayChatModel(Transcript("m")).complete(ASK, max_tokens=0)
    # the key ignores the model name and changes with the request
    assert request_key(ASK, None) != request_key(ASK, 5)


def test_calibration_replays_the_providers_usage():
    with FakeOpenAIServer() as server:
        live = OpenAIChatModel("memorykit-fake-chat", server.client())
        rec = RecordingChatModel(live, Transcript("memorykit-fake-chat"))
        measured = L.calibration_demo(rec)
    replayed = L.calibration_demo(ReplayChatModel(rec.transcript))
    assert replayed.table() == measured.table() and replayed.rows
    with pytest.raises(TypeError, match="last_usage"):
        calibrate(ScriptedChatModel(["x"]), [ASK, ASK + ASK])


def _messages(n: int = 4):
    f = MessageFactory()
    return [f.user(f"My locker code is {4720 + i} and I like running.") for i in range(n)]


@pytest.mark.parametrize("reply, reason", [
    ("The weather in Paris is lovely and sunny today.", "off-topic"),
    ("   ", "empty"),
])
def test_fallback_writes_the_summary_a_model_reply_is_refused_for(reply, reason):
    chat = ScriptedChatModel(default=reply)
    model = OpenAISummarizer(chat, min_overlap=0.3)
    with pytest.raises(SummarizationFailed) as info:
        model.summarize(_messages(), 100)
    assert info.value.reason == reason
    guarded = FallbackSummarizer(model)
    text = guarded.summarize(_messages(), 100)
    assert "4720" in text  # the extractive fallback keeps the messages' own numbers
    assert guarded.outcomes() == {"accepted": 0, reason: 1}
    assert guarded.writer_of(_messages()[0].id) == "fallback"
    assert guarded.refused()[reason] == (" ".join(reply.split()) or "(no reply)")


def test_fallback_keeps_an_accepted_summary_and_a_cut_off_one_is_refused():
    on_topic = "The user likes running; locker code 4720."
    guarded = FallbackSummarizer(OpenAISummarizer(ScriptedChatModel(default=on_topic),
                                                  min_overlap=0.3))
    assert guarded.summarize(_messages(), 100) == on_topic
    assert guarded.outcomes() == {"accepted": 1} and guarded.writer_of("nope") is None
    with FakeOpenAIServer(chat=lambda m: "word " * 200) as server:
        chat = OpenAIChatModel("memorykit-fake-chat", server.client())
        cut = FallbackSummarizer(OpenAISummarizer(chat))
        cut.summarize(_messages(), 20)
    assert cut.outcomes() == {"accepted": 0, "cut off": 1}
    with pytest.raises(ValueError, match="min_overlap"):
        OpenAISummarizer(ScriptedChatModel(), min_overlap=1.5)
    with pytest.raises(TypeError, match="OpenAISummarizer"):
        FallbackSummarizer(ScriptedChatModel())


def test_fact_survival_counts_what_the_first_summary_lost():
    offline = L.run_loop()
    assert offline.summary()["facts_summarized"] == 4  # extractive: every digit kept
    assert offline.summary()["facts_kept_by_summary"] == 4
    lossy = L.offline_backend()
    drops = OpenAISummarizer(ScriptedChatModel(default="They talked about a parcel."))
    guarded = FallbackSummarizer(drops)
    result = L.run_loop(L.Backend("offline", "t", lossy.chat, guarded, lossy.critic, lossy.actor))
    assert result.summary()["facts_summarized"] == 4
    assert result.summary()["facts_kept_by_summary"] == 0
    assert service_loop.survival_by_writer(result, guarded.writer_of) == {
        "facts_summarized_by_the_model": 4, "kept": 0, "lost": 4,
        "facts_summarized_by_the_fallback": 0}


def test_a_dead_endpoint_fails_each_probe_not_the_lesson():
    url = f"http://127.0.0.1:{free_port()}/v1"
    # OPENAI_MODEL unset: the server cannot be asked for its model; the lesson says so
    backend = L.choose_backend({"OPENAI_BASE_URL": url}, timeout=2.0, max_retries=0)
    assert backend.kind == "offline" and "is the server running" in backend.description
    backend = L.choose_backend({"OPENAI_BASE_URL": url, "OPENAI_MODEL": "m"}, timeout=2.0,
                               max_retries=0)
    result = L.run_loop(backend)
    s = result.summary()
    assert s["failed_calls"] == 4 and s["answered"] == 0
    assert s["stored_long_term"] == s["messages_added"]  # nothing lost
    assert all(p.error == "LLMCallFailed (connection)" for p in result.probes)
    assert all("connection" in p.reply for p in result.probes)
    reflect = L.reflect_demo(backend)
    assert "CritiqueFailed" in reflect.summary()["failed"]
    # the real-model section: a named model is asked (and fails call by call); an endpoint
    # that cannot say which model it serves is replaced by the recording, saying why
    chat, mode = replay_or_live(L.TRANSCRIPT, {"OPENAI_BASE_URL": url, "OPENAI_MODEL": "m"})
    assert isinstance(chat, OpenAIChatModel) and mode.startswith("live")
    chat, mode = replay_or_live(L.TRANSCRIPT, {"OPENAI_BASE_URL": url}, timeout=2.0,
                                max_retries=0)
    assert isinstance(chat, ReplayChatModel)
    assert mode.startswith("the endpoint did not answer") and "replaying" in mode


def test_recording_needs_a_live_model(tmp_path):
    with pytest.raises(ValueError, match="record=True needs a live model"):
        replay_or_live(tmp_path / "never-written.json", {}, record=True)
    assert not (tmp_path / "never-written.json").exists()
