"""The message record and the factory that counts each message once."""

from __future__ import annotations

import math

import pytest

from memorykit.clock import StepClock
from memorykit.messages import Message, MessageFactory, ToolCall
from memorykit.tokens import Tokenizer


class CountingCounter:
    encoding = "cl100k_base"

    def __init__(self):
        self.calls = 0
        self._inner = Tokenizer()

    def count(self, text):
        self.calls += 1
        return self._inner.count(text)


def test_factory_counts_once_and_fills_fields():
    clock = StepClock(100.0)
    counter = CountingCounter()
    f = MessageFactory(counter, clock=clock)
    m = f.user("hello world", importance=0.7, metadata={"topic": "x"})
    assert (m.id, m.role, m.content_tokens, m.billed_tokens) == ("m000001", "user", 2, 6)
    assert (m.created_at, m.turn, m.importance) == (100.0, 1, 0.7)
    assert counter.calls == 1
    a = f.assistant("hi", tool_calls=(ToolCall("c1", "lookup"),))
    t = f.tool("42", call_id="c1")
    assert (a.turn, t.turn) == (1, 1) and t.tool_call_id == "c1"
    assert f.user("again").turn == 2
    with pytest.raises(TypeError):
        m.metadata["topic"] = "y"


def test_summary_covers_originals_through_depth():
    f = MessageFactory()
    a, b, c = f.user("a"), f.assistant("b"), f.user("c")
    s1 = f.summary("ab", [a, b])
    s2 = f.summary("abc", [s1, c])
    assert s1.covers == (a.id, b.id) and s1.summary_depth == 1 and not s1.pinned
    assert s2.covers == (a.id, b.id, c.id) and s2.summary_depth == 2
    assert a.covers == (a.id,)
    with pytest.raises(ValueError, match="covered must name at least one message"):
        f.summary("x", [])


@pytest.mark.parametrize(
    "kwargs, error, text",
    [
        (dict(role="bot"), ValueError, "role must be one of system, user, assistant, tool, got 'bot'"),
        (dict(content=5), TypeError, "content must be a str, got 5"),
        (dict(importance=math.nan), ValueError, r"importance must be in \[0, 1\], got nan"),
        (dict(importance=-0.1), ValueError, r"importance must be in \[0, 1\], got -0.1"),
        (dict(importance=1.5), ValueError, r"importance must be in \[0, 1\], got 1.5"),
        (dict(importance="high"), TypeError, "importance must be a number"),
        (dict(id=""), ValueError, "id must be a non-empty str, got ''"),
        (dict(billed_tokens=1), ValueError, r"billed_tokens must be an int >= content_tokens \(2\), got 1"),
        (dict(role="tool"), ValueError, "a tool message needs tool_call_id"),
        (dict(tool_call_id="c1"), ValueError, "only tool messages answer calls"),
        (dict(tool_calls=(ToolCall("c1", "lookup"),)), ValueError, "only assistant messages issue tool_calls"),
    ],
)
def test_bad_messages_name_the_value(kwargs, error, text):
    fields = dict(id="a", role="user", content="hi", content_tokens=2, billed_tokens=6)
    fields.update(kwargs)
    with pytest.raises(error, match=text):
        Message(**fields)


def test_factory_rejects_bad_role_and_content():
    f = MessageFactory()
    with pytest.raises(ValueError, match="got 'narrator'"):
        f.message("narrator", "once upon a time")
    with pytest.raises(TypeError, match="content must be a str, got None"):
        f.user(None)


def test_integer_importance_is_accepted_as_float():
    m = Message("a", "user", "hi", 1, 5, 1)
    assert m.importance == 1.0 and isinstance(m.importance, float)


def test_step_clock_refuses_time_travel():
    clock = StepClock(10.0)
    clock.advance_minutes(2)
    assert clock.now() == 130.0
    with pytest.raises(ValueError, match="seconds must be >= 0, got -1"):
        clock.advance(-1)
    with pytest.raises(ValueError, match="must not be earlier than the current time 130.0, got 5"):
        clock.set(5)


@pytest.mark.parametrize("field, value, error, text", [
    ("created_at", float("nan"), ValueError, "created_at must be finite, got nan"),
    ("created_at", float("inf"), ValueError, "created_at must be finite, got inf"),
    ("created_at", "noon", TypeError, "created_at must be a number of seconds, got 'noon'"),
    ("created_at", True, TypeError, "created_at must be a number of seconds, got True"),
    ("turn", -5, ValueError, "turn must be an int >= 0, got -5"),
    ("turn", 2.0, ValueError, "turn must be an int >= 0, got 2.0"),
    ("summary_depth", -1, ValueError, "summary_depth must be an int >= 0, got -1"),
    ("summary_depth", 1, ValueError, "summary_depth=1\\) needs the ids it stands for"),
    ("tool_calls", "abc", TypeError, "tool_calls must be a tuple of ToolCall, got 'abc'"),
    ("tool_calls", ("c1",), TypeError,
     "tool_calls must hold ToolCall\\(id, name, arguments\\) records, got 'c1'"),
    ("tool_calls", (ToolCall("c1", "f"), ToolCall("c1", "g")), ValueError,
     "tool_calls issues call id 'c1' twice"),
    ("sources", "m1", TypeError, "sources must be a tuple of str, got 'm1'"),
])
def test_damaging_values_are_refused_naming_them(field, value, error, text):
    kw = {"role": "assistant"} if field == "tool_calls" else {"role": "user"}
    with pytest.raises(error, match=text):
        Message("m1", content="x", content_tokens=1, billed_tokens=5, **kw, **{field: value})


def test_numbers_are_normalised_and_lists_become_tuples():
    call = ToolCall("c1", "lookup")
    m = Message("m1", "assistant", "x", 1, 5, created_at=3, tool_calls=[call])
    assert type(m.created_at) is float and m.created_at == 3.0 and m.tool_calls == (call,)
    assert m.tool_call_ids == ("c1",)
    s = Message("s1", "system", "sum", 1, 5, sources=["m1"], summary_depth=1)
    assert s.sources == ("m1",) and s.covers == ("m1",) and not s.pinned


def test_pin_system_must_be_a_bool():
    from memorykit.buffers import FIFOBuffer

    with pytest.raises(TypeError, match="pin_system must be a bool, got 'false'"):
        FIFOBuffer(100, pin_system="false")
