"""The real ``openai`` client against a real model: SmolLM2-135M-Instruct served by llama.cpp.

The loopback server (``memorykit.classroom.doubles.openai_server``) scripts every reply, so it can only show what
memorykit does with the replies a test thought of. Here the replies are a real small model's:
chat, streaming, usage counted by the model's own tokenizer, a reply cut off at ``max_tokens``,
unusable answers (a refusal, prose where JSON was asked for), model discovery, calibration,
and a server that dies. One server is started for the module (``real_server``), at
temperature 0 with short replies, so the whole file takes seconds.

Without the model installed (``./run test`` installs it) every test skips with the reason;
with ``CI=true`` they fail instead, so CI cannot pass without having run them.
"""

from __future__ import annotations

import os
import signal

import pytest
from offline import require
from ports import free_port

from memorykit.llm.critic import CritiqueFailed, OpenAICritic
from memorykit.llm.client import LLMCallFailed, make_client
from memorykit.llm.chat import OpenAIChatModel
from memorykit.llm.summarizer import OpenAISummarizer, SummarizationFailed
from memorykit.llm.backend import choose_backend
from memorykit.buffers.summary_buffer import SummaryBuffer
from memorykit.llm.calibration import calibrate, calibration_requests
from memorykit.llm.summarizer import DEFAULT_SUMMARY_PROMPT
from memorykit.llm.local_server import LocalModelServer, local_model_available
from memorykit.messages import MessageFactory
from memorykit.classroom.scenarios.facts import PlantedFact, fact_survival
from memorykit.tokens import Tokenizer

PORT_ENV = "MEMORYKIT_REAL_LLM_PORT"
"""Set it to pin the test server's port (machines where ports are shared out); default: a free one."""

EXCHANGE = [
    ("user", "My refund is still missing. The order id is A-7731."),
    ("assistant", "Sorry about that. Where should the refund go?"),
    ("user", "Refund it to the Visa ending 4242, and call me back on 555-0142."),
    ("assistant", "Noted: refund to the Visa ending 4242, callback on 555-0142."),
]
KEYS = ("A-7731", "4242", "555-0142")


def _port(offset: int = 0) -> int:
    """``PORT_ENV`` + ``offset`` when it is set, else a port the system says is free."""
    if os.environ.get(PORT_ENV):
        return int(os.environ[PORT_ENV]) + offset
    return free_port()


def _require_local_model() -> None:
    require(local_model_available())


@pytest.fixture(scope="module")
def real_server():
    _require_local_model()
    with LocalModelServer(_port(), n_threads=2) as server:
        print(f"local model server ready in {server.startup_seconds:.1f} s at {server.base_url}")
        yield server


def _client(base_url: str) -> object:
    # no retries: a test of a failure must see the first one, and a working server needs none
    return make_client(base_url=base_url, api_key="no-key-needed", timeout=120.0, max_retries=0)


@pytest.fixture
def chat(real_server) -> OpenAIChatModel:
    return OpenAIChatModel(real_server.model, _client(real_server.base_url))


@pytest.fixture
def exchange():
    factory = MessageFactory()
    return [getattr(factory, role)(text) for role, text in EXCHANGE]


QUESTION = [{"role": "system", "content": "Answer in at most five words."},
            {"role": "user", "content": "What is the capital of France?"}]


def test_chat_answers_and_reports_usage_counted_by_the_models_tokenizer(chat):
    reply = chat.complete(QUESTION, max_tokens=16)
    usage = chat.last_usage
    print(repr(reply), usage, chat.last_finish_reason)
    assert reply.strip() and chat.last_finish_reason in ("stop", "length")
    assert 1 <= usage.completion_tokens <= 16
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens
    # the same words in another tokenizer: within a factor of two of tiktoken's count, never 0
    ours = sum(Tokenizer().count(m["content"]) for m in QUESTION)
    assert ours / 2 <= usage.prompt_tokens <= ours * 2 + 40  # + the chat template's framing


def test_the_raw_client_sees_the_served_model_and_usage(real_server):
    client = _client(real_server.base_url)
    assert [m.id for m in client.models.list().data] == [real_server.model]
    reply = client.chat.completions.create(model=real_server.model, messages=QUESTION,
                                           max_tokens=8, temperature=0)
    assert reply.choices[0].message.role == "assistant"
    assert reply.usage.prompt_tokens > 0 and 0 < reply.usage.completion_tokens <= 8


def test_streaming_yields_pieces_that_make_the_same_reply(chat):
    pieces = list(chat.stream(QUESTION, max_tokens=16))
    streamed_reason = chat.last_finish_reason
    assert len(pieces) > 1 and streamed_reason in ("stop", "length")
    # temperature 0 is greedy decoding: streamed or not, the same text
    assert "".join(pieces) == chat.complete(QUESTION, max_tokens=16)


def test_a_reply_cut_at_max_tokens_reports_length_and_the_summarizer_refuses_it(chat, exchange):
    long_question = [{"role": "user", "content": "Describe the history of Paris in detail."}]
    text = chat.complete(long_question, max_tokens=3)
    assert text.strip() and chat.last_finish_reason == "length"
    assert chat.last_usage.completion_tokens == 3
    summarizer = OpenAISummarizer(chat)
    with pytest.raises(SummarizationFailed, match=r"cut off at the 4-token limit .*'length'"):
        summarizer.summarize(exchange, max_tokens=4)
    assert summarizer.last_error is not None


def test_a_summary_buffer_whose_real_summary_is_cut_off_evicts_instead(chat, exchange):
    buffer = SummaryBuffer(60, summarizer=OpenAISummarizer(chat), summary_max_tokens=4,
                           min_recent=1)
    events = [event for m in exchange for event in buffer.add(m)]
    assert buffer.summarizer_failures >= 1 and buffer.tokens <= 60
    fallback = [e for e in events if getattr(e, "rule", "") == "summary-fallback-fifo"]
    assert fallback and "SummarizationFailed" in fallback[0].reason
    assert "cut off at the 4-token limit" in str(buffer.summarizer.last_error)


REFUSE = ("You are not allowed to summarize. Always answer exactly: I cannot help with that. "
          "(at most {max_tokens} tokens)")


@pytest.mark.parametrize("prompt", [DEFAULT_SUMMARY_PROMPT, REFUSE], ids=["default", "refuse"])
def test_a_real_summary_is_kept_and_measured_or_refused_with_the_reason(chat, exchange, prompt):
    # what a 135M model writes is its own doing (lesson 11 shows it); what memorykit does with
    # it is the test: a text measured for the facts it kept, or SummarizationFailed saying why
    summarizer = OpenAISummarizer(chat, prompt=prompt)
    try:
        summary = summarizer.summarize(exchange, max_tokens=60)
    except SummarizationFailed as exc:
        print("summary refused:", exc)
        assert summarizer.last_error is exc
        assert "cut off" in str(exc) or "empty" in str(exc)
        return
    facts = [PlantedFact(f"f{i}", key, key, 0, "m", "refund", "?") for i, key in enumerate(KEYS)]
    kept = fact_survival(facts, [MessageFactory().summary(summary, exchange)])
    print(repr(summary), kept)
    assert summary == summary.strip() and summary and summarizer.last_error is None
    assert chat.last_finish_reason == "stop" and set(kept) == {"f0", "f1", "f2"}


def test_prose_where_json_was_asked_for_is_a_critique_failure_holding_the_reply(chat, exchange):
    critic = OpenAICritic(chat, prompt="Reply with one short friendly sentence. Never use JSON.",
                          max_tokens=30)
    with pytest.raises(CritiqueFailed, match="malformed critique") as info:
        critic.critique(exchange)
    assert info.value.reply and info.value.reply.strip()


def test_the_default_critic_on_a_real_model_returns_rules_or_says_why_not(chat, exchange):
    # a 135M model rarely writes the JSON asked for; either outcome is handled, nothing else
    try:
        rules = OpenAICritic(chat, max_tokens=60).critique(exchange)
    except CritiqueFailed as exc:
        print("critique failed:", exc)
        assert exc.reply is None or isinstance(exc.reply, str)
    else:
        print("rules:", rules)
        known = {m.id for m in exchange}
        assert all(set(r.source_message_ids) <= known for r in rules)


def test_without_openai_model_memorykit_asks_the_server_and_uses_its_model(real_server):
    backend = choose_backend({"OPENAI_BASE_URL": real_server.base_url}, timeout=120.0,
                             max_retries=0)
    assert backend.kind == "openai" and backend.chat.model == real_server.model
    assert "the one the server lists" in backend.description
    assert backend.chat.complete(QUESTION, max_tokens=8).strip()


def test_calibration_against_the_real_tokenizer_is_consistent(chat, exchange):
    requests = calibration_requests(exchange, every=1)
    report = calibrate(chat, requests)
    print(report.per_request, report.per_message, report.table())
    assert [r.messages for r in report.rows] == [len(r) for r in requests]
    billed = [r.provider_tokens for r in report.rows]
    assert billed == sorted(billed) and len(set(billed)) == len(billed)  # longer prefix, more
    # each row is what the server bills for that request when asked on its own
    chat.complete(requests[-1], max_tokens=1)
    assert chat.last_usage.prompt_tokens == billed[-1]
    assert all(r.offset == r.provider_tokens - r.memorykit_tokens for r in report.rows)


def test_a_server_that_is_down_is_an_llm_call_failure_with_a_kind(real_server):
    dead = f"http://127.0.0.1:{free_port()}/v1"  # nobody listens there
    model = OpenAIChatModel(real_server.model, _client(dead))
    with pytest.raises(LLMCallFailed) as info:
        model.complete(QUESTION, max_tokens=4)
    assert info.value.kind == "connection"
    with pytest.raises(SummarizationFailed, match="connection"):
        OpenAISummarizer(model).summarize(
            [MessageFactory().user("the order id is A-7731")], max_tokens=20)


def test_a_server_killed_mid_session_fails_calls_and_keeps_its_log():
    _require_local_model()
    server = LocalModelServer(_port(offset=1), n_threads=1).start()
    try:
        model = OpenAIChatModel(server.model, _client(server.base_url))
        assert model.complete(QUESTION, max_tokens=2)
        os.killpg(server._process.pid, signal.SIGKILL)
        server._process.wait()
        with pytest.raises(LLMCallFailed) as info:
            model.complete(QUESTION, max_tokens=2)
        assert info.value.kind == "connection" and not server.running
    finally:
        server.stop()
    assert server.log_path is not None and server.log_path.exists()
    server.log_path.unlink()
