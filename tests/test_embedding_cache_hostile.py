"""MemoEmbedder's disk cache handed a hostile or careless folder (issue 25, finding 6).

What sits at a vector's path may be anything: a FIFO, a symlink (to ``/dev/zero``, to a file
elsewhere), a huge sparse file, a device, a well-formed file holding NaN; a folder of the cache may
be a symlink to somewhere else. None of these may hang ``embed()``, be read whole, be served as a
vector or make a write land outside the cache: each is a miss (embedded again), and a bad entry
at a vector's path is replaced by a real file. The cache folder's name expands ``~`` and is made
absolute when the memo is made.
"""

from __future__ import annotations

import hashlib
import os
import stat
import threading
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from memorykit.embeddings import (ENV_CACHE_DIR, LexicalHashingEmbedder, MemoEmbedder,
                                  default_cache_dir)

DIM = 32
TEXT = "the hotel in Paris is booked"
WANT = LexicalHashingEmbedder(DIM).embed([TEXT])

posix_only = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs and symlinks")


class _Counting(LexicalHashingEmbedder):
    def __init__(self) -> None:
        super().__init__(DIM)
        self.asked: list[list[str]] = []

    def embed(self, texts):
        self.asked.append(list(texts))
        return super().embed(texts)


def _layout(tmp_path: Path) -> tuple[Path, bytes]:
    """Where a cache keeps TEXT's vector (relative to the cache folder), and the file's bytes."""
    scratch = tmp_path / "scratch"
    MemoEmbedder(LexicalHashingEmbedder(DIM), cache_dir=scratch).embed([TEXT])
    (found,) = scratch.rglob("*.vec")
    return found.relative_to(scratch), found.read_bytes()


def _embed_guarded(memo: MemoEmbedder, timeout: float = 20.0) -> tuple[bool, dict]:
    """Run memo.embed([TEXT]) in a thread: (still running after timeout, its result or error)."""
    out: dict = {}

    def run() -> None:
        try:
            out["value"] = memo.embed([TEXT])
        except BaseException as exc:  # reported by the test, not lost in the thread
            out["error"] = exc

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(timeout)
    return worker.is_alive(), out


def _assert_embedded_again(cache: Path, key: Path, inner: _Counting, out: dict,
                           good: bytes) -> None:
    assert "error" not in out, out.get("error")
    assert np.array_equal(out["value"], WANT)
    assert inner.asked == [[TEXT]]  # a miss: the text was embedded, nothing else was served
    entry = cache / key
    # and the bad entry replaced by a real file
    assert stat.S_ISREG(os.lstat(entry).st_mode) and entry.read_bytes() == good


@posix_only
def test_a_fifo_at_a_vector_path_is_a_miss_not_a_hang(tmp_path):
    key, good = _layout(tmp_path)
    cache = tmp_path / "cache"
    (cache / key).parent.mkdir(parents=True)
    os.mkfifo(cache / key)
    inner = _Counting()
    hung, out = _embed_guarded(MemoEmbedder(inner, cache_dir=cache))
    if hung:  # let the reader blocked on the FIFO go, so the test process can exit
        os.close(os.open(cache / key, os.O_WRONLY | os.O_NONBLOCK))
    assert not hung, "embed() blocked on a FIFO in the cache"
    _assert_embedded_again(cache, key, inner, out, good)


@posix_only
@pytest.mark.parametrize("target", ["valid_file_elsewhere", "/dev/zero"])
def test_a_symlink_at_a_vector_path_is_never_followed(tmp_path, target):
    key, good = _layout(tmp_path)
    cache = tmp_path / "cache"
    (cache / key).parent.mkdir(parents=True)
    if target == "valid_file_elsewhere":  # TEXT's own vector file, outside the cache
        elsewhere = tmp_path / "elsewhere.vec"
        elsewhere.write_bytes(good)
        target = str(elsewhere)
    os.symlink(target, cache / key)
    inner = _Counting()
    hung, out = _embed_guarded(MemoEmbedder(inner, cache_dir=cache))
    assert not hung, f"embed() still reading through a symlink to {target}"
    _assert_embedded_again(cache, key, inner, out, good)
    assert Path(target).is_char_device() or Path(target).read_bytes() == good  # target untouched


def test_a_huge_sparse_file_at_a_vector_path_is_not_read(tmp_path):
    key, good = _layout(tmp_path)
    cache = tmp_path / "cache"
    (cache / key).parent.mkdir(parents=True)
    with open(cache / key, "wb") as f:  # 256 MiB that take no disk: a read would allocate them
        f.truncate(256 << 20)
    inner = _Counting()
    memo = MemoEmbedder(inner, cache_dir=cache)
    tracemalloc.start()
    try:
        out = {"value": memo.embed([TEXT])}
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 << 20, f"embed() allocated {peak:,} bytes for one cached vector"
    _assert_embedded_again(cache, key, inner, out, good)


def test_a_device_at_a_vector_path_is_not_read(tmp_path):
    key, good = _layout(tmp_path)
    cache = tmp_path / "cache"
    (cache / key).parent.mkdir(parents=True)
    try:  # /dev/zero's own node, not a symlink: only the file's type tells it apart
        os.mknod(cache / key, stat.S_IFCHR | 0o600, os.makedev(1, 5))
    except (AttributeError, OSError) as exc:
        pytest.skip(f"cannot make a device node here: {exc}")
    inner = _Counting()
    hung, out = _embed_guarded(MemoEmbedder(inner, cache_dir=cache))
    assert not hung, "embed() still reading a device in the cache"
    _assert_embedded_again(cache, key, inner, out, good)


@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
def test_a_well_formed_file_holding_a_non_finite_value_is_not_served(tmp_path, value):
    key, good = _layout(tmp_path)
    cache = tmp_path / "cache"
    (cache / key).parent.mkdir(parents=True)
    body = bytearray(good[:-16])  # header + float32 row; then a 16-byte BLAKE2b of all that
    body[-4 * DIM:-4 * DIM + 4] = np.float32(value).astype("<f4").tobytes()
    (cache / key).write_bytes(bytes(body) + hashlib.blake2b(bytes(body), digest_size=16).digest())
    inner = _Counting()
    out = {"value": MemoEmbedder(inner, cache_dir=cache).embed([TEXT])}
    _assert_embedded_again(cache, key, inner, out, good)


def _link_folder(cache: Path, key: Path, which: str, elsewhere: Path) -> None:
    """Make the embedder's folder or the shard folder of the cache a symlink to elsewhere."""
    folder = cache / (key.parts[0] if which == "embedder folder" else Path(*key.parts[:2]))
    folder.parent.mkdir(parents=True, exist_ok=True)
    elsewhere.mkdir()
    os.symlink(elsewhere, folder, target_is_directory=True)


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


@posix_only
@pytest.mark.parametrize("which", ["embedder folder", "shard folder"])
@pytest.mark.parametrize("planted", [False, True], ids=["empty", "a valid vector planted"])
def test_a_symlinked_cache_folder_takes_no_writes_and_serves_nothing(tmp_path, which, planted):
    key, good = _layout(tmp_path)
    cache, elsewhere = tmp_path / "cache", tmp_path / "elsewhere"
    _link_folder(cache, key, which, elsewhere)
    if planted:  # a valid vector, but reached only through the symlink
        target = elsewhere / Path(*key.parts[2 if which == "shard folder" else 1:])
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(good)
    before = _tree(elsewhere)
    inner = _Counting()
    with pytest.warns(RuntimeWarning, match="embedding cache not written"):
        got = MemoEmbedder(inner, cache_dir=cache).embed([TEXT])
    assert np.array_equal(got, WANT) and inner.asked == [[TEXT]]
    assert _tree(elsewhere) == before, "the cache wrote or read through a symlinked folder"


def test_a_tilde_in_the_cache_folder_means_home(tmp_path, monkeypatch):
    home, work = tmp_path / "home", tmp_path / "work"
    work.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(work)
    monkeypatch.setenv(ENV_CACHE_DIR, "~/mk")
    assert default_cache_dir() == home / "mk"
    memo = MemoEmbedder(LexicalHashingEmbedder(DIM), cache_dir="~/mk2")
    assert memo.cache_dir == home / "mk2"
    memo.embed([TEXT])
    assert len(list((home / "mk2").rglob("*.vec"))) == 1 and list(work.iterdir()) == []


def test_a_relative_cache_folder_is_fixed_when_the_memo_is_made(tmp_path, monkeypatch):
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    monkeypatch.chdir(first)
    monkeypatch.setenv(ENV_CACHE_DIR, "rel-env")
    assert default_cache_dir() == first / "rel-env"
    memo = MemoEmbedder(LexicalHashingEmbedder(DIM), cache_dir="rel")
    assert memo.cache_dir == first / "rel"
    monkeypatch.chdir(second)  # a notebook that changes folder keeps its cache
    memo.embed([TEXT])
    assert len(list((first / "rel").rglob("*.vec"))) == 1 and list(second.iterdir()) == []
