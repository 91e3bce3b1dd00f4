"""A summarizer that returns "" (or only whitespace) has not summarized (issue 25, item 9).

The summary buffer and the compression pipeline refuse such a "summary" with an error that
says so, and keep the messages it would have replaced.
"""

from __future__ import annotations

import pytest

from memorykit.buffers import CompressionPipeline, FIFOBuffer, LLMSummaryCompressor, SummaryBuffer
from memorykit.messages import MessageFactory


class Blank:
    name = "blank"

    def __init__(self, text: str) -> None:
        self.text = text
        self.calls = 0

    def summarize(self, messages, max_tokens):  # type: ignore[no-untyped-def]
        self.calls += 1
        return self.text


@pytest.mark.parametrize("text", ["", "   ", "\n\t "])
def test_the_summary_buffer_refuses_an_empty_summary_and_keeps_the_messages(text):
    factory = MessageFactory()
    blank = Blank(text)
    buf = SummaryBuffer(400, summarizer=blank, min_recent=1)
    added = []
    while blank.calls < 2:  # over the threshold (80%) twice, under the hard budget
        m = factory.user(f"message number {len(added)} says something about the quarterly plan")
        added.append(m.id)
        buf.add(m)
    assert blank.calls > 0 and buf.summarizer_failures == blank.calls
    assert not any(m.is_summary for m in buf.messages())  # no empty summary stands in
    evicted = [mid for e in buf.trace.evictions() for mid in e.message_ids]
    assert sorted(evicted + [m.id for m in buf.messages()]) == sorted(added)  # nothing lost
    assert evicted == []  # under the hard budget nothing even had to go
    error = buf.last_summarizer_error
    assert isinstance(error, ValueError)
    assert "blank" in str(error) and "empty summary" in str(error) and repr(text) in str(error)


@pytest.mark.parametrize("text", ["", "  \n"])
def test_compression_refuses_an_empty_summary_and_keeps_the_messages(text):
    factory = MessageFactory()
    compressor = LLMSummaryCompressor(Blank(text), factory=factory)
    messages = [factory.user(f"fact {i}: the locker code is {i}{i}{i}") for i in range(12)]
    with pytest.raises(ValueError, match="empty summary") as info:
        compressor.compress(messages)
    assert "blank" in str(info.value)
    buffer = CompressionPipeline(FIFOBuffer(10_000), [compressor])
    for m in messages:
        buffer.buffer.add(m)
    with pytest.raises(ValueError, match="empty summary"):
        buffer.compress()
    assert [m.id for m in buffer.buffer] == [m.id for m in messages]  # all kept
