"""One contract for every memory behind ``ContextPolicy.build_context(history, query, budget)``.

Every policy of ``context_policies.POLICIES`` (buffers, baselines, attention windows, entity
memory, the three-column workspace, long-term architectures A-D, the memory service): within
the budget or a note saying why not, every item's provenance pointing at messages of the given
history, incremental state equal to a fresh replay, bad requests refused naming the value, a
policy that says it ignores the query really ignoring it (the harness reuses its contexts), and
every other policy's context changing with the query.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import memorykit
from memorykit.context import ContextPolicy
from memorykit.evaluation.harness import is_query_independent
from memorykit.messages import MessageFactory, validate_wire
from memorykit.scenarios.conversation import simulate_conversation

from context_policies import POLICIES
from wire import check_openai_types

CONVERSATION = simulate_conversation(30, seed=5, fact_every=5, tool_call_rate=0.1)



@pytest.mark.parametrize("name", POLICIES)
def test_the_system_prompt_opens_the_request(name):
    # Recalled memories, rules, entities and notes come after it, never before (the chat API
    # expects the system prompt first; the memory service once put recall in front of it).
    policy = POLICIES[name]()
    history = CONVERSATION.messages
    system = history[0]
    assert system.role == "system" and system.pinned
    for fact in CONVERSATION.facts[:3]:
        ctx = policy.build_context(history, fact.question, 3000)
        positions = [k for k, i in enumerate(ctx.items) if system.id in i.sources]
        # only other instructions may precede it (a memory service's own system_memory)
        opening = next((k for k, i in enumerate(ctx.items) if i.kind != "system_memory"), 0)
        assert positions in ([], [opening]), f"{name} sends the system prompt at {positions}"


@pytest.mark.parametrize("name", POLICIES)
@pytest.mark.parametrize("budget", [80, 400, 3000])
def test_the_request_is_one_the_chat_api_accepts(name, budget):
    # System prompt first, each tool call followed by its results, no orphan, and every
    # message of the shape the openai package's request types describe.
    assert any(m.tool_calls for m in CONVERSATION.messages), "the conversation needs tool calls"
    policy = POLICIES[name]()
    for query in ["What did we decide about the budget?", *(f.question for f in CONVERSATION.facts[:2])]:
        request = policy.build_context(CONVERSATION.messages, query, budget).to_openai()
        validate_wire(request)
        check_openai_types(request)


def test_a_window_holding_a_call_sends_it_as_a_call():
    # A buffer's window replays the conversation: its tool calls travel as calls, with ids.
    request = POLICIES["buffer-fifo"]().build_context(CONVERSATION.messages, "q", 100_000).to_openai()
    calls = [m for m in request if m.get("tool_calls")]
    sent = {c.id for m in CONVERSATION.messages for c in m.tool_calls}
    assert {c["id"] for m in calls for c in m["tool_calls"]} == sent
    assert {m["tool_call_id"] for m in request if m["role"] == "tool"} == sent


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


@settings(max_examples=40)
@given(st.integers(min_value=0, max_value=len(CONVERSATION.messages)),
       st.integers(min_value=3, max_value=3000), st.sampled_from(sorted(POLICIES)))
def test_any_prefix_and_budget(cut, budget, name):
    # Budgets below the reply primer (3 tokens): the next test.
    history = CONVERSATION.messages[:cut]
    ctx = POLICIES[name]().build_context(history, "What did we decide about the budget?", budget)
    assert ctx.covered_ids() <= {m.id for m in history}
    assert not ctx.over_budget or ctx.notes


@pytest.mark.parametrize("name", POLICIES)
@pytest.mark.parametrize("cut", [0, 5])
def test_a_budget_below_the_reply_primer_is_over_budget_with_a_note(name, cut):
    for budget in (1, 2):
        ctx = POLICIES[name]().build_context(CONVERSATION.messages[:cut], "q", budget)
        assert ctx.over_budget and ctx.notes, f"{name}: {ctx.tokens} tokens for budget {budget}, no note"


@pytest.mark.parametrize("name", POLICIES)
def test_incremental_state_equals_a_fresh_replay(name):
    history = CONVERSATION.messages
    warm = POLICIES[name]()
    for cut in (10, 40, len(history)):
        warm.build_context(history[:cut], "anything", 2000)
    question = CONVERSATION.facts[0].question
    assert warm.build_context(history, question, 1500).items == \
        POLICIES[name]().build_context(history, question, 1500).items
    # A different conversation with the same ids starts afresh.
    other = simulate_conversation(30, seed=4).messages
    assert warm.build_context(other, question, 1500).items == \
        POLICIES[name]().build_context(other, question, 1500).items


@pytest.mark.parametrize("name", POLICIES)
def test_a_query_independent_policy_ignores_the_query(name):
    policy = POLICIES[name]()
    history = CONVERSATION.messages
    contexts = [policy.build_context(history, fact.question, 500) for fact in CONVERSATION.facts[:3]]
    if is_query_independent(policy):
        assert all(ctx.items == contexts[0].items for ctx in contexts)


@pytest.mark.parametrize("name", POLICIES)
def test_a_policy_that_ignores_the_query_says_so(name):
    # The converse: an unflagged policy's context changes with the query, so the harness never
    # rebuilds a context per question for lack of a flag (the three-column workspace lacked it).
    policy = POLICIES[name]()
    if not is_query_independent(policy):
        history = CONVERSATION.messages
        contexts = [policy.build_context(history, fact.question, 500).items
                    for fact in CONVERSATION.facts[:3]]
        assert any(items != contexts[0] for items in contexts[1:]), f"{name} ignores the query"


@pytest.mark.parametrize("name", POLICIES)
@pytest.mark.parametrize(
    "query, budget, error, text",
    [
        (None, 10, TypeError, "query must be a str, got None"),
        ("q", 0, ValueError, "budget must be >= 1, got 0"),
        ("q", 1.5, TypeError, "budget must be an integer, got 1.5"),
    ],
)
def test_bad_requests_raise_naming_the_value(name, query, budget, error, text):
    with pytest.raises(error, match=text):
        POLICIES[name]().build_context(CONVERSATION.messages, query, budget)


@pytest.mark.parametrize("name", POLICIES)
@pytest.mark.parametrize("history", ["hello", [1]])
def test_a_history_of_anything_but_messages_is_refused(name, history):
    with pytest.raises(TypeError, match="Message"):
        POLICIES[name]().build_context(history, "q", 100)


@pytest.mark.parametrize("name", POLICIES)
def test_a_message_id_twice_is_refused_naming_it(name):
    m = MessageFactory().user("hello")
    with pytest.raises(ValueError, match=repr(m.id)):
        POLICIES[name]().build_context([m, m], "q", 100)


def _context_policy_classes() -> set[type]:
    """Every public class in memorykit with a ``build_context(history, query, budget)``."""
    found: set[type] = set()
    for info in pkgutil.walk_packages(memorykit.__path__, "memorykit."):
        module = importlib.import_module(info.name)
        for cls in vars(module).values():
            if (inspect.isclass(cls) and cls.__module__ == info.name and not cls.__name__.startswith("_")
                    and cls is not ContextPolicy and inspect.isfunction(getattr(cls, "build_context", None))
                    and list(inspect.signature(cls.build_context).parameters)[1:4] == ["history", "query", "budget"]):
                found.add(cls)
    return found


def test_every_context_policy_class_joins_the_contract():
    registered = {type(make()) for make in POLICIES.values()}
    missing = {cls for cls in _context_policy_classes()
               if not any(issubclass(kind, cls) for kind in registered)}
    assert not missing, f"add these to tests/context_policies.py: {sorted(c.__qualname__ for c in missing)}"
