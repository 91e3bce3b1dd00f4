"""The conversation-buffer contract: what every pruning policy must keep, whatever it evicts.

The subject is a ``BufferMaker``, ``(budget, clock) -> MessageBuffer``: the test suite runs
these contracts over every policy of ``memorykit.buffers.registry`` (``tests/test_buffer_contract.py``),
and lesson 02's build-it-yourself exercise runs them over the student's victim choice
(``memorykit.classroom.lesson02_checks.check_victim_choice``).

The streams are random but reproducible (Hypothesis with a fixed seed): user, assistant and
system messages of 0-220 tokens, tool calls followed by their results, time passing between
them.

Taught in ``notebooks/02_pruning_strategies.ipynb``.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memorykit.buffers.base import MessageBuffer
from memorykit.clock import StepClock
from memorykit.classroom.contracts.runner import Contract
from memorykit.messages import Message, ToolCall, validate_wire
from memorykit.trace import Eviction, OverBudget, Summarization, Trace

BufferMaker = Callable[[int, StepClock], MessageBuffer]
RequestCheck = Callable[[list[dict[str, Any]]], None]

# Fixed seeds: a checker gives the same verdict on every run, and no example database is
# written next to a student's notebook.
_PROPERTY = settings(max_examples=60, deadline=None, derandomize=True, database=None,
                     report_multiple_bugs=False,
                     suppress_health_check=[HealthCheck.too_slow])
_PROPERTY_SHORT = settings(_PROPERTY, max_examples=25)

Step = tuple[str, int, float, float]
STEP = st.tuples(
    st.sampled_from(["user", "assistant", "assistant", "system", "tool_call", "user"]),
    st.integers(min_value=0, max_value=220),
    st.floats(min_value=0.0, max_value=1.0, allow_nan=False),
    st.floats(min_value=0.0, max_value=30.0, allow_nan=False),
)
"""One step of a conversation: (kind, content tokens, importance, minutes elapsed before it)."""


def build_stream(steps: list[Step], clock: StepClock) -> Iterator[Message]:
    """Messages in arrival order; a tool call is followed by its result(s)."""
    ids = itertools.count(1)
    turn = 0
    for kind, tokens, importance, gap in steps:
        clock.advance_minutes(gap)
        now = clock.now()
        if kind == "user":
            turn += 1

        def make(role: str, n: int, **kw: Any) -> Message:
            return Message(f"m{next(ids)}", role, "x" * min(n, 5), n, n + 4, importance,
                           created_at=now, turn=turn, **kw)

        if kind == "tool_call":
            call_ids = (f"call{next(ids)}", f"call{next(ids)}")[: 1 + tokens % 2]
            yield make("assistant", tokens // 3,
                       tool_calls=tuple(ToolCall(c, "lookup", "{}") for c in call_ids))
            for call_id in call_ids:
                yield make("tool", tokens // 2, tool_call_id=call_id)
        else:
            yield make(kind, tokens)


def check_invariants(buffer: MessageBuffer, added: list[Message], returned: list[Any],
                     trace_len_before: int, check_request: RequestCheck | None = None) -> None:
    """Everything that must hold after one ``add``; ``AssertionError`` names what broke."""
    kept = {m.id: m for m in buffer}
    added_ids = {m.id for m in added}
    events = list(buffer.trace)
    new_events = events[trace_len_before:]
    assert [e for e in new_events if not isinstance(e, OverBudget)] == returned, (
        "add() must return exactly the events it appended to the trace")
    evicted = [i for e in events if isinstance(e, Eviction) for i in e.message_ids]
    summarized = [i for e in events if isinstance(e, Summarization) for i in e.message_ids]
    summary_ids = {e.summary_id for e in events if isinstance(e, Summarization)}
    assert len(evicted) == len(set(evicted)) and len(summarized) == len(set(summarized)), (
        "a message was evicted or summarized twice")
    assert not set(evicted) & set(summarized), "a message was both evicted and summarized"
    for event in new_events:
        if isinstance(event, Eviction):
            assert isinstance(event.rule, str) and event.rule.strip(), (
                f"the eviction of {list(event.message_ids)} names no rule (got {event.rule!r}): "
                "the trace must say which rule chose the victim")
            assert isinstance(event.reason, str) and event.reason.strip(), (
                f"the eviction of {list(event.message_ids)} gives no reason (got "
                f"{event.reason!r}): the trace must say why, with the numbers")
    still_kept = (set(evicted) | set(summarized)) & kept.keys()
    assert not still_kept, f"messages recorded as removed are still kept: {sorted(still_kept)}"
    lost = added_ids - (set(evicted) | set(summarized) | kept.keys())
    assert not lost, f"messages lost without an eviction or summary event: {sorted(lost)}"
    assert kept.keys() - added_ids <= summary_ids, "the buffer holds messages nobody added"
    covered = [c for m in kept.values() if m.is_summary for c in buffer.originals(m.id)]
    assert len(covered) == len(set(covered)) and set(covered) <= added_ids, (
        "a message is covered by two kept summaries")
    pinned_gone = [m.id for m in added if m.role == "system" and m.id not in kept]
    assert not pinned_gone, f"system messages were evicted: {pinned_gone}"
    expected = sum(m.billed_tokens for m in kept.values()) + 3
    assert buffer.tokens == expected, (
        f"token total {buffer.tokens} != billed tokens of the kept messages + 3 = {expected}")
    over = (buffer.max_tokens is not None and buffer.tokens > buffer.max_tokens) or (
        buffer.max_entries is not None and len(buffer) > buffer.max_entries)
    if over:
        assert new_events and isinstance(new_events[-1], OverBudget), (
            f"over the limits ({buffer.tokens} tokens, {len(buffer)} entries) without an "
            "OverBudget event: your victim choice returned None while a message could go")
        assert new_events[-1].protected_ids == tuple(kept)
    calls = {c: m.id for m in kept.values() for c in m.tool_call_ids}
    for m in kept.values():
        if m.role == "tool":
            assert m.tool_call_id in calls, f"tool result {m.id} kept without its call"
    added_results = {m.tool_call_id: m.id for m in added if m.role == "tool"}
    for call_id in calls:
        if call_id in added_results:
            assert added_results[call_id] in kept, f"call {call_id} kept without its result"
    order = {m.id: i for i, m in enumerate(added)}
    positions = [order[i] for i in kept if i in order]
    assert positions == sorted(positions), "the window is not in arrival order"
    if not set(calls) - added_results.keys():
        request = buffer.to_openai()
        validate_wire(request, system_first=added[0].role == "system")
        if check_request is not None:
            check_request(request)


def _holds_after_every_add(check_request: RequestCheck | None) -> Callable[[BufferMaker], None]:
    def check(make: BufferMaker) -> None:
        @_PROPERTY
        @given(steps=st.lists(STEP, min_size=1, max_size=60), budget=st.integers(40, 900))
        def stream(steps: list[Step], budget: int) -> None:
            clock = StepClock()
            buffer = make(budget, clock)
            added: list[Message] = []
            for message in build_stream(steps, clock):
                before = len(buffer.trace)
                added.append(message)
                returned = buffer.add(message)
                check_invariants(buffer, added, returned, before, check_request)
                assert message.id in buffer, (
                    f"{message.id} was evicted by its own add: the message just added is "
                    "never its own victim")

        stream()

    return check


def _larger_than_budget_is_kept(make: BufferMaker) -> None:
    buffer = make(100, StepClock())
    buffer.add(Message("a", "user", "hi", 10, 14, 0.5))
    events = buffer.add(Message("b", "user", "long", 500, 504, 0.5))
    assert "b" in buffer, "a message larger than the budget must still be kept"
    if buffer.max_tokens is not None:
        assert [m.id for m in buffer] == ["b"], (
            f"everything else should go to make room, kept {[m.id for m in buffer]}")
        assert "a" in {i for e in events for i in e.message_ids}
        assert isinstance(buffer.trace[-1], OverBudget), "the overflow must be reported"
        assert buffer.trace[-1].protected_ids == ("b",)
        assert buffer.over_budget


def _bad_input_is_refused(make: BufferMaker) -> None:
    buffer = make(500, StepClock())
    buffer.add(Message("a", "user", "hi", 1, 5))
    for bad, expected in ((Message("a", "user", "again", 1, 5), ValueError),
                          (Message("t", "tool", "42", 1, 5, tool_call_id="c9"), ValueError),
                          ({"role": "user", "content": "hi"}, TypeError)):
        try:
            buffer.add(bad)  # type: ignore[arg-type]
        except expected:
            continue
        raise AssertionError(f"add({bad!r}) was accepted; it must raise {expected.__name__}")
    assert [m.id for m in buffer] == ["a"], "a refused message changed the buffer"


def _pending_tool_call_stays(make: BufferMaker) -> None:
    buffer = make(60, StepClock())
    buffer.add(Message("call", "assistant", "", 10, 14, 0.0,
                       tool_calls=(ToolCall("c1", "lookup"),)))
    buffer.add(Message("u", "user", "meanwhile", 50, 54, 1.0))
    assert "call" in buffer, "a tool call still waiting for its result was evicted"
    buffer.add(Message("r", "tool", "result", 10, 14, 1.0, tool_call_id="c1"))
    assert "call" in buffer and "r" in buffer, "a call and its just-arrived result must stay"


def _bounded_trace_keeps_messages(make: BufferMaker) -> None:
    @_PROPERTY_SHORT
    @given(steps=st.lists(STEP, min_size=1, max_size=60), budget=st.integers(40, 400))
    def stream(steps: list[Step], budget: int) -> None:
        clock = StepClock()
        buffer = make(budget, clock)
        buffer.trace = Trace(max_events=3)
        added: list[Message] = []
        returned: list[Any] = []
        for message in build_stream(steps, clock):
            added.append(message)
            returned.extend(buffer.add(message))
        trace = buffer.trace
        assert len(trace) <= 3
        assert trace.dropped == sum(trace.counts.values()) - len(trace)
        kinds = Counter(event.kind for event in returned)
        assert {k: v for k, v in trace.counts.items() if k != "over_budget"} == kinds
        gone = {i for e in returned for i in e.message_ids}
        summaries = {e.summary_id for e in returned if isinstance(e, Summarization)}
        lost = {m.id for m in added} - (gone | {m.id for m in buffer}) - summaries
        assert not lost, f"with a bounded trace, messages were lost: {sorted(lost)}"

    stream()


def buffer_contracts(check_request: RequestCheck | None = None) -> tuple[Contract[BufferMaker], ...]:
    """The contract every conversation buffer keeps; ``check_request`` also checks each request
    the buffer would send (the test suite passes the ``openai`` package's own types)."""
    return (
        Contract("after every add nothing is lost, the budget holds (or OverBudget says why), "
                 "tool calls keep their results and the order is kept",
                 _holds_after_every_add(check_request)),
        Contract("a message larger than the budget is kept and flagged",
                 _larger_than_budget_is_kept),
        Contract("duplicate ids, orphan tool results and non-messages are refused",
                 _bad_input_is_refused),
        Contract("a tool call waiting for its result is not evicted", _pending_tool_call_stays),
        Contract("a bounded trace drops explanations, never messages",
                 _bounded_trace_keeps_messages),
    )


BUFFER_CONTRACTS = buffer_contracts()


def _decisions(events: list[Any]) -> list[tuple[tuple[str, ...], str, float | None]]:
    return [(e.message_ids, e.rule, None if e.score is None else round(e.score, 9))
            for e in events if isinstance(e, Eviction)]


def agrees_with(reference: BufferMaker, what: str) -> Contract[BufferMaker]:
    """The subject keeps exactly what ``reference`` keeps after every add of a random stream,
    and records each eviction under the same rule and score: a build-it-yourself exercise checks
    the student's policy against the library's."""

    def check(make: BufferMaker) -> None:
        @_PROPERTY
        @given(steps=st.lists(STEP, min_size=1, max_size=60), budget=st.integers(40, 900))
        def stream(steps: list[Step], budget: int) -> None:
            theirs_clock, ours_clock = StepClock(), StepClock()
            theirs, ours = make(budget, theirs_clock), reference(budget, ours_clock)
            for a, b in zip(build_stream(steps, theirs_clock), build_stream(steps, ours_clock)):
                their_events, our_events = theirs.add(a), ours.add(b)
                kept, expected = [m.id for m in theirs], [m.id for m in ours]
                assert kept == expected, (
                    f"after adding {a.id} your buffer keeps {kept}, {what} keeps {expected}")
                for (ids, rule, score), (_, our_rule, our_score) in zip(
                        _decisions(their_events), _decisions(our_events)):
                    assert (rule, score) == (our_rule, our_score), (
                        f"after adding {a.id} your buffer evicted {list(ids)} under rule "
                        f"{rule!r} with score {score}; {what} records rule {our_rule!r} with "
                        f"score {our_score} (the victim tuple is (id, rule, reason, score))")

        stream()

    return Contract(f"it chooses the same victims as {what}, under the same rule and score",
                    check)
