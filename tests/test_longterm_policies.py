"""Long-term policies (architectures A-D, the attention window, the memory service) beyond the
contract every policy keeps (test_context_contract.py): the current input last, only protected
items left when over budget, no tool result without its call.
"""

from __future__ import annotations

import pytest

from memorykit.context import ContextPolicy
from memorykit.longterm.architectures import ContextWindowArchitecture
from memorykit.longterm.service import MemoryService
from memorykit.longterm.architectures import Architecture
from memorykit.messages import Message, MessageFactory
from memorykit.classroom.scenarios.conversation import simulate_conversation

from context_policies import POLICIES as ALL_POLICIES

POLICIES = {name: make for name, make in ALL_POLICIES.items()
            if isinstance(make(), (Architecture, MemoryService))}
assert POLICIES, "tests/context_policies.py lists no long-term policy"
CONVERSATION = simulate_conversation(40, seed=3, fact_every=5, tool_call_rate=0.2)


@pytest.mark.parametrize("name", POLICIES)
@pytest.mark.parametrize("budget", [60, 300, 2000])
def test_contexts_fit_the_budget_or_say_why_and_cite_only_the_history(name, budget):
    policy = POLICIES[name]()
    assert isinstance(policy, ContextPolicy)
    history = CONVERSATION.messages
    ids = {m.id for m in history}
    for fact in CONVERSATION.facts[:4]:
        ctx = policy.build_context(history, fact.question, budget)
        assert ctx.budget == budget and ctx.policy == policy.name
        assert ctx.tokens == sum(i.tokens for i in ctx.items) + 3
        if ctx.over_budget:
            assert ctx.notes and "exceed the budget" in ctx.notes[-1]
            # only protected items left (instructions, a service's system_memory, the query)
            assert {i.kind for i in ctx.items} <= {"message", "system_memory", "query"}
        assert ctx.covered_ids() <= ids
        assert ctx.items[-1].kind == "query" and ctx.items[-1].content == fact.question
        # No tool result without its call.
        calls = {c for i in ctx.items for c in _calls(i, history)}
        for item in ctx.items:
            if item.role == "tool":
                assert _message(history, item.sources[0]).tool_call_id in calls


def _message(history, mid) -> Message:
    return next(m for m in history if m.id == mid)


def _calls(item, history):
    if item.kind != "message" or item.role != "assistant":
        return ()
    return _message(history, item.sources[0]).tool_call_ids


def test_empty_query_adds_no_item_and_window_must_be_positive():
    f = MessageFactory()
    ctx = ContextWindowArchitecture(2).build_context([f.user("a"), f.user("b")], "", 100)
    assert [i.kind for i in ctx.items] == ["message", "message"]
    with pytest.raises(ValueError, match="window must be >= 1, got 0"):
        ContextWindowArchitecture(0)
    with pytest.raises(TypeError, match="clock must have a now"):
        ContextWindowArchitecture(2, clock="noon")
