"""Memory search as a tool over the wire: the real ``openai`` client, the loopback server."""

from __future__ import annotations

import json

from memorykit.buffers import BufferWindow
from memorykit.longterm.service import LongTermSettings, MemoryService
from memorykit.longterm.search_tool import answer_memory_search, memory_search_tool
from memorykit.messages import MessageFactory, ToolCall, validate_wire


def test_the_tool_is_offered_then_the_call_and_its_answer_are_sent_back(server):
    f = MessageFactory()
    svc = MemoryService(lambda: BufferWindow(4), LongTermSettings(auto_recall=False))
    for m in [f.system("You are a gym assistant."), f.user("My locker code is 4721."),
              f.assistant("Noted."), f.user("I ran 5 km."), f.assistant("Well done."),
              f.user("What was my locker code?")]:
        svc.add("alice", m)
    client = server.client()
    request = [m.to_openai() for m in svc.session("alice").working]
    client.chat.completions.create(model="m", messages=request, tools=[memory_search_tool()])
    assert server.requests[-1].body["tools"] == [memory_search_tool()]
    # The model answers with a call (scripted here: the loopback model only writes text).
    call = f.assistant("", tool_calls=(ToolCall("call_7", "search", json.dumps(
        {"query": "locker code", "type": "memory"})),))
    svc.add("alice", call)
    svc.add("alice", answer_memory_search(svc, "alice", call.tool_calls[0], f))
    followup = [m.to_openai() for m in svc.session("alice").working]
    validate_wire(followup)
    reply = client.chat.completions.create(model="m", messages=followup,
                                           tools=[memory_search_tool()])
    assert reply.choices[0].message.content
    sent = server.requests[-1].body["messages"]
    assert sent[-2]["tool_calls"][0]["id"] == sent[-1]["tool_call_id"] == "call_7"
    assert "4721" in json.loads(sent[-1]["content"])["results"][0]["text"]
