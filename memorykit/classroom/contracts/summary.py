"""The summary contracts: what every summarizer and every summary buffer built on it must keep.

The subject is a ``Summarizer`` (``memorykit.summary``): ``summarize(messages, max_tokens)``
returns text of at most ``max_tokens`` tokens. The test suite runs these contracts over the
library's ``ExtractiveSummarizer`` (``tests/test_summary.py``, ``tests/test_summary_buffer.py``);
lesson 03's build-it-yourself exercise runs them over the student's summarizer
(``memorykit.classroom.lesson03_checks.check_summarizer``).

``SUMMARY_BUFFER_CONTRACT`` drives a ``SummaryBuffer`` that uses the subject through random
conversations (words from a small vocabulary, tool calls, system messages) and checks after every
add that nothing is lost: every message is kept, summarized or evicted exactly once, what the
window stands for plus what was evicted is everything added, the budget holds (or OverBudget
says why) and the provenance of every summary resolves to originals.

Taught in ``notebooks/03_summary_buffer.ipynb``.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memorykit.buffers import SummaryBuffer
from memorykit.clock import StepClock
from memorykit.classroom.contracts.runner import Contract
from memorykit.messages import Message, MessageFactory, ToolCall
from memorykit.summary import Summarizer
from memorykit.tokens import Tokenizer
from memorykit.trace import OverBudget, Trace

_PROPERTY = settings(max_examples=40, deadline=None, derandomize=True, database=None,
                     report_multiple_bugs=False,
                     suppress_health_check=[HealthCheck.too_slow])

VOCAB = (
    "Alice Bob Paris Rome 2400 euros hotel flight train museum budget Tuesday "
    "booked dinner 7pm table window seat invoice 42 refund ticket cancelled"
).split()

STEP = st.tuples(
    st.sampled_from(["user", "assistant", "user", "assistant", "system", "tool_call"]),
    st.lists(st.lists(st.sampled_from(VOCAB), min_size=1, max_size=14), min_size=1, max_size=4),
    st.floats(0.0, 1.0, allow_nan=False),
    st.integers(1, 2),
)
"""One step: (kind, sentences of vocabulary words, importance, results of a tool call)."""


def stream(steps: list[Any], factory: MessageFactory) -> Iterator[Message]:
    """Messages in arrival order; a tool call is followed by its result(s)."""
    calls = itertools.count(1)
    for kind, sentences, importance, n_results in steps:
        text = " ".join(" ".join(s) + "." for s in sentences)
        if kind == "tool_call":
            ids = tuple(f"call{next(calls)}" for _ in range(n_results))
            yield factory.assistant(text, tool_calls=tuple(ToolCall(c, "lookup") for c in ids),
                                    importance=importance)
            for cid in ids:
                yield factory.tool(text, call_id=cid, importance=importance)
        else:
            yield factory.message(kind, text, importance=importance)


def originals_in_trace(trace: Trace, message_id: str) -> set[str]:
    """What ``message_id`` stood for, resolved through ``trace`` alone: a summary stands for
    what each round of its chain took in (``covered_ids``), an original for itself."""
    made = {e.summary_id: e for e in trace.summarizations()}
    out: set[str] = set()
    todo = [message_id]
    while todo:
        mid = todo.pop()
        event = made.get(mid)
        if event is None:
            out.add(mid)
        else:
            out.update(event.covered_ids)
            todo.extend(i for i in event.message_ids if i in made)
    return out


def check_window(buf: SummaryBuffer, added: list[Message], new_events: list[Any]) -> None:
    """Everything that must hold after one ``add`` to a summary buffer."""
    kept = {m.id: m for m in buf}
    summarized = buf.trace.summarized_ids()
    evicted = buf.trace.evicted_ids()
    created = [e.summary_id for e in buf.trace.summarizations()]
    for mid in [m.id for m in added] + created:
        fates = (mid in kept) + summarized.count(mid) + evicted.count(mid)
        assert fates == 1, (f"{mid} is kept, summarized or evicted {fates} times, not exactly "
                            "once")
    lost = {i for mid in evicted for i in originals_in_trace(buf.trace, mid)}
    missing = {m.id for m in added} - (set(buf.covered_ids()) | lost)
    assert not missing, f"messages lost without a summary or an eviction: {sorted(missing)}"
    assert not set(buf.covered_ids()) & lost, "a message is both covered and evicted"
    expected = sum(m.billed_tokens for m in kept.values()) + 3
    assert buf.tokens == expected, (
        f"token total {buf.tokens} != billed tokens of the kept messages + 3 = {expected}")
    if buf.max_tokens is not None and buf.tokens > buf.max_tokens:
        assert new_events and isinstance(new_events[-1], OverBudget), (
            f"{buf.tokens} tokens over the {buf.max_tokens}-token budget without an "
            "OverBudget event: does your summary respect max_tokens?")
    assert added[-1].id in kept, "the message just added must be kept"
    assert all(m.id in kept for m in added if m.role == "system"), "a system message left"
    summaries = buf.summaries()
    assert len(summaries) <= 1, "more than one summary in the window"
    if summaries:
        order = list(kept)
        pos = order.index(summaries[0].id)
        assert all(order.index(m.id) > pos for m in kept.values()
                   if not m.pinned and not m.is_summary), "the summary must precede the originals"
    calls = {c for m in kept.values() for c in m.tool_call_ids}
    assert all(m.tool_call_id in calls for m in kept.values() if m.role == "tool"), (
        "a tool result outlived its call")
    results = {m.tool_call_id: m.id for m in added if m.role == "tool"}
    assert all(results[c] in kept for c in calls if c in results), "a call lost its result"
    arrival = {m.id: i for i, m in enumerate(added)}
    seq = [arrival[i] for i in kept if i in arrival]
    assert seq == sorted(seq), "the originals are not in arrival order"
    assert buf.token_history[-1].after == buf.tokens


def _buffer_loses_nothing(summarizer: Summarizer) -> None:
    @_PROPERTY
    @given(steps=st.lists(STEP, min_size=1, max_size=45), budget=st.integers(40, 500),
           min_recent=st.integers(0, 4),
           thresholds=st.sampled_from([(0.8, 0.6), (0.5, 0.2), (1.0, 0.9), (0.9, 0.3)]))
    def check(steps: list[Any], budget: int, min_recent: int,
              thresholds: tuple[float, float]) -> None:
        threshold, target = thresholds
        factory = MessageFactory(clock=StepClock())
        buf = SummaryBuffer(budget, threshold, target, min_recent, summarizer=summarizer,
                            factory=MessageFactory(id_prefix="s"))
        added: list[Message] = []
        for message in stream(steps, factory):
            before = len(buf.trace)
            added.append(message)
            buf.add(message)
            check_window(buf, added, list(buf.trace)[before:])
        assert len(buf.token_history) == len(added)

    check()


def _within_the_cap(summarizer: Summarizer) -> None:
    counter = Tokenizer()

    @_PROPERTY
    @given(steps=st.lists(STEP, max_size=12), cap=st.integers(0, 80))
    def check(steps: list[Any], cap: int) -> None:
        messages = list(stream(steps, MessageFactory(counter)))
        text = summarizer.summarize(messages, cap)
        assert isinstance(text, str), f"summarize must return a str, got {text!r}"
        assert counter.count(text) <= cap, (
            f"the summary has {counter.count(text)} tokens, over max_tokens={cap}: count the "
            f"whole text you return, labels and spaces included | summary: {text[:120]!r}")
        assert summarizer.summarize(messages, cap) == text, (
            "the same messages and cap gave a different summary: a summarizer must be "
            "deterministic")

    check()


def _nothing_to_summarize(summarizer: Summarizer) -> None:
    message = MessageFactory().user("Alice booked the 7pm table for 42 euros.")
    for messages, cap in (([], 50), ([message], 0)):
        text = summarizer.summarize(messages, cap)
        assert text == "", (f"summarize({len(messages)} messages, max_tokens={cap}) must return "
                            f"'' (nothing to summarize, or no room), got {text!r}")


SUMMARIZER_CONTRACTS: tuple[Contract[Summarizer], ...] = (
    Contract("the summary fits max_tokens and is the same every time", _within_the_cap),
    Contract("no messages, or max_tokens 0, gives ''", _nothing_to_summarize),
    Contract("a SummaryBuffer using it loses nothing: every message is kept, summarized or "
             "evicted once, provenance resolves, the budget holds", _buffer_loses_nothing),
)


# What lesson 03's build-it-yourself summarizer must do beyond the contract every summarizer keeps:
# keep the sentences holding a number (the facts), labelled by role, the newest when short of room.
def _keeps_every_fact_with_room(summarizer: Summarizer) -> None:
    factory = MessageFactory()
    messages = [factory.user("Hello there. My flight AF 4645 leaves at 7pm."),
                factory.assistant("Noted. Your seat is 14D, booked for 2 nights. Anything else?"),
                factory.user("No thanks.")]
    text = summarizer.summarize(messages, 200)
    missing = [s for s in ("My flight AF 4645 leaves at 7pm.", "Your seat is 14D, booked for 2 "
                           "nights.") if s not in text]
    assert not missing, (f"with room for everything, every sentence holding a number must be "
                         f"kept, labelled by its role; missing {missing} in {text!r}")
    assert "Hello there." not in text and "No thanks." not in text, (
        f"a sentence without a number is not a fact: leave it out, got {text!r}")
    assert text.startswith("user: My flight") and "assistant: Your seat" in text, (
        f"label each sentence with its message's role ('user: ...') and keep conversation "
        f"order, got {text!r}")


def _keeps_the_newest_when_short(summarizer: Summarizer) -> None:
    factory = MessageFactory()
    messages = [factory.user("My flight AF 4645 leaves at 7pm."),
                factory.assistant("Your seat is 14D, booked for 2 nights."),
                factory.user("The gate code is 5521 for the lounge.")]
    newest = ("assistant: Your seat is 14D, booked for 2 nights. "
              "user: The gate code is 5521 for the lounge.")
    cap = Tokenizer().count(newest)
    text = summarizer.summarize(messages, cap)
    assert text == newest, (
        f"three facts, room ({cap} tokens) for the newest two only: when not all fit, keep the "
        f"newest that do (walk from the newest back), in conversation order; expected "
        f"{newest!r}, got {text!r}")
    # A newest fact too long for the room is skipped, not a reason to stop: older ones that
    # still fit are kept.
    long_fact = ("The itinerary lists 3 connections, 2 lounges, 4 meal vouchers, 1 hotel night "
                 "and 6 taxi rides across 5 cities over 9 days in 2026.")
    messages.append(factory.assistant(long_fact))
    text = summarizer.summarize(messages, cap)
    assert text == newest, (
        f"the newest fact ({Tokenizer().count('assistant: ' + long_fact)} tokens) cannot fit in "
        f"{cap} tokens: skip it and go on to older facts (keep each that still fits, walking "
        f"from the newest back); expected {newest!r}, got {text!r}")


FACTS_FIRST_CONTRACTS: tuple[Contract[Summarizer], ...] = (
    Contract("with room, it keeps every sentence holding a number and only those, labelled and "
             "in order", _keeps_every_fact_with_room),
    Contract("short of room, it keeps the newest facts that fit", _keeps_the_newest_when_short),
)
