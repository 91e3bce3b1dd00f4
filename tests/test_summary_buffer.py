"""SummaryBuffer: hand-computed rounds, fallback, validation, and the summary contracts.

Hand-computed cases count tokens in words (a TokenCounter whose count is the
number of whitespace-separated words), so every number can be checked on paper:
a message costs words + 4 (3 framing + 1 role token), the window adds a
3-token reply primer.
"""

from __future__ import annotations

import itertools

import pytest

from memorykit.buffers import SummaryBuffer
from memorykit.classroom.contracts.summary import SUMMARIZER_CONTRACTS, originals_in_trace
from memorykit.messages import MessageFactory, ToolCall
from memorykit.summary import ExtractiveSummarizer
from memorykit.tokens import ChatFormat
from memorykit.trace import Eviction, OverBudget, Summarization, Trace


class WordCounter:
    encoding = "words"

    def count(self, text: str) -> int:
        return len(text.split())


_serial = itertools.count()


def sixteen_words() -> str:
    """Two distinct 8-word sentences (each 9 words once labelled "user: ")."""
    n = next(_serial)
    a = " ".join(f"alpha{n}w{i}" for i in range(7)) + f" end{n}a."
    b = " ".join(f"beta{n}w{i}" for i in range(7)) + f" end{n}b."
    return f"{a} {b}"


def make(budget=100, threshold=0.8, target=0.6, min_recent=2, cap=10):
    factory = MessageFactory(WordCounter())
    buf = SummaryBuffer(
        budget, threshold, target, min_recent,
        summary_max_tokens=cap,
        factory=MessageFactory(WordCounter(), id_prefix="s"),
    )
    return factory, buf


def test_first_round_fires_above_threshold_and_lands_under_target():
    f, buf = make()
    msgs = [f.user(sixteen_words()) for _ in range(3)]
    for m in msgs:
        assert buf.add(m) == []
    assert buf.tokens == 3 + 3 * 20 == 63
    m4 = f.user(sixteen_words())
    events = buf.add(m4)
    # 83 > 0.8 x 100: take m1 (83-20+14 = 77 > 60), then m2 (83-40+14 = 57 <= 60).
    [e] = events
    assert isinstance(e, Summarization)
    assert e.message_ids == (msgs[0].id, msgs[1].id)
    assert e.covered_ids == (msgs[0].id, msgs[1].id)
    assert e.depth == 1 and e.rule == "summary-buffer"
    summary = buf.get(e.summary_id)
    assert summary.content_tokens == 9  # one labelled sentence fits the 10-word cap
    assert e.tokens_before == 83 and e.tokens_after == 83 - 40 + 13 == buf.tokens == 56
    assert buf.tokens <= buf.target_tokens
    assert [m.id for m in buf] == [summary.id, msgs[2].id, m4.id]
    assert buf.token_history[-1].before == 83 and buf.token_history[-1].after == 56
    assert "83 tokens > threshold 0.8 x 100" in e.reason


def test_summary_of_summaries_chains_covered_ids():
    f, buf = make()
    ms = [f.user(sixteen_words()) for _ in range(6)]
    events = [e for m in ms for e in buf.add(m)]
    first, second = events
    # After m6: [S1 13, m3, m4, m5, m6] = 96 tokens; take S1, m3, m4 (96-53+14 = 57).
    assert second.message_ids == (first.summary_id, ms[2].id, ms[3].id)
    # The round names only what it took in; the summary cites S1 by id, and the buffer
    # resolves the chain to every original.
    assert second.covered_ids == (ms[2].id, ms[3].id)
    assert buf.get(second.summary_id).sources == second.message_ids
    assert buf.originals(second.summary_id) == tuple(m.id for m in ms[:4])
    assert second.depth == 2 and buf.summary_depth() == 2
    assert second.tokens_before == 96 and second.tokens_after == 56
    assert first.summary_id not in buf
    # min_recent = 2: the last two messages are kept as they were.
    assert [m.id for m in buf][-2:] == [ms[4].id, ms[5].id]
    # Kept plus summarized covers everything added.
    assert buf.covered_ids() == tuple(m.id for m in ms)
    assert [s.id for s in buf.summaries()] == [second.summary_id]


def test_sawtooth_history_has_one_sample_per_add():
    f, buf = make()
    ms = [f.user(sixteen_words()) for _ in range(10)]
    for m in ms:
        buf.add(m)
    hist = buf.token_history
    assert [h.message_id for h in hist] == [m.id for m in ms]
    assert all(h.after <= h.before for h in hist)
    drops = [h for h in hist if h.after < h.before]
    assert len(drops) == len(buf.trace.summarizations())
    assert hist[-1].after == buf.tokens


def test_token_history_keeps_the_newest_samples_up_to_its_limit():
    factory = MessageFactory(WordCounter())
    buf = SummaryBuffer(100, summary_max_tokens=10, token_history_limit=4,
                        factory=MessageFactory(WordCounter(), id_prefix="s"))
    ms = [factory.user(sixteen_words()) for _ in range(9)]
    for m in ms:
        buf.add(m)
    assert buf.token_history_limit == 4
    assert [h.message_id for h in buf.token_history] == [m.id for m in ms[-4:]]
    assert buf.token_history[-1].after == buf.tokens


def test_provenance_grows_linearly_with_the_messages_not_with_the_rounds():
    """Counted, not timed: every id stored by the events, the summaries' sources and the
    resolved provenance. Repeating the covered originals in every round (the old record)
    stores ~ rounds x messages / 2 ids: 50x the messages here."""
    f, buf = make(min_recent=2)
    system = f.system("be brief")
    ms = [system] + [f.user(sixteen_words()) for _ in range(2000)]
    for m in ms:
        buf.add(m)
    rounds = buf.trace.summarizations()
    assert len(rounds) > 500
    stored = (sum(len(e.message_ids) + len(e.covered_ids) for e in rounds)
              + sum(len(m.sources) for m in buf) + sum(r.runs for r in buf._originals.values()))
    assert stored <= 3 * len(ms)
    [summary] = buf.summaries()
    assert buf._originals[summary.id].runs == 1  # m000002 .. m0019xx: one run of a counter
    # ... and still resolves to every original it stands for, in arrival order.
    assert buf.covered_ids() == tuple(m.id for m in ms)
    assert originals_in_trace(buf.trace, summary.id) == set(buf.originals(summary.id))


def test_originals_of_an_original_is_itself_and_unknown_ids_are_named():
    f, buf = make()
    m = f.user("hi")
    buf.add(m)
    assert buf.originals(m.id) == (m.id,)
    with pytest.raises(KeyError, match="'nope' is not in the buffer"):
        buf.originals("nope")


def test_pinned_system_first_then_summary_then_rest():
    f, buf = make()
    sys = f.system("be brief")
    buf.add(sys)
    ms = [f.user(sixteen_words()) for _ in range(4)]
    for m in ms:
        buf.add(m)
    # 6 + 3 + 60 = 69 after three, 89 after four: summarize m1 (89-20+14 = 83), m2 (63)
    # m3 is protected (min_recent 2), so the round stops at m2.
    [e] = buf.trace.summarizations()
    roles = [d["role"] for d in buf.to_openai()]
    assert roles == ["system", "system", "user", "user"]
    assert [m.id for m in buf][:2] == [sys.id, e.summary_id]
    assert buf.get(sys.id).pinned and not buf.get(e.summary_id).pinned


def test_tool_group_is_never_split():
    f, buf = make()
    u1 = f.user(sixteen_words())
    call = f.assistant(sixteen_words(), tool_calls=(ToolCall("c1", "lookup"),))
    r1 = f.tool(sixteen_words(), call_id="c1")
    u2 = f.user(sixteen_words())
    for m in (u1, call, r1, u2):
        buf.add(m)
    # 88 > 80 (the call bills 5 tokens more for "lookup" and "{}": 3 framing + 1 + 1).
    # r1 is protected (last two), so its call is too: only u1 is summarized.
    assert call.billed_tokens == 20 + 5
    [e] = buf.trace.summarizations()
    assert e.message_ids == (u1.id,)
    assert call.id in buf and r1.id in buf
    assert buf.tokens == 88 - 20 + 13 == 81  # above target, under budget: no OverBudget
    assert not any(isinstance(ev, OverBudget) for ev in buf.trace)
    # Once both leave the protected tail the group is summarized whole.
    for _ in range(2):
        buf.add(f.user(sixteen_words()))
    ids = [i for ev in buf.trace.summarizations() for i in ev.message_ids]
    assert (call.id in ids) == (r1.id in ids)


def test_huge_recent_message_triggers_overflow_then_fifo_fallback():
    f, buf = make(min_recent=3)
    u1 = f.user(sixteen_words())
    big = f.user(" ".join(f"big{i}" for i in range(90)))  # 94 billed tokens
    buf.add(u1)
    events = buf.add(big)
    # 117 > 100; min_recent protects u1, so u1 is summarized under rule summary-overflow
    # (117-20+13 = 110), still over the hard budget, so the summary is evicted: 97.
    summ, ev = events
    assert isinstance(summ, Summarization) and summ.rule == "summary-overflow"
    assert summ.message_ids == (u1.id,)
    assert "min_recent=3 overridden" in summ.reason
    assert isinstance(ev, Eviction) and ev.message_ids == (summ.summary_id,)
    assert ev.rule == "summary-fallback-fifo"
    assert buf.tokens == 97 and [m.id for m in buf] == [big.id]


def test_single_message_over_budget_is_kept_and_flagged():
    f, buf = make()
    huge = f.user(" ".join(f"w{i}" for i in range(120)))
    assert buf.add(huge) == []
    assert huge.id in buf and isinstance(buf.trace[-1], OverBudget)


def test_default_summarizer_and_cap():
    buf = SummaryBuffer()
    assert buf.max_tokens == 2000 and buf.threshold_tokens == 1600 and buf.target_tokens == 1200
    assert buf.summary_max_tokens == 500 and buf.min_recent == 3
    assert isinstance(buf.summarizer, ExtractiveSummarizer)
    assert buf.stats()["summarizer_is_llm"] is False


@pytest.mark.parametrize(
    "kwargs, exc, message",
    [
        ({"target": 0.9}, ValueError, r"target must be < threshold \(0.8\), got 0.9"),
        ({"target": 0.8}, ValueError, r"target must be < threshold \(0.8\), got 0.8"),
        ({"threshold": 0.0}, ValueError, r"threshold must be in \(0, 1\], got 0.0"),
        ({"threshold": 1.5}, ValueError, r"threshold must be in \(0, 1\], got 1.5"),
        ({"target": 0.0}, ValueError, r"target must be in \(0, 1\), got 0.0"),
        ({"budget": 0}, ValueError, r"budget must be >= 1, got 0"),
        ({"min_recent": -1}, ValueError, r"min_recent must be >= 0, got -1"),
        ({"min_recent": 1.5}, TypeError, r"min_recent must be an integer, got 1.5"),
        ({"summary_max_tokens": 0}, ValueError, r"summary_max_tokens must be >= 1, got 0"),
        ({"factory": "f"}, TypeError, r"factory must be a MessageFactory, got 'f'"),
        ({"summarizer": 3}, TypeError, r"summarizer must have a summarize"),
        ({"token_history_limit": 0}, ValueError, r"token_history_limit must be >= 1, got 0"),
        ({"token_history_limit": 2.0}, TypeError, r"token_history_limit must be an integer"),
        ({"token_history_limit": True}, TypeError, r"token_history_limit must be an integer"),
    ],
)
def test_validation_names_the_value(kwargs, exc, message):
    with pytest.raises(exc, match=message):
        SummaryBuffer(**kwargs)


def test_factory_chat_format_must_match():
    with pytest.raises(ValueError, match="factory.chat_format must equal"):
        SummaryBuffer(factory=MessageFactory(chat_format=ChatFormat(tokens_per_message=4)))


def test_summary_id_collision_is_refused():
    f = MessageFactory(WordCounter())
    buf = SummaryBuffer(100, min_recent=1, summary_max_tokens=10, factory=f)
    # The summary factory is the conversation's own: ids stay unique, no collision.
    for _ in range(6):
        buf.add(f.user(sixteen_words()))
    assert buf.trace.summarizations()
    g = MessageFactory(WordCounter())  # a second factory restarting at m000001
    buf2 = SummaryBuffer(100, min_recent=1, summary_max_tokens=10, factory=g)
    h = MessageFactory(WordCounter())
    with pytest.raises(ValueError, match="already in the buffer"):
        for _ in range(6):
            buf2.add(h.user(sixteen_words()))


# --------------------------------------------------------------- the contract
# Moved into the package (memorykit.classroom.contracts.summary): lesson 03's build-it-yourself exercise
# runs the same contracts over the student's summarizer.
@pytest.mark.parametrize("contract", SUMMARIZER_CONTRACTS, ids=lambda c: c.name[:40])
def test_extractive_summarizer_keeps_the_summary_contracts(contract):
    contract(ExtractiveSummarizer())


def test_stats_count_every_summarization_even_with_a_bounded_trace():
    f, buf = make()
    buf.trace = Trace(max_events=1)
    returned = []
    for _ in range(12):
        returned.extend(buf.add(f.user(sixteen_words())))
    rounds = sum(isinstance(e, Summarization) for e in returned)
    assert rounds > 1 and len(buf.trace) == 1
    assert buf.stats()["summarizations"] == rounds


class _Down:
    """A summarizer whose service is down (as an HTTP 500 would surface)."""

    name = "down"
    is_llm = True

    def __init__(self, error=RuntimeError("HTTP 500 from the summarizer")):
        self.error = error
        self.calls = 0

    def summarize(self, messages, max_tokens):
        self.calls += 1
        if isinstance(self.error, Exception):
            raise self.error
        return self.error  # a wrong type, returned instead of text


@pytest.mark.parametrize("failure", [RuntimeError("HTTP 500 from the summarizer"), None, 42])
def test_a_failing_summarizer_never_raises_after_admitting_and_keeps_the_hard_budget(failure):
    from memorykit.messages import MessageFactory

    factory = MessageFactory()
    down = _Down(failure)
    buf = SummaryBuffer(100, summarizer=down, min_recent=1)
    added = []
    for i in range(12):
        m = factory.user(f"message number {i} says something about the quarterly plan")
        added.append(m.id)
        buf.add(m)  # never raises
        assert buf.tokens <= 100
        assert m.id in {x.id for x in buf.messages()}
    assert down.calls > 0 and buf.summarizer_failures == down.calls
    evicted = [mid for e in buf.trace.evictions() for mid in e.message_ids]
    kept = [m.id for m in buf.messages()]
    assert sorted(evicted + kept) == sorted(added)  # nothing lost: every id kept or evicted
    reasons = {e.rule for e in buf.trace.evictions()}
    assert reasons == {"summary-fallback-fifo"}
    assert "the summarizer failed" in buf.trace.evictions()[0].reason
    assert buf.stats()["summarizer_failures"] == buf.summarizer_failures


# ---------------------------------------------------------------- seed 004's summarizing notice
def _notice_run(buffer, n=20):
    f = MessageFactory()
    return [buffer.add(f.user(f"Detail {i} about the parcel, the courier and the broken lid."))
            for i in range(n)]


def test_the_user_is_told_once_per_add_before_the_summarizer_runs():
    from memorykit.buffers import SUMMARIZING_NOTICE

    order: list[str] = []

    class Recorder(ExtractiveSummarizer):
        def summarize(self, messages, max_tokens):
            order.append("summarize")
            return super().summarize(messages, max_tokens)

    notices = []

    def show(notice):
        order.append("notice")
        notices.append(notice)

    buf = SummaryBuffer(200, summarizer=Recorder(), on_summarizing=show)
    events = _notice_run(buf)
    rounds = [e for evs in events for e in evs if isinstance(e, Summarization)]
    adds_that_summarized = sum(any(isinstance(e, Summarization) for e in evs) for evs in events)
    assert rounds and len(notices) == adds_that_summarized  # one notice per add, not per round
    assert order[:2] == ["notice", "summarize"]  # told first: the summarizer may take seconds
    first = notices[0]
    assert first.text == SUMMARIZING_NOTICE == "\N{THOUGHT BALLOON} Summarizing conversation history..."
    assert first.message_ids == rounds[0].message_ids  # what the first round then took
    assert first.tokens > first.threshold_tokens == buf.threshold_tokens == 160


def test_no_notice_without_summarizing_and_a_failing_display_costs_nothing():
    calm = []
    _notice_run(SummaryBuffer(2000, on_summarizing=calm.append), n=3)
    assert calm == []  # under the threshold: nothing to say

    def broken(notice):
        raise RuntimeError("the UI is gone")

    buf = SummaryBuffer(200, on_summarizing=broken)
    plain = SummaryBuffer(200)
    assert [len(e) for e in _notice_run(buf)] == [len(e) for e in _notice_run(plain)]
    assert buf.notice_failures > 0 and [m.content for m in buf] == [m.content for m in plain]
    with pytest.raises(TypeError, match="on_summarizing must be callable, got 'print'"):
        SummaryBuffer(200, on_summarizing="print")  # type: ignore[arg-type]
