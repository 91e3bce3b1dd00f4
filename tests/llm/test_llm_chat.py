"""OpenAIChatModel against the loopback server with the real openai client; ScriptedChatModel."""

from __future__ import annotations

import pytest

from memorykit.llm.chat import ChatModel, OpenAIChatModel, ScriptedChatModel, ScriptRule
from memorykit.llm.client import LLMCallFailed
from memorykit.classroom.doubles.openai_server import Behaviour
from memorykit.tokens import Tokenizer

HELLO = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hello there"}]


def test_complete_sends_what_it_should_and_returns_the_reply(server):
    model = OpenAIChatModel("memorykit-fake-chat", server.client())
    assert isinstance(model, ChatModel) and not model.is_scripted
    assert model.complete(HELLO, max_tokens=50) == "Scripted reply to: hello there"
    (req,) = server.requests
    assert req.body["model"] == "memorykit-fake-chat"
    assert req.body["messages"] == HELLO
    assert req.body["temperature"] == 0
    assert req.body["max_tokens"] == 50
    tok = Tokenizer()
    # the loopback bills OpenAI's recipe: 3 per message + role + content, and 3 for the primer
    assert model.last_usage.prompt_tokens == (3 + (3 + tok.count("system") + tok.count("Be brief."))
                                              + (3 + tok.count("user") + tok.count("hello there")))
    assert model.last_usage.completion_tokens == tok.count("Scripted reply to: hello there")
    assert model.last_finish_reason == "stop" and model.calls == 1


def test_reply_cut_at_max_tokens_reports_length(server):
    model = OpenAIChatModel("m", server.client())
    tok = Tokenizer()
    cut = tok.decode(tok.encode("Scripted reply to: hello there")[:2])
    assert model.complete(HELLO, max_tokens=2) == cut
    assert model.last_finish_reason == "length" and model.last_usage.completion_tokens == 2


def test_max_completion_tokens_parameter(server):
    model = OpenAIChatModel("m", server.client(), token_limit_param="max_completion_tokens")
    model.complete(HELLO, max_tokens=7)
    body = server.requests[0].body
    assert body["max_completion_tokens"] == 7 and "max_tokens" not in body


def test_streaming_yields_the_reply_in_pieces(server):
    model = OpenAIChatModel("m", server.client())
    pieces = list(model.stream(HELLO))
    assert len(pieces) > 1
    assert "".join(pieces) == "Scripted reply to: hello there"
    assert server.requests[0].body["stream"] is True
    assert model.last_finish_reason == "stop"


def test_a_stream_cut_off_mid_reply_is_not_taken_for_a_whole_reply(server):
    model = OpenAIChatModel("m", server.client(max_retries=0))
    assert model.complete(HELLO) and model.last_finish_reason == "stop"
    server.behave(Behaviour.cut())
    got = []
    with pytest.raises(LLMCallFailed, match="stream ended before the reply did") as info:
        for piece in model.stream(HELLO):
            got.append(piece)
    assert info.value.kind == "cut off"
    assert got and "".join(got) != "Scripted reply to: hello there"  # only part of it came
    assert model.last_finish_reason is None and model.last_usage is None  # not the last call's


def test_the_model_timeout_applies_and_raises_a_clear_error(server):
    # The server answers after 2 s, well inside the client's own 5 s timeout: only the
    # model's 0.2 s timeout can turn this call into a failure.
    server.behave(Behaviour.slow(2.0))
    model = OpenAIChatModel("m", server.client(), timeout=0.2, max_retries=0)
    with pytest.raises(LLMCallFailed, match="timeout") as info:
        model.complete(HELLO)
    assert info.value.kind == "timeout"
    assert type(info.value.cause).__name__ == "APITimeoutError"
    assert len(server.requests) == 1


@pytest.mark.parametrize("status", [500, 429, 400])
def test_http_errors(server, status):
    server.behave(Behaviour.error(status, "simulated failure"))
    model = OpenAIChatModel("m", server.client(max_retries=0))
    with pytest.raises(LLMCallFailed, match=f"http {status}") as info:
        model.complete(HELLO)
    assert info.value.kind == f"http {status}"
    assert getattr(info.value.cause, "status_code", None) == status


@pytest.mark.parametrize("retries", [0, 1, 3])
def test_retries_are_counted(server, retries):
    server.default = Behaviour.error(500)
    model = OpenAIChatModel("m", server.client(), max_retries=retries)
    with pytest.raises(LLMCallFailed):
        model.complete(HELLO)
    assert len(server.requests_to("/chat/completions")) == retries + 1
    assert model.calls == 1


def test_retry_then_success(server):
    server.behave(Behaviour.error(429), Behaviour.error(500))
    model = OpenAIChatModel("m", server.client(), max_retries=2)
    assert model.complete(HELLO) == "Scripted reply to: hello there"
    assert [r.behaviour for r in server.requests] == ["error", "error", "normal"]


def test_timeouts_are_retried_too(server):
    server.behave(Behaviour.slow(2.0))
    model = OpenAIChatModel("m", server.client(), timeout=0.2, max_retries=1)
    assert model.complete(HELLO) == "Scripted reply to: hello there"
    assert len(server.requests) == 2


@pytest.mark.parametrize(
    ("behaviour", "kind"),
    [
        (Behaviour.malformed(), "malformed reply"),
        (Behaviour.empty_choices(), "empty reply"),
        (Behaviour.empty_content(), "empty reply"),
    ],
)
def test_bad_replies(server, behaviour, kind):
    server.behave(behaviour)
    model = OpenAIChatModel("m", server.client())
    with pytest.raises(LLMCallFailed) as info:
        model.complete(HELLO)
    assert info.value.kind == kind


def test_connection_refused_is_a_connection_error(server):
    from memorykit.llm.client import make_client

    client = make_client(base_url="http://127.0.0.1:9/v1", api_key="sk-x", timeout=1, max_retries=0)
    with pytest.raises(LLMCallFailed) as info:
        OpenAIChatModel("m", client).complete(HELLO)
    assert info.value.kind == "connection"


def test_invalid_messages_fail_before_any_request(server):
    model = OpenAIChatModel("m", server.client())
    with pytest.raises(ValueError, match="messages must not be empty"):
        model.complete([])
    with pytest.raises(ValueError, match="role"):
        model.complete([{"role": "robot", "content": "x"}])
    with pytest.raises(TypeError, match="content"):
        model.complete([{"role": "user", "content": None}])
    with pytest.raises(ValueError, match="max_tokens"):
        model.complete(HELLO, max_tokens=0)
    assert server.requests == []


CALL = {"role": "assistant", "content": "",
        "tool_calls": [{"id": "call_1", "type": "function",
                        "function": {"name": "get_page", "arguments": '{"id": 42}'}}]}
RESULT = {"role": "tool", "content": "Pricing", "tool_call_id": "call_1"}


@pytest.mark.parametrize("messages, error", [
    # a result with no call before it: the chat API answers 400
    ([HELLO[1], RESULT], "messages\\[1\\] is a tool result for call 'call_1' that has no call"),
    # a call whose result never comes
    ([HELLO[1], CALL], "messages\\[1\\] issues tool call 'call_1' with no result"),
    # a message between the call and its result
    ([HELLO[1], CALL, HELLO[1], RESULT], "messages\\[1\\] issues tool call 'call_1' with no result"),
    # recalled items before the instructions
    ([HELLO[1], HELLO[0]], "messages\\[1\\] is a system message but messages\\[0\\] has role 'user'"),
    ([{"role": "developer", "content": "x"}], "messages\\[0\\] has role 'developer'"),
])
def test_requests_the_api_would_reject_fail_before_the_network(server, messages, error):
    model = OpenAIChatModel("m", server.client())
    with pytest.raises(ValueError, match=error):
        model.complete(messages)
    with pytest.raises(ValueError, match=error):
        ScriptedChatModel().complete(messages)
    assert server.requests == []


def test_a_tool_call_and_its_result_reach_the_endpoint_whole(server):
    from memorykit.messages import MessageFactory, ToolCall

    factory = MessageFactory()
    history = [factory.system("Be brief."), factory.user("Title of page 42?"),
               factory.assistant("", tool_calls=(ToolCall("call_1", "get_page", '{"id": 42}'),)),
               factory.tool("Pricing", call_id="call_1")]
    sent = [m.to_openai() for m in history]
    OpenAIChatModel("m", server.client()).complete(sent)
    (req,) = server.requests
    assert req.body["messages"] == sent
    assert req.body["messages"][2]["tool_calls"][0]["function"] == {"name": "get_page",
                                                                     "arguments": '{"id": 42}'}
    assert req.body["messages"][3]["tool_call_id"] == "call_1"


# ---------------------------------------------------------------------------- scripted


def test_scripted_model_says_what_it_is():
    model = ScriptedChatModel()
    assert model.is_scripted is True
    assert "scripted" in model.name and "not an LLM" in model.name
    assert isinstance(model, ChatModel)


def test_scripted_model_script_then_rules_then_default():
    model = ScriptedChatModel(
        ["first", "second"],
        rules=[(r"code is (\w+)", "Noted: {0}."), ScriptRule(r"^json", '{"rules": []}')],
        default="I have no rule for: {last} (call {n})",
    )
    ask = lambda text: model.complete([{"role": "user", "content": text}])  # noqa: E731
    assert ask("a") == "first"
    assert ask("b") == "second"
    assert ask("The code is BLUE_99") == "Noted: BLUE_99."
    assert ask("json please") == '{"rules": []}'  # braces left alone
    assert ask("what?") == "I have no rule for: what? (call 5)"
    assert model.calls == 5 and model.history[0] == [{"role": "user", "content": "a"}]
    model.reset()
    assert ask("x") == "first"


def test_scripted_model_is_deterministic_and_respects_max_tokens():
    a, b = ScriptedChatModel(default="one two three four five six"), ScriptedChatModel(
        default="one two three four five six")
    msgs = [{"role": "user", "content": "q"}]
    assert a.complete(msgs, max_tokens=3) == b.complete(msgs, max_tokens=3) == "one two three"


def test_scripted_model_with_a_function_reply():
    model = ScriptedChatModel(default=lambda msgs: f"{len(msgs)} messages")
    assert model.complete(HELLO) == "2 messages"


def test_server_can_serve_a_scripted_model(server):
    server.chat = ScriptedChatModel(rules=[(r"capital of (\w+)", "I was told: {0}")])
    model = OpenAIChatModel("m", server.client())
    reply = model.complete([{"role": "user", "content": "capital of France?"}])
    assert reply == "I was told: France"
