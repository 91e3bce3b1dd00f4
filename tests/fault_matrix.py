"""The fault matrix of the memory service: every fault kind, counted, nothing lost.

Each case runs two interleaved sessions of a ``MemoryService`` (working memory:
a ``SummaryBuffer`` that summarizes along the way) while one component fails on
a schedule: the embedder (``FaultyEmbedder``), the store around the numpy or the
Qdrant local store (``FaultyStore``), or the Qdrant client itself
(``FaultyQdrantClient``). After every add and every context it checks:

* **lost**: added messages that are neither confirmed by the store nor pending
  (must be 0 at every step), and messages working memory neither holds nor
  evicted or summarized on the record (must be 0);
* **untruthful**: ids ``stored_ids()`` claims that the store does not hold, or
  units the store holds for a message that is neither claimed nor pending;
* that every failure was reported (a ``StoreFailed`` from ``add``, a note in
  the context) and nothing raised out of ``add`` or ``get_context``.

Then the faults stop, each session is flushed, and every message must be stored
exactly once. ``python tests/fault_matrix.py`` prints the table and the totals
(faults injected, messages lost) that the issue note quotes.
"""

from __future__ import annotations

import itertools
import sys
from collections import Counter
from dataclasses import dataclass

from memorykit.buffers.summary_buffer import SummaryBuffer
from memorykit.embeddings import LexicalHashingEmbedder
from memorykit.longterm.service import LongTermSettings, MemoryService
from memorykit.longterm.vectorstore import NumpyVectorStore, qdrant_available
from memorykit.longterm.events import StoreFailed
from tests.faulty_stores import (
    EMBEDDER_FAULTS,
    QDRANT_FAULTS,
    STORE_FAULTS,
    FaultyEmbedder,
    FaultyQdrantClient,
    FaultyStore,
)
from memorykit.messages import MessageFactory
from memorykit.trace import Eviction, Summarization

DIMENSION = 64
MESSAGES_PER_SESSION = 12
SCHEDULES = {
    "twice": (2, 3),
    "every-3rd": tuple(range(3, 200, 3)),
    "outage": tuple(range(1, 11)),
}


@dataclass(frozen=True)
class FaultCase:
    component: str
    """'embedder', 'store' (numpy), 'qdrant-store' (FaultyStore around Qdrant), 'qdrant-client'."""
    fault: str
    schedule: str
    batch_size: int

    @property
    def name(self) -> str:
        return f"{self.component}:{self.fault}:{self.schedule}:batch{self.batch_size}"


@dataclass(frozen=True)
class FaultResult:
    case: FaultCase
    injected: int
    messages: int
    lost: int
    """Largest number of messages lost at any step (store + pending, or working memory)."""
    untruthful: int
    duplicates: int
    unreported: int
    """Failed writes or recalls that neither ``add``'s events nor the context's notes told."""


def cases() -> list[FaultCase]:
    components = [("embedder", EMBEDDER_FAULTS), ("store", STORE_FAULTS)]
    if qdrant_available():
        components += [("qdrant-store", STORE_FAULTS), ("qdrant-client", QDRANT_FAULTS)]
    return [FaultCase(component, fault, schedule, batch)
            for component, faults in components for fault in faults
            for schedule in SCHEDULES for batch in (1, 4)]


def _build(case: FaultCase) -> tuple[MemoryService, object, object]:
    """The service, the faulty double (to heal and count) and the real store (to inspect)."""
    schedule = SCHEDULES[case.schedule]
    embedder = LexicalHashingEmbedder(DIMENSION)
    if case.component.startswith("qdrant"):
        from qdrant_client import QdrantClient

        from memorykit.longterm.vectorstore import QdrantVectorStore

        client = QdrantClient(":memory:")
        if case.component == "qdrant-client":
            client = double = FaultyQdrantClient(client, case.fault, schedule)
        real = QdrantVectorStore(DIMENSION, client=client, collection="faults")
    else:
        real = NumpyVectorStore(DIMENSION)
    store = real
    if case.component == "embedder":
        embedder = double = FaultyEmbedder(embedder, case.fault, schedule)
    elif case.component in ("store", "qdrant-store"):
        store = double = FaultyStore(real, case.fault, schedule)
    service = MemoryService(lambda: SummaryBuffer(150),
                            LongTermSettings(batch_size=case.batch_size, recall_limit=2),
                            embedder=embedder, store=store)
    return service, double, real


def run_case(case: FaultCase) -> FaultResult:
    service, double, real = _build(case)
    f = MessageFactory()
    sessions = ("alice", "bob")
    added: dict[str, list[str]] = {s: [] for s in sessions}
    accounted: dict[str, set[str]] = {s: set() for s in sessions}
    lost = untruthful = unreported = 0

    def check(sid: str) -> None:
        nonlocal lost, untruthful
        held = Counter(p["message_id"] for p in real.payloads({"session_id": sid}))
        claimed = service.stored_ids(sid)
        pending = set(service.pending_ids(sid))
        lost = max(lost, len(set(added[sid]) - claimed - pending))
        untruthful = max(untruthful, len(claimed - set(held)) + len(set(held) - claimed - pending))
        working = {m.id for m in service.session(sid).working}
        lost = max(lost, len(set(added[sid]) - working - accounted[sid]))

    for n, sid in zip(range(2 * MESSAGES_PER_SESSION), itertools.cycle(sessions)):
        make = f.user if n % 4 < 2 else f.assistant
        m = make(f"Note {n} for {sid}: the locker code of room {n} is {4000 + n}.")
        failures_before = double.injected
        events = service.add(sid, m)  # must never raise
        added[sid].append(m.id)
        for e in events:
            if isinstance(e, (Eviction, Summarization)):
                accounted[sid].update(e.message_ids)
        if double.injected > failures_before and service.pending_ids(sid) and not any(
                isinstance(e, StoreFailed) for e in events):
            unreported += 1
        check(sid)
        failures_before = double.injected
        context = service.get_context(sid, f"What is the locker code of room {n}?")
        if double.injected > failures_before and not context.notes and \
                service.session(sid).last_recall_error is None and not service.pending_ids(sid):
            unreported += 1
        check(sid)
    double.heal()
    for sid in sessions:
        service.flush(sid)
        check(sid)
    duplicates = 0
    for sid in sessions:
        held = Counter(p["message_id"] for p in real.payloads({"session_id": sid}))
        duplicates += sum(n - 1 for n in held.values() if n > 1)
        lost = max(lost, len(set(added[sid]) - set(held)))
    return FaultResult(case, double.injected, sum(map(len, added.values())), lost, untruthful,
                       duplicates, unreported)


def main() -> int:
    results = [run_case(c) for c in cases()]
    for r in results:
        print(f"{r.case.name:45} injected {r.injected:3}  messages {r.messages}  lost {r.lost}  "
              f"untruthful {r.untruthful}  duplicates {r.duplicates}  unreported {r.unreported}")
    bad = [r for r in results if r.lost or r.untruthful or r.duplicates or r.unreported
           or not r.injected]
    print(f"cases {len(results)}  faults injected {sum(r.injected for r in results)}  "
          f"messages {sum(r.messages for r in results)}  messages lost "
          f"{sum(r.lost for r in results)}  failing cases {len(bad)}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
