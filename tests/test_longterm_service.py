"""The memory service of seed 004: storage scopes, batches, auto-recall, session isolation."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memorykit.buffers import BufferWindow, SummaryBuffer
from memorykit.longterm.service import LongTermSettings, MemoryService
from memorykit.messages import MessageFactory, ToolCall


def _service(**settings):
    return MemoryService(lambda: BufferWindow(3), LongTermSettings(**settings))


def test_every_message_is_stored_before_working_memory_forgets_it():
    f = MessageFactory()
    svc = _service()
    msgs = [f.user(f"note number {i} about apples") for i in range(6)]
    for m in msgs:
        svc.add("s", m)
    assert [m.id for m in svc.session("s").working] == [m.id for m in msgs[-3:]]
    assert svc.stored_ids("s") == {m.id for m in msgs}


@pytest.mark.parametrize(
    "scope, stored_roles",
    [("all", {"system", "user", "assistant", "tool"}), ("conversational", {"user", "assistant"})],
)
def test_storage_scopes(scope, stored_roles):
    f = MessageFactory()
    svc = _service(storage_scope=scope)
    msgs = [f.system("Be brief."), f.user("look up the weather"),
            f.assistant("checking", tool_calls=(ToolCall("call_1", "lookup"),)), f.tool("sunny", call_id="call_1"),
            f.assistant("It is sunny.")]
    for m in msgs:
        svc.add("s", m)
    assert svc.stored_ids("s") == {m.id for m in msgs if m.role in stored_roles}


def test_summaries_only_stores_what_working_memory_summarizes():
    f = MessageFactory()
    svc = MemoryService(lambda: SummaryBuffer(200), LongTermSettings(storage_scope="summaries_only"))
    msgs = [f.user(f"My locker number {i} is by the blue door near the pool.") for i in range(20)]
    for m in msgs:
        svc.add("s", m)
    summaries = [m for m in svc.session("s").semantic.units_of]
    assert summaries and all(i.startswith("summary") for i in summaries)
    assert not set(summaries) & {m.id for m in msgs}
    [hit, *_] = svc.recall("s", "locker blue door pool", limit=5)
    assert hit.message_id.startswith("summary") and set(hit.sources) <= {m.id for m in msgs}


def test_batches_are_held_then_flushed_on_clear_nothing_lost():
    f = MessageFactory()
    svc = _service(batch_size=3)
    msgs = [f.user(f"apples and pears {i}") for i in range(5)]
    for m in msgs:
        svc.add("s", m)
    assert svc.stored_ids("s") == {m.id for m in msgs[:3]}  # one full batch written
    assert [m.id for m in svc.session("s").pending] == [msgs[3].id, msgs[4].id]
    removed = svc.clear("s")
    assert [m.id for m in removed] == [m.id for m in msgs[-3:]]
    assert svc.stored_ids("s") == {m.id for m in msgs} and not svc.session("s").pending
    assert len(svc.session("s").working) == 0
    stored = [e for e in svc.trace if e.kind == "store" and e.message_ids]
    assert [e.message_ids for e in stored][-1] == (msgs[3].id, msgs[4].id)
    assert "clear" in stored[-1].reason


def test_auto_recall_uses_the_last_user_message_and_orders_the_context():
    f = MessageFactory()
    svc = _service()
    fact = f.user("The locker code at the gym is 4721.")
    svc.add("s", fact)
    for i in range(4):
        svc.add("s", f.assistant(f"Filler reply about the weather, take {chr(97 + i)}."))
    question = f.user("Remind me of the locker code at the gym.")
    svc.add("s", question)
    ctx = svc.get_context("s")
    assert svc.last_recall_query == question.content
    recalled = [i for i in ctx.items if i.kind == "recalled"]
    assert ctx.items[: len(recalled)] == tuple(recalled)  # recalled first ...
    assert max(recalled, key=lambda i: i.score).sources == (fact.id,)
    working = [(m.id,) for m in svc.session("s").working]
    assert [i.sources for i in ctx.items[len(recalled):]] == working  # ... then working memory
    assert not {s for i in recalled for s in i.sources} & {w[0] for w in working}
    # With a current input: it is the query and comes last.
    ctx = svc.get_context("s", "And the gym locker code again?", budget=500)
    assert svc.last_recall_query == "And the gym locker code again?"
    kinds = [i.kind for i in ctx.items]
    n = kinds.count("recalled")
    assert kinds == ["recalled"] * n + ["message"] * (len(kinds) - n - 1) + ["query"]
    assert ctx.tokens <= 500


def test_auto_recall_off_and_working_messages_not_recalled_twice():
    f = MessageFactory()
    svc = _service(auto_recall=False)
    svc.add("s", f.user("The locker code at the gym is 4721."))
    assert [i.kind for i in svc.get_context("s").items] == ["message"]
    svc = _service()
    svc.add("s", f.user("The locker code at the gym is 4722."))
    assert [i.kind for i in svc.get_context("s", "locker code gym").items] == ["message", "query"]


def test_min_score_and_recall_limit():
    f = MessageFactory()
    svc = _service(recall_limit=1, min_score=0.99)
    for text in ["locker code gym", "locker code pool", "a", "b", "c"]:
        svc.add("s", f.user(text))
    [hit] = svc.recall("s", "locker code gym")  # identical text: cosine 1.0 > 0.99
    assert hit.text == "locker code gym" and hit.score > 0.99
    assert svc.recall("s", "locker code") == []  # below 0.99 for both
    svc = _service(recall_limit=1)
    for text in ["locker code gym", "locker code pool", "a", "b", "c"]:
        svc.add("s", f.user(text))
    assert len(svc.recall("s", "locker code")) == 1


texts = st.sampled_from([
    "The locker code is 4721.", "My locker code is 9999.", "The gym opens at six.",
    "Book a table for two.", "My name is Alice.", "What is my name?", "locker gym code name",
])


@given(st.lists(st.tuples(st.sampled_from(["s1", "s2", "s3"]), texts), min_size=1, max_size=25),
       texts, st.integers(min_value=1, max_value=4))
def test_nothing_is_recalled_across_sessions(events, query, batch_size):
    f = MessageFactory()
    svc = MemoryService(lambda: BufferWindow(2), LongTermSettings(batch_size=batch_size,
                                                                  recall_limit=10))
    owner = {}
    for session, text in events:
        m = f.user(text)
        owner[m.id] = session
        svc.add(session, m)
    for session in ("s1", "s2", "s3"):
        svc.flush(session)
        for r in svc.recall(session, query, limit=50):
            assert all(owner[s] == session for s in r.sources)
        ctx = svc.get_context(session, query)
        assert all(owner[s] == session for s in ctx.covered_ids())


def test_service_as_a_context_policy_is_incremental_and_isolated():
    f = MessageFactory()
    history = [f.system("Be brief."), f.user("The locker code at the gym is 4721.")]
    history += [f.assistant(f"Chatter, part {chr(97 + i)}.") for i in range(6)]
    svc = MemoryService(lambda: BufferWindow(3))
    ctx = svc.build_context(history, "What is the locker code at the gym?", 400)
    assert history[1].id in ctx.covered_ids() and ctx.items[-1].kind == "query"
    assert ctx.covered_ids() <= {m.id for m in history}
    other = [MessageFactory(id_prefix="x").user("Something else entirely.")]
    ctx = svc.build_context(other, "What is the locker code at the gym?", 400)
    assert ctx.covered_ids() <= {other[0].id}


@pytest.mark.parametrize(
    "kwargs, error, text",
    [
        ({"storage_scope": "everything"}, ValueError, "storage_scope must be one of"),
        ({"batch_size": 0}, ValueError, "batch_size must be >= 1, got 0"),
        ({"auto_recall": "yes"}, TypeError, "auto_recall must be a bool"),
        ({"recall_limit": -1}, ValueError, "recall_limit must be >= 0"),
        ({"unit": "token"}, ValueError, "unit must be one of"),
    ],
)
def test_bad_settings_are_named(kwargs, error, text):
    with pytest.raises(error, match=text):
        LongTermSettings(**kwargs)


def test_bad_calls_are_named():
    svc = _service()
    with pytest.raises(ValueError, match="session_id must be a non-empty string"):
        svc.session("")
    with pytest.raises(TypeError, match="message must be a Message"):
        svc.add("s", "hello")
    with pytest.raises(TypeError, match="working_memory\\(\\) must return a MessageBuffer"):
        MemoryService(lambda: "buffer").session("s")
    with pytest.raises(ValueError, match="budget must be >= 1"):
        svc.get_context("s", budget=0)
