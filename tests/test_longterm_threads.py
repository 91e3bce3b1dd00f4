"""A memory service shared by threads: several sessions, several writers, nothing lost or crossed.

Before the locks, 4 sessions adding at once corrupted ``NumpyVectorStore``'s id-to-row index
(1-22 ids pointing at another session's payload, in 10 of 10 trials) and ``session()`` lost a
message now and then (two threads created the same session). The switch interval is made tiny
so threads interleave often; the trials are bounded (a few seconds in all).
"""

from __future__ import annotations

import random
import sys
import threading
import time
from collections import Counter

import pytest

from memorykit.buffers import BufferWindow
from memorykit.embeddings import LexicalHashingEmbedder, MemoEmbedder
from memorykit.longterm.service import LongTermSettings, MemoryService
from memorykit.longterm.vectorstore import NumpyVectorStore, QdrantVectorStore, qdrant_available
from memorykit.messages import MessageFactory
from memorykit.trace import Eviction

SESSIONS = 4
PER_SESSION = 120
SHARED_WRITERS = 2
PER_SHARED_WRITER = 40


@pytest.fixture(autouse=True)
def _interleave_often():
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(before)


def _store(kind: str, dimension: int):
    if kind == "numpy":
        return NumpyVectorStore(dimension)
    if not qdrant_available():
        pytest.skip("qdrant-client is not installed")
    return QdrantVectorStore(dimension, collection="threads")


def _run_trial(kind: str, seed: int) -> None:
    rng = random.Random(seed)
    embedder = MemoEmbedder(LexicalHashingEmbedder(64), maxsize=64)  # tiny: it evicts under load
    service = MemoryService(lambda: BufferWindow(5),
                            LongTermSettings(batch_size=rng.choice([1, 3])),
                            embedder=embedder, store=_store(kind, 64))
    owner: dict[str, str] = {}
    added: dict[str, list[str]] = {}
    evicted: dict[str, set[str]] = {}
    errors: list[BaseException] = []
    lock = threading.Lock()
    start = threading.Barrier(SESSIONS + SHARED_WRITERS)

    def write(session: str, writer: str, n: int) -> None:
        factory = MessageFactory(id_prefix=f"{writer}-")  # a factory per thread: it counts ids
        try:
            start.wait()
            for i in range(n):
                m = factory.user(f"{writer} says fact {i}: code {rng.random():.6f}.")
                events = service.add(session, m)
                with lock:
                    owner[m.id] = session
                    added.setdefault(session, []).append(m.id)
                    evicted.setdefault(session, set()).update(
                        mid for e in events if isinstance(e, Eviction) for mid in e.message_ids)
                if i % 10 == 0:
                    service.get_context(session, f"What did {writer} say in fact {i}?")
        except BaseException as exc:  # reported below: a thread's error must fail the test
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(f"s{k}", f"s{k}", PER_SESSION))
               for k in range(SESSIONS)]
    threads += [threading.Thread(target=write, args=("shared", f"w{k}", PER_SHARED_WRITER))
                for k in range(SHARED_WRITERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    for session in added:
        service.flush(session)
    total = SESSIONS * PER_SESSION + SHARED_WRITERS * PER_SHARED_WRITER
    assert len(owner) == total and len(service.store) == total  # one unit per message
    for session, ids in added.items():
        # nothing lost: the store holds every message of the session, and only those
        held = Counter(p["message_id"] for p in service.store.payloads({"session_id": session}))
        assert set(held) == set(ids) == service.stored_ids(session)
        assert max(held.values()) == 1
        # working memory got every message: kept or evicted on the record
        working = {m.id for m in service.session(session).working}
        assert working | evicted[session] >= set(ids) and len(working) == 5
        # no leak: a search of this session only returns this session's messages
        for r in service.recall(session, "says fact code", limit=20):
            assert owner[r.message_id] == session
    if isinstance(service.store, NumpyVectorStore):  # the id-to-row index points at its own row
        for session, ids in added.items():
            for mid in ids:
                assert service.store.payload(f"{session}/{mid}#0")["message_id"] == mid
    assert sum(len(e.message_ids) for e in service.trace if e.kind == "store") == total


@pytest.mark.parametrize("kind", ["numpy", "qdrant"])
@pytest.mark.parametrize("seed", range(4))
def test_sessions_on_threads_lose_nothing_and_never_cross(kind, seed):
    _run_trial(kind, seed)


def test_threads_opening_the_same_sessions_at_once_share_one_session_each():
    writers, sessions = 4, 150

    def slow_working_memory() -> BufferWindow:
        time.sleep(0.0002)  # a factory that takes a moment (loads a model, opens a file)
        return BufferWindow(writers)

    service = MemoryService(slow_working_memory)
    start = threading.Barrier(writers)
    errors: list[BaseException] = []

    def write(writer: int) -> None:
        factory = MessageFactory(id_prefix=f"w{writer}-")
        try:
            start.wait()
            for j in range(sessions):
                service.add(f"x{j}", factory.user(f"writer {writer} opens session {j}"))
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(k,)) for k in range(writers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(service.sessions) == sessions
    for j in range(sessions):
        s = service.session(f"x{j}")
        assert len(s.added) == writers and len(s.working) == writers
        assert len(service.stored_ids(f"x{j}")) == writers
