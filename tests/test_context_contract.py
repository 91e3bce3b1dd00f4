"""One contract for every memory behind ``ContextPolicy.build_context(history, query, budget)``.

Buffers (through ``BufferPolicy``), entity memory, the three-column workspace, long-term
architectures A-D, the attention window and the memory service: within the budget or a note
saying why not, and every item's provenance pointing at messages of the given history.
"""

from __future__ import annotations

import pytest

from memorykit.buffers import BufferWindow, FIFOBuffer, SummaryBuffer
from memorykit.context import BufferPolicy, ContextPolicy
from memorykit.entities.context import EntityContextPolicy
from memorykit.longterm import (
    AttentionPolicy,
    ContextWindowArchitecture,
    EpisodicArchitecture,
    EpisodicSettings,
    MemoryService,
    ReflectionArchitecture,
    SemanticArchitecture,
)
from memorykit.scenarios.probes import booking_critic
from memorykit.simulate import simulate_conversation
from memorykit.workspace.context import WorkspaceContextPolicy

POLICIES = {
    "fifo": lambda: BufferPolicy(lambda b: FIFOBuffer(max_tokens=b), "fifo"),
    "summary-buffer": lambda: BufferPolicy(lambda b: SummaryBuffer(b), "summary-buffer"),
    "entity": lambda: EntityContextPolicy(),
    "workspace": lambda: WorkspaceContextPolicy(),
    "A": lambda: ContextWindowArchitecture(6),
    "B": lambda: EpisodicArchitecture(EpisodicSettings(stm_limit=6)),
    "C": lambda: SemanticArchitecture(6),
    "D": lambda: ReflectionArchitecture(SemanticArchitecture(6), booking_critic()),
    "attention": lambda: AttentionPolicy(),
    "service": lambda: MemoryService(lambda: BufferWindow(6)),
}
CONVERSATION = simulate_conversation(30, seed=5, fact_every=5, tool_call_rate=0.1)


@pytest.mark.parametrize("name", POLICIES)
@pytest.mark.parametrize("budget", [80, 400, 3000])
def test_budget_and_provenance(name, budget):
    policy = POLICIES[name]()
    assert isinstance(policy, ContextPolicy)
    history = CONVERSATION.messages
    ids = {m.id for m in history}
    for fact in CONVERSATION.facts[:3]:
        ctx = policy.build_context(history, fact.question, budget)
        assert ctx.budget == budget and ctx.policy == policy.name
        assert ctx.tokens == sum(i.tokens for i in ctx.items) + ctx.chat_format.reply_primer
        if ctx.over_budget:
            assert ctx.notes, f"{name} went over budget {budget} without saying why"
        assert ctx.covered_ids() <= ids, f"{name} cites ids outside the history"
        assert all(isinstance(s, str) for i in ctx.items for s in i.sources)


@pytest.mark.parametrize("name", POLICIES)
def test_bad_requests_raise_naming_the_value(name):
    policy = POLICIES[name]()
    with pytest.raises(ValueError, match="budget"):
        policy.build_context(CONVERSATION.messages, "q", 0)
    with pytest.raises(TypeError, match="query"):
        policy.build_context(CONVERSATION.messages, None, 100)


def test_workspace_policy_cites_the_messages_that_mentioned_shown_objects():
    from memorykit.lessons.tasks_app import default_workflow
    from memorykit.messages import MessageFactory
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
    shown = ctx.items[0].content
    if some.name in shown:
        assert history[1].id in ctx.items[0].sources
    assert history[0].id not in ctx.items[0].sources  # mentions nothing
    with pytest.raises(ValueError, match="twice"):
        policy.build_context([history[0], history[0]], "q", 100)
    tiny = policy.build_context(history, "q", 5)
    assert tiny.items == () and "cannot hold" in tiny.notes[0]
