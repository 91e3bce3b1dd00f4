"""Seed 004's memory search as a tool: the schema the model reads, the answer it gets back."""

from __future__ import annotations

import json

import pydantic
import pytest
from openai.types.chat import ChatCompletionToolParam

from memorykit.buffers import BufferWindow
from memorykit.longterm.service import LongTermSettings, MemoryService
from memorykit.longterm.search_tool import answer_memory_search, memory_search_tool
from memorykit.messages import MessageFactory, ToolCall, validate_wire
from wire import check_openai_types

_TOOL = pydantic.TypeAdapter(ChatCompletionToolParam)


def _session(auto_recall=False):
    """A session whose working memory (a window of 2: the system prompt and the last reply) has
    let the locker code go."""
    f = MessageFactory()
    svc = MemoryService(lambda: BufferWindow(2), LongTermSettings(auto_recall=auto_recall))
    history = [f.system("You are a gym assistant."), f.user("My locker code is 4721."),
               f.assistant("Noted."), f.user("I ran 5 km today."), f.assistant("Well done.")]
    for m in history:
        svc.add("alice", m)
    return f, svc


def _call(**arguments):
    return ToolCall("call_1", "search", json.dumps(arguments))


def test_the_schema_is_an_openai_function_tool_with_a_json_schema():
    tool = memory_search_tool()
    _TOOL.validate_python(tool)  # the openai package's own request type
    fn = tool["function"]
    assert tool["type"] == "function" and fn["name"] == "search" and fn["description"]
    params = fn["parameters"]
    assert params["type"] == "object" and params["required"] == ["query", "type"]
    assert params["properties"]["query"]["type"] == "string"
    assert params["properties"]["type"]["enum"] == ["memory"]
    assert params["additionalProperties"] is False
    assert memory_search_tool() is not memory_search_tool()  # a caller may edit its copy
    with pytest.raises(ValueError, match="description"):
        memory_search_tool("  ")


def test_the_answer_recalls_from_long_term_memory_what_working_memory_dropped():
    f, svc = _session()
    assert not any("4721" in m.content for m in svc.session("alice").working)
    result = answer_memory_search(svc, "alice", _call(query="locker code", type="memory"), f)
    assert result.role == "tool" and result.tool_call_id == "call_1"
    answer = json.loads(result.content)
    assert answer["type"] == "memory" and answer["query"] == "locker code"
    top = answer["results"][0]
    assert top["text"] == "My locker code is 4721." and top["role"] == "user"
    assert top["score"] == round(svc.recall("alice", "locker code")[0].score, 3) > 0
    # 5 stored; the 2 still verbatim in working memory are not offered again
    assert [r["text"] for r in answer["results"]][1:] == ["Noted.", "I ran 5 km today."]
    assert len(json.loads(answer_memory_search(
        svc, "alice", _call(query="locker code", type="memory"), f, limit=1).content)["results"]) == 1


def test_the_call_and_its_answer_are_a_valid_request():
    f, svc = _session()
    call = f.assistant("", tool_calls=(_call(query="locker code", type="memory"),))
    result = answer_memory_search(svc, "alice", call.tool_calls[0], f)
    for m in (call, result):
        svc.add("alice", m)
    wire = svc.session("alice").working.to_openai()
    assert [m["role"] for m in wire] == ["system", "assistant", "tool"]
    validate_wire(wire)
    check_openai_types(wire)
    assert wire[1]["tool_calls"][0]["function"]["name"] == "search"


@pytest.mark.parametrize("arguments, error", [
    ({"type": "memory"}, "'query' must be non-empty text"),
    ({"query": "  ", "type": "memory"}, "'query' must be non-empty text"),
    ({"query": "code", "type": "web"}, "'type' must be one of ['memory'], got 'web'"),
    ({"query": "code", "type": "memory", "k": 3}, "unknown argument(s) ['k']"),
])
def test_a_call_the_model_got_wrong_is_answered_with_the_error(arguments, error):
    f, svc = _session()
    answer = json.loads(answer_memory_search(svc, "alice", _call(**arguments), f).content)
    assert error in answer["error"] and answer["results"] == []


def test_a_failed_recall_is_answered_not_raised():
    f, svc = _session()

    def down(*args, **kwargs):
        raise ConnectionError("store unreachable")

    svc.store.search = down  # type: ignore[method-assign]
    answer = json.loads(answer_memory_search(svc, "alice", _call(query="code", type="memory"), f).content)
    assert answer["error"].startswith("long-term memory is unavailable (ConnectionError)")
    assert "unreachable" not in answer["error"]  # an error's text is not passed on


def test_misrouted_calls_and_bad_arguments_raise_naming_the_value():
    f, svc = _session()
    with pytest.raises(ValueError, match="'weather'"):
        answer_memory_search(svc, "alice", ToolCall("c", "weather", "{}"), f)
    with pytest.raises(ValueError, match="limit must be >= 1, got 0"):
        answer_memory_search(svc, "alice", _call(query="x", type="memory"), f, limit=0)
    with pytest.raises(TypeError, match="call must be a ToolCall"):
        answer_memory_search(svc, "alice", {"id": "c"}, f)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="service must be a MemoryService"):
        answer_memory_search(None, "alice", _call(query="x"), f)  # type: ignore[arg-type]
