"""Calibration of memorykit's billed count against a provider's usage.prompt_tokens."""

from __future__ import annotations

import json

import pytest

from memorykit.llm.calibration import calibrate, calibration_requests
from memorykit.llm.chat import OpenAIChatModel, ScriptedChatModel
from memorykit.classroom.doubles.openai_server import FakeOpenAIServer, billed_prompt_tokens
from memorykit.messages import MessageFactory, ToolCall
from memorykit.tokens import ChatFormat, Tokenizer, count_chat_tokens

TOK = Tokenizer()


def _conversation():
    f = MessageFactory()
    call = ToolCall("call_1", "get_weather", '{"city": "Paris"}')
    return [f.system("Be brief."), f.user("Weather in Paris?"), f.assistant("", tool_calls=(call,)),
            f.tool('{"temp": 18}', call_id="call_1"), f.assistant("18 C in Paris."),
            f.user("Thanks!"), f.assistant("You are welcome.")]


def test_the_loopback_bills_openais_recipe_by_hand():
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"}]
    by_hand = 3 + (3 + TOK.count("system") + TOK.count("Be brief.")) + (3 + 1 + TOK.count("hi"))
    assert billed_prompt_tokens(messages, TOK.encode) == by_hand
    # memorykit's ChatFormat follows the same recipe for plain messages
    assert count_chat_tokens(messages, TOK) == by_hand


def test_a_tool_call_is_billed_differently_and_the_fit_finds_how_much():
    requests = calibration_requests(_conversation(), every=1)
    assert [len(r) for r in requests] == [1, 2, 4, 5, 6, 7]  # never between a call and its result
    with FakeOpenAIServer() as server:
        cal = calibrate(OpenAIChatModel("loopback", server.client(timeout=5.0, max_retries=0)),
                        requests)
    plain = [r for r in cal.table() if r["tool calls"] == 0]
    assert plain and all(r["offset"] == 0 for r in plain)
    # by hand for the call: the server bills the JSON of the function and the result's
    # tool_call_id; memorykit bills ChatFormat's 3 + the name + the arguments
    function = {"name": "get_weather", "arguments": '{"city": "Paris"}'}
    server_side = len(TOK.encode(json.dumps([function]))) + TOK.count("call_1")
    memorykit_side = ChatFormat().tool_call_tokens(TOK, "get_weather", '{"city": "Paris"}')
    assert cal.per_tool_call == pytest.approx(server_side - memorykit_side)
    assert cal.per_request == pytest.approx(0.0, abs=1e-6)
    assert cal.per_message == pytest.approx(0.0, abs=1e-6)
    assert not cal.exact
    last = cal.rows[-1]
    assert cal.corrected(last.memorykit_tokens, last.messages, last.tool_calls) == pytest.approx(
        last.provider_tokens)


def test_calibrate_refuses_what_it_cannot_measure():
    requests = calibration_requests(_conversation(), every=1)
    with pytest.raises(TypeError, match="chat model that reports usage"):
        calibrate(ScriptedChatModel(), requests)
    with FakeOpenAIServer() as server:
        model = OpenAIChatModel("loopback", server.client(timeout=5.0, max_retries=0))
        with pytest.raises(ValueError, match="at least two lengths"):
            calibrate(model, [requests[0], requests[0]])
        orphan = [{"role": "user", "content": "x"}, {"role": "tool", "content": "{}",
                                                      "tool_call_id": "call_9"}]
        with pytest.raises(ValueError, match=r"requests\[1\] is not a valid chat request"):
            calibrate(model, [requests[0], orphan])
    with pytest.raises(ValueError, match="every must be <= 7, got 8"):
        calibration_requests(_conversation(), every=8)
