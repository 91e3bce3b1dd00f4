"""ExtractiveSummarizer: scoring by hand, the token cap, determinism, summaries of summaries;
its memos and MemoSummarizer."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from memorykit.messages import Message, MessageFactory
from memorykit.summary import ExtractiveSummarizer, MemoSummarizer, Summarizer
from memorykit.tokens import Tokenizer


class WordCounter:
    encoding = "words"

    def count(self, text: str) -> int:
        return len(text.split())


def test_is_labelled_extractive_and_fits_the_protocol():
    s = ExtractiveSummarizer()
    assert isinstance(s, Summarizer)
    assert s.is_llm is False and ExtractiveSummarizer.is_llm is False
    assert s.name == "extractive(cl100k_base)"


def test_scores_by_hand():
    f = MessageFactory(WordCounter())
    a = f.user("Paris trip planning. Hotel near Paris station.", importance=1.0)
    b = f.assistant("Nice weather.", importance=0.0)
    s = ExtractiveSummarizer(WordCounter())
    scored = s.score_sentences([a, b])
    assert [x.text for x in scored] == [
        "user: Paris trip planning.",
        "user: Hotel near Paris station.",
        "assistant: Nice weather.",
    ]
    # Content words: {paris, trip, planning}, {hotel, near, paris, station}, {nice, weather}.
    # paris appears in 2 sentences (the top frequency); the rest in 1.
    first, second, third = scored
    assert first.relevance == pytest.approx((2 + 1 + 1) / 3 / 2)
    assert second.relevance == pytest.approx((1 + 1 + 2 + 1) / 4 / 2)
    assert third.relevance == pytest.approx(0.5)
    # Facts: "Paris" opens sentence 1 (not counted); in sentence 2 it is mid-sentence.
    assert (first.facts, second.facts, third.facts) == (0.0, 0.25, 0.0)
    assert (first.importance, third.importance) == (0.5, 0.0)
    assert first.tokens == 4


def test_picks_best_sentences_in_original_order_within_the_cap():
    f = MessageFactory(WordCounter())
    ms = [
        f.user("Hello there. My flight to Rome leaves at 7pm on Tuesday."),
        f.assistant("Sounds good. Your Rome hotel is booked for 3 nights."),
        f.user("Thanks."),
    ]
    s = ExtractiveSummarizer(WordCounter())
    out = s.summarize(ms, 22)  # 10 + 10 words; "user: Hello there." would make 23
    assert out == (
        "user: My flight to Rome leaves at 7pm on Tuesday. "
        "assistant: Your Rome hotel is booked for 3 nights."
    )
    assert WordCounter().count(out) <= 22
    assert s.summarize(ms, 22) == out  # deterministic
    short = s.summarize(ms, 12)
    assert short == "user: My flight to Rome leaves at 7pm on Tuesday."


@pytest.mark.parametrize("cap", [0, 1, 3, 7, 15, 40, 400])
def test_never_exceeds_max_tokens_with_real_tokenizer(cap):
    f = MessageFactory()
    ms = [f.user("Alice's invoice #4821 totals 1,250.00 EUR; due 2024-03-15!"),
          f.assistant("Noted: invoice 4821 is due on March 15th. Anything else?")]
    out = ExtractiveSummarizer().summarize(ms, cap)
    assert Tokenizer().count(out) <= cap
    if cap == 0:
        assert out == ""


def test_long_single_sentence_is_cut_at_a_word():
    f = MessageFactory(WordCounter())
    m = f.user(" ".join(f"w{i}" for i in range(50)))
    out = ExtractiveSummarizer(WordCounter()).summarize([m], 5)
    assert out == "user: w0 w1 w2 w3..."


def test_summary_of_summaries_keeps_labels_and_drops_repeats():
    f = MessageFactory(WordCounter())
    s = ExtractiveSummarizer(WordCounter())
    m1 = f.user("My name is Alice. I live in Paris.")
    first = f.summary(s.summarize([m1], 50), [m1])
    m2 = f.assistant("I live in Paris too. Alice is a nice name.")
    m3 = f.user("I live in Paris.")  # repeats a sentence of the summary
    out = s.summarize([first, m2, m3], 100)
    assert out.count("I live in Paris.") == 1
    assert out.startswith("user: My name is Alice. user: I live in Paris.")
    assert "system:" not in out


def test_validation():
    with pytest.raises(ValueError, match="max_tokens must be >= 0, got -1"):
        ExtractiveSummarizer().summarize([], -1)
    with pytest.raises(TypeError, match="counter must have a count"):
        ExtractiveSummarizer(counter=object())
    with pytest.raises(TypeError, match="messages must hold Message records"):
        ExtractiveSummarizer().summarize(["hi"], 10)
    assert ExtractiveSummarizer().summarize([], 10) == ""


# ------------------------------------------------------------ memos
_REPLAYS = json.loads((Path(__file__).parent / "fixtures" / "summary_replays_d8826d0.json")
                      .read_text(encoding="utf-8"))


class _Recording:
    """Passes summaries through and keeps every text written."""

    def __init__(self, inner, written):
        self.inner, self.written = inner, written

    def summarize(self, messages, max_tokens):
        text = self.inner.summarize(messages, max_tokens)
        self.written.append(text)
        return text


def _replay_digest(summarizer, budget, threshold, target, min_recent):
    from memorykit.buffers.summary_buffer import SummaryBuffer
    from memorykit.classroom.data import default_conversation

    written: list[str] = []
    buf = SummaryBuffer(budget, threshold, target, min_recent,
                        summarizer=_Recording(summarizer, written))
    for m in _as_at_d8826d0(default_conversation().messages):
        buf.add(m)
    return len(written), hashlib.sha256("\x00".join(written).encode()).hexdigest()


def _as_at_d8826d0(messages):
    """The conversation as the fixture's replays saw it: until issue 13 a tool call billed
    neither its function name nor its arguments (the texts are unchanged)."""
    from dataclasses import replace

    from memorykit.tokens import ChatFormat, Tokenizer

    fmt, counter = ChatFormat(), Tokenizer()
    return [replace(m, billed_tokens=m.billed_tokens - sum(
        fmt.tool_call_tokens(counter, c.name, c.arguments) for c in m.tool_calls))
        for m in messages]


@pytest.mark.parametrize("cache_size", [16_384, 3, 0])
def test_summaries_equal_the_ones_before_the_memos(cache_size):
    """Every summary of eight replays of the default conversation, one summarizer reused
    across them (its memos full of earlier replays' sentences, or nearly off), is the text
    the summarizer wrote before it remembered anything (hashes in the fixture)."""
    summarizer = ExtractiveSummarizer(cache_size=cache_size)
    for r in _REPLAYS["replays"]:
        got = _replay_digest(summarizer, r["budget"], r["threshold"], r["target"], r["min_recent"])
        assert got == (r["summaries"], r["sha256"]), r
    assert len(summarizer._analysed) <= cache_size and len(summarizer._splits) <= cache_size


def test_a_message_is_split_by_its_role_and_kind_not_its_id():
    f = MessageFactory(WordCounter())
    s = ExtractiveSummarizer(WordCounter())
    user, assistant = f.user("I live in Oslo."), f.assistant("I live in Oslo.")
    assert s.summarize([user], 50) == "user: I live in Oslo."
    assert s.summarize([assistant], 50) == "assistant: I live in Oslo."
    summary = f.summary("I live in Oslo.", [user])
    assert s.summarize([summary], 50) == "I live in Oslo."
    with pytest.raises(AttributeError):
        s.label_roles = False  # the memos depend on it


def test_memo_summarizer_remembers_by_ids_contents_and_cap():
    f = MessageFactory(WordCounter())
    calls = []

    class Counting(ExtractiveSummarizer):
        def summarize(self, messages, max_tokens):
            calls.append(max_tokens)
            return super().summarize(messages, max_tokens)

    memo = MemoSummarizer(Counting(WordCounter()), maxsize=2)
    assert (memo.name, memo.is_llm) == ("extractive(words)", False)
    a = f.user("My flight to Rome leaves at 7pm. Hello there.")
    same_id_other_text = Message(a.id, "user", "My train to Oslo leaves at 9am.", 7, 11)
    short = "user: My flight to Rome leaves at 7pm."
    assert memo.summarize([a], 8) == short and memo.summarize([a], 8) == short
    assert calls == [8]  # remembered
    assert memo.summarize([same_id_other_text], 8) == "user: My train to Oslo leaves at 9am."
    assert memo.summarize([a], 20) == short + " user: Hello there."  # another cap
    assert calls == [8, 8, 20]
    memo.summarize([a.with_importance(0.1)], 20)  # another weight: summarized afresh
    assert calls == [8, 8, 20, 20] and len(memo._summaries) == 2
    memo.summarize([a], 8)  # bounded: the least recently used left
    assert calls == [8, 8, 20, 20, 8]


@pytest.mark.parametrize("make, error, message", [
    (lambda: MemoSummarizer(object()), TypeError, "summarizer must have a summarize"),
    (lambda: MemoSummarizer(maxsize=0), ValueError, "maxsize must be >= 1, got 0"),
    (lambda: MemoSummarizer().summarize(["hi"], 5), TypeError, "got 'hi'"),
    (lambda: MemoSummarizer().summarize([], -2), ValueError, "max_tokens must be >= 0, got -2"),
    (lambda: ExtractiveSummarizer(cache_size=-1), ValueError, "cache_size must be >= 0, got -1"),
])
def test_memo_validation_names_the_value(make, error, message):
    with pytest.raises(error, match=message):
        make()
