"""ExtractiveSummarizer: scoring by hand, the token cap, determinism, summaries of summaries."""

from __future__ import annotations

import pytest

from memorykit.messages import MessageFactory
from memorykit.summary import ExtractiveSummarizer, Summarizer
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
