"""Every long-term policy answers the common ContextPolicy question the same way.

Within budget (or a note saying why not), provenance citing only the given
history, the current input last, incremental state equal to a fresh replay.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memorykit.buffers import BufferWindow
from memorykit.context import ContextPolicy
from memorykit.longterm import (
    AttentionPolicy,
    ContextWindowArchitecture,
    EpisodicArchitecture,
    EpisodicSettings,
    MemoryService,
    ReflectionArchitecture,
    SemanticArchitecture,
)
from memorykit.messages import Message, MessageFactory
from memorykit.scenarios.probes import booking_critic
from memorykit.simulate import simulate_conversation

POLICIES = {
    "A": lambda: ContextWindowArchitecture(6),
    "B": lambda: EpisodicArchitecture(EpisodicSettings(stm_limit=6)),
    "C": lambda: SemanticArchitecture(6),
    "D": lambda: ReflectionArchitecture(SemanticArchitecture(6), booking_critic()),
    "attention": lambda: AttentionPolicy(),
    "service": lambda: MemoryService(lambda: BufferWindow(6)),
}
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
            assert {i.kind for i in ctx.items} <= {"message", "query"}  # only protected items left
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
    return _message(history, item.sources[0]).tool_calls


@pytest.mark.parametrize("name", POLICIES)
def test_incremental_state_equals_a_fresh_replay(name):
    history = CONVERSATION.messages
    warm = POLICIES[name]()
    for cut in (10, 40, len(history)):
        warm.build_context(history[:cut], "anything", 2000)
    question = CONVERSATION.facts[0].question
    a = warm.build_context(history, question, 1500)
    b = POLICIES[name]().build_context(history, question, 1500)
    assert a.items == b.items
    # A different conversation with the same ids starts afresh.
    other = simulate_conversation(40, seed=4).messages
    c = warm.build_context(other, question, 1500)
    d = POLICIES[name]().build_context(other, question, 1500)
    assert c.items == d.items


@settings(max_examples=25)
@given(st.integers(min_value=1, max_value=60), st.integers(min_value=1, max_value=3000),
       st.sampled_from(sorted(POLICIES)))
def test_any_prefix_and_budget(cut, budget, name):
    history = CONVERSATION.messages[:cut]
    ctx = POLICIES[name]().build_context(history, "What did we decide about the budget?", budget)
    assert ctx.covered_ids() <= {m.id for m in history}
    assert not ctx.over_budget or ctx.notes


@pytest.mark.parametrize("name", POLICIES)
@pytest.mark.parametrize(
    "history, query, budget, error, text",
    [
        ([], None, 10, TypeError, "query must be a str, got None"),
        ([], "q", 0, ValueError, "budget must be >= 1, got 0"),
        ("hello", "q", 10, TypeError, "history must be a sequence of Message, got str"),
        ([1], "q", 10, TypeError, "history must hold Message records, got 1"),
    ],
)
def test_bad_requests_are_named(name, history, query, budget, error, text):
    with pytest.raises(error, match=text):
        POLICIES[name]().build_context(history, query, budget)


@pytest.mark.parametrize("name", POLICIES)
def test_duplicate_ids_are_refused(name):
    f = MessageFactory()
    m = f.user("hello")
    with pytest.raises(ValueError, match="message id 'm000001' twice"):
        POLICIES[name]().build_context([m, m], "q", 100)


def test_empty_query_adds_no_item_and_window_must_be_positive():
    f = MessageFactory()
    ctx = ContextWindowArchitecture(2).build_context([f.user("a"), f.user("b")], "", 100)
    assert [i.kind for i in ctx.items] == ["message", "message"]
    with pytest.raises(ValueError, match="window must be >= 1, got 0"):
        ContextWindowArchitecture(0)
    with pytest.raises(TypeError, match="clock must have a now"):
        ContextWindowArchitecture(2, clock="noon")
