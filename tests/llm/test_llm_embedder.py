"""OpenAIEmbedder against the loopback server: base64 and float, batching, validation."""

from __future__ import annotations

import numpy as np
import pytest

from memorykit.embeddings import Embedder, LexicalHashingEmbedder
from memorykit.llm.embedder import EmbeddingFailed, OpenAIEmbedder
from memorykit.classroom.doubles.openai_server import Behaviour

TEXTS = ["The code is BLUE_99", "trip to Paris", "Paris trip", "a cat sat", "dogs bark"]


def test_embeddings_match_the_servers_vectors_via_base64(server):
    e = OpenAIEmbedder("memorykit-fake-embedding", server.client(), dimension=64)
    assert isinstance(e, Embedder) and e.dimension == 64
    out = e.embed(TEXTS)
    assert out.dtype == np.float32 and out.shape == (5, 64)
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, rtol=1e-6)
    np.testing.assert_allclose(out, LexicalHashingEmbedder(64).embed(TEXTS), atol=1e-6)
    (req,) = server.requests
    assert req.body["encoding_format"] == "base64"  # the client's default
    assert req.body["input"] == TEXTS and "dimensions" not in req.body


def test_float_encoding_from_the_raw_client(server):
    client = server.client()
    resp = client.embeddings.create(model="x", input=["trip to Paris"], encoding_format="float")
    assert server.requests[0].body["encoding_format"] == "float"
    vec = np.asarray(resp.data[0].embedding, dtype=np.float32)
    b64 = client.embeddings.create(model="x", input=["trip to Paris"]).data[0].embedding
    np.testing.assert_allclose(vec, np.asarray(b64, dtype=np.float32), atol=1e-7)


def test_batches(server):
    e = OpenAIEmbedder("memorykit-fake-embedding", server.client(), dimension=64, batch_size=2)
    out = e.embed(TEXTS)
    assert [r.body["input"] for r in server.requests] == [TEXTS[0:2], TEXTS[2:4], TEXTS[4:5]]
    assert e.requests == 3 and e.texts_sent == 5
    np.testing.assert_allclose(out, LexicalHashingEmbedder(64).embed(TEXTS), atol=1e-6)


def test_blank_texts_are_zero_rows_and_not_sent(server):
    e = OpenAIEmbedder("memorykit-fake-embedding", server.client(), dimension=64)
    out = e.embed(["", "trip to Paris", "   "])
    assert not out[0].any() and not out[2].any()
    assert abs(np.linalg.norm(out[1]) - 1) < 1e-6
    assert server.requests[0].body["input"] == ["trip to Paris"]
    assert e.embed([]).shape == (0, 64)
    assert len(server.requests) == 1


def test_shortened_dimensions_for_text_embedding_3(server):
    e = OpenAIEmbedder("text-embedding-3-small", server.client(), dimension=32)
    assert e.embed(["trip to Paris"]).shape == (1, 32)
    assert server.requests[0].body["dimensions"] == 32
    assert OpenAIEmbedder("text-embedding-3-small", server.client()).dimension == 1536


def test_unknown_model_needs_a_dimension(server):
    with pytest.raises(ValueError, match="dimension is required"):
        OpenAIEmbedder("some-local-model", server.client())


def test_wrong_dimension_is_rejected(server):
    e = OpenAIEmbedder("memorykit-fake-embedding", server.client(), dimension=100)
    with pytest.raises(EmbeddingFailed, match=r"shape \(64,\)"):
        e.embed(["trip"])


def test_missing_vectors_are_rejected(server):
    server.behave(Behaviour.short())
    e = OpenAIEmbedder("memorykit-fake-embedding", server.client(), dimension=64)
    with pytest.raises(EmbeddingFailed, match="sent 2 texts but got 1"):
        e.embed(["a cat", "a dog"])


@pytest.mark.parametrize(
    ("behaviour", "kind"),
    [(Behaviour.error(500), "http 500"), (Behaviour.malformed(), "malformed reply"),
     (Behaviour.slow(2.0), "timeout")],
)
def test_request_failures(server, behaviour, kind):
    server.behave(behaviour)
    e = OpenAIEmbedder("memorykit-fake-embedding", server.client(), dimension=64, timeout=0.2,
                       max_retries=0)
    with pytest.raises(EmbeddingFailed) as info:
        e.embed(["a cat"])
    assert info.value.kind == kind


def test_input_validation(server):
    e = OpenAIEmbedder("memorykit-fake-embedding", server.client(), dimension=64)
    with pytest.raises(TypeError, match="not one str"):
        e.embed("a cat")
    with pytest.raises(TypeError, match="hold str"):
        e.embed(["a", 3])
    assert server.requests == []
