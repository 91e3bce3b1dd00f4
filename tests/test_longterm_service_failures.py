"""The memory service when its summarizer fails (nothing lost), and on a Qdrant store."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memorykit.buffers.summary_buffer import SummaryBuffer
from memorykit.embeddings import LexicalHashingEmbedder
from memorykit.longterm.service import LongTermSettings, MemoryService
from memorykit.longterm.vectorstore import qdrant_available
from memorykit.messages import MessageFactory


class FailingSummarizer:
    name = "failing"

    def __init__(self) -> None:
        self.calls = 0

    def summarize(self, messages, max_tokens):
        self.calls += 1
        raise RuntimeError("summarizer down")


@pytest.mark.parametrize("batch_size", [1, 3])
def test_a_failing_summarizer_loses_nothing(batch_size):
    summarizer = FailingSummarizer()
    service = MemoryService(lambda: SummaryBuffer(200, summarizer=summarizer),
                            LongTermSettings(batch_size=batch_size, recall_limit=2))
    f = MessageFactory()
    added = []
    for i in range(30):
        m = f.user(f"Fact {i}: the locker code is {1000 + i}.")
        added.append(m)
        service.add("s", m)  # a failing summarizer never makes add raise
    assert summarizer.calls > 0
    s = service.session("s")
    working = [m.id for m in s.working]
    evicted = [mid for e in s.working.trace.evictions() for mid in e.message_ids]
    assert sorted(working + evicted) == sorted(m.id for m in added)  # kept or evicted on the record
    assert s.working.tokens <= 200 and s.working.summarizer_failures == summarizer.calls
    assert s.added == [m.id for m in added]
    assert s.last_user is added[-1]  # the recall query is still the last user message
    service.clear("s")  # flushes the pending batch
    assert service.stored_ids("s") == {m.id for m in added}  # long-term memory has every one
    [hit] = service.recall("s", "What was the locker code in fact 7?", limit=1)
    assert "1007" in hit.text


needs_qdrant = pytest.mark.skipif(not qdrant_available(), reason="qdrant-client is not installed")


def _qdrant_service(batch_size: int = 1) -> MemoryService:
    from memorykit.longterm.vectorstore import QdrantVectorStore

    embedder = LexicalHashingEmbedder(64)
    return MemoryService(lambda: SummaryBuffer(300), LongTermSettings(batch_size=batch_size),
                         embedder=embedder,
                         store=QdrantVectorStore(64, collection="service-test"))


@needs_qdrant
def test_service_on_qdrant_stores_everything_and_recalls_per_session():
    service = _qdrant_service(batch_size=2)
    f = MessageFactory()
    a = [f.user("My project deadline is March 15th."), f.assistant("Noted.")]
    a += [f.user(f"Unrelated chat number {i} about the weather.") for i in range(20)]
    b = [f.user("My project deadline is June 1st.")]
    for m in a:
        service.add("alice", m)
    for m in b:
        service.add("bob", m)
    service.clear("alice")
    service.clear("bob")
    assert service.stored_ids("alice") == {m.id for m in a}
    ctx = service.get_context("alice", "When is my project deadline?")
    recalled = [i for i in ctx.items if i.kind == "recalled"]
    assert any("March 15th" in i.content for i in recalled)
    assert not any("June" in i.content for i in ctx.items)
    assert service.forget("bob") == 1


@needs_qdrant
@settings(max_examples=15, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["s1", "s2", "s3"]), st.integers(0, 50)),
                min_size=1, max_size=25))
def test_qdrant_sessions_never_leak(events):
    service = _qdrant_service()
    f = MessageFactory()
    owner = {}
    for session, n in events:
        m = f.user(f"note {n} for the record")
        owner[m.id] = session
        service.add(session, m)
    for session in {"s1", "s2", "s3"}:
        for r in service.recall(session, "note for the record", limit=10):
            assert all(owner[s] == session for s in r.sources)
