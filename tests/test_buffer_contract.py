"""One contract, every policy: properties that must hold after every add."""

from __future__ import annotations

import itertools
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memorykit.clock import StepClock
from memorykit.messages import Message, ToolCall, validate_wire
from memorykit.buffers import FIFOBuffer
from memorykit.trace import Eviction, OverBudget, Summarization, Trace

from buffer_policies import POLICIES
from wire import check_openai_types

# One step of a conversation: (kind, content tokens, importance, minutes elapsed before it).
step = st.tuples(
    st.sampled_from(["user", "assistant", "assistant", "system", "tool_call", "user"]),
    st.integers(min_value=0, max_value=220),
    st.floats(min_value=0.0, max_value=1.0, allow_nan=False),
    st.floats(min_value=0.0, max_value=30.0, allow_nan=False),
)


def build_stream(steps: list[tuple[str, int, float, float]], clock: StepClock):
    """Messages in arrival order; a tool call is followed by its result(s)."""
    ids = itertools.count(1)
    turn = 0
    for kind, tokens, importance, gap in steps:
        clock.advance_minutes(gap)
        now = clock.now()
        if kind == "user":
            turn += 1
        def make(role, n, **kw):
            return Message(
                f"m{next(ids)}", role, "x" * min(n, 5), n, n + 4, importance,
                created_at=now, turn=turn, **kw,
            )
        if kind == "tool_call":
            call_ids = (f"call{next(ids)}", f"call{next(ids)}")[: 1 + tokens % 2]
            yield make("assistant", tokens // 3,
                       tool_calls=tuple(ToolCall(c, "lookup", "{}") for c in call_ids))
            for call_id in call_ids:
                yield make("tool", tokens // 2, tool_call_id=call_id)
        else:
            yield make(kind, tokens)


def check_invariants(buffer, added: list[Message], returned, trace_len_before: int) -> None:
    kept = {m.id: m for m in buffer}
    added_ids = {m.id for m in added}
    events = list(buffer.trace)
    new_events = events[trace_len_before:]
    # add() returns exactly the decisions it appended to the trace (OverBudget is a warning).
    assert [e for e in new_events if not isinstance(e, OverBudget)] == returned
    evicted = [i for e in events if isinstance(e, Eviction) for i in e.message_ids]
    summarized = [i for e in events if isinstance(e, Summarization) for i in e.message_ids]
    summary_ids = {e.summary_id for e in events if isinstance(e, Summarization)}
    # Each message leaves once, by one route, and is really gone.
    assert len(evicted) == len(set(evicted)) and len(summarized) == len(set(summarized))
    assert not set(evicted) & set(summarized)
    assert not (set(evicted) | set(summarized)) & kept.keys()
    # Nothing is lost: kept + evicted + summarized is everything added (plus summaries made).
    assert (set(evicted) | set(summarized) | kept.keys()) - summary_ids == added_ids
    assert kept.keys() - added_ids <= summary_ids
    # Summaries stand for originals only, each original at most once among kept summaries.
    covered = [c for m in kept.values() if m.is_summary for c in buffer.originals(m.id)]
    assert len(covered) == len(set(covered)) and set(covered) <= added_ids
    # System instructions are never evicted or summarized.
    assert all(m.id in kept for m in added if m.role == "system")
    # Token accounting is exact (billed tokens plus the reply primer).
    assert buffer.tokens == sum(m.billed_tokens for m in kept.values()) + 3
    # The budget holds, unless the buffer said why it cannot.
    over = (buffer.max_tokens is not None and buffer.tokens > buffer.max_tokens) or (
        buffer.max_entries is not None and len(buffer) > buffer.max_entries
    )
    if over:
        assert new_events and isinstance(new_events[-1], OverBudget)
        assert new_events[-1].protected_ids == tuple(kept)
    # Tool results never outlive their call, and answered calls keep their results.
    calls = {c: m.id for m in kept.values() for c in m.tool_call_ids}
    for m in kept.values():
        if m.role == "tool":
            assert m.tool_call_id in calls, f"{m.id} kept without its call"
    added_results = {m.tool_call_id: m.id for m in added if m.role == "tool"}
    for call_id in calls:
        if call_id in added_results:
            assert added_results[call_id] in kept, f"call {call_id} kept without its result"
    # The window keeps originals oldest first.
    order = {m.id: i for i, m in enumerate(added)}
    positions = [order[i] for i in kept if i in order]
    assert positions == sorted(positions)
    # What the buffer sends is a request the chat API accepts (and the openai package's types
    # describe), once no call is waiting for its result.
    if not set(calls) - added_results.keys():
        request = buffer.to_openai()
        validate_wire(request, system_first=added[0].role == "system")
        check_openai_types(request)


@pytest.mark.parametrize("policy", sorted(POLICIES))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=st.lists(step, min_size=1, max_size=60), budget=st.integers(40, 900))
def test_contract_holds_after_every_add(policy, steps, budget):
    clock = StepClock()
    buffer = POLICIES[policy](budget, clock)
    added: list[Message] = []
    for message in build_stream(steps, clock):
        before = len(buffer.trace)
        added.append(message)
        returned = buffer.add(message)
        check_invariants(buffer, added, returned, before)
        assert message.id in buffer, "the message just added is never its own victim"


@pytest.mark.parametrize("policy", sorted(POLICIES))
def test_message_larger_than_budget_is_kept_and_flagged(policy):
    clock = StepClock()
    buffer = POLICIES[policy](100, clock)
    small = Message("a", "user", "hi", 10, 14, 0.5)
    huge = Message("b", "user", "long", 500, 504, 0.5)
    buffer.add(small)
    events = buffer.add(huge)
    assert "b" in buffer
    if buffer.max_tokens is not None:
        assert [m.id for m in buffer] == ["b"]
        assert "a" in {i for e in events for i in e.message_ids}
        assert isinstance(buffer.trace[-1], OverBudget)
        assert buffer.trace[-1].protected_ids == ("b",)
        assert buffer.over_budget


@pytest.mark.parametrize("policy", sorted(POLICIES))
def test_duplicate_ids_and_orphan_results_are_refused(policy):
    buffer = POLICIES[policy](500, StepClock())
    buffer.add(Message("a", "user", "hi", 1, 5))
    with pytest.raises(ValueError, match="'a' is already in the buffer"):
        buffer.add(Message("a", "user", "again", 1, 5))
    with pytest.raises(ValueError, match="'c9' matches no tool call"):
        buffer.add(Message("t", "tool", "42", 1, 5, tool_call_id="c9"))
    with pytest.raises(TypeError, match="message must be a Message"):
        buffer.add({"role": "user", "content": "hi"})
    assert [m.id for m in buffer] == ["a"]


@pytest.mark.parametrize("policy", sorted(POLICIES))
def test_pending_tool_call_is_not_evicted(policy):
    """A call still waiting for its result stays, so the result can never arrive orphaned."""
    buffer = POLICIES[policy](60, StepClock())
    buffer.add(Message("call", "assistant", "", 10, 14, 0.0, tool_calls=(ToolCall("c1", "lookup"),)))
    buffer.add(Message("u", "user", "meanwhile", 50, 54, 1.0))
    assert "call" in buffer
    buffer.add(Message("r", "tool", "result", 10, 14, 1.0, tool_call_id="c1"))
    assert "call" in buffer and "r" in buffer


@pytest.mark.parametrize("policy", sorted(POLICIES))
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=st.lists(step, min_size=1, max_size=60), budget=st.integers(40, 400))
def test_a_bounded_trace_drops_explanations_never_messages(policy, steps, budget):
    clock = StepClock()
    buffer = POLICIES[policy](budget, clock)
    buffer.trace = Trace(max_events=3)
    added, returned = [], []
    for message in build_stream(steps, clock):
        added.append(message)
        returned.extend(buffer.add(message))
    trace = buffer.trace
    assert len(trace) <= 3
    assert trace.dropped == sum(trace.counts.values()) - len(trace)
    kinds = Counter(event.kind for event in returned)
    assert {k: v for k, v in trace.counts.items() if k != "over_budget"} == kinds
    # What add() returned still accounts for every message, however little the trace kept.
    gone = {i for e in returned for i in e.message_ids}
    summaries = {e.summary_id for e in returned if isinstance(e, Summarization)}
    assert (gone | {m.id for m in buffer}) - summaries == {m.id for m in added}


def test_trace_is_injected_and_validated():
    trace = Trace(max_events=2)
    buffer = FIFOBuffer(max_tokens=30, trace=trace)
    for i in range(6):
        buffer.add(Message(f"m{i}", "user", "x", 10, 14))
    assert buffer.trace is trace and len(trace) == 2 and trace.counts == {"eviction": 5}
    assert trace.dropped == 3 and buffer.stats()["evictions"] == 5
    assert [e.message_ids for e in trace] == [("m3",), ("m4",)]
    with pytest.raises(ValueError, match="max_events must be >= 1, got 0"):
        Trace(max_events=0)
    with pytest.raises(TypeError, match="max_events must be an integer, got True"):
        Trace(max_events=True)
    with pytest.raises(TypeError, match="max_events must be an integer, got '5'"):
        Trace(max_events="5")
    with pytest.raises(TypeError, match="trace must be a Trace, got \\[\\]"):
        FIFOBuffer(max_tokens=30, trace=[])


@pytest.mark.parametrize("policy", sorted(POLICIES))
def test_every_policy_forwards_the_base_keywords(policy):
    # The options a long-running agent needs (a bounded trace, its clock, its chat format,
    # unpinned system messages) reach MessageBuffer through every policy's constructor.
    from memorykit.buffers.registry import POLICIES as REGISTRY
    from memorykit.tokens import ChatFormat
    from memorykit.trace import Trace

    trace, clock, fmt = Trace(max_events=5), StepClock(), ChatFormat(tokens_per_message=4)
    buffer = REGISTRY[policy].build(200, trace=trace, clock=clock, chat_format=fmt,
                                    pin_system=False)
    assert buffer.trace is trace and buffer.clock is clock
    assert buffer.chat_format == fmt and buffer.pin_system is False
