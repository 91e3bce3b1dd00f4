"""``forget(session)`` racing ``add(session, message)`` on real threads (issue 25, item 7).

The store's writes are slowed and announce themselves, so forget lands while an add is in
flight: on the old code the message in flight was written after forget's delete and stayed
recallable under the forgotten session.
"""

from __future__ import annotations

import threading
import time

import pytest

from memorykit.buffers.policies import FIFOBuffer
from memorykit.longterm.service import MemoryService, SessionForgotten
from memorykit.longterm.vectorstore import NumpyVectorStore
from memorykit.messages import MessageFactory

TRIALS = 100


class SlowStore(NumpyVectorStore):
    """A store whose writes sleep a little after saying they started (widens the race)."""

    def __init__(self, dimension: int, pause: float = 0.005) -> None:
        super().__init__(dimension)
        self.writing = threading.Event()
        self.pause = pause

    def add(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        self.writing.set()
        time.sleep(self.pause)
        return super().add(*args, **kwargs)


def _service() -> tuple[MemoryService, SlowStore]:
    from memorykit.embeddings import LexicalHashingEmbedder

    embedder = LexicalHashingEmbedder()
    store = SlowStore(embedder.dimension)
    return MemoryService(lambda: FIFOBuffer(10_000), embedder=embedder, store=store), store


def _left(service: MemoryService, session: str) -> list[str]:
    """What is recallable, or stored at all, under ``session`` after the race."""
    hits = [r.text for r in service.recall(session, "the parcel code is", limit=50)]
    return hits + [m.id for m in service.session(session).working]


def test_an_add_in_flight_when_forget_runs_is_forgotten_in_every_trial():
    """The add is inside the store write when forget is called: it lands first, then goes."""
    leaks = 0
    for trial in range(TRIALS):
        service, store = _service()
        make = MessageFactory()
        service.add("s", make.user("an earlier message"))
        store.writing.clear()
        errors: list[BaseException] = []

        def add(message=make.user(f"the parcel code is {trial}")) -> None:
            try:
                service.add("s", message)
            except SessionForgotten as exc:
                errors.append(exc)

        worker = threading.Thread(target=add)
        worker.start()
        assert store.writing.wait(5)
        service.forget("s")  # while the write sleeps
        worker.join(5)
        assert not worker.is_alive()
        leaks += bool(_left(service, "s"))
    assert leaks == 0, f"{leaks} of {TRIALS} trials left the forgotten session recallable"
    again = make.user("the parcel code is 2")  # the id is usable again, from empty
    service.add("s", again)
    assert service.stored_ids("s") == {again.id}
    with pytest.raises(ValueError, match="session_id"):
        service.forget("")


def test_an_add_that_reaches_the_session_after_forget_is_refused_and_told():
    """A second add has found the session but not yet taken its lock when forget runs (held
    there by a gate): it must not store its message under the forgotten session. It is
    refused with SessionForgotten naming the session and the message, so its caller knows."""
    leaks = 0
    for trial in range(TRIALS):
        service, store = _service()
        make = MessageFactory()
        kept = make.user("the parcel code is 77")
        service.add("other", kept)  # another session: never touched by forget
        store.writing.clear()
        first, second = make.user(f"the parcel code is {trial}"), make.user("the parcel code is x")
        found, gate = threading.Event(), threading.Event()
        outcome: dict[str, object] = {}
        lookup = service.session

        def session(session_id: str):  # type: ignore[no-untyped-def]
            s = lookup(session_id)
            if threading.current_thread().name == "second":
                found.set()
                gate.wait(5)  # between finding the session and taking its lock
            return s

        service.session = session  # type: ignore[method-assign]

        def add(message) -> None:  # type: ignore[no-untyped-def]
            try:
                service.add("s", message)
                outcome[message.id] = "stored"
            except SessionForgotten as exc:
                outcome[message.id] = exc

        workers = [threading.Thread(target=add, args=(first,), name="first"),
                   threading.Thread(target=add, args=(second,), name="second")]
        workers[0].start()
        assert store.writing.wait(5)
        workers[1].start()
        assert found.wait(5)
        service.forget("s")  # waits for the first add, then drops the session
        gate.set()
        for w in workers:
            w.join(5)
        service.session = lookup  # type: ignore[method-assign]
        leaks += bool(_left(service, "s"))
        assert outcome[first.id] == "stored"
        refused = outcome[second.id]
        assert isinstance(refused, SessionForgotten), refused
        assert (refused.session_id, refused.message_id) == ("s", second.id)
        assert second.id in str(refused) and "'s'" in str(refused)
        assert service.stored_ids("other") == {kept.id}
        assert [m.id for m in service.session("other").working] == [kept.id]
    assert leaks == 0, f"{leaks} of {TRIALS} trials left the forgotten session recallable"


def test_a_forget_whose_store_delete_fails_changes_nothing():
    """The store refuses the delete: forget raises, and the session is still whole (not
    dropped from memory with its entries left recallable in the store)."""
    service, store = _service()
    make = MessageFactory()
    message = make.user("the parcel code is 5")
    service.add("s", message)

    def down(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise ConnectionError("store down")

    store.delete = down  # type: ignore[method-assign]
    with pytest.raises(ConnectionError):
        service.forget("s")
    assert service.stored_ids("s") == {message.id}
    assert [m.id for m in service.session("s").working] == [message.id]
