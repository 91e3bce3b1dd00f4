"""What reaches the model: tool calls on the wire, their billing, and the history validator."""

from __future__ import annotations

import json

import pytest

from memorykit.buffers import AttentionWindow, FIFOBuffer
from memorykit.context import Context, ContextItem
from memorykit.entities.hybrid import EntitySummaryMemory
from memorykit.entities.memory import EntityMemory
from memorykit.messages import MessageFactory, ToolCall, validate_wire
from memorykit.classroom.scenarios.conversation import load_conversation, save_conversation, simulate_conversation
from memorykit.tokens import ChatFormat, Tokenizer, count_chat_tokens

from wire import check_openai_types

WEATHER = ToolCall("call_1", "get_weather", '{"city": "Paris"}')


def weather_exchange(f: MessageFactory):
    return [f.system("You plan trips."), f.user("Weather in Paris?"),
            f.assistant("Checking the forecast.", tool_calls=(WEATHER,)),
            f.tool("Sunny, 24 C.", call_id="call_1"), f.assistant("Sunny, 24 C.")]


def test_a_buffer_window_holding_a_call_and_its_result_is_a_valid_request():
    buffer = FIFOBuffer(max_tokens=1000)
    buffer.extend(weather_exchange(MessageFactory()))
    request = buffer.to_openai()
    assert request[2:4] == [
        {"role": "assistant", "content": "Checking the forecast.",
         "tool_calls": [{"id": "call_1", "type": "function",
                         "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}]},
        {"role": "tool", "content": "Sunny, 24 C.", "tool_call_id": "call_1"},
    ]
    validate_wire(request)
    check_openai_types(request)


def test_a_call_bills_its_name_and_arguments():
    f = MessageFactory()
    call = f.assistant("Checking the forecast.", tool_calls=(WEATHER,))
    # content 4 + framing 3 + role 1, then the call: framing 3 + "get_weather" 2 + arguments 6
    assert (call.content_tokens, call.billed_tokens) == (4, 4 + 3 + 1 + 3 + 2 + 6)
    # one count for the stored record and for the request it becomes (plus the reply primer)
    request = [m.to_openai() for m in weather_exchange(f)]
    assert count_chat_tokens(request, Tokenizer()) == \
        sum(m.billed_tokens for m in weather_exchange(MessageFactory())) + 3
    free = MessageFactory(chat_format=ChatFormat(tokens_per_tool_call=0))
    assert free.assistant("Checking the forecast.", tool_calls=(WEATHER,)).billed_tokens == 16


def test_attention_window_and_entity_summary_send_valid_requests():
    conv = simulate_conversation(40, seed=3, tool_call_rate=0.5)
    assert sum(1 for m in conv.messages if m.tool_calls) >= 3
    buffer = FIFOBuffer(max_tokens=1500)
    buffer.extend(conv.messages)
    for query in ("flight", "weather", "tests", "budget"):
        request = AttentionWindow(buffer, window_tokens=600).to_openai(query)
        validate_wire(request)
        check_openai_types(request)
    hybrid = EntitySummaryMemory(EntityMemory(5), buffer)
    request = hybrid.to_openai()
    assert any(m.get("tool_calls") for m in request)
    validate_wire(request)
    check_openai_types(request)


def test_a_saved_conversation_keeps_its_calls(tmp_path):
    conv = simulate_conversation(30, seed=3, tool_call_rate=0.5)
    save_conversation(conv, tmp_path / "c.jsonl")
    again = load_conversation(tmp_path / "c.jsonl")
    calls = [m.tool_calls for m in again.messages if m.tool_calls]
    assert calls and calls == [m.tool_calls for m in conv.messages if m.tool_calls]
    assert all(json.loads(c.arguments)["query"] for cs in calls for c in cs)


CALL = {"role": "assistant", "content": "", "tool_calls": [WEATHER.to_openai()]}
RESULT = {"role": "tool", "content": "Sunny", "tool_call_id": "call_1"}
SYSTEM = {"role": "system", "content": "You plan trips."}
USER = {"role": "user", "content": "Weather?"}


@pytest.mark.parametrize("messages, text", [
    ([USER, SYSTEM], r"messages\[1\] is a system message but messages\[0\] has role 'user'"),
    ([SYSTEM, RESULT], r"messages\[1\] is a tool result for call 'call_1' that has no call issued"),
    ([SYSTEM, CALL], r"messages\[1\] issues tool call 'call_1' with no result: the request ends"),
    ([SYSTEM, CALL, USER, RESULT],
     r"messages\[1\] issues tool call 'call_1' with no result: messages\[2\] \(role 'user'\)"),
    ([CALL, RESULT, RESULT], r"messages\[2\] is a tool result for call 'call_1' that answers it a second"),
    ([CALL, RESULT, CALL, RESULT], r"messages\[2\] issues tool call id 'call_1' a second time"),
    ([{"role": "bot", "content": "hi"}], r"messages\[0\] has role 'bot'"),
    ([{**USER, "tool_calls": [WEATHER.to_openai()]}], r"messages\[0\] \(role 'user'\) issues tool calls"),
])
def test_an_invalid_history_is_refused_naming_index_and_id(messages, text):
    with pytest.raises(ValueError, match=text):
        validate_wire(messages)


def test_valid_histories_pass():
    two = {"role": "assistant", "content": "",
           "tool_calls": [WEATHER.to_openai(), ToolCall("call_2", "get_time").to_openai()]}
    validate_wire([SYSTEM, USER, two, {**RESULT, "tool_call_id": "call_2"}, RESULT, USER])
    validate_wire([USER, SYSTEM], system_first=False)  # a system message later in a chat
    validate_wire([])
    with pytest.raises(TypeError, match=r"messages\[0\]\['content'\] must be a str, got None"):
        validate_wire([{"role": "user", "content": None}])
    with pytest.raises(TypeError, match="messages must be a list of dicts, got str"):
        validate_wire("hello")


@pytest.mark.parametrize("args, error, text", [
    (("", "f"), ValueError, "tool call id must be a non-empty str, got ''"),
    (("c1", "get weather"), ValueError, "name must be 1-64 letters, digits, _ or -, got 'get weather'"),
    (("c1", "f", "{city: Paris}"), ValueError, "arguments must be a JSON object, got '{city: Paris}'"),
    (("c1", "f", "[1]"), ValueError, r"arguments must be a JSON object, got '\[1\]'"),
    (("c1", "f", {"city": "Paris"}), TypeError, "arguments must be JSON text"),
])
def test_a_bad_tool_call_is_refused_naming_the_value(args, error, text):
    with pytest.raises(error, match=text):
        ToolCall(*args)


def test_a_context_sends_whole_pairs_as_calls_and_halves_as_text():
    f = MessageFactory()
    system, user, call, result, answer = weather_exchange(f)
    items = [ContextItem.from_message(m) for m in (system, user, call, result, answer)]
    whole = Context(tuple(items), 1000, "test").to_openai()
    assert whole[2]["tool_calls"][0]["id"] == "call_1" and whole[3]["tool_call_id"] == "call_1"
    # a policy that recalled only the result (or only the call) sends it as plain text
    for kept in ([items[0], items[3]], [items[0], items[2], items[4]]):
        request = Context(tuple(kept), 1000, "test").to_openai()
        assert not any("tool_calls" in m or m["role"] == "tool" for m in request)
        validate_wire(request)
        check_openai_types(request)
