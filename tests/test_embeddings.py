"""LexicalHashingEmbedder, MemoEmbedder and cosine_similarity."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from memorykit.embeddings import (
    ENV_CACHE_DIR,
    Embedder,
    LexicalHashingEmbedder,
    MemoEmbedder,
    cosine_similarity,
    default_cache_dir,
)


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


# --------------------------------------------------------------- MemoEmbedder's disk layer

_TEXTS = ["Paris trip", "Rome hotel", "callback 555-0142", "Zürich 東京 🙂"]


def _cache_files(root):
    return sorted(p for p in root.rglob("*.vec"))


def test_disk_cache_serves_a_new_process_without_embedding(tmp_path):
    want = LexicalHashingEmbedder(32).embed(_TEXTS)
    first = _Counting()
    assert np.array_equal(MemoEmbedder(first, cache_dir=tmp_path).embed(_TEXTS), want)
    assert len(_cache_files(tmp_path)) == len(_TEXTS)
    again = _Counting()  # a fresh memo (another run) reads the disk, embeds nothing
    assert np.array_equal(MemoEmbedder(again, cache_dir=tmp_path).embed(_TEXTS), want)
    assert again.asked == []
    other = LexicalHashingEmbedder(32, bigrams=False)  # another name: its own vectors
    assert np.array_equal(MemoEmbedder(other, cache_dir=tmp_path).embed(_TEXTS), other.embed(_TEXTS))
    assert len(_cache_files(tmp_path)) == 2 * len(_TEXTS)


@pytest.mark.parametrize("damage", ["truncate", "flip_vector_byte", "empty", "other_text"])
def test_a_damaged_cache_file_is_embedded_again_never_returned(tmp_path, damage):
    MemoEmbedder(_Counting(), cache_dir=tmp_path).embed(_TEXTS)
    files = {p.name: p for p in _cache_files(tmp_path)}
    target = sorted(files.values())[0]
    data = target.read_bytes()
    if damage == "truncate":  # a write cut short
        target.write_bytes(data[: len(data) // 2])
    elif damage == "flip_vector_byte":  # a bit flipped inside the float32 row
        pos = len(data) - 40
        target.write_bytes(data[:pos] + bytes([data[pos] ^ 0x10]) + data[pos + 1:])
    elif damage == "empty":
        target.write_bytes(b"")
    else:  # a whole, valid file of another text moved to this text's name
        donor = next(p for p in files.values() if p != target)
        target.write_bytes(donor.read_bytes())
    inner = _Counting()
    got = MemoEmbedder(inner, cache_dir=tmp_path).embed(_TEXTS)
    assert np.array_equal(got, LexicalHashingEmbedder(32).embed(_TEXTS))
    assert len(inner.asked) == 1 and len(inner.asked[0]) == 1  # only the damaged one again
    assert target.read_bytes() == data  # and rewritten whole


_WRITER = """
import sys
from memorykit.embeddings import LexicalHashingEmbedder, MemoEmbedder
texts = [f"text {i} of a shared cache" for i in range(300)]
MemoEmbedder(LexicalHashingEmbedder(32), cache_dir=sys.argv[1]).embed(texts)
"""


def test_two_processes_writing_one_cache_leave_only_whole_files(tmp_path):
    procs = [subprocess.Popen([sys.executable, "-c", _WRITER, str(tmp_path)]) for _ in range(2)]
    assert [p.wait(120) for p in procs] == [0, 0]
    texts = [f"text {i} of a shared cache" for i in range(300)]
    assert len(_cache_files(tmp_path)) == 300 and not list(tmp_path.rglob(".tmp-*"))
    inner = _Counting()
    got = MemoEmbedder(inner, cache_dir=tmp_path).embed(texts)
    assert inner.asked == [] and np.array_equal(got, LexicalHashingEmbedder(32).embed(texts))


def test_an_unwritable_cache_warns_once_and_still_answers(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    memo = MemoEmbedder(_Counting(), cache_dir=blocker)
    with pytest.warns(RuntimeWarning, match="embedding cache not written") as caught:
        got = memo.embed(_TEXTS)
    assert len(caught) == 1 and np.array_equal(got, LexicalHashingEmbedder(32).embed(_TEXTS))


def test_default_cache_dir_follows_xdg_and_can_be_turned_off(monkeypatch, tmp_path):
    monkeypatch.delenv(ENV_CACHE_DIR, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert default_cache_dir() == tmp_path / "memorykit" / "embeddings"
    monkeypatch.setenv(ENV_CACHE_DIR, str(tmp_path / "mine"))
    assert default_cache_dir() == tmp_path / "mine"
    for off in ("off", "0", ""):
        monkeypatch.setenv(ENV_CACHE_DIR, off)
        assert default_cache_dir() is None
