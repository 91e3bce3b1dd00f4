"""Nothing lost when the embedder or the store fails: the fault matrix and the cases it is made of."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from memorykit.buffers import BufferWindow
from memorykit.embeddings import LexicalHashingEmbedder
from memorykit.longterm.service import LongTermSettings, LongTermWriteFailed, MemoryService
from memorykit.longterm.vectorstore import NumpyVectorStore, QdrantVectorStore, qdrant_available
from memorykit.longterm.semantic import SemanticMemory
from memorykit.longterm.events import StoreFailed
from tests.faulty_stores import FaultyEmbedder, FaultyStore, InjectedFault
from memorykit.messages import MessageFactory

from fault_matrix import cases, run_case


@pytest.mark.parametrize("case", cases(), ids=lambda c: c.name)
def test_fault_matrix_loses_nothing(case):
    result = run_case(case)
    assert result.injected > 0, "a case that injects no fault proves nothing"
    assert result.lost == 0
    assert result.untruthful == 0  # stored_ids() claims only what the store holds
    assert result.duplicates == 0  # a retried write leaves no half-written copy behind
    assert result.unreported == 0  # every failed write or recall was told to the caller


def test_the_matrix_covers_every_fault_kind_and_qdrant():
    from tests.faulty_stores import EMBEDDER_FAULTS, QDRANT_FAULTS, STORE_FAULTS

    seen = {(c.component, c.fault) for c in cases()}
    assert {("embedder", f) for f in EMBEDDER_FAULTS} <= seen
    assert {("store", f) for f in STORE_FAULTS} <= seen
    if qdrant_available():
        assert {("qdrant-store", f) for f in STORE_FAULTS} <= seen
        assert {("qdrant-client", f) for f in QDRANT_FAULTS} <= seen


def _messages(n):
    f = MessageFactory()
    return [f.user(f"Fact {i}: the code of locker {i} is {1000 + i}.") for i in range(n)]


def test_the_reported_case_batch_of_four_and_an_embedder_that_fails_twice():
    # The case: before, 8 of 16 were missing from the store, 2 were nowhere at all,
    # stored_ids() claimed them and a retry failed with "already stored".
    embedder = FaultyEmbedder(LexicalHashingEmbedder(64), "raise", (1, 2))
    service = MemoryService(lambda: BufferWindow(3), LongTermSettings(batch_size=4),
                            embedder=embedder)
    messages = _messages(16)
    reported = []
    for m in messages:
        events = service.add("s", m)
        reported += [e for e in events if isinstance(e, StoreFailed)]
    assert embedder.injected == 2 and len(reported) == 2
    assert reported[0].message_ids == tuple(m.id for m in messages[:4])
    assert reported[1].pending == 5  # the failed batch waits, the next message joins it
    service.flush("s")
    held = {p["message_id"] for p in service.store.payloads({"session_id": "s"})}
    assert held == service.stored_ids("s") == {m.id for m in messages}
    assert service.pending_ids("s") == [] and service.degraded() == {}


def test_flush_and_clear_raise_and_keep_everything_while_the_store_is_down():
    store = FaultyStore(NumpyVectorStore(64), "add-raises", range(1, 100))
    service = MemoryService(lambda: BufferWindow(10), LongTermSettings(batch_size=10),
                            embedder=LexicalHashingEmbedder(64), store=store)
    messages = _messages(3)
    for m in messages:
        assert service.add("s", m) == []  # held for the batch: no write tried yet
    with pytest.raises(LongTermWriteFailed, match=r"3 message\(s\) of session 's'") as info:
        service.clear("s")
    assert [m.id for m in service.session("s").working] == [m.id for m in messages]
    assert service.pending_ids("s") == [m.id for m in messages]
    assert service.degraded() == {"s": "InjectedFault"}
    assert service.stored_ids("s") == set()
    copy = pickle.loads(pickle.dumps(info.value))  # sweeps in a process pool pickle errors
    assert copy.message_ids == info.value.message_ids and str(copy) == str(info.value)
    store.heal()
    service.clear("s")
    assert service.stored_ids("s") == {m.id for m in messages}
    assert len(service.session("s").working) == 0


def test_a_recall_failure_leaves_a_context_of_working_memory_with_a_note():
    store = FaultyStore(NumpyVectorStore(64), "search-raises", (1,))
    service = MemoryService(lambda: BufferWindow(2), embedder=LexicalHashingEmbedder(64),
                            store=store)
    for m in _messages(5):
        service.add("s", m)
    context = service.get_context("s", "What is the code of locker 1?")
    assert context.notes and "long-term recall failed (InjectedFault)" in context.notes[0]
    assert [i.kind for i in context.items].count("recalled") == 0
    assert service.session("s").last_recall_error == "InjectedFault"
    context = service.get_context("s", "What is the code of locker 1?")  # the store is back
    assert not context.notes and any("1001" in i.content for i in context.items)


@pytest.mark.parametrize("fault", ["nan", "inf", "long-batch", "short-batch", "wrong-dimension",
                                   "not-an-array"])
def test_a_bad_query_vector_is_refused_not_searched(fault):
    memory = SemanticMemory(embedder=FaultyEmbedder(LexicalHashingEmbedder(32), fault, (2,)))
    memory.add(_messages(2))
    with pytest.raises(ValueError, match="embedder returned"):
        memory.recall("the code of locker 1")


def test_a_store_refuses_a_non_finite_query():
    store = NumpyVectorStore(4)
    store.add(["a"], np.ones((1, 4)), [{}])
    with pytest.raises(ValueError, match="vector must be finite"):
        store.search(np.array([1.0, np.nan, 0, 0]), 1)


def test_a_duplicate_message_is_refused_before_it_is_stored():
    service = MemoryService(lambda: BufferWindow(3))
    m = _messages(1)[0]
    service.add("s", m)
    with pytest.raises(ValueError, match=f"message id '{m.id}' was already added"):
        service.add("s", m)
    assert service.pending_ids("s") == [] and service.degraded() == {}


def _stores():
    yield NumpyVectorStore(4)
    if qdrant_available():
        yield QdrantVectorStore(4, collection="discard")


@pytest.mark.parametrize("store", list(_stores()), ids=lambda s: type(s).__name__)
def test_discard_removes_named_ids_and_ignores_missing_ones(store):
    store.add(["a", "b", "c"], np.eye(4)[:3], [{"k": 1}, {"k": 2}, {"k": 3}])
    assert store.discard(["b", "zzz"]) == 1
    assert len(store) == 2 and [p["k"] for p in store.payloads()] == [1, 3]
    assert store.discard([]) == 0
    store.add(["b"], np.eye(4)[1:2], [{"k": 4}])  # the id is free again
    assert [h.id for h in store.search(np.eye(4)[1], 1)] == ["b"]
    with pytest.raises(TypeError, match="ids must be a sequence of str"):
        store.discard("a")


def test_the_doubles_refuse_an_unknown_fault_or_schedule():
    with pytest.raises(ValueError, match="fault must be one of"):
        FaultyEmbedder(LexicalHashingEmbedder(8), "melt", (1,))
    with pytest.raises(ValueError, match=r"schedule must name call numbers >= 1, got \(0,\)"):
        FaultyStore(NumpyVectorStore(8), "add-raises", (0,))
    assert issubclass(InjectedFault, ConnectionError)
