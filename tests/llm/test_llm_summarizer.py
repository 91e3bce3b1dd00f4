"""OpenAISummarizer: the Summarizer protocol, its prompt, and failing without losing anything."""

from __future__ import annotations

import pytest

from memorykit.clock import StepClock
from memorykit.classroom.contracts.llm import MIN_OVERLAP, REPLY_CONTRACTS, agrees_with
from memorykit.llm.client import LLMCallFailed
from memorykit.llm.chat import OpenAIChatModel, ScriptedChatModel
from memorykit.llm.summarizer import OpenAISummarizer, SummarizationFailed
from memorykit.llm.summarizer import refusal
from memorykit.classroom.doubles.openai_server import Behaviour
from memorykit.messages import MessageFactory
from memorykit.summary import Summarizer

SUMMARY = "The user's code is BLUE_99; the flight is on Thursday at 9:40."


@pytest.fixture
def messages():
    f = MessageFactory(clock=StepClock())
    return [
        f.user("My access code is BLUE_99."),
        f.assistant("Got it."),
        f.user("Book the flight for Thursday at 9:40."),
        f.assistant("Booked for Thursday, 9:40."),
    ]


def _summarizer(server, **kw):
    server.chat = ScriptedChatModel(default=SUMMARY)
    return OpenAISummarizer(OpenAIChatModel("memorykit-fake-chat", server.client(**kw)))


def test_summary_through_the_real_client(server, messages):
    s = _summarizer(server)
    assert isinstance(s, Summarizer)
    assert s.is_llm is True and s.name == "llm-summarizer(openai:memorykit-fake-chat)"
    assert s.summarize(messages, 60) == SUMMARY
    body = server.requests[0].body
    system, user = body["messages"]
    assert "at most 60 tokens" in system["content"]
    assert "number" in system["content"] and "decision" in system["content"]
    for m in messages:
        assert f"[{m.id}] {m.role}: {m.content}" in user["content"]
    assert body["max_tokens"] == 60


def test_constructor_cap_and_client_model_form(server, messages):
    server.chat = ScriptedChatModel(default="short")
    s = OpenAISummarizer(client=server.client(), model="memorykit-fake-chat", max_tokens=20)
    assert s.summarize(messages, 500) == "short"
    assert server.requests[0].body["max_tokens"] == 20


def test_a_summary_cut_off_by_the_endpoint_is_rejected(server, messages):
    s = _summarizer(server)
    with pytest.raises(SummarizationFailed, match="cut off at the 3-token limit"):
        s.summarize(messages, 3)


def test_nothing_to_summarize_makes_no_request(server, messages):
    s = _summarizer(server)
    assert s.summarize([], 50) == ""
    assert s.summarize(messages, 0) == ""
    assert server.requests == []


def test_scripted_backend_is_not_called_an_llm(messages):
    s = OpenAISummarizer(ScriptedChatModel(default=SUMMARY))
    assert s.is_llm is False and "scripted" in s.name
    assert s.summarize(messages, 60) == SUMMARY


@pytest.mark.parametrize(
    ("behaviour", "kind"),
    [
        (Behaviour.slow(2.0), "timeout"),
        (Behaviour.error(500), "http 500"),
        (Behaviour.error(429), "http 429"),
        (Behaviour.malformed(), "malformed reply"),
        (Behaviour.empty_choices(), "empty reply"),
        (Behaviour.empty_content(), "empty reply"),
    ],
)
def test_failures_raise_summarization_failed_and_change_nothing(server, messages, behaviour, kind):
    s = _summarizer(server, timeout=0.2, max_retries=0)
    before = list(messages)
    snapshot = [(m.id, m.role, m.content, m.importance) for m in messages]
    server.behave(behaviour)
    with pytest.raises(SummarizationFailed, match="not summarized") as info:
        s.summarize(messages, 60)
    assert isinstance(info.value.cause, LLMCallFailed)
    assert info.value.cause.kind == kind
    assert info.value.__cause__ is info.value.cause
    assert messages == before and all(a is b for a, b in zip(messages, before))
    assert [(m.id, m.role, m.content, m.importance) for m in messages] == snapshot
    # The next call works: the failure left no state behind.
    assert s.summarize(messages, 60) == SUMMARY


class _Stub:
    """A chat model stub returning a fixed reply (and a finish reason)."""

    name = "stub"

    def __init__(self, reply, finish="stop"):
        self.reply, self.last_finish_reason = reply, finish

    def complete(self, messages, *, max_tokens=None):
        return self.reply


def _summarizer_as_judge(reply, finish_reason, messages, cap):
    """OpenAISummarizer over a stub model, as a judge: the reason it refuses the reply."""
    try:
        OpenAISummarizer(_Stub(reply, finish=finish_reason), min_overlap=MIN_OVERLAP).summarize(
            list(messages), cap)
    except SummarizationFailed as exc:
        return exc.reason
    return None


def _refusal_as_judge(reply, finish_reason, messages, cap):
    refused = refusal(reply, finish_reason, messages, cap, min_overlap=MIN_OVERLAP)
    return None if refused is None else refused[0]


# The contract lives in the package (memorykit.classroom.contracts.llm) so that lesson 11's
# build-it-yourself exercise runs exactly these checks over a student's judge of replies.
@pytest.mark.parametrize("contract", REPLY_CONTRACTS, ids=lambda c: c.name[:40])
@pytest.mark.parametrize("judge", [_refusal_as_judge, _summarizer_as_judge],
                         ids=["refusal", "OpenAISummarizer"])
def test_the_library_keeps_the_reply_contract(judge, contract):
    contract(judge)


def test_the_summarizer_refuses_what_refusal_refuses():
    agrees_with(_refusal_as_judge, "refusal")(_summarizer_as_judge)


def test_refusals_say_why(messages):
    with pytest.raises(SummarizationFailed, match="more than the limit 5"):
        OpenAISummarizer(_Stub("one two three four five six seven eight")).summarize(messages, 5)
    with pytest.raises(SummarizationFailed, match="cut off"):
        OpenAISummarizer(_Stub("ok", finish="length")).summarize(messages, 50)
    with pytest.raises(SummarizationFailed, match="empty"):
        OpenAISummarizer(_Stub("   ")).summarize(messages, 50)
    with pytest.raises(SummarizationFailed, match="expected str"):
        OpenAISummarizer(_Stub(None)).summarize(messages, 50)
    with pytest.raises(ValueError, match="cap must be >= 1, got 0"):
        refusal("ok", "stop", messages, 0)
    with pytest.raises(TypeError, match="messages must be a sequence of Message"):
        refusal("ok", "stop", "hello", 5)


def test_a_summary_buffer_evicts_instead_when_the_llm_fails(server):
    summary_buffer = pytest.importorskip("memorykit.buffers.summary_buffer")
    server.chat = ScriptedChatModel(default="A short summary.")
    s = OpenAISummarizer(OpenAIChatModel("m", server.client(timeout=0.2, max_retries=0)))
    buf = summary_buffer.SummaryBuffer(budget=200, min_recent=1, summarizer=s)
    f = MessageFactory(clock=StepClock())
    added = []
    server.default = Behaviour.error(500)
    for i in range(40):
        m = f.user(f"Fact number {i}: the locker code is {1000 + i}.")
        added.append(m)
        buf.add(m)  # never raises after admitting the message
        assert buf.tokens <= 200
        if buf.summarizer_failures:
            break
    assert isinstance(buf.last_summarizer_error, SummarizationFailed), "no summary was asked for"
    kept = [m.id for m in buf.messages()]
    evicted = [mid for e in buf.trace.evictions() for mid in e.message_ids]
    assert sorted(kept + evicted) == sorted(m.id for m in added)  # nothing lost
    assert buf.summaries() == []
    assert all("the summarizer failed (SummarizationFailed" in e.reason
               for e in buf.trace.evictions())
    assert "127.0.0.1" not in " ".join(e.reason for e in buf.trace.evictions())