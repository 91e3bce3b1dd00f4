"""The long-term store's update policy (LongTermSettings.update_policy): what a superseded
entry becomes, what recall shows, and that nothing is lost without being said."""

from __future__ import annotations

import pytest

from memorykit.buffers import BufferWindow
from memorykit.embeddings import LexicalHashingEmbedder
from memorykit.facts.statement import Update
from memorykit.longterm.events import Superseded
from memorykit.longterm.service import LongTermSettings, MemoryService
from memorykit.longterm.vectorstore import NumpyVectorStore
from memorykit.messages import MessageFactory
from tests.faulty_stores import FaultyStore

KEY = "deadline apollo report"


def _messages():
    f = MessageFactory()
    old = f.user("The deadline of the apollo report is Friday.")
    chat = f.user("I like green tea in the afternoon.")
    new = f.user("Update: the apollo report deadline moved to Monday.")
    return old, chat, new


class PairDetector:
    """A fake detector: ``new`` replaces ``old`` once both are among the messages."""

    def __init__(self, pairs, kind="update"):
        self.pairs, self.kind, self.calls = pairs, kind, 0

    def find(self, messages):
        self.calls += 1
        ids = {m.id for m in messages}
        return [Update(o, n, KEY, self.kind, "moved to") for o, n in self.pairs
                if o in ids and n in ids]


def _service(policy, detector, window=1, **kw):
    return MemoryService(lambda: BufferWindow(window),
                         LongTermSettings(update_policy=policy, **kw), detector=detector)


def test_keep_all_is_todays_store_and_detects_nothing():
    old, chat, new = _messages()
    det = PairDetector([(old.id, new.id)])
    svc = _service("keep-all", det)
    for m in (old, chat, new):
        svc.add("s", m)
    svc.get_context("s", "When is the apollo report deadline?")
    assert svc.apply_updates("s") == [] and not any(isinstance(e, Superseded) for e in svc.trace)
    assert det.calls == 0 and svc.stored_ids("s") == {old.id, chat.id, new.id}
    assert LongTermSettings().update_policy == "keep-all"


@pytest.mark.parametrize("policy", ["latest-wins", "keep-strongest"])
def test_dropping_policies_delete_on_purpose_and_say_so(policy):
    old, chat, new = _messages()
    svc = _service(policy, PairDetector([(old.id, new.id)]))
    for m in (old, chat, new):
        svc.add("s", m)
    assert svc.stored_ids("s") == {old.id, chat.id, new.id}  # the policy runs at the next read
    events = svc.apply_updates("s")
    assert [(e.message_id, e.superseded_by, e.action) for e in events] == [
        (old.id, new.id, "dropped")]
    assert svc.apply_updates("s") == []  # each update is acted on once
    assert "'Update: the apollo" in events[0].reason and events[0] in list(svc.trace)
    assert svc.stored_ids("s") == {chat.id, new.id}
    held = {p["message_id"] for p in svc.store.payloads({"session_id": "s"})}
    assert held == {chat.id, new.id}
    items = svc.get_context("s", "When is the apollo report deadline?").items
    assert not any(old.id in i.sources for i in items)


def test_keep_strongest_keeps_the_firm_statement_against_a_weak_later_one():
    f = MessageFactory()
    old = f.user("The deadline of the apollo report is Friday.")
    new = f.user("Maybe the apollo report deadline is Monday?", metadata={"strength": 0.3})
    svc = _service("keep-strongest", PairDetector([(old.id, new.id)]))
    svc.add("s", old)
    svc.add("s", new)
    events = svc.apply_updates("s")
    assert [(e.message_id, e.superseded_by) for e in events] == [(new.id, old.id)]
    assert svc.stored_ids("s") == {old.id}


def test_keep_both_dated_marks_dates_and_places_the_old_before_the_current():
    old, chat, new = _messages()
    svc = _service("keep-both-dated", PairDetector([(old.id, new.id)]), recall_limit=1)
    for m in (old, chat, new):
        svc.add("s", m)
    svc.add("s", MessageFactory(id_prefix="x").user("Thanks."))  # the update leaves working memory
    assert [e.action for e in svc.apply_updates("s")] == ["dated"]
    assert svc.stored_ids("s") >= {old.id, new.id}
    payload = next(p for p in svc.store.payloads({"session_id": "s"}) if p["message_id"] == old.id)
    assert payload["superseded_by"] == new.id and payload["valid_until"] == new.created_at
    # the question's words match the old statement best: recall finds it, marks it and
    # brings the current one after it, beyond recall_limit
    items = svc.get_context("s", "What is the deadline of the apollo report?").items
    kinds = [(i.kind, i.sources) for i in items if i.kind in ("superseded", "recalled")]
    assert kinds == [("superseded", (old.id,)), ("recalled", (new.id,))]
    marked = items[[i.kind for i in items].index("superseded")]
    assert marked.content.startswith("[superseded on ") and old.content in marked.content
    # under budget pressure the marked one goes first
    tight = svc.get_context("s", "What is the deadline of the apollo report?",
                            budget=sum(i.tokens for i in items) + 3 - marked.tokens)
    assert [i.kind for i in tight.items].count("superseded") == 0
    assert any(new.id in i.sources for i in tight.items)


def test_a_cancellation_is_an_update_too():
    old, chat, new = _messages()
    svc = _service("latest-wins", PairDetector([(old.id, new.id)], kind="cancellation"))
    for m in (old, chat, new):
        svc.add("s", m)
    svc.flush("s")  # a flush runs the policy too
    timeline = svc.session("s").timeline
    assert timeline.current(KEY) is None and timeline.versions(KEY)[0].cancelled


def test_a_failing_detector_loses_nothing_and_is_tried_again():
    old, chat, new = _messages()
    det = PairDetector([(old.id, new.id)])
    calls = {"n": 0}

    def flaky(messages):
        calls["n"] += 1
        if calls["n"] == 3:
            raise RuntimeError("detector down")
        return det.find(messages)

    svc = _service("latest-wins", flaky)
    for m in (old, chat, new):
        svc.add("s", m)
        svc.get_context("s")  # reads run the detector: the third one fails
    s = svc.session("s")
    assert s.last_update_error == "RuntimeError"
    assert svc.stored_ids("s") == {old.id, chat.id, new.id}
    events = svc.apply_updates("s")
    assert [e.message_id for e in events] == [old.id] and s.last_update_error is None


def test_a_refused_delete_is_not_recalled_and_is_tried_again():
    old, chat, new = _messages()
    store = FaultyStore(NumpyVectorStore(64), "discard-raises", (999,))
    svc = MemoryService(lambda: BufferWindow(1), LongTermSettings(update_policy="latest-wins"),
                        embedder=LexicalHashingEmbedder(64), store=store,
                        detector=PairDetector([(old.id, new.id)]))
    for m in (old, chat, new):
        svc.add("s", m)
    items = svc.get_context("s", "What is the deadline of the apollo report?").items
    assert not any(old.id in i.sources for i in items)
    assert svc.session("s").to_drop == {old.id} and old.id in svc.stored_ids("s")  # truthful
    store.heal()
    assert svc.apply_updates("s") == []  # the delete is retried; the decision was told before
    assert svc.session("s").to_drop == set() and old.id not in svc.stored_ids("s")


def test_every_message_is_stored_pending_or_dropped_on_the_record_under_store_faults():
    """The fault matrix's count under an update policy: a superseded entry dropped on purpose
    is accounted for by its event; nothing else leaves."""
    f = MessageFactory()
    messages = [f.user(f"The code of locker {i // 2} is {1000 + i}.") for i in range(24)]
    pairs = [(messages[i - 1].id, messages[i].id) for i in range(1, 24, 2)]
    store = FaultyStore(NumpyVectorStore(64), "add-raises", range(3, 200, 3))
    svc = MemoryService(lambda: BufferWindow(2),
                        LongTermSettings(update_policy="latest-wins", batch_size=2),
                        embedder=LexicalHashingEmbedder(64), store=store,
                        detector=PairDetector(pairs))
    dropped: set[str] = set()
    for m in messages:
        svc.add("s", m)
        svc.get_context("s", "What is the code of locker 3?")  # never raises
        dropped |= {e.message_id for e in svc.trace if isinstance(e, Superseded)}
        lost = {x.id for x in messages[:messages.index(m) + 1]} - svc.stored_ids("s") - \
            set(svc.pending_ids("s")) - dropped
        assert lost == set()
    store.heal()
    svc.flush("s")
    assert store.injected > 0 and dropped  # faults happened and the policy dropped entries
    assert {m.id for m in messages} == svc.stored_ids("s") | {e.message_id for e in svc.trace
                                                               if isinstance(e, Superseded)}


def test_bad_settings_and_detectors_are_refused():
    with pytest.raises(ValueError, match="'newest'"):
        LongTermSettings(update_policy="newest")
    with pytest.raises(TypeError, match="detector"):
        MemoryService(detector=3)
    old, chat, new = _messages()
    svc = _service("latest-wins", lambda messages: ["not an update"])
    for m in (old, chat, new):
        svc.add("s", m)  # stored anyway; the error is told
    assert svc.apply_updates("s") == []
    assert svc.session("s").last_update_error == "TypeError" and len(svc.stored_ids("s")) == 3


def test_the_default_detector_is_the_rule_based_one():
    old, chat, new = _messages()
    svc = MemoryService(lambda: BufferWindow(1), LongTermSettings(update_policy="latest-wins"))
    for m in (old, chat, new):
        svc.add("s", m)
    svc.apply_updates("s")
    assert svc.stored_ids("s") == {chat.id, new.id}
