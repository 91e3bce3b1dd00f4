"""Save and restore, over every memory kind of the catalogue: a restored memory is equal to the
saved one and makes the same decisions on the same future inputs (JSON state and pickle)."""

from __future__ import annotations

import json
import pickle
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memorykit.buffers import SummaryBuffer
from memorykit.clock import StepClock
import tests.memory_kinds as memory_kinds
from tests.memory_kinds import MEMORY_KINDS, READY, message_stream
from memorykit.messages import Message, MessageFactory, ToolCall
from memorykit.state import STATE_VERSION, dumps, loads, restore_state, save_state
from memorykit.trace import Trace


def _collaborators(state: dict) -> dict[str, Any]:
    """The catalogue's own functions a state names as collaborators (they live in tests/,
    outside the library, so a state cannot restore them itself; a library object never is one)."""
    given = {k: getattr(memory_kinds, v.split(":")[1]) for k, v in state["collaborators"].items()
             if v.startswith("tests.memory_kinds:")}
    assert set(given) == set(state["collaborators"]), state["collaborators"]
    return given


def _json_round_trip(memory: Any) -> Any:
    state = json.loads(json.dumps(save_state(memory), allow_nan=False))
    return restore_state(state, **_collaborators(state))


def _pickle_round_trip(memory: Any) -> Any:
    return pickle.loads(pickle.dumps(memory))


ROUND_TRIPS = {"json": _json_round_trip, "pickle": _pickle_round_trip}


def _kind(name: str):
    kind = MEMORY_KINDS[name]
    if kind.state != READY:
        pytest.skip(kind.state)
    return kind


@pytest.mark.parametrize("how", ROUND_TRIPS)
@pytest.mark.parametrize("name", MEMORY_KINDS)
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), k=st.integers(0, 120), further=st.integers(1, 80))
def test_a_restored_memory_decides_as_the_original(name, how, seed, k, further):
    kind = _kind(name)
    # two streams of equal, independent inputs: a memory may keep (and mutate) what it is fed
    ours, theirs = list(kind.stream(seed, k + further)), list(kind.stream(seed, k + further))
    original = kind.make()
    for item in ours[:k]:
        kind.feed(original, item)
    saved = save_state(original)
    restored = ROUND_TRIPS[how](original)
    assert save_state(restored) == saved  # restored == original, as states
    assert save_state(original) == saved  # saving does not disturb the memory
    for mine, yours in zip(ours[k:], theirs[k:]):
        assert kind.feed(restored, yours) == kind.feed(original, mine)
    assert save_state(restored) == save_state(original)


@pytest.mark.parametrize("name", MEMORY_KINDS)
def test_a_state_is_strict_json_naming_its_kind_and_version(name):
    kind = _kind(name)
    memory = kind.make()
    for item in kind.stream(5, 150):
        kind.feed(memory, item)
    text = dumps(memory)
    state = json.loads(text)
    assert state["kind"] == f"{type(memory).__module__}:{type(memory).__qualname__}"
    assert state["version"] == STATE_VERSION
    again = loads(text, **_collaborators(state))
    assert type(again) is type(memory) and dumps(again) == text
    trace = getattr(memory, "trace", None)
    if isinstance(trace, Trace):  # the bounded trace keeps its bound, its events and its counts
        assert again.trace.max_events == trace.max_events
        assert list(again.trace) == list(trace) and again.trace.counts == trace.counts


def test_a_message_pickles_equal_with_its_metadata():
    m = MessageFactory().user("hello", metadata={"topic": "x", "facts": ["f1"]}, importance=0.3)
    again = pickle.loads(pickle.dumps(m))
    assert again == m and dict(again.metadata) == {"topic": "x", "facts": ["f1"]}
    assert again.pinned == m.pinned


def test_shared_objects_stay_shared():
    # a tool call and its results share one companion list: a restored buffer must too
    buffer = MEMORY_KINDS["buffer-fifo"].make()
    f = MessageFactory()
    buffer.add(f.assistant("looking it up", tool_calls=(ToolCall("c1", "lookup"), ToolCall("c2", "lookup"))))
    buffer.add(f.tool("one", call_id="c1"))
    restored = _json_round_trip(buffer)
    assert restored._companions["m000001"] is restored._companions["m000002"]


class OwnSummarizer:
    """A summarizer of the user's own: not data, so a state names it and restore asks for it."""

    name = "own"

    def summarize(self, messages, max_tokens):
        return f"{len(messages)} messages"


def _summary_buffer(summarizer: Any) -> SummaryBuffer:
    buffer = SummaryBuffer(300, min_recent=2, summarizer=summarizer, trace=Trace(100))
    for m in message_stream(1, 40):
        buffer.add(m)
    return buffer


def test_a_users_collaborator_must_be_passed_again():
    mine = OwnSummarizer()
    buffer = _summary_buffer(mine)
    state = json.loads(dumps(buffer))
    assert state["collaborators"] == {"summarizer": f"{__name__}:OwnSummarizer"}
    with pytest.raises(ValueError, match=r"summarizer= \(a .*OwnSummarizer\)"):
        restore_state(state)
    with pytest.raises(ValueError, match="no collaborator named 'critic'"):
        restore_state(state, summarizer=mine, critic=mine)
    restored = restore_state(state, summarizer=mine)
    assert restored.summarizer is mine
    for m in message_stream(2, 60):
        again = Message(**{**{f: getattr(m, f) for f, spec in m.__dataclass_fields__.items() if spec.init},
                           "id": "x" + m.id})
        assert restored.add(again) == buffer.add(again)


def test_pickle_names_an_injected_lambda():
    buffer = MEMORY_KINDS["buffer-recency"].make(clock=StepClock())
    buffer.clock = type("Clock", (), {"now": staticmethod(lambda: 0.0)})()
    with pytest.raises((pickle.PicklingError, AttributeError, TypeError), match="Clock|lambda"):
        pickle.dumps(buffer)
    # the JSON state names it instead, as a collaborator to pass again
    assert list(save_state(buffer)["collaborators"]) == ["clock"]


@pytest.mark.parametrize("change, error", [
    (lambda s: s.pop("version"), r"state has no 'version' field"),
    (lambda s: s.pop("memory"), r"state has no 'memory' field"),
    (lambda s: s.update(version=99), r"state version must be 1, got 99"),
    (lambda s: s.update(kind="os:system"), r"kind 'os:system' is not part of memorykit"),
    (lambda s: s.update(kind="memorykit.buffers:NoSuchBuffer"), r"names nothing in this version"),
    (lambda s: s.update(kind="memorykit.buffers.summary_buffer:SummaryBuffer"), r"its kind says"),
    (lambda s: s.update(kind="memorykit.buffers:SummaryBuffer"), r"names nothing .* may build"),
    (lambda s: s.update(kind="FIFOBuffer"), r"kind must be 'module:name'"),
    (lambda s: s["memory"].update({"$reduce": {"$global": "subprocess:run"}}),
     r"'subprocess:run' is not part of memorykit"),
    (lambda s: s["memory"].pop("args"), r"lacks its 'args' field"),
    (lambda s: s["memory"].update({"$oops": 1, "$reduce": None}) or s["memory"].pop("$reduce"),
     r"unknown tag '\$oops'"),
])
def test_a_damaged_state_is_refused_naming_what_is_wrong(change, error):
    state = json.loads(dumps(MEMORY_KINDS["buffer-fifo"].make()))
    change(state)
    with pytest.raises(ValueError, match=error):
        restore_state(state)


def test_a_state_must_be_a_dict_and_fields_must_be_complete():
    with pytest.raises(TypeError, match="state must be the dict save_state"):
        restore_state("{}")
    with pytest.raises(TypeError, match="text must be the str dumps"):
        loads({"kind": 1})
    state = json.loads(dumps(MEMORY_KINDS["buffer-fifo"].make()))
    state["memory"]["args"] = {"$tuple": 5}
    with pytest.raises(TypeError, match=r"\$tuple must hold a JSON list, got 5"):
        restore_state(state)
    buffer = MEMORY_KINDS["buffer-fifo"].make()
    for m in message_stream(0, 60):
        buffer.add(m)
    state = json.loads(dumps(buffer))
    event = state["memory"]["state"]["trace"]["state"]["$tuple"][1]["_events"]["$deque"][0]
    event["state"] = event["state"][:-1]  # an eviction record without its last field
    with pytest.raises(ValueError, match=r"Eviction state must have 9 fields"):
        restore_state(state)
    message = next(iter(json.loads(dumps(buffer))["memory"]["state"]["_messages"].values()))
    message["args"]["$tuple"][6] = {"$float": "nan"}  # created_at: checked like new input
    with pytest.raises(ValueError, match="created_at must be finite"):
        restore_state(json.loads(dumps(buffer)) | {"memory": _with_message(buffer, message)})


def _with_message(buffer: Any, message: dict[str, Any]) -> dict[str, Any]:
    memory = json.loads(dumps(buffer))["memory"]
    first = next(iter(memory["state"]["_messages"]))
    memory["state"]["_messages"][first] = message
    return memory


def test_a_message_pickles_and_saves_with_metadata_tool_calls_and_sources():
    # Message itself used to fail pickle ("cannot pickle 'mappingproxy'": its metadata)
    f = MessageFactory()
    call = ToolCall("call_7", "get_weather", '{"city": "Oslo"}')
    messages = [
        f.user("Weather in Oslo?", metadata={"topic": "weather", "facts": ["f1"]}),
        f.assistant("", tool_calls=(call,)),
        f.tool('{"temp": 3}', call_id="call_7"),
    ]
    messages.append(f.summary("The user asked about Oslo.", messages[:2]))
    for m in messages:
        for copy in (pickle.loads(pickle.dumps(m)), loads(dumps(m))):
            assert copy == m and type(copy.metadata) is type(m.metadata)
            assert copy.tool_calls == m.tool_calls and copy.sources == m.sources


def test_a_qdrant_backed_semantic_memory_saves_with_its_client_passed_again():
    # the points live in Qdrant behind the client (a connection, not data): the state holds
    # the store's settings and counter and names the client, which restore must be given
    qdrant_client = pytest.importorskip("qdrant_client")
    from memorykit.embeddings import LexicalHashingEmbedder
    from memorykit.longterm.semantic import SemanticMemory
    from memorykit.longterm.vectorstore import QdrantVectorStore

    embedder, client = LexicalHashingEmbedder(), qdrant_client.QdrantClient(":memory:")
    memory = SemanticMemory(embedder=embedder, store=QdrantVectorStore(embedder.dimension, client=client))
    ours, theirs = list(message_stream(4, 60)), list(message_stream(4, 60))
    for m in ours[:30]:
        memory.add([m])
    text = dumps(memory)
    assert json.loads(text)["collaborators"] == {"client": "qdrant_client.qdrant_client:QdrantClient"}
    with pytest.raises(ValueError, match=r"client= \(a qdrant_client"):
        loads(text)
    with pytest.raises(ValueError, match="has no collection 'memorykit'"):
        loads(text, client=qdrant_client.QdrantClient(":memory:"))
    restored = loads(text, client=client, kind=SemanticMemory)
    assert restored.store.client is client and dumps(restored) == text
    for m in ours[:30]:  # the same store behind both: the same recollections
        assert [(r.unit_id, round(r.score, 5)) for r in restored.recall(m.content, limit=5)] == [
            (r.unit_id, round(r.score, 5)) for r in memory.recall(m.content, limit=5)]
    for m in theirs[30:]:  # and the restored one goes on adding where the original left off
        restored.add([m])
    assert dumps(restored) != text and len(client.scroll("memorykit", limit=1000)[0]) == len(
        restored.store)


@pytest.mark.parametrize("policy", ["latest-wins", "keep-both-dated"])
def test_a_store_under_an_update_policy_restores_its_timeline(policy):
    # issue 27: the session's FactTimeline, its dated versions and Superseded events are data
    from memorykit.longterm.service import LongTermSettings, MemoryService, _default_working

    f = MessageFactory()
    service = MemoryService(settings=LongTermSettings(update_policy=policy))
    for text in ("The dentist appointment is on Tuesday at 3pm.", "Noted.",
                 "The dentist appointment moved to Thursday at 10am.", "Thanks."):
        service.add("u", f.user(text))
    service.apply_updates("u")
    text = dumps(service)
    again = loads(text, working_memory=_default_working)
    assert dumps(again) == text
    before, after = service.session("u").timeline, again.session("u").timeline
    assert before.keys() and list(after.keys()) == list(before.keys())
    assert all(after.versions(k) == before.versions(k) for k in before.keys())
    superseded = [e for e in service.trace if type(e).__name__ == "Superseded"]
    assert superseded and [e for e in again.trace if type(e).__name__ == "Superseded"] == superseded
