"""The message record and the factory that counts each message once."""

from __future__ import annotations

import math

import pytest

from memorykit.clock import StepClock
from memorykit.messages import Message, MessageFactory
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
    a = f.assistant("hi", tool_calls=("c1",))
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
        (dict(tool_calls=("c1",)), ValueError, "only assistant messages issue tool_calls"),
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
