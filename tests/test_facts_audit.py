"""The write-quality audit (memorykit.facts.audit): each finding kind on its own, and bad input."""

from __future__ import annotations

import pytest

from memorykit.embeddings import LexicalHashingEmbedder
from memorykit.facts.audit import (FINDING_KINDS, AuditSettings, StoredEntry, audit_settings_grid,
                                   audit_store, is_chatter)
from memorykit.facts.statement import Update
from memorykit.longterm.semantic import SemanticMemory
from memorykit.longterm.service import (STORAGE_SCOPES, UPDATE_POLICY_NAMES, LongTermSettings,
                                        MemoryService)
from memorykit.longterm.vectorstore import NumpyVectorStore, QdrantVectorStore, qdrant_available
from memorykit.messages import Message, MessageFactory

KEY = "deadline of the apollo report"
OLD = "The deadline for the Apollo report is Friday."
NEW = "Change of plan: the Apollo report deadline moved to Monday."


def linking(*pairs: tuple[str, str]):
    """A fake detector: links the given (old, new) message ids when both were stored."""
    def find(messages):
        ids = {m.id for m in messages}
        return [Update(o, n, KEY, "update", "moved to") for o, n in pairs if o in ids and n in ids]
    return find


def none(messages):
    return []


def only(audit, kind):
    return [f for f in audit.findings if f.kind == kind]


# ------------------------------------------------------------------ duplicates
def test_exact_duplicates_ignore_case_and_spacing_and_point_at_the_first_copy():
    store = [("a", OLD, 1.0), ("b", "the deadline for  the APOLLO report is friday.", 2.0),
             ("c", OLD, 3.0), ("d", "Lunch is at noon.", 4.0)]
    audit = audit_store(store, detector=none)
    assert audit.count("exact duplicate") == 2
    assert [f.ids for f in only(audit, "exact duplicate")] == [("b", "a"), ("c", "a")]
    # an exact duplicate is not counted again as a near one
    assert audit.count("near duplicate") == 0


def test_near_duplicates_follow_the_jaccard_threshold():
    a = "Please book the table at Rosa's for eight people on Saturday."
    b = "Please book the table at Rosa's for eight people on Saturday evening."
    c = "The dentist appointment is on Tuesday morning."
    audit = audit_store([("a", a, 1.0), ("b", b, 2.0), ("c", c, 3.0)], detector=none)
    assert [f.ids for f in only(audit, "near duplicate")] == [("b", "a")]
    # the example shows where the two differ, however long their common start
    assert only(audit, "near duplicate")[0].detail.endswith(
        "'...for eight people on Saturday evening.' ~ '...for eight people on Saturday.' "
        "(Jaccard 0.91)")
    # the same pair under a threshold above its similarity is no finding
    strict = audit_store([("a", a, 1.0), ("b", b, 2.0)], detector=none,
                         settings=AuditSettings(near_threshold=0.99))
    assert strict.count("near duplicate") == 0


def test_a_pair_the_detector_links_is_a_contradiction_not_a_near_duplicate():
    old, new = "The gate code is 4721.", "The gate code is 4712."
    store = [("a", old, 1.0), ("b", new, 2.0)]
    assert audit_store(store, detector=none).count("near duplicate") == 1
    linked = audit_store(store, detector=linking(("a", "b")))
    assert linked.count("near duplicate") == 0
    assert linked.count("contradiction left standing") == 1


# ------------------------------------------------------------------ chatter
@pytest.mark.parametrize("text", ["ok", "Thanks!", "Hi there, thanks so much!",
                                  "Sounds good to me.",
                                  "Glad to help!", "Bye, see you soon", "Thanks, that helps."])
def test_courtesy_and_acknowledgements_are_chatter(text):
    assert is_chatter(text)


@pytest.mark.parametrize("text", ["Cancel it.", "Thanks, Anna!", "ok 4712", "Friday works.",
                                  "ok ok ok ok ok ok ok"])
def test_a_name_a_verb_a_number_or_length_is_not_chatter(text):
    assert not is_chatter(text)


def test_the_audit_counts_chatter_entries():
    store = [("a", "Hello!", 1.0), ("b", OLD, 2.0), ("c", "ok, thanks", 3.0)]
    audit = audit_store(store, detector=none)
    assert [f.ids for f in only(audit, "transient chatter")] == [("a",), ("c",)]


# ------------------------------------------------------------------ contradictions
def test_a_superseded_entry_kept_unmarked_is_a_contradiction_left_standing():
    store = [("a", OLD, 1.0), ("x", "Lunch is at noon.", 2.0), ("b", NEW, 3.0)]
    audit = audit_store(store, detector=linking(("a", "b")))
    assert audit.updates == 1
    assert [f.ids for f in only(audit, "contradiction left standing")] == [("a", "b")]


def test_a_copy_linked_to_its_original_is_a_duplicate_not_a_contradiction():
    store = [("a", OLD, 1.0), ("b", OLD.upper(), 2.0)]
    audit = audit_store(store, detector=linking(("a", "b")))
    assert audit.count("exact duplicate") == 1
    assert audit.updates == 0 and audit.count("contradiction left standing") == 0


def test_examples_are_distinct():
    store = [(str(i), "You are welcome.", float(i)) for i in range(5)] + [("x", "ok", 9.0)]
    rows = {r["finding"]: r for r in audit_store(store, detector=none).rows()}
    assert rows["transient chatter"]["count"] == 6
    assert rows["transient chatter"]["examples"] == "'You are welcome.' | 'ok'"


def test_a_superseded_entry_marked_so_or_gone_is_no_contradiction():
    marked = [StoredEntry("a", OLD, 1.0, superseded=True), ("b", NEW, 3.0)]
    audit = audit_store(marked, detector=linking(("a", "b")))
    assert audit.count("contradiction left standing") == 0
    gone = [("b", NEW, 3.0)]  # latest wins: the old entry was dropped
    audit = audit_store(gone, detector=linking(("a", "b")))
    assert audit.updates == 0 and audit.count("contradiction left standing") == 0


def test_the_default_detector_finds_a_plain_correction_left_standing():
    store = [("a", "My gate code is 4721.", 1.0), ("x", "What a lovely day.", 2.0),
             ("b", "Sorry, I got that wrong: my gate code is 4712, not 4721.", 3.0)]
    audit = audit_store(store)  # memorykit.facts.detect.find_updates
    assert [f.ids for f in only(audit, "contradiction left standing")] == [("a", "b")]


# ------------------------------------------------------------------ ranking
def test_the_superseded_entry_ranked_above_the_current_one_is_found():
    # the old statement shares more words with the key: a lexical recall ranks it first
    store = [("a", "The Apollo report deadline is Friday.", 1.0),
             ("b", "Moved to Monday now.", 2.0)]
    audit = audit_store(store, detector=linking(("a", "b")))
    assert audit.queries == (KEY,)
    assert [f.ids for f in only(audit, "superseded ranked first")] == [("a", "b")]


def test_a_superseded_entry_ranked_first_but_marked_is_no_finding():
    store = [StoredEntry("a", "The Apollo report deadline is Friday.", 1.0, superseded=True),
             ("b", "Moved to Monday now.", 2.0)]
    assert audit_store(store, detector=linking(("a", "b"))).count("superseded ranked first") == 0


def test_the_current_entry_ranked_first_is_no_finding():
    store = [("a", "Friday it is.", 1.0), ("b", "The Apollo report deadline moved to Monday.", 2.0)]
    audit = audit_store(store, detector=linking(("a", "b")))
    assert audit.count("superseded ranked first") == 0


def test_given_queries_replace_the_update_keys_and_chains_count_their_middle():
    store = [("a", "Apollo deadline Friday.", 1.0), ("b", "Apollo report deadline: Monday.", 2.0),
             ("c", "Now it is Tuesday.", 3.0)]
    audit = audit_store(store, queries=["apollo report deadline", "lunch"],
                        detector=linking(("a", "b"), ("b", "c")))
    assert audit.queries == ("apollo report deadline", "lunch")
    # b is current only until c: ranked first, it is a superseded value served first
    assert [f.ids for f in only(audit, "superseded ranked first")] == [("b", "c")]


def test_only_the_top_recall_limit_entries_are_read():
    filler = [(f"f{i}", f"The Apollo report deadline is discussed in meeting {i}.", float(i))
              for i in range(3)]
    store = filler + [("a", "Friday, for Apollo.", 10.0), ("b", "Monday instead.", 11.0)]
    wide = audit_store(store, queries=["apollo report deadline"], detector=linking(("a", "b")))
    narrow = audit_store(store, queries=["apollo report deadline"], detector=linking(("a", "b")),
                         settings=AuditSettings(recall_limit=3))
    assert wide.count("superseded ranked first") == 1
    assert narrow.count("superseded ranked first") == 0


# ------------------------------------------------------------------ stores
def conversation() -> list[Message]:
    f = MessageFactory()
    texts = ["Hi!", "Hello, how can I help?", OLD, "ok", OLD, "Thanks!", NEW, "Noted, Monday."]
    return [(f.user if i % 2 == 0 else f.assistant)(t) for i, t in enumerate(texts)]


def test_a_memory_service_session_is_audited_alone():
    ms = conversation()
    svc = MemoryService()
    for m in ms:
        svc.add("s", m)
    svc.add("other", MessageFactory(id_prefix="o").user(OLD))
    audit = audit_store(svc, "s", detector=linking((ms[2].id, ms[6].id)))
    assert audit.entries == len(ms) and audit.messages == len(ms)
    assert audit.counts() == {"exact duplicate": 1, "near duplicate": 0, "transient chatter": 4,
                              "contradiction left standing": 1, "superseded ranked first": 1}
    rows = audit.rows()
    assert [r["finding"] for r in rows] == list(FINDING_KINDS)
    assert rows[2]["out of"] == f"{len(ms)} entries" and "'ok'" in rows[2]["examples"]
    # the service recalls every entry for any query: one that shares no word with a fact
    # does not ask about it
    unrelated = audit_store(svc, "s", queries=["lunch"], detector=linking((ms[2].id, ms[6].id)))
    assert unrelated.count("superseded ranked first") == 0


def test_a_semantic_memory_of_sentences_is_audited_by_unit():
    mem = SemanticMemory()
    f = MessageFactory()
    mem.add([f.user(f"{OLD} Thanks!"), f.user(OLD)])
    audit = audit_store(mem, detector=none)
    assert (audit.entries, audit.messages) == (3, 2)
    assert audit.count("exact duplicate") == 1 and audit.count("transient chatter") == 1


def test_a_payload_dated_superseded_is_no_contradiction_left_standing():
    f = MessageFactory()
    old, new = f.user(OLD), f.user(NEW)
    for marks, standing in (({}, 1), ({"superseded_by": new.id}, 0), ({"valid_until": 5.0}, 0)):
        mem = SemanticMemory()
        mem.add([old], payload=marks)
        mem.add([new])
        audit = audit_store(mem, detector=linking((old.id, new.id)))
        assert audit.count("contradiction left standing") == standing, marks


STORES = ["numpy", pytest.param("qdrant", marks=pytest.mark.skipif(
    not qdrant_available(), reason="qdrant-client is not installed"))]


@pytest.mark.parametrize("kind", STORES)
def test_what_a_service_dates_is_marked_whatever_its_store(kind):
    """The dated marks are read back from the store's payloads, on either store."""
    f = MessageFactory()
    ms = [f.user(OLD), f.user("ok"), f.user(NEW)]
    counts = {}
    for policy in ("keep-all", "keep-both-dated"):
        embedder = LexicalHashingEmbedder()
        store = (NumpyVectorStore if kind == "numpy" else QdrantVectorStore)(embedder.dimension)
        svc = MemoryService(settings=LongTermSettings(update_policy=policy), embedder=embedder,
                            store=store, detector=linking((ms[0].id, ms[2].id)))
        for m in ms:
            svc.add("s", m)
        audit = audit_store(svc, "s", detector=linking((ms[0].id, ms[2].id)))
        counts[policy] = (audit.entries, audit.count("contradiction left standing"))
    assert counts == {"keep-all": (3, 1), "keep-both-dated": (3, 0)}


def test_the_grid_audits_every_scope_and_update_policy():
    ms = conversation()
    old, new = ms[2].id, ms[6].id
    rows = audit_settings_grid(ms, detector=linking((old, new)))
    assert [(r["storage_scope"], r["update_policy"]) for r in rows] == [
        (s, p) for s in STORAGE_SCOPES for p in UPDATE_POLICY_NAMES]
    by = {(r["storage_scope"], r["update_policy"]): r for r in rows}
    # keep-all leaves the contradiction and serves the old value first; latest-wins drops the
    # old entry (one entry fewer), keep-both-dated marks it: neither is left standing
    assert by["all", "keep-all"]["contradiction left standing"] == 1
    assert by["all", "keep-all"]["superseded ranked first"] == 1
    assert by["all", "latest-wins"]["entries"] == by["all", "keep-all"]["entries"] - 1
    for policy in ("latest-wins", "keep-both-dated"):
        assert by["all", policy]["contradiction left standing"] == 0, policy
        assert by["all", policy]["superseded ranked first"] == 0, policy
    # summaries only: a conversation too short to summarize leaves nothing stored
    assert by["summaries_only", "keep-all"]["entries"] == 0


# ------------------------------------------------------------------ bad input
def test_bad_input_is_refused_naming_it():
    with pytest.raises(TypeError, match="store must be"):
        audit_store("ok", detector=none)
    with pytest.raises(TypeError, match=r"store\[1\]"):
        audit_store([("a", "x", 1.0), ("b", "y")], detector=none)
    with pytest.raises(ValueError, match="'a' appears twice"):
        audit_store([("a", "x", 1.0), ("a", "y", 2.0)], detector=none)
    with pytest.raises(ValueError, match="created_at of entry 'a'"):
        audit_store([("a", "x", float("nan"))], detector=none)
    with pytest.raises(ValueError, match="session_id is only"):
        audit_store([("a", "x", 1.0)], "s", detector=none)
    with pytest.raises(TypeError, match="queries must be"):
        audit_store([("a", "x", 1.0)], queries="deadline", detector=none)
    with pytest.raises(TypeError, match="detector must return Update"):
        audit_store([("a", "x", 1.0)], detector=lambda ms: ["a->b"])
    with pytest.raises(TypeError, match="detector must be"):
        audit_store([("a", "x", 1.0)], detector=42)
    for bad in (0, 1.5, float("nan")):
        with pytest.raises(ValueError, match="near_threshold"):
            AuditSettings(near_threshold=bad)
    with pytest.raises(ValueError, match="recall_limit"):
        AuditSettings(recall_limit=0)
    with pytest.raises(ValueError, match="chatter_max_words"):
        AuditSettings(chatter_max_words=101)
    with pytest.raises(TypeError, match="superseded"):
        StoredEntry("a", "x", 1.0, superseded="no")


def test_a_service_needs_a_known_session():
    svc = MemoryService()
    svc.add("s", MessageFactory().user(OLD))
    with pytest.raises(ValueError, match="session_id is needed"):
        audit_store(svc, detector=none)
    with pytest.raises(ValueError, match="'nope' is not a session"):
        audit_store(svc, "nope", detector=none)
    assert "nope" not in svc.sessions  # the audit made no session


def test_the_grid_refuses_bad_settings_naming_them():
    ms = conversation()
    with pytest.raises(ValueError, match="messages must be"):
        audit_settings_grid([], detector=none)
    with pytest.raises(TypeError, match=r"messages\[0\]"):
        audit_settings_grid(["hi"], detector=none)
    with pytest.raises(ValueError, match="storage_scope"):
        audit_settings_grid(ms, storage_scopes=["everything"], detector=none)
    with pytest.raises(ValueError, match="storage_scopes must be"):
        audit_settings_grid(ms, storage_scopes="all", detector=none)
    with pytest.raises(ValueError, match="update_policy"):
        audit_settings_grid(ms, update_policies=["newest"], detector=none)
    with pytest.raises(TypeError, match="service must be"):
        audit_settings_grid(ms, service="memory", detector=none)
    with pytest.raises(TypeError, match=r"service\(settings\) must return"):
        audit_settings_grid(ms, service=lambda s: SemanticMemory(), detector=none)
    assert LongTermSettings().storage_scope == "all"
