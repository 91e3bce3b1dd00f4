"""Every memory kind memorykit ships, each with a seeded input stream: the one catalogue.

A *memory kind* is a class that admits a stream of inputs and decides, by its own rule, what
to keep, evict, summarize or consolidate: every conversation buffer of the buffer registry
and the plain ``MessageBuffer``, the entity memories, the workspace's ``WorkingMemory``, and
the long-term memories. Parts that only live inside one of them are not kinds of their own:
``TaskSlots``, ``NoteQueue`` and ``KnowledgeGraph`` are the columns and the graph of a
``WorkingMemory`` (saved and restored with it), a vector store is where a semantic memory or
the memory service keeps its vectors. ``NOT_KINDS`` names the memory-sounding classes that
are not kinds and says why; a test fails when a class is neither here nor there.

Each ``MemoryKind`` builds a fresh memory (``make``; a bounded ``Trace`` where the memory has
a trace, so a million inputs do not keep a million events), yields ``n`` deterministic,
varied inputs lazily (``stream(seed, n)``: a million cost nothing until read, and two calls
with the same arguments give equal, independent inputs) and gives one input to a memory
(``feed``), returning what the memory returned (evictions, an episode, new rules...). The
save/restore property test and the memory benchmark both run over this catalogue.
Not taught by a notebook: it is test and benchmark plumbing.
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from memorykit.buffers.base import MessageBuffer
from memorykit.buffers.context_manager import ContextManager
from memorykit.buffers.policies import FIFOBuffer
from memorykit.buffers.registry import POLICIES
from memorykit.clock import StepClock
from memorykit.entities.hybrid import EntitySummaryMemory
from memorykit.entities.memory import EntityMemory, RelevanceMemory, SlidingWindowMemory
from memorykit.entities.records import Entity
from memorykit.entities.store import InMemoryStore, ReadThroughMemory
from memorykit.longterm.episodic import EpisodicMemory, EpisodicSettings
from memorykit.longterm.reflection import ReflectionMemory, ReflectionSettings
from memorykit.longterm.semantic import SemanticMemory
from memorykit.longterm.service import MemoryService
from memorykit.messages import Message, MessageFactory, ToolCall
from memorykit.classroom.scenarios.conversation import random_messages
from memorykit.classroom.scenarios.probes import booking_critic
from data.workflow.generate import build_workflow_graph
from memorykit.tokens import Tokenizer
from memorykit.trace import Trace
from memorykit.workspace.memory import WorkingMemory
from memorykit.workspace.tasks import Task

TRACE_EVENTS = 1_000
"""Events a catalogue memory's trace keeps (the newest); older ones are only counted."""

BUDGET = 2_000
"""Token budget of the catalogue's conversation buffers."""

READY = "ready"
"""``MemoryKind.state`` of a kind whose save/restore is supported."""


@dataclass(frozen=True)
class MemoryKind:
    """One memory kind: how to build one, what to feed it, and how."""

    name: str
    """Catalogue key, also the name in test ids and benchmark tables."""
    cls: type
    """The class of the memory ``make`` builds (the coverage test matches classes)."""
    make: Callable[..., Any]
    """``make(**overrides)``: a fresh memory; overrides replace the catalogue's settings."""
    stream: Callable[[int, int], Iterator[Any]]
    """``stream(seed, n)``: ``n`` deterministic inputs, generated lazily."""
    feed: Callable[[Any, Any], Any]
    """``feed(memory, item)``: gives one input to the memory; returns what the memory returned."""
    state: str = READY
    """``READY``, or why save/restore is not supported yet (the test skips with this reason)."""


# ------------------------------------------------------------------ input streams
_WORDS = (3, 40)
"""Words per generated message: short, so a million messages are cheap to tokenize."""


def message_stream(seed: int, n: int) -> Iterator[Message]:
    """``n`` messages of a conversation: one system instruction, then user and assistant turns
    of varied length and importance, minutes apart, with a tool call and its result now and
    then (so buffers meet the call/result pairing rule)."""
    rng = random.Random(seed)
    clock = StepClock()
    factory = MessageFactory(Tokenizer(), clock=clock)
    texts = random_messages(n, seed, _WORDS)
    made = 0
    if n:
        made += 1
        yield factory.system("You are a careful assistant. Keep answers short.")
    for i, text in enumerate(texts):
        if made >= n:
            return
        clock.advance(rng.expovariate(1 / 60.0))
        importance = round(rng.random(), 2)
        if i % 2 == 0:
            made += 1
            yield factory.user(text, importance=importance)
        elif rng.random() < 0.1 and n - made >= 2:
            call_id = f"call{seed}-{i}"
            made += 2
            call = ToolCall(call_id, "count_rows", '{"table": "orders"}')
            yield factory.assistant(text, importance=importance, tool_calls=(call,))
            yield factory.tool(f"result of {call_id}: 42 rows", call_id=call_id,
                               importance=round(rng.random(), 2))
        else:
            made += 1
            yield factory.assistant(text, importance=importance)


_ENTITY_TYPES = ("page", "entry", "user", "task")
_ENTITY_IDS = 200


def _entity(rng: random.Random) -> Entity:
    # a skewed draw: a few entities come back often, most rarely (recency and frequency matter)
    kind = rng.choice(_ENTITY_TYPES)
    eid = int(rng.paretovariate(1.2)) % _ENTITY_IDS
    return Entity(kind, str(eid), f"{kind} {eid}")


def entity_stream(seed: int, n: int) -> Iterator[tuple[float, str, Any, int]]:
    """``n`` entity operations ``(at, op, entity or key, turn)``: adds (a tool returned the
    entity) and gets (a lookup), seconds to minutes apart."""
    rng = random.Random(seed)
    at, turn = 0.0, 0
    for _ in range(n):
        at += rng.expovariate(1 / 40.0)
        if rng.random() < 0.3:
            turn += 1
        entity = _entity(rng)
        if rng.random() < 0.7:
            yield (at, "add", entity, turn)
        else:
            yield (at, "get", entity.key, turn)


def feed_entities(memory: EntityMemory, item: tuple[float, str, Any, int]) -> Any:
    at, op, what, turn = item
    memory.clock.set(at)  # type: ignore[attr-defined]
    if op == "add":
        return memory.add(what, turn=turn)
    return memory.get(what, turn=turn)


def hybrid_stream(seed: int, n: int) -> Iterator[tuple[str, Any]]:
    """Entity operations and conversation messages interleaved, with turn ends between."""
    rng = random.Random(seed)
    entities = entity_stream(seed, n)
    messages = message_stream(seed, n)
    for i in range(n):
        r = rng.random()
        if r < 0.45:
            yield ("entity", next(entities))
        elif r < 0.9:
            yield ("message", next(messages))
        else:
            yield ("end_turn", i)


def feed_hybrid(memory: EntitySummaryMemory, item: tuple[str, Any]) -> Any:
    op, what = item
    if op == "entity":
        return feed_entities(memory.entities, what)
    if op == "message":
        return memory.add_message(what)
    return memory.end_turn(what)


def lookup_stream(seed: int, n: int) -> Iterator[tuple[float, str, int]]:
    """``n`` lookups ``(at, key, turn)`` of skewed keys, some of which the store lacks."""
    for at, _, what, turn in entity_stream(seed, n):
        key = what if isinstance(what, str) else what.key
        yield (at, key, turn)


def _store() -> InMemoryStore:
    # every id but the last ten exists: a few lookups miss the store too
    return InMemoryStore(Entity(kind, str(i), f"{kind} {i}")
                         for kind in _ENTITY_TYPES for i in range(_ENTITY_IDS - 10))


def feed_lookup(memory: ReadThroughMemory, item: tuple[float, str, int]) -> Any:
    at, key, turn = item
    memory.memory.clock.set(at)  # type: ignore[attr-defined]
    return memory.lookup(key, turn=turn)


def window_stream(seed: int, n: int) -> Iterator[tuple[Message, ...]]:
    """``n`` histories a critic reads: the last four messages of an exchange where the user
    now and then corrects the assistant ("No, I said ..."), so rules get learned."""
    rng = random.Random(seed)
    clock = StepClock()
    factory = MessageFactory(Tokenizer(), clock=clock)
    window: deque[Message] = deque(maxlen=4)
    for i, text in enumerate(random_messages(n, seed, _WORDS)):
        clock.advance(30.0)
        if i % 2:
            window.append(factory.assistant(text))
        elif rng.random() < 0.15:
            window.append(factory.user(f"No, I said {text}"))
        else:
            window.append(factory.user(text))
        yield tuple(window)


def feed_reflection(memory: ReflectionMemory, item: tuple[Message, ...]) -> Any:
    return memory.reflect(item, item[-1].created_at)


_WORKSPACE_NAMES = ("Maya Chen", "Raj Patel", "Acme Supplies", "Globex", "GL 5100", "GL 6200",
                    "Q3 budget", "Umbrella Logistics", "Tom Becker", "Cheyenne")
_URGENCIES = ("urgent", "normal", "low")


def workspace_stream(seed: int, n: int) -> Iterator[tuple[Any, ...]]:
    """``n`` workspace events ``(at, kind, ...)``: conversation turns that mention the graph's
    objects, tasks arriving with varied priority, user notes, and a task finished now and then."""
    rng = random.Random(seed)
    at = 0.0
    tasks = 0
    for i, text in enumerate(random_messages(n, seed, _WORDS)):
        at += rng.expovariate(1 / 600.0)
        r = rng.random()
        name = rng.choice(_WORKSPACE_NAMES)
        if r < 0.1:
            tasks += 1
            task = Task(f"T{seed}-{tasks}", f"Reconcile the {name} invoices", round(rng.random(), 2),
                        created_at=at)
            yield (at, "task", task)
        elif r < 0.2:
            yield (at, "note", f"Remember {name}: {text[:60]}", round(rng.random(), 2),
                   rng.choice(_URGENCIES))
        elif r < 0.25 and tasks:
            yield (at, "complete", f"T{seed}-{rng.randint(1, tasks)}")
        else:
            yield (at, "turn", f"{name} {text}")


def feed_workspace(memory: WorkingMemory, item: tuple[Any, ...]) -> Any:
    at, op = item[0], item[1]
    memory.clock.set(at)  # type: ignore[attr-defined]
    if op == "task":
        return memory.add_task(item[2])
    if op == "note":
        return memory.add_note(item[2], item[3], urgency=item[4])
    if op == "complete":
        return memory.complete_task(item[2]) if item[2] in memory.tasks else None
    return memory.observe(item[2])


def _add(memory: Any, item: Any) -> Any:
    return memory.add(item)


def _semantic_add(memory: SemanticMemory, item: Message) -> Any:
    return memory.add([item])


def _context_add(memory: ContextManager, item: Message) -> Any:
    # now and then the agent moves to another task's context, or back to the one it left
    if item.role != "user":  # a tool result must follow its call in the same context
        pass
    elif item.turn % 5 == 4:
        memory.switch(f"task{int(item.turn) % 3}")
    elif item.turn % 7 == 6:
        memory.return_to_previous()
    return memory.add(item)


def _context_manager(**overrides: Any) -> ContextManager:
    return ContextManager(**{"max_tokens_per_context": BUDGET // 2, "clock": StepClock(),
                             **overrides})


def _service_add(memory: MemoryService, item: Message) -> Any:
    return memory.add(f"s{int(item.turn) % 4}", item)


# ------------------------------------------------------------------ builders
def _bounded(memory: Any) -> Any:
    """Give a memory whose constructor takes no trace a bounded one (before anything is traced)."""
    memory.trace = Trace(TRACE_EVENTS)
    return memory


def _buffer_maker(name: str) -> Callable[..., MessageBuffer]:
    spec = POLICIES[name]

    def make(**overrides: Any) -> MessageBuffer:
        settings: dict[str, Any] = {"trace": Trace(TRACE_EVENTS), **overrides}
        return spec.build(settings.pop("budget", BUDGET), **settings)

    return make


def _plain_buffer(**overrides: Any) -> MessageBuffer:
    return MessageBuffer(**{"max_tokens": BUDGET, "trace": Trace(TRACE_EVENTS), **overrides})


def _entity_maker(cls: type[EntityMemory]) -> Callable[..., EntityMemory]:
    def make(**overrides: Any) -> EntityMemory:
        settings: dict[str, Any] = {"clock": StepClock(), "ttl_minutes": 30.0, **overrides}
        return _bounded(cls(**settings))

    return make


def _entity_summary(**overrides: Any) -> EntitySummaryMemory:
    settings: dict[str, Any] = {
        "entities": _entity_maker(RelevanceMemory)(),
        "conversation": FIFOBuffer(BUDGET, trace=Trace(TRACE_EVENTS)),
        **overrides,
    }
    return EntitySummaryMemory(**settings)


def _read_through(**overrides: Any) -> ReadThroughMemory:
    settings: dict[str, Any] = {"memory": _entity_maker(RelevanceMemory)(), "store": _store(),
                                **overrides}
    return ReadThroughMemory(**settings)


def _episodic(**overrides: Any) -> EpisodicMemory:
    settings: dict[str, Any] = {"settings": EpisodicSettings(stm_limit=8), **overrides}
    return _bounded(EpisodicMemory(**settings))


def _reflection(**overrides: Any) -> ReflectionMemory:
    settings: dict[str, Any] = {"critic": booking_critic(), "settings": ReflectionSettings(),
                                **overrides}
    return _bounded(ReflectionMemory(**settings))


def _working(**overrides: Any) -> WorkingMemory:
    settings: dict[str, Any] = {"graph": build_workflow_graph(), "clock": StepClock(), **overrides}
    memory = WorkingMemory(**settings)
    # the trace is shared with the task slots and the note queue: bound it in all three
    memory.trace = memory.tasks.trace = memory.notes.trace = Trace(TRACE_EVENTS)
    return memory


def service_working_memory() -> MessageBuffer:
    """The catalogue service's working memory per session (module level, so it pickles): a
    fifth of the budget, as four sessions share the stream."""
    return FIFOBuffer(BUDGET // 5, trace=Trace(TRACE_EVENTS))


def _service(**overrides: Any) -> MemoryService:
    settings: dict[str, Any] = {"working_memory": service_working_memory,
                                "trace": Trace(TRACE_EVENTS), **overrides}
    return MemoryService(**settings)


MEMORY_KINDS: dict[str, MemoryKind] = {
    **{
        f"buffer-{name}": MemoryKind(f"buffer-{name}", spec.factory, _buffer_maker(name),
                                     message_stream, _add)
        for name, spec in POLICIES.items()
    },
    "buffer-plain": MemoryKind("buffer-plain", MessageBuffer, _plain_buffer, message_stream, _add),
    "entity-fifo": MemoryKind("entity-fifo", EntityMemory, _entity_maker(EntityMemory),
                              entity_stream, feed_entities),
    "entity-sliding": MemoryKind("entity-sliding", SlidingWindowMemory,
                                 _entity_maker(SlidingWindowMemory), entity_stream, feed_entities),
    "entity-relevance": MemoryKind("entity-relevance", RelevanceMemory,
                                   _entity_maker(RelevanceMemory), entity_stream, feed_entities),
    "entity-summary": MemoryKind("entity-summary", EntitySummaryMemory, _entity_summary,
                                 hybrid_stream, feed_hybrid),
    "entity-read-through": MemoryKind("entity-read-through", ReadThroughMemory, _read_through,
                                      lookup_stream, feed_lookup),
    "workspace": MemoryKind("workspace", WorkingMemory, _working, workspace_stream,
                            feed_workspace),
    "episodic": MemoryKind("episodic", EpisodicMemory, _episodic, message_stream, _add),
    "reflection": MemoryKind("reflection", ReflectionMemory, _reflection, window_stream,
                             feed_reflection),
    "semantic": MemoryKind("semantic", SemanticMemory, SemanticMemory,
                           message_stream, _semantic_add),
    "service": MemoryKind("service", MemoryService, _service, message_stream, _service_add),
    "context-manager": MemoryKind("context-manager", ContextManager, _context_manager,
                                  message_stream, _context_add),
}
"""Every memory kind, by name: each buffer policy of the registry (``buffer-<policy>``) and
the plain buffer, the entity memories, the workspace, and the long-term memories."""

NOT_KINDS: dict[str, str] = {
    "TaskSlots": "a column of WorkingMemory (shares its trace and clock); saved with it",
    "NoteQueue": "a column of WorkingMemory (shares its trace and clock); saved with it",
    "KnowledgeGraph": "the fixed world a WorkingMemory reads; it never evicts or decides",
    "InMemoryStore": "the system of record behind ReadThroughMemory, not a memory of it",
    "NumpyVectorStore": "where SemanticMemory and MemoryService keep vectors; saved with them",
    "QdrantVectorStore": "an external database client; its data lives in Qdrant",
}
"""Classes whose names sound like memories but are not kinds, and why."""
