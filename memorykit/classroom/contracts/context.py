"""The context-policy contract: what every memory behind ``build_context`` must keep.

The subject is a ``PolicyMaker``, a function of no argument returning a fresh
``ContextPolicy`` (some policies keep state between requests). The test suite runs these
contracts over every policy memorykit ships (``tests/test_context_contract.py`` over
``tests/context_policies.py``); lesson 12's build-it-yourself exercise runs them over the
student's retrieval policy (``memorykit.classroom.lesson12_checks.check_retrieval_policy``).

Every contract asks the same 30-turn simulated conversation (a system prompt, planted facts,
tool calls): the system prompt opens the request, the request is one the chat API accepts,
the context stays within its budget (or a note says why not) and cites only messages of the
history, incremental state equals a fresh replay, a policy that says it ignores the query does,
and bad requests are refused naming the value.

Taught in ``notebooks/12_parameter_tuning.ipynb``.
"""

from __future__ import annotations

from collections.abc import Callable
from memorykit.classroom.memo import memo
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memorykit.context import ContextPolicy
from memorykit.classroom.contracts.runner import Contract
from memorykit.messages import MessageFactory, validate_wire
from memorykit.classroom.scenarios.conversation import SimulatedConversation, simulate_conversation

PolicyMaker = Callable[[], ContextPolicy]
RequestCheck = Callable[[list[dict[str, Any]]], None]

_PROPERTY = settings(max_examples=40, deadline=None, derandomize=True, database=None,
                     report_multiple_bugs=False, suppress_health_check=[HealthCheck.too_slow])
BUDGETS = (80, 400, 3000)
"""A budget that forces choices, a middling one, and one that holds the whole conversation."""
GENERIC_QUERY = "What did we decide about the budget?"


@memo(maxsize=1)
def conversation() -> SimulatedConversation:
    """The contract's conversation: 30 turns, a fact every 5, tool calls."""
    return simulate_conversation(30, seed=5, fact_every=5, tool_call_rate=0.1)


def _system_prompt_opens(make: PolicyMaker) -> None:
    # Recalled memories, rules, entities and notes come after it, never before.
    policy, conv = make(), conversation()
    history = conv.messages
    system = history[0]
    for fact in conv.facts[:3]:
        ctx = policy.build_context(history, fact.question, 3000)
        positions = [k for k, i in enumerate(ctx.items) if system.id in i.sources]
        # only other instructions may precede it (a memory service's own system_memory)
        opening = next((k for k, i in enumerate(ctx.items) if i.kind != "system_memory"), 0)
        assert positions in ([], [opening]), (
            f"the system prompt is sent at positions {positions} for {fact.question!r}: it must "
            "come first (or not at all), before anything your policy recalls")


def _request_accepted(check_request: RequestCheck | None) -> Callable[[PolicyMaker], None]:
    def check(make: PolicyMaker) -> None:
        policy, conv = make(), conversation()
        for budget in BUDGETS:
            for query in [GENERIC_QUERY, *(f.question for f in conv.facts[:2])]:
                request = policy.build_context(conv.messages, query, budget).to_openai()
                validate_wire(request)
                if check_request is not None:
                    check_request(request)

    return check


def _budget_and_provenance(make: PolicyMaker) -> None:
    policy, conv = make(), conversation()
    history = conv.messages
    ids = {m.id for m in history}
    for budget in BUDGETS:
        for fact in conv.facts[:3]:
            ctx = policy.build_context(history, fact.question, budget)
            assert ctx.budget == budget, f"the context says budget {ctx.budget}, asked {budget}"
            assert ctx.policy == policy.name, (
                f"the context names policy {ctx.policy!r}, the policy is {policy.name!r}")
            expected = sum(i.tokens for i in ctx.items) + ctx.chat_format.reply_primer
            assert ctx.tokens == expected, f"tokens {ctx.tokens} != items + reply primer {expected}"
            assert not ctx.over_budget or ctx.notes, (
                f"{ctx.tokens} tokens for a budget of {budget} and no note saying why")
            outside = sorted(ctx.covered_ids() - ids)
            assert not outside, f"the context cites ids that are not in the history: {outside}"


def _any_prefix_and_budget(make: PolicyMaker) -> None:
    conv = conversation()

    @settings(_PROPERTY, max_examples=15)
    @given(cut=st.integers(min_value=0, max_value=len(conv.messages)),
           budget=st.integers(min_value=3, max_value=3000))
    def prefix(cut: int, budget: int) -> None:
        history = conv.messages[:cut]
        ctx = make().build_context(history, GENERIC_QUERY, budget)
        outside = sorted(ctx.covered_ids() - {m.id for m in history})
        assert not outside, f"the context cites ids that are not in the history: {outside}"
        assert not ctx.over_budget or ctx.notes, (
            f"{ctx.tokens} tokens for a budget of {budget} and no note saying why")

    prefix()


def _below_the_reply_primer(make: PolicyMaker) -> None:
    for cut in (0, 5):
        for budget in (1, 2):
            ctx = make().build_context(conversation().messages[:cut], "q", budget)
            assert ctx.over_budget and ctx.notes, (
                f"a budget of {budget} cannot hold the reply primer: the context must be over "
                f"budget with a note, got {ctx.tokens} tokens and notes {ctx.notes}")


def _incremental_equals_fresh(make: PolicyMaker) -> None:
    conv = conversation()
    history = conv.messages
    warm = make()
    for cut in (10, 40, len(history)):
        warm.build_context(history[:cut], "anything", 2000)
    question = conv.facts[0].question
    assert warm.build_context(history, question, 1500).items == \
        make().build_context(history, question, 1500).items, (
        "after earlier requests your policy answers differently from a fresh one: state kept "
        "between requests must not change the context")
    other = simulate_conversation(30, seed=4).messages  # the same ids, another conversation
    assert warm.build_context(other, question, 1500).items == \
        make().build_context(other, question, 1500).items, (
        "a different conversation with the same message ids got a context built from the old one")


def _query_independent_ignores_query(make: PolicyMaker) -> None:
    from memorykit.evaluation.harness import is_query_independent

    policy, conv = make(), conversation()
    if not is_query_independent(policy):
        return
    contexts = [policy.build_context(conv.messages, f.question, 500) for f in conv.facts[:3]]
    assert all(ctx.items == contexts[0].items for ctx in contexts), (
        "the policy says query_independent = True but its context changes with the question")


BAD_REQUESTS = (
    (None, 10, TypeError, "query must be a str, got None"),
    ("q", 0, ValueError, "budget must be >= 1, got 0"),
    ("q", 1.5, TypeError, "budget must be an integer, got 1.5"),
)


def _bad_input_refused(make: PolicyMaker) -> None:
    history = conversation().messages
    duplicate = MessageFactory().user("hello")
    cases: list[tuple[Any, Any, Any, type[Exception], str]] = [
        (history, q, b, error, text) for q, b, error, text in BAD_REQUESTS]
    cases += [("hello", "q", 100, TypeError, "Message"), ([1], "q", 100, TypeError, "Message"),
              ([duplicate, duplicate], "q", 100, ValueError, repr(duplicate.id))]
    for hist, query, budget, error, text in cases:
        shown = "the conversation" if hist is history else repr(hist)[:60]
        try:
            make().build_context(hist, query, budget)
        except error as exc:
            assert text in str(exc), (
                f"build_context({shown}, {query!r}, {budget!r}) raised {exc!r}, which should "
                f"say {text!r}")
            continue
        raise AssertionError(f"build_context({shown}, {query!r}, {budget!r}) was accepted; it "
                             f"must raise {error.__name__} saying {text!r}")


def context_contracts(check_request: RequestCheck | None = None) -> tuple[Contract[PolicyMaker], ...]:
    """The contract every context policy keeps; ``check_request`` also checks each request
    (the test suite passes the ``openai`` package's own types)."""
    return (
        Contract("the system prompt opens the request", _system_prompt_opens),
        Contract("the request is one the chat API accepts (system first, tool calls with "
                 "their results)", _request_accepted(check_request)),
        Contract("the context stays within its budget or says why, and cites only messages "
                 "of the history", _budget_and_provenance),
        Contract("any prefix of the conversation and any budget give a valid context",
                 _any_prefix_and_budget),
        Contract("a budget below the reply primer is over budget, with a note",
                 _below_the_reply_primer),
        Contract("state kept between requests equals a fresh replay",
                 _incremental_equals_fresh),
        Contract("a policy that says it ignores the query does", _query_independent_ignores_query),
        Contract("bad requests and histories are refused naming the value", _bad_input_refused),
    )


CONTEXT_CONTRACTS = context_contracts()


def _finds_the_quoted_message(make: PolicyMaker) -> None:
    conv = conversation()
    history = conv.messages
    by_id = {m.id: m for m in history}
    for fact in conv.facts:
        quoted = by_id[fact.message_id]
        # room for the system prompt, the quoted message, the reply primer and a little more
        budget = history[0].billed_tokens + quoted.billed_tokens + 3 + 100
        ctx = make().build_context(history, quoted.content, budget)
        assert quoted.id in ctx.covered_ids(), (
            f"asked a question that quotes message {quoted.id} word for word "
            f"({quoted.content[:60]!r}), a context of {budget} tokens (room for it) left it "
            "out: your ranking must rise with the words a message shares with the question")


RETRIEVAL_CONTRACTS: tuple[Contract[PolicyMaker], ...] = (
    Contract("a question quoting a message word for word retrieves that message",
             _finds_the_quoted_message),
)
"""What a retrieval policy (one that reads the question) keeps beyond ``context_contracts``."""
