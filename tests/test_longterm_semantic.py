"""Semantic memory (architecture C) and the vector stores."""

from __future__ import annotations

import numpy as np
import pytest

from memorykit.embeddings import LexicalHashingEmbedder
from memorykit.longterm.vectorstore import NumpyVectorStore, QdrantVectorStore, qdrant_available
from memorykit.longterm.architectures import SemanticArchitecture
from memorykit.longterm.semantic import SemanticMemory, SemanticSettings, split_units
from memorykit.messages import MessageFactory, ToolCall


def test_numpy_store_is_exact_cosine_with_strict_threshold_and_filters():
    store = NumpyVectorStore(2)
    store.add(["a", "b", "c"], np.array([[1, 0], [1, 1], [0, 2]], dtype=np.float32),
              [{"s": "x"}, {"s": "x"}, {"s": "y"}])
    hits = store.search(np.array([1.0, 0.0]), 3)
    assert [h.id for h in hits] == ["a", "b", "c"]
    assert hits[1].score == pytest.approx(1 / np.sqrt(2))
    # Strictly above: the 0.7071 hit is kept at 0.7, dropped at exactly its own score.
    assert [h.id for h in store.search(np.array([1.0, 0.0]), 3, threshold=0.7)] == ["a", "b"]
    assert [h.id for h in store.search(np.array([1.0, 0.0]), 3, threshold=hits[1].score)] == ["a"]
    assert [h.id for h in store.search(np.array([0.0, 1.0]), 3, where={"s": "x"})] == ["b", "a"]
    assert store.delete({"s": "x"}) == 2 and len(store) == 1
    # A zero query is similar to nothing: score 0 everywhere, so any threshold >= 0 drops it all.
    assert [h.score for h in store.search(np.zeros(2), 3)] == [0.0]
    assert store.search(np.zeros(2), 3, threshold=0.0) == []


@pytest.mark.parametrize(
    "call, error, text",
    [
        (lambda s: s.add(["a"], np.zeros((1, 3)), [{}]), ValueError, r"vectors must have shape \(1, 2\)"),
        (lambda s: s.add("a", np.zeros((1, 2)), [{}]), TypeError, "ids must be a sequence of str"),
        (lambda s: s.add(["a", "a"], np.zeros((2, 2)), [{}, {}]), ValueError, "ids must be unique"),
        (lambda s: s.add(["a"], np.full((1, 2), np.nan), [{}]), ValueError, "vectors must be finite"),
        (lambda s: s.search(np.zeros(2), 0), ValueError, "limit must be >= 1, got 0"),
        (lambda s: s.search(np.zeros(3), 1), ValueError, r"vector must have shape \(2,\)"),
        (lambda s: s.delete({}), ValueError, "where must be a non-empty dict"),
    ],
)
def test_bad_store_inputs_are_named(call, error, text):
    with pytest.raises(error, match=text):
        call(NumpyVectorStore(2))


@pytest.mark.skipif(not qdrant_available(), reason="qdrant-client is not installed")
def test_qdrant_store_matches_numpy_on_a_small_set():
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(40, 16)).astype(np.float32)
    ids = [f"v{i}" for i in range(40)]
    payloads = [{"session_id": "s1" if i % 3 else "s2", "n": i} for i in range(40)]
    exact, qdrant = NumpyVectorStore(16), QdrantVectorStore(16, collection="equivalence")
    for store in (exact, qdrant):
        store.add(ids, vectors, payloads)
    assert len(qdrant) == len(exact) == 40
    for q in rng.normal(size=(5, 16)):
        for kwargs in ({}, {"threshold": 0.1}, {"where": {"session_id": "s2"}}):
            a = exact.search(q, 7, **kwargs)
            b = qdrant.search(q, 7, **kwargs)
            assert [h.id for h in a] == [h.id for h in b]
            assert np.allclose([h.score for h in a], [h.score for h in b], atol=1e-5)
            assert [dict(h.payload) for h in a] == [dict(h.payload) for h in b]
    assert qdrant.delete({"session_id": "s2"}) == exact.delete({"session_id": "s2"})
    assert len(qdrant) == len(exact)
    with pytest.raises(ValueError, match="ids already stored"):
        qdrant.add(["v1"], vectors[:1], [{}])
    memory = SemanticMemory(embedder=LexicalHashingEmbedder(64),
                            store=QdrantVectorStore(64, collection="memory"))
    f = MessageFactory()
    memory.add([f.user("The locker code at the gym is 4721."), f.user("It rained all day.")])
    [hit] = memory.recall("What is the locker code at the gym?")
    assert "4721" in hit.text


def test_split_units():
    assert split_units("One. Two? Three!\nFour") == ["One.", "Two?", "Three!", "Four"]
    assert split_units("  One. Two. ", "message") == ["One. Two."]
    assert split_units("   ") == []


def test_semantic_recall_threshold_limit_and_provenance():
    f = MessageFactory()
    fact = f.user("Some chatter first. The locker code at the gym is 4721.")
    other = f.assistant("The weather in Oslo is grey and wet.")
    tool_call = f.assistant("checking", tool_calls=(ToolCall("call_1", "lookup"),))
    tool = f.tool("locker code at the gym", call_id="call_1")
    mem = SemanticMemory()
    ids = mem.add([fact, other, tool_call, tool])
    assert ids[:2] == [f"{fact.id}#0", f"{fact.id}#1"]
    assert mem.units_of[tool.id] == 0  # tool payloads are not embedded by default
    [hit] = mem.recall("What is the locker code at the gym?")
    assert hit.message_id == fact.id and hit.sources == (fact.id,) and hit.score > 0.65
    assert mem.recall("What is the locker code at the gym?", threshold=hit.score) == []
    ranked = mem.recall("What is the locker code at the gym?", threshold=None, limit=10)
    assert len(ranked) == 4 and ranked[0].unit_id == hit.unit_id
    assert mem.recall("What is the locker code at the gym?", exclude={fact.id}) == []
    with pytest.raises(ValueError, match="already stored"):
        mem.add([fact])


@pytest.mark.parametrize(
    "kwargs, error, text",
    [
        ({"unit": "word"}, ValueError, "unit must be one of 'sentence', 'message', got 'word'"),
        ({"roles": "user"}, TypeError, "roles must be a non-empty tuple"),
        ({"roles": ("robot",)}, ValueError, "roles\\[\\] must be one of"),
        ({"threshold": "high"}, TypeError, "threshold must be a number"),
    ],
)
def test_bad_semantic_settings_are_named(kwargs, error, text):
    with pytest.raises(error, match=text):
        SemanticSettings(**kwargs)


def test_store_and_embedder_dimensions_must_agree():
    with pytest.raises(ValueError, match="store.dimension must equal embedder.dimension"):
        SemanticMemory(embedder=LexicalHashingEmbedder(64), store=NumpyVectorStore(32))


def test_semantic_architecture_recalls_what_the_window_lost():
    f = MessageFactory()
    history = [f.system("Be brief."), f.user("The locker code at the gym is 4721.")]
    history += [f.user(f"Chatter about the weather, part {chr(97 + i)}.") for i in range(6)]
    arch = SemanticArchitecture(window=3)
    ctx = arch.build_context(history, "What is the locker code at the gym?", 500)
    kinds = [i.kind for i in ctx.items]
    assert kinds == ["message", "recalled", "message", "message", "message", "query"]
    assert ctx.items[1].sources == (history[1].id,) and "4721" in ctx.items[1].content
    # In the window, the same message is not recalled a second time.
    ctx = SemanticArchitecture(window=20).build_context(history, "locker code gym", 500)
    assert [i.kind for i in ctx.items].count("recalled") == 0
