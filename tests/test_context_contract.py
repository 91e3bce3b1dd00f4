"""One contract for every memory behind ``ContextPolicy.build_context(history, query, budget)``.

Every policy of ``context_policies.POLICIES`` (buffers, baselines, attention windows, entity
memory, the three-column workspace, long-term architectures A-D, the memory service): within
the budget or a note saying why not, every item's provenance pointing at messages of the given
history, incremental state equal to a fresh replay, bad requests refused naming the value, and
a policy that says it ignores the query really ignoring it (the harness reuses its contexts).
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

import memorykit
from memorykit.context import ContextItem, ContextPolicy
from memorykit.classroom.contracts import run_contracts
from memorykit.classroom.contracts.context import RETRIEVAL_CONTRACTS, context_contracts, conversation
from memorykit.evaluation.harness import is_query_independent

from context_policies import POLICIES, RETRIEVAL
from wire import check_openai_types

CONVERSATION = conversation()


def test_a_window_holding_a_call_sends_it_as_a_call():
    # A buffer's window replays the conversation: its tool calls travel as calls, with ids.
    request = POLICIES["buffer-fifo"]().build_context(CONVERSATION.messages, "q", 100_000).to_openai()
    calls = [m for m in request if m.get("tool_calls")]
    sent = {c.id for m in CONVERSATION.messages for c in m.tool_calls}
    assert {c["id"] for m in calls for c in m["tool_calls"]} == sent
    assert {m["tool_call_id"] for m in request if m["role"] == "tool"} == sent


# The contract lives in the package (memorykit.classroom.contracts.context) so that lesson 12's
# build-it-yourself exercise runs exactly these checks over a student's retrieval policy.
CONTRACTS = context_contracts(check_request=check_openai_types)


@pytest.mark.parametrize("contract", CONTRACTS, ids=lambda c: c.name[:40])
@pytest.mark.parametrize("name", POLICIES)
def test_every_policy_keeps_the_context_contract(name, contract):
    contract(POLICIES[name])


@pytest.mark.parametrize("contract", RETRIEVAL_CONTRACTS, ids=lambda c: c.name[:40])
@pytest.mark.parametrize("name", RETRIEVAL)
def test_every_retrieval_policy_keeps_the_retrieval_contract(name, contract):
    contract(POLICIES[name])


def test_the_conversation_has_tool_calls_and_a_system_prompt():
    assert any(m.tool_calls for m in CONVERSATION.messages), "the conversation needs tool calls"
    assert CONVERSATION.messages[0].role == "system" and CONVERSATION.messages[0].pinned


def test_a_policy_that_breaks_the_contract_fails_it_with_a_reason():
    from memorykit.context import Context

    class OverBudgetSilently:
        name = "silent"

        def build_context(self, history, query, budget):
            return Context(tuple(ContextItem.from_message(m) for m in history), budget, self.name)

    verdict = run_contracts(OverBudgetSilently, CONTRACTS, exercise="broken")
    assert not verdict.passed
    assert any("no note saying why" in d for d in verdict.details)
    assert any("must raise TypeError" in d for d in verdict.details)


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
