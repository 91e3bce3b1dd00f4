"""The common context interface through particular policies (the contract every policy keeps:
test_context_contract.py)."""

from __future__ import annotations

import pytest

from memorykit.buffers import FIFOBuffer, ImportanceBuffer
from memorykit.context import BufferPolicy, Context, ContextItem, ContextPolicy
from memorykit.messages import Message, MessageFactory
from memorykit.workspace.context_policy import WorkspaceContextPolicy


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



def test_workspace_policy_cites_the_messages_that_mentioned_shown_objects():
    from memorykit.classroom.scenarios.workflow import default_workflow
    from memorykit.workspace import WorkingMemory

    scenario = default_workflow()
    graph = scenario.graph()
    policy = WorkspaceContextPolicy(lambda clock: WorkingMemory(graph, clock=clock))
    f = MessageFactory()
    some = next(iter(graph))
    history = [f.user("Hello there."), f.user(f"Any news about {some.name}?")]
    ctx = policy.build_context(history, "What next?", 4000)
    assert ctx.items[0].kind == "workspace" and "ACTIVE TASKS" in ctx.items[0].content
    assert ctx.covered_ids() <= {m.id for m in history}
    assert some.name in ctx.items[0].content and history[1].id in ctx.items[0].sources
    assert history[0].id not in ctx.items[0].sources  # mentions nothing
    with pytest.raises(ValueError, match="twice"):
        policy.build_context([history[0], history[0]], "q", 100)
    tiny = policy.build_context(history, "q", 5)
    assert tiny.items == () and "cannot hold" in tiny.notes[0]
