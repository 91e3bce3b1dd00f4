"""AttentionWindow: ranking, neighbours, budget, order, caching, tool groups."""

from __future__ import annotations

import numpy as np
import pytest

from memorykit.buffers import AttentionWindow, FIFOBuffer
from memorykit.messages import Message, ToolCall


class KeywordEmbedder:
    """One axis per keyword: similarity is exactly which keyword a text contains."""

    name = "keywords"
    keywords = ("paris", "rome", "hotel", "train")
    dimension = len(keywords)

    def __init__(self):
        self.calls = 0

    def embed(self, texts):
        self.calls += 1
        out = np.array([[float(k in t.lower()) for k in self.keywords] for t in texts],
                       dtype=np.float32)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return np.divide(out, norms, out=out, where=norms > 0)


def m(mid, text, billed=14, **kw):
    role = kw.pop("role", "user")
    return Message(mid, role, text, billed - 4, billed, **kw)


def buffer_of(*messages):
    buf = FIFOBuffer(max_tokens=None, max_entries=1000)
    for x in messages:
        buf.add(x)
    return buf


def test_hit_with_neighbours_in_original_order():
    buf = buffer_of(m("a", "hello"), m("b", "weather"), m("c", "Paris hotel"),
                    m("d", "ok"), m("e", "sure"), m("f", "Rome"))
    win = AttentionWindow(buf, KeywordEmbedder(), window_tokens=42, neighbours=1)
    sel = win.select_with_scores("paris")
    # Best hit c (cosine 1/sqrt 2), then f (0, ties broken oldest first: a, b, d, e, f).
    assert sel.scores["c"] == pytest.approx(2 ** -0.5) and sel.scores["a"] == 0.0
    # c + its neighbours b and d = 42 tokens: the budget is full.
    assert sel.ids == ["b", "c", "d"] and sel.tokens == 42
    assert sel.hits[0] == "c"


def test_budget_holds_and_stops_at_first_hit_that_does_not_fit():
    buf = buffer_of(m("a", "Paris", 20), m("b", "x", 20), m("c", "Rome", 20), m("d", "y", 20))
    win = AttentionWindow(buf, KeywordEmbedder(), window_tokens=50, neighbours=1)
    out = win.select_with_scores("paris rome")
    # a (hit) 20, neighbour b 20 = 40; next hit c (20) would make 60 > 50: stop.
    assert out.ids == ["a", "b"] and out.tokens == 40 <= 50
    assert [x.id for x in AttentionWindow(buf, KeywordEmbedder(), 10).select("rome")] == []


def test_neighbours_zero_and_two():
    msgs = [m(i, "Rome" if i == "d" else "filler") for i in "abcdefg"]
    buf = buffer_of(*msgs)
    emb = KeywordEmbedder()
    assert AttentionWindow(buf, emb, 14, neighbours=0).select("rome") == [msgs[3]]
    two = AttentionWindow(buf, emb, 70, neighbours=2).select("rome")
    assert [x.id for x in two] == ["b", "c", "d", "e", "f"]


def test_embeddings_are_cached_by_id():
    buf = buffer_of(m("a", "Paris"), m("b", "Rome"))
    emb = KeywordEmbedder()
    win = AttentionWindow(buf, emb, 100)
    win.select("paris")
    win.select("rome")
    assert win.embedded_count == 2  # messages embedded once; queries each cost one call
    buf.add(m("c", "hotel"))
    win.select("hotel")
    assert win.embedded_count == 3 and emb.calls == 5


def test_tool_call_and_result_selected_together():
    call = Message("call", "assistant", "", 0, 10, tool_calls=(ToolCall("c1", "lookup"),))
    res = Message("res", "tool", "Paris forecast", 6, 10, tool_call_id="c1")
    buf = buffer_of(m("a", "hi"), call, res, m("b", "bye"))
    out = AttentionWindow(buf, KeywordEmbedder(), 20, neighbours=0).select("paris")
    assert [x.id for x in out] == ["call", "res"]


def test_pinned_system_included_first_and_default_embedder():
    sys = Message("sys", "system", "You plan trips.", 4, 8)
    buf = buffer_of(sys, m("a", "We talked about Paris hotels."), m("b", "Then the weather."),
                    m("c", "Rome trains are fast."))
    win = AttentionWindow(buf, window_tokens=22, neighbours=0)
    assert win.embedder.name.startswith("lexical-hashing")
    assert [x.id for x in win.select("paris hotels")] == ["sys", "a"]


def test_validation():
    buf = buffer_of()
    with pytest.raises(ValueError, match="window_tokens must be >= 1, got 0"):
        AttentionWindow(buf, window_tokens=0)
    with pytest.raises(ValueError, match="neighbours must be >= 0, got -1"):
        AttentionWindow(buf, neighbours=-1)
    with pytest.raises(TypeError, match="buffer must be a MessageBuffer"):
        AttentionWindow([])
    assert AttentionWindow(buf).select("anything") == []


# ------------------------------------------------ the cached layout selects what a fresh one does
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from memorykit.classroom.scenarios.conversation import simulate_conversation  # noqa: E402

STEPS = st.one_of(
    st.tuples(st.just("ask"), st.integers(0, 50), st.integers(1, 900), st.integers(0, 3)),
    st.tuples(st.just("add"), st.integers(1, 12)),
    st.tuples(st.just("importance"), st.integers(0, 200), st.floats(0.0, 1.0)),
    st.tuples(st.just("pinned"), st.booleans()),
)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), cap=st.sampled_from([None, 400, 1500]),
       steps=st.lists(STEPS, min_size=1, max_size=25))
def test_a_reused_window_selects_exactly_what_a_fresh_window_selects(seed, cap, steps):
    # One window lives through adds, evictions (a capped FIFO), importance updates, budget,
    # neighbour and include_pinned changes and many queries; after every change its cached
    # layout must give the selection a window built from scratch on the same buffer gives.
    conv = simulate_conversation(60, seed=seed, tool_call_rate=0.3, words=(3, 40))
    pending = list(conv.messages)
    buffer = FIFOBuffer(max_tokens=cap)
    buffer.extend(pending[:5])
    del pending[:5]
    # the facts' questions (which match planted turns) and a few that match nothing
    queries = [f.question for f in conv.facts] + ["", "zzz", "what did the tool return"]
    reused = AttentionWindow(buffer)
    for step in steps:
        if step[0] == "add":
            buffer.extend(pending[: step[1]])
            del pending[: step[1]]
        elif step[0] == "importance" and len(buffer):
            buffer.set_importance(buffer.messages()[step[1] % len(buffer)].id, step[2])
        elif step[0] == "pinned":
            reused.include_pinned = step[1]
        elif step[0] == "ask":
            query, room, neighbours = queries[step[1] % len(queries)], step[2], step[3]
            reused.window_tokens, reused.neighbours = room, neighbours
            fresh = AttentionWindow(buffer, None, room, neighbours,
                                    include_pinned=reused.include_pinned)
            assert reused.select_with_scores(query) == fresh.select_with_scores(query)
            assert reused.scores(query) == fresh.scores(query)


def test_the_layout_is_rebuilt_only_when_the_buffer_changes():
    buf = buffer_of(m("a", "Paris"), m("b", "Rome"))
    win = AttentionWindow(buf, KeywordEmbedder(), 100)
    win.select("paris")
    layout = win._layout
    win.select("rome")
    win.window_tokens = 20
    win.select("rome")
    assert win._layout is layout  # budget and query changes reuse it
    buf.add(m("c", "hotel"))
    assert [x.id for x in win.select("hotel")] == ["c"] and win._layout is not layout


def test_precomputed_vectors_are_used_and_not_modified():
    buf = buffer_of(m("a", "Paris"), m("b", "Rome"))
    emb = KeywordEmbedder()
    given_vectors = {"a": np.array([0, 1, 0, 0], np.float32), "b": np.array([1, 0, 0, 0], np.float32)}
    win = AttentionWindow(buf, emb, 14, neighbours=0, vectors=given_vectors)
    assert [x.id for x in win.select("paris")] == ["b"]  # the given (swapped) vectors rule
    assert win.embedded_count == 0 and emb.calls == 1  # only the query was embedded
    buf.add(m("c", "hotel"))
    win.select("hotel")
    assert set(given_vectors) == {"a", "b"}
