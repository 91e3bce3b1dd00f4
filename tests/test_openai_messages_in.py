"""OpenAI chat messages in, as the ``openai`` client returns them or a log stores them
(``MessageFactory.from_openai``), and back out to the wire unchanged in meaning."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from openai import OpenAI
from openai.types.chat import ChatCompletion, ChatCompletionMessageParam
from pydantic import TypeAdapter

from memorykit.buffers.policies import TokenBuffer
from memorykit.buffers.registry import POLICIES
from memorykit.evaluation.chatlog import parse_chat_logs
from memorykit.evaluation.toolkit import FIXED_POLICIES
from memorykit.messages import MessageFactory, OpenAIMessageError, ToolCall, validate_wire

CALL = {"id": "call_abc", "type": "function",
        "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}


def reply(message: dict[str, Any], finish: str = "stop") -> dict[str, Any]:
    """A chat completion as a server sends it."""
    return {"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "m",
            "choices": [{"index": 0, "finish_reason": finish, "logprobs": None,
                         "message": {"refusal": None, "annotations": [], **message}}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}


TOOL_REPLY = reply({"role": "assistant", "content": None, "tool_calls": [CALL]}, "tool_calls")
TEXT_REPLY = reply({"role": "assistant", "content": "It is sunny in Paris."})


def client_message(payload: dict[str, Any]) -> Any:
    """The ``ChatCompletionMessage`` the openai client hands back for ``payload``."""
    return ChatCompletion.model_validate_json(json.dumps(payload)).choices[0].message


def accepted_by_the_client(wire: list[dict[str, Any]]) -> None:
    validate_wire(wire)
    request = TypeAdapter(list[ChatCompletionMessageParam])  # the openai package's own types
    request.validate_python(wire)


def test_the_clients_tool_call_reply_goes_in_and_back_out_as_it_came():
    message = client_message(TOOL_REPLY)
    f = MessageFactory()
    user = f.user("Weather in Paris?")
    asked = f.from_openai(message)
    result = f.from_openai({"role": "tool", "tool_call_id": "call_abc", "content": "sunny"})
    assert asked.role == "assistant" and asked.content == ""
    assert asked.tool_calls == (ToolCall("call_abc", "get_weather", '{"city": "Paris"}'),)
    # billed like the same call made by hand: the name and arguments count
    assert asked.billed_tokens == f.assistant("", tool_calls=asked.tool_calls).billed_tokens > 0
    assert result.tool_call_id == "call_abc" and result.turn == asked.turn == user.turn
    wire = [m.to_openai() for m in (user, asked, result)]
    accepted_by_the_client(wire)
    assert wire[1]["tool_calls"] == message.model_dump()["tool_calls"] == [CALL]


def test_factory_message_takes_tool_calls_as_the_client_or_a_log_gives_them():
    f = MessageFactory()
    made = ToolCall("call_abc", "get_weather", '{"city": "Paris"}')
    assert f.assistant("", tool_calls=client_message(TOOL_REPLY).tool_calls).tool_calls == (made,)
    assert f.assistant("", tool_calls=[CALL]).tool_calls == (made,)
    # a dict holding the client's own call objects, as agent code often builds it
    held = {"role": "assistant", "content": None,
            "tool_calls": client_message(TOOL_REPLY).tool_calls}
    assert f.from_openai(held).tool_calls == (made,)


LOGGED = [  # (as a log stores it, role, content, metadata kept)
    ({"role": "system", "content": "Be brief."}, "system", "Be brief.", {}),
    ({"role": "developer", "content": "Be brief."}, "system", "Be brief.", {"role": "developer"}),
    ({"role": "user", "name": "amara", "content": [{"type": "text", "text": "Hi"},
                                                   {"type": "text", "text": "there"}]},
     "user", "Hi\nthere", {"name": "amara"}),
    ({"role": "assistant", "content": None, "refusal": "I can't help with that.",
      "function_call": None, "audio": None, "annotations": []},
     "assistant", "I can't help with that.", {"refusal": "I can't help with that."}),
    ({"role": "assistant", "content": None,
      "audio": {"id": "audio_1", "data": "AAAA", "expires_at": 9, "transcript": "Hello there"}},
     "assistant", "Hello there", {"audio_id": "audio_1"}),
    ({"role": "assistant", "content": [{"type": "text", "text": "Partly."},
                                       {"type": "refusal", "refusal": "Not the rest."}]},
     "assistant", "Partly.\nNot the rest.", {}),
    ({"role": "tool", "tool_call_id": "call_abc", "content": [{"type": "text", "text": "42"}]},
     "tool", "42", {}),
    ({"role": "user", "content": "x", "reasoning_content": "kept"}, "user", "x",
     {"reasoning_content": "kept"}),
]


@pytest.mark.parametrize("logged, role, content, metadata", LOGGED)
def test_every_role_as_a_log_stores_it(logged, role, content, metadata):
    m = MessageFactory().from_openai(logged)
    assert (m.role, m.content, dict(m.metadata)) == (role, content, metadata)
    assert m.tool_call_id == logged.get("tool_call_id")


def test_a_refusal_from_the_client_is_what_the_assistant_said():
    message = client_message(reply({"role": "assistant", "content": None,
                                    "refusal": "I can't help with that."}))
    m = MessageFactory().from_openai(message, importance=0.5, metadata={"topic": "x"})
    assert m.content == "I can't help with that." and m.importance == 0.5
    assert dict(m.metadata) == {"refusal": "I can't help with that.", "topic": "x"}


def test_a_logs_id_is_the_message_id_unless_one_is_given():
    f = MessageFactory()
    assert f.from_openai({"role": "user", "content": "x", "id": "u7"}).id == "u7"
    assert f.from_openai({"role": "user", "content": "x", "id": "u7"}, id="u8").id == "u8"


def test_parts_without_text_are_refused_or_named_when_left_out():
    image = {"role": "user", "content": [{"type": "text", "text": "What is this?"},
                                         {"type": "image_url", "image_url": {"url": "u"}}]}
    with pytest.raises(OpenAIMessageError, match=r"^content\[1\]: is a part of type 'image_url'"):
        MessageFactory().from_openai(image)
    m = MessageFactory().from_openai(image, omit_non_text=True)
    assert m.content == "What is this?" and m.metadata["omitted_parts"] == ("image_url",)


def with_call(**changes: Any) -> dict[str, Any]:
    call = json.loads(json.dumps(CALL))
    for key, value in changes.items():
        (call["function"] if key in ("name", "arguments") else call)[key] = value
    return {"role": "assistant", "content": None, "tool_calls": [call]}


NOT_CHAT_MESSAGES = [  # (message, field named, value named)
    ({**with_call(), "tool_calls": [{"type": "function", "function": CALL["function"]}]},
     "tool_calls[0].id", "None"),
    (with_call(id=""), "tool_calls[0].id", "''"),
    (with_call(arguments={"city": "Paris"}), "tool_calls[0].function.arguments",
     "{'city': 'Paris'}"),
    (with_call(arguments="{oops"), "tool_calls[0].function.arguments", "'{oops'"),
    (with_call(name="get weather"), "tool_calls[0].function.name", "'get weather'"),
    (with_call(type="custom"), "tool_calls[0].type", "'custom'"),
    (with_call(function=None), "tool_calls[0].function", "None"),
    ({**with_call(), "tool_calls": [CALL, CALL]}, "tool_calls", "'call_abc'"),
    ({**with_call(), "tool_calls": CALL}, "tool_calls", "'call_abc'"),
    ({"role": "user", "content": "x", "tool_calls": [CALL]}, "tool_calls", "'user'"),
    ({"role": "robot", "content": "x"}, "role", "'robot'"),
    ({"role": "function", "name": "f", "content": "x"}, "role", "'function'"),
    ({"content": "x"}, "role", "None"),
    ({"role": "user", "content": 5}, "content", "5"),
    ({"role": "user", "content": None}, "content", "None"),
    ({"role": "user", "content": [{"text": "x"}]}, "content[0]", "{'text': 'x'}"),
    ({"role": "user", "content": [{"type": "text", "text": 3}]}, "content[0].text", "3"),
    ({"role": "tool", "content": "42"}, "tool_call_id", "None"),
    ({"role": "user", "content": "x", "tool_call_id": "c1"}, "tool_call_id", "'c1'"),
    ({"role": "assistant", "content": None, "function_call": {"name": "f", "arguments": "{}"}},
     "function_call", "'name': 'f'"),
    ({"role": "assistant", "content": None, "refusal": 7}, "refusal", "7"),
    ({"role": "assistant", "content": None, "audio": {"id": "a"}}, "audio.transcript", "None"),
    ({"role": "user", "content": "x", "id": 5}, "id", "5"),
    ("hello", "", "'hello'"),
]


@pytest.mark.parametrize("message, field, value", NOT_CHAT_MESSAGES)
def test_what_is_not_a_chat_message_is_named_by_field_and_value(message, field, value):
    with pytest.raises(OpenAIMessageError) as caught:
        MessageFactory().from_openai(message)
    assert caught.value.field == field
    assert isinstance(caught.value, TypeError) and isinstance(caught.value, ValueError)
    assert str(caught.value).startswith(f"{field}: " if field else "message must be")
    assert value in str(caught.value)


# ------------------------------------------------------------ through the real client
class _Server(ThreadingHTTPServer):
    replies: list[dict[str, Any]]
    bodies: list[dict[str, Any]]


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:  # noqa: N802 - stdlib name
        self.server.bodies.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
        data = json.dumps(self.server.replies.pop(0)).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def server():
    httpd = _Server(("127.0.0.1", 0), _Handler)
    httpd.replies, httpd.bodies = [TOOL_REPLY, TEXT_REPLY], []
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05},
                              daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()
    thread.join(timeout=5)


TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}}}}]


def test_an_agent_loop_through_the_real_client_feeds_a_memory(server):
    client = OpenAI(base_url=f"http://127.0.0.1:{server.server_address[1]}/v1", api_key="x",
                    max_retries=0, timeout=5)
    f, memory = MessageFactory(), TokenBuffer()
    memory.add(f.system("You report the weather."))
    memory.add(f.user("Weather in Paris?"))

    def ask() -> Any:
        return client.chat.completions.create(model="m", messages=memory.to_openai(),
                                              tools=TOOLS).choices[0].message

    answer = ask()
    memory.add(f.from_openai(answer))  # the client's object, as it came
    call = answer.tool_calls[0]
    memory.add(f.from_openai({"role": "tool", "tool_call_id": call.id, "content": "sunny"}))
    memory.add(f.from_openai(ask()))
    sent = server.bodies[1]["messages"]  # what the memory sent back for the second turn
    assert sent[2] == {"role": "assistant", "content": "", "tool_calls": [CALL]}
    assert sent[3] == {"role": "tool", "content": "sunny", "tool_call_id": "call_abc"}
    accepted_by_the_client(memory.to_openai())
    assert memory.to_openai()[-1] == {"role": "assistant", "content": "It is sunny in Paris."}


# ------------------------------------------------------------ every memory, every log
CONVERSATION = [
    {"role": "developer", "content": "You report the weather."},
    {"role": "user", "content": [{"type": "text", "text": "Weather in Paris?"}]},
    TOOL_REPLY["choices"][0]["message"],
    {"role": "tool", "tool_call_id": "call_abc", "content": "sunny"},
    TEXT_REPLY["choices"][0]["message"],
]


@pytest.mark.parametrize("name", sorted(POLICIES))
def test_every_buffer_keeps_the_call_on_the_wire(name):
    f = MessageFactory()
    memory = POLICIES[name].build(4_000)
    for logged in CONVERSATION:
        memory.add(f.from_openai(logged))
    wire = memory.to_openai()
    accepted_by_the_client(wire)
    assert {"role": "assistant", "content": "", "tool_calls": [CALL]} in wire


@pytest.mark.parametrize("name", sorted(FIXED_POLICIES))
def test_every_context_policy_sends_a_request_the_client_accepts(name):
    f = MessageFactory()
    history = [f.from_openai(m) for m in CONVERSATION]
    context = FIXED_POLICIES[name].build_context(history, "Weather in Paris?", 2_000)
    # a call kept with its result travels as a call, one without it as text
    accepted_by_the_client(context.to_openai())


def test_chat_logs_read_messages_as_from_openai_does():
    logged = parse_chat_logs(json.dumps(CONVERSATION) + "\n").conversations[0].messages
    f = MessageFactory()
    direct = [f.from_openai(m, id=str(i)) for i, m in enumerate(CONVERSATION)]
    assert [(m.role, m.content, m.tool_calls, m.tool_call_id, dict(m.metadata)) for m in logged] \
        == [(m.role, m.content, m.tool_calls, m.tool_call_id, dict(m.metadata)) for m in direct]
    assert logged[2].metadata == {}  # the reply's null refusal and empty annotations add nothing


def test_the_readme_example_runs():
    """The README's front-door example, then its own-agent example, run as written."""
    from pathlib import Path

    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    section = readme.split("## The library's front door", 1)[1].split("\n## ", 1)[0]
    first, second = (block.split("\n```", 1)[0] for block in section.split("```python\n")[1:3])
    scope: dict = {}
    exec(first, scope)  # noqa: S102 - the project's own README
    exec(second, scope)  # noqa: S102
    wire = scope["buffer"].to_openai()
    assert wire[-2]["tool_calls"][0]["function"]["name"] == "get_weather"
    assert wire[-1] == {"role": "tool", "tool_call_id": "call_1", "content": "sunny, 21 C"}
