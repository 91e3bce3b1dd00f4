"""The common context interface, through buffers."""

from __future__ import annotations

import pytest

from memorykit.buffers import FIFOBuffer, ImportanceBuffer
from memorykit.context import BufferPolicy, Context, ContextItem, ContextPolicy
from memorykit.messages import Message, MessageFactory


def test_buffer_policy_replays_history_and_keeps_provenance():
    f = MessageFactory()
    history = [f.system("Be brief."), f.user("My locker code is 4721."), f.assistant("Noted.")]
    history += [f.user(f"filler message number {i} about nothing") for i in range(6)]
    policy = BufferPolicy(lambda budget: FIFOBuffer(max_tokens=budget), "fifo")
    assert isinstance(policy, ContextPolicy)
    ctx = policy.build_context(history, "What is my locker code?", 60)
    assert ctx.tokens <= 60 and not ctx.over_budget
    assert history[0].id in ctx.covered_ids()  # the system prompt is pinned
    assert history[1].id not in ctx.covered_ids()  # FIFO forgot the code
    assert ctx.tokens == sum(m.billed_tokens for m in history if m.id in ctx.covered_ids()) + 3
    # Each request starts from a fresh buffer.
    again = policy.build_context(history, "anything", 60)
    assert again.covered_ids() == ctx.covered_ids()


def test_summary_items_cover_their_sources():
    f = MessageFactory()
    a, b = f.user("a"), f.assistant("b")
    item = ContextItem.from_message(f.summary("a and b", [a, b]))
    assert item.kind == "summary" and item.sources == (a.id, b.id)
    ctx = Context((item,), budget=100, policy="x")
    assert ctx.covered_ids() == {a.id, b.id}


def test_over_budget_context_says_why():
    huge = Message("h", "user", "x", 500, 504)
    ctx = BufferPolicy(lambda b: ImportanceBuffer(max_tokens=b), "importance").build_context(
        [huge], "q", 100
    )
    assert ctx.over_budget and "exceed the budget of 100" in ctx.notes[0]


@pytest.mark.parametrize(
    "query, budget, error, text",
    [
        (None, 10, TypeError, "query must be a str, got None"),
        ("q", 0, ValueError, "budget must be >= 1, got 0"),
        ("q", 1.5, TypeError, "budget must be an integer, got 1.5"),
    ],
)
def test_bad_requests_name_the_value(query, budget, error, text):
    policy = BufferPolicy(lambda b: FIFOBuffer(max_tokens=b), "fifo")
    with pytest.raises(error, match=text):
        policy.build_context([], query, budget)
