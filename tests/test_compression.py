"""Compressors and the compression pipeline (seed 001)."""

from __future__ import annotations

import pytest

from memorykit.buffers import (
    CompressionPipeline,
    Compressor,
    FIFOBuffer,
    LLMSummaryCompressor,
    SelectiveCompressor,
)
from memorykit.buffers.compression import check_compression
from memorykit.messages import MessageFactory, ToolCall
from memorykit.trace import Summarization


class WordCounter:
    encoding = "words"

    def count(self, text: str) -> int:
        return len(text.split())


def words(n: int, tag: str) -> str:
    return " ".join(f"{tag}{i}" for i in range(n - 1)) + f" {tag}end."


def test_selective_keeps_exactly_the_important_ones():
    f = MessageFactory(WordCounter())
    ms = [f.user(words(5, f"x{k}"), importance=imp)
          for k, imp in enumerate([0.7, 0.69, 0.9, 0.0, 0.71])]
    sel = SelectiveCompressor(factory=f)
    assert isinstance(sel, Compressor)
    out = sel.compress(ms)
    note, *kept = out
    assert [m.id for m in kept] == [ms[0].id, ms[2].id, ms[4].id]
    assert note.content == "[2 messages omitted]" and note.importance == 0.3
    assert note.sources == (ms[1].id, ms[3].id) and note.summary_depth == 1
    check_compression(ms, out, sel.name)
    assert sel.compress([ms[0]]) == [ms[0]]


def test_selective_keeps_tool_groups_whole():
    f = MessageFactory(WordCounter())
    call = f.assistant("lookup", tool_calls=(ToolCall("c1", "lookup"),), importance=0.2)
    res = f.tool("result", call_id="c1", importance=0.9)
    low = f.user("chit chat", importance=0.1)
    out = SelectiveCompressor(factory=f).compress([call, res, low])
    assert [m.id for m in out[1:]] == [call.id, res.id]
    assert out[0].sources == (low.id,)


def test_summary_compressor_cap_and_min_messages():
    f = MessageFactory(WordCounter())
    comp = LLMSummaryCompressor(factory=f, summarizer=None)
    assert comp.max_tokens == 75 and comp.is_llm is False
    assert comp.name == "summary[extractive(words)]"
    two = [f.user(words(5, "a")), f.user(words(5, "b"))]
    assert comp.compress(two) == two  # fewer than 3: unchanged, as in the seed
    three = [*two, f.assistant(words(5, "c"))]
    [s] = comp.compress(three)
    assert s.importance == 0.8 and s.sources == tuple(m.id for m in three)
    assert s.content_tokens <= 75 and s.is_summary


def test_check_compression_refuses_silent_loss():
    f = MessageFactory(WordCounter())
    a, b = f.user("a."), f.user("b.")
    with pytest.raises(ValueError, match=f"dropped message '{b.id}' without covering it"):
        check_compression([a, b], [a], "lossy")


def build(budget=100):
    f = MessageFactory(WordCounter())
    buf = FIFOBuffer(max_tokens=budget)
    return f, buf


def test_pipeline_compresses_oldest_third_when_over_threshold():
    f, buf = build(100)
    sys = f.system("be brief")  # 6 billed, pinned
    pipe = CompressionPipeline(
        buf, [LLMSummaryCompressor(factory=f, max_tokens=6), SelectiveCompressor(factory=f)]
    )
    ms = [f.user(words(10, f"t{k}"), importance=0.5) for k in range(6)]  # 14 billed each
    assert pipe.add(sys) == []
    events = []
    for m in ms:
        events += pipe.add(m)
    # 3 + 6 + 5 x 14 = 79 <= 80; the sixth makes 93 > 80: the oldest third of the six
    # non-pinned messages (2) is under 3, so the summary step leaves it and the
    # selective step folds both into one note.
    [e] = events
    assert isinstance(e, Summarization) and e.rule == "compression:selective>=0.7"
    assert e.message_ids == (ms[0].id, ms[1].id)
    note = buf.get(e.summary_id)
    assert note.content == "[2 messages omitted]"
    assert [m.id for m in buf][:2] == [sys.id, note.id]
    assert buf.tokens == 93 - 28 + note.billed_tokens == e.tokens_after
    assert buf.trace[-1] is e


def test_pipeline_chains_summary_then_selective():
    f, buf = build(200)
    pipe = CompressionPipeline(
        buf, [LLMSummaryCompressor(factory=f, max_tokens=12), SelectiveCompressor(factory=f)]
    )
    ms = [f.user(words(10, f"t{k}"), importance=0.5) for k in range(12)]  # 14 each
    events = []
    for m in ms:
        events += pipe.add(m)
    # 3 + 12 x 14 = 171 > 160 at the twelfth: oldest third = 4 messages -> one summary
    # (importance 0.8), which the selective step keeps.
    [e] = events
    assert e.rule == "compression:summary[extractive(words)]"
    assert e.message_ids == tuple(m.id for m in ms[:4]) == e.covered_ids
    s = buf.get(e.summary_id)
    assert s.importance == 0.8 and [m.id for m in buf][0] == s.id
    assert buf.tokens == 171 - 56 + s.billed_tokens
    covered = [i for m in buf for i in m.covers]
    assert covered == [m.id for m in ms]


def test_pipeline_never_splits_a_tool_group():
    f, buf = build(1000)
    pipe = CompressionPipeline(buf, [SelectiveCompressor(factory=f)])
    u = f.user("u1 words here.", importance=0.1)
    call = f.assistant("calling", tool_calls=(ToolCall("c1", "lookup"),), importance=0.1)
    res = f.tool("done", call_id="c1", importance=0.1)
    rest = [f.user("later words.") for _ in range(3)]
    for m in (u, call, res, *rest):
        buf.add(m)
    # 6 non-pinned, oldest third = [u, call]: call's result is outside, so cut to [u].
    assert [m.id for m in pipe.segment()] == [u.id]
    [e] = pipe.compress()
    assert e.message_ids == (u.id,)
    assert call.id in buf and res.id in buf


def test_pipeline_validation():
    buf = FIFOBuffer(max_tokens=100)
    with pytest.raises(ValueError, match="compression_threshold must be in \\(0, 1\\], got 1.2"):
        CompressionPipeline(buf, [SelectiveCompressor()], 1.2)
    with pytest.raises(ValueError, match="compressors must name at least one"):
        CompressionPipeline(buf, [])
    with pytest.raises(ValueError, match="buffer.max_tokens must be set"):
        CompressionPipeline(FIFOBuffer(max_tokens=None, max_entries=5), [SelectiveCompressor()])
    with pytest.raises(ValueError, match="importance_threshold must be in \\[0, 1\\], got 2"):
        SelectiveCompressor(2)
    with pytest.raises(ValueError, match="sentences must be >= 1, got 0"):
        LLMSummaryCompressor(sentences=0)


def test_summary_compressor_marks_the_summary_as_d1_does():
    # D1's SummarizationCompressor writes "[Previous conversation summary]: <summary>", so a
    # model reading the window can tell a summary from a turn.
    f = MessageFactory(WordCounter())
    ms = [f.user(words(5, tag)) for tag in "abc"]
    comp = LLMSummaryCompressor(factory=f)
    [s] = comp.compress(ms)
    text = comp.summarizer.summarize(ms, comp.max_tokens)
    assert s.content == f"[Previous conversation summary]: {text}"
    assert LLMSummaryCompressor.MARKER == "[Previous conversation summary]: "
    assert s.role == "system" and s.is_summary and not s.pinned


def test_summary_of_a_marked_summary_carries_one_marker():
    # The next round summarizes the earlier summary again: the summarizer reads its text
    # without the marker, so markers never pile up ("[...]: [...]: ...") and the marker's
    # words do not count as the segment's vocabulary.
    f = MessageFactory(WordCounter())
    comp = LLMSummaryCompressor(factory=f, max_tokens=40)
    [first] = comp.compress([f.user(words(5, tag)) for tag in "abc"])
    later = [f.user(words(5, tag)) for tag in "de"]
    [second] = comp.compress([first, *later])
    assert second.content.count("[Previous conversation summary]") == 1
    assert "summary]: user: a0" in second.content  # the first summary's sentence, unmarked
    assert second.summary_depth == 2


def test_summary_compressor_marker_is_a_str():
    with pytest.raises(TypeError, match="marker must be a str, got None"):
        LLMSummaryCompressor(marker=None)
    comp = LLMSummaryCompressor(factory=MessageFactory(WordCounter()), marker="")
    ms = [comp.factory.user(words(5, tag)) for tag in "abc"]
    assert comp.compress(ms)[0].content == comp.summarizer.summarize(ms, comp.max_tokens)
