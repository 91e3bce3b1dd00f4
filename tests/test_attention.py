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
