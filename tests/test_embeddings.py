"""LexicalHashingEmbedder, MemoEmbedder and cosine_similarity."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from memorykit.embeddings import Embedder, LexicalHashingEmbedder, MemoEmbedder, cosine_similarity


def test_shape_dtype_and_unit_rows():
    e = LexicalHashingEmbedder(64)
    assert isinstance(e, Embedder)
    v = e.embed(["Paris trip", "the of and", "Rome hotel booked"])
    assert v.shape == (3, 64) and v.dtype == np.float32
    norms = np.linalg.norm(v, axis=1)
    assert norms[0] == pytest.approx(1.0) and norms[2] == pytest.approx(1.0)
    assert norms[1] == 0.0  # stop words only: no features, zero vector
    assert e.name == "lexical-hashing-64+bigrams"


def test_word_overlap_not_meaning():
    e = LexicalHashingEmbedder()
    a, b, c = e.embed(["trip to Paris", "Paris trip", "voyage to France"])
    assert float(a @ b) > 0.5
    assert abs(float(a @ c)) < 0.2  # synonyms share no words: lexical, not semantic


def test_features_by_hand():
    e = LexicalHashingEmbedder()
    assert dict(e.features("The Paris trip, the PARIS trip")) == {
        "paris": 2, "trip": 2, "paris trip": 2, "trip paris": 1,
    }
    plain = LexicalHashingEmbedder(bigrams=False, stopwords=False)
    assert dict(plain.features("the cat")) == {"the": 1, "cat": 1}


def test_single_word_vector_is_a_signed_unit_slot():
    v = LexicalHashingEmbedder(32, bigrams=False).embed(["paris"])[0]
    assert np.count_nonzero(v) == 1 and abs(v).max() == pytest.approx(1.0)


def test_stable_across_processes():
    code = ("from memorykit.embeddings import LexicalHashingEmbedder as E;"
            "import numpy as np;"
            "print(np.flatnonzero(E(128).embed(['alpha beta gamma'])[0]).tolist())")
    runs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           check=True, env={"PYTHONHASHSEED": str(s)}).stdout for s in (1, 2)}
    assert len(runs) == 1
    here = np.flatnonzero(LexicalHashingEmbedder(128).embed(["alpha beta gamma"])[0]).tolist()
    assert runs.pop().strip() == str(here)


def test_cosine_similarity():
    m = np.array([[1.0, 0.0], [0.0, 2.0], [0.0, 0.0], [1.0, 1.0]])
    out = cosine_similarity(m, np.array([3.0, 0.0]))
    assert out.tolist() == pytest.approx([1.0, 0.0, 0.0, 2 ** -0.5])
    with pytest.raises(ValueError, match=r"vector must have shape \(2,\), got \(3,\)"):
        cosine_similarity(m, np.zeros(3))
    with pytest.raises(ValueError, match="matrix must be 2-D"):
        cosine_similarity(np.zeros(2), np.zeros(2))


def test_validation():
    with pytest.raises(ValueError, match="dimension must be >= 2, got 1"):
        LexicalHashingEmbedder(1)
    with pytest.raises(TypeError, match="not one str"):
        LexicalHashingEmbedder().embed("hello")
    with pytest.raises(TypeError, match="texts must hold str, got 3"):
        LexicalHashingEmbedder().embed([3])


class _Counting(LexicalHashingEmbedder):
    def __init__(self):
        super().__init__(32)
        self.asked = []

    def embed(self, texts):
        self.asked.append(list(texts))
        return super().embed(texts)


def test_memo_embedder_embeds_each_text_once_and_returns_fresh_arrays():
    inner = _Counting()
    memo = MemoEmbedder(inner, maxsize=2)
    assert isinstance(memo, Embedder) and (memo.name, memo.dimension) == (inner.name, 32)
    texts = ["Paris trip", "Rome hotel", "Paris trip"]
    rows = memo.embed(texts)
    assert rows.dtype == np.float32 and np.array_equal(rows, LexicalHashingEmbedder(32).embed(texts))
    assert inner.asked == [["Paris trip", "Rome hotel"]]  # each text once, in one call
    rows[0, 0] = 99.0  # a caller writing into its array changes nothing remembered
    assert np.array_equal(memo.embed(["Paris trip"]), LexicalHashingEmbedder(32).embed(["Paris trip"]))
    assert inner.asked == [["Paris trip", "Rome hotel"]]
    memo.embed(["Oslo"])  # a third text: "Rome hotel", the least recently used, leaves
    memo.embed(["Rome hotel", "Paris trip"])
    assert inner.asked[1:] == [["Oslo"], ["Rome hotel"]]
    assert memo.embed([]).shape == (0, 32)


@pytest.mark.parametrize("make, error, message", [
    (lambda: MemoEmbedder(object()), TypeError, "embedder must have an embed"),
    (lambda: MemoEmbedder(maxsize=0), ValueError, "maxsize must be >= 1, got 0"),
    (lambda: MemoEmbedder().embed("one text"), TypeError, "not one str: got 'one text'"),
    (lambda: MemoEmbedder().embed(["ok", 3]), TypeError, "texts must hold str, got 3"),
])
def test_memo_embedder_validation_names_the_value(make, error, message):
    with pytest.raises(error, match=message):
        make()
