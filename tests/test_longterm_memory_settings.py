"""Seed 004's memory-level settings: ``include_history`` and ``system_memory``."""

from __future__ import annotations

import pytest

from memorykit.buffers import BufferWindow, SummaryBuffer
from memorykit.longterm.service import LongTermSettings, MemoryService, MemorySettings
from memorykit.messages import MessageFactory, ToolCall, validate_wire

PROMPT = "You are a helpful customer support agent."


def _support(memory, working=lambda: BufferWindow(6)):
    f = MessageFactory()
    svc = MemoryService(working, LongTermSettings(recall_limit=1), memory=memory)
    for m in [f.system("Answer in English."), f.user("My order number is 88412."),
              f.assistant("Thanks, I have it."), f.user("It arrived broken."),
              f.assistant("Sorry to hear that.")]:
        svc.add("s", m)
    return f, svc


def test_defaults_are_the_seeds_history_on_and_no_system_memory():
    assert MemorySettings() == MemorySettings(include_history=True, system_memory=None)
    _, svc = _support(None)
    ctx = svc.get_context("s", "Can I get a refund?")
    assert [i.content for i in ctx.items if i.kind == "message"] == [
        "Answer in English.", "My order number is 88412.", "Thanks, I have it.",
        "It arrived broken.", "Sorry to hear that."]


def test_system_memory_opens_every_request_of_every_session_and_is_never_stored():
    f, svc = _support(MemorySettings(system_memory=PROMPT), working=lambda: BufferWindow(3))
    svc.add("other", f.user("Hello"))
    stored = len(svc.store)
    for sid in ("s", "other"):
        wire = svc.get_context(sid, "Can I get a refund?").to_openai()
        assert wire[0] == {"role": "system", "content": PROMPT}
        validate_wire(wire)
    first = svc.get_context("s", "refund for order 88412").items
    # the seed's prompt, the session's own instructions, then what recall brought back
    assert [i.kind for i in first[:3]] == ["system_memory", "message", "recalled"]
    assert len(svc.store) == stored and PROMPT not in {m.content for m in svc.session("s").working}
    assert first[0].tokens == svc.pricer.item("system", PROMPT, (), "x").tokens  # billed


def test_system_memory_outlives_summarization():
    f, svc = _support(MemorySettings(system_memory=PROMPT), working=lambda: SummaryBuffer(120))
    for i in range(12):
        svc.add("s", f.user(f"Another detail number {i} about the broken parcel and its box."))
    assert any(m.is_summary for m in svc.session("s").working)
    assert svc.get_context("s").items[0].content == PROMPT


def test_without_history_a_request_holds_instructions_recall_and_the_current_input():
    _, svc = _support(MemorySettings(include_history=False))
    ctx = svc.get_context("s", "What is my order number?")
    assert [(i.kind, i.content) for i in ctx.items] == [
        ("message", "Answer in English."),
        ("recalled", "Recalled from earlier (user): My order number is 88412."),
        ("query", "What is my order number?")]
    # history is still kept: working memory and the store hold every message
    assert len(svc.session("s").working) == 5 and len(svc.stored_ids("s")) == 5


def test_without_history_and_no_current_input_the_current_turn_is_sent_whole():
    f, svc = _support(MemorySettings(include_history=False))
    call = ToolCall("call_1", "lookup_order", '{"order": "88412"}')
    for m in [f.user("Where is my replacement?"), f.assistant("", tool_calls=(call,)),
              f.tool("shipped on Monday", call_id="call_1")]:
        svc.add("s", m)
    ctx = svc.get_context("s")
    sent = [i.content for i in ctx.items if i.kind == "message"]
    assert sent == ["Answer in English.", "Where is my replacement?", "", "shipped on Monday"]
    validate_wire(ctx.to_openai())


def test_bad_settings_name_the_value():
    with pytest.raises(TypeError, match="include_history must be a bool, got 'false'"):
        MemorySettings(include_history="false")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="system_memory must be a non-empty string, got ' '"):
        MemorySettings(system_memory=" ")
    with pytest.raises(TypeError, match="system_memory must be a str, got 3"):
        MemorySettings(system_memory=3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="memory must be MemorySettings"):
        MemoryService(memory={"include_history": False})  # type: ignore[arg-type]


def test_each_session_user_is_told_when_their_working_memory_summarizes():
    from memorykit.buffers import SUMMARIZING_NOTICE

    shown = []
    f = MessageFactory()
    svc = MemoryService(lambda: SummaryBuffer(200),
                        on_summarizing=lambda sid, notice: shown.append((sid, notice.text)))
    for i in range(12):
        svc.add("talkative", f.user(f"Another detail number {i} about the broken parcel."))
    svc.add("quiet", f.user("Hello"))
    assert shown and set(shown) == {("talkative", SUMMARIZING_NOTICE)}
    with pytest.raises(TypeError, match="on_summarizing must be callable"):
        MemoryService(on_summarizing="print")  # type: ignore[arg-type]
    twice = MemoryService(lambda: SummaryBuffer(200, on_summarizing=print),
                          on_summarizing=lambda sid, notice: None)
    with pytest.raises(ValueError, match="give it to one of the two"):
        twice.session("s")
