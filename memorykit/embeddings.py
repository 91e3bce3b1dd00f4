"""Embedders: texts to unit vectors, so similarity is a dot product.

``Embedder`` is the protocol (``embed(texts) -> (n, d) float32`` with
L2-normalised rows, plus ``name`` and ``dimension``). A neural or API-backed
embedder fits it; this module ships one offline embedder:

``LexicalHashingEmbedder`` measures **word overlap, not meaning**. Each
lowercased word (and, by default, each pair of adjacent words) is hashed with
BLAKE2b into one of ``dimension`` slots with a +/-1 sign (the "hashing trick"),
weighted by 1 + log(count), and the vector is L2-normalised. "car" and
"automobile" share nothing; "Paris trip" and "trip to Paris" share a lot.
The hash is stable across processes (Python's ``hash()`` is salted per process
and would make results change from run to run).

``MemoEmbedder`` wraps any embedder and remembers the vector of each text it embedded
(bounded, least recently used first out), for replays that embed the same texts again; with
``cache_dir`` it also keeps them on disk, keyed by the embedder's name and the text's hash, so a
slow model (MiniLM in numpy: minutes for thousands of turns) embeds a text once across runs.

Taught in ``notebooks/03_summary_buffer.ipynb`` (the attention window).
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import os
import re
import stat
import struct
import tempfile
import threading
import warnings
from collections import Counter, OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from memorykit._text import STOPWORDS, words
from memorykit._locks import without_locks
from memorykit._validate import require_bool, require_int, require_non_negative


@runtime_checkable
class Embedder(Protocol):
    """Texts to an (n, dimension) float32 array whose non-zero rows have norm 1."""

    name: str
    dimension: int

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


MAX_DIMENSION = 1 << 20
"""The longest embedding memorykit accepts (4 MiB per float32 row): the slots
``LexicalHashingEmbedder`` hashes into, the size ``OpenAIEmbedder`` expects."""


class LexicalHashingEmbedder:
    """A lexical (word-overlap) embedder, not a semantic one; deterministic and offline.

    Features are lowercased words, minus common stop words when ``stopwords``
    is True, plus adjacent-word bigrams (weight ``bigram_weight``) when
    ``bigrams`` is True. A text with no features embeds to the zero vector
    (its similarity to anything is 0).
    """

    def __init__(
        self,
        dimension: int = 512,
        *,
        bigrams: bool = True,
        bigram_weight: float = 0.5,
        stopwords: bool = True,
    ) -> None:
        # each embedding is a dense row of this size: past a million slots it is a typo
        self.dimension = require_int("dimension", dimension, minimum=2, maximum=MAX_DIMENSION)
        self.bigrams = require_bool("bigrams", bigrams)
        self.bigram_weight = require_non_negative("bigram_weight", bigram_weight)
        self.stopwords = require_bool("stopwords", stopwords)
        self.name = f"lexical-hashing-{self.dimension}" + ("+bigrams" if self.bigrams else "")
        self._slots: dict[str, tuple[int, float]] = {}

    def _slot(self, feature: str) -> tuple[int, float]:
        slot = self._slots.get(feature)
        if slot is None:
            h = int.from_bytes(hashlib.blake2b(feature.encode(), digest_size=8).digest(), "little")
            slot = (h % self.dimension, 1.0 if (h >> 63) & 1 else -1.0)
            if len(self._slots) < 1_000_000:
                self._slots[feature] = slot
        return slot

    def features(self, text: str) -> Counter[str]:
        """Feature counts of one text (what the vector is made of)."""
        toks = [w.lower() for w in words(text)]
        if self.stopwords:
            toks = [w for w in toks if w not in STOPWORDS]
        counts: Counter[str] = Counter(toks)
        if self.bigrams:
            counts.update(f"{a} {b}" for a, b in zip(toks, toks[1:]))
        return counts

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if isinstance(texts, str):
            raise TypeError(f"texts must be a sequence of str, not one str: got {texts!r}")
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            if not isinstance(text, str):
                raise TypeError(f"texts must hold str, got {text!r} ({type(text).__name__})")
            vec = out[row]
            for feature, n in self.features(text).items():
                index, sign = self._slot(feature)
                weight = 1.0 + math.log(n)
                if " " in feature:
                    weight *= self.bigram_weight
                vec[index] += sign * weight
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        np.divide(out, norms, out=out, where=norms > 0)
        return out

    def __repr__(self) -> str:
        return f"LexicalHashingEmbedder(dimension={self.dimension}, bigrams={self.bigrams})"


ENV_CACHE_DIR = "MEMORYKIT_EMBEDDING_CACHE"
"""Environment variable: a directory for the embedding cache, or "off" to keep none."""


def default_cache_dir() -> Path | None:
    """Where embeddings are cached on disk by default, or None when the user opted out.

    ``$MEMORYKIT_EMBEDDING_CACHE`` when set ("off", "0" or "" turn the cache off), else
    ``${XDG_CACHE_HOME:-~/.cache}/memorykit/embeddings``. A leading ``~`` means the home folder
    and a relative path is taken from the working directory now, so the result is absolute.
    """
    chosen = os.environ.get(ENV_CACHE_DIR)
    if chosen is not None:
        if chosen.strip().lower() in ("", "0", "off", "no", "false"):
            return None
        return _absolute(chosen)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return _absolute(base) / "memorykit" / "embeddings"


def _absolute(folder: str | os.PathLike[str]) -> Path:
    # "~/mk" from a shell variable must not become a folder named "~" in the working directory,
    # and a notebook that changes directory later must keep using the same cache
    return Path(folder).expanduser().absolute()


# Opening a vector never follows a symlink at its path and never waits on a FIFO or a device
# (Windows has neither flag, nor FIFOs; there the regular-file and size checks still hold)
_READ_FLAGS = (os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
               | getattr(os, "O_BINARY", 0))


class _DiskVectors:
    """One file per (embedder name, text): a vector that is either whole and right, or absent.

    A file holds a magic line, the SHA-256 of name and text, the dimension, the float32 row and
    a BLAKE2b digest of all that. A reader recomputes everything, so a partial, corrupt or
    colliding file reads as missing (and is embedded again), never as a wrong vector. Writes go
    to a temporary file in the same directory, then ``os.replace``: two processes writing the
    same text both leave a whole file, and readers never see half of one.

    The folder is not trusted: only a regular file of exactly the expected size is read (a FIFO,
    device, symlink or huge file at a vector's path is a miss, replaced by the next write), a
    row that is not finite is a miss, and the cache's own folders (the embedder's and the
    shards under it) must be real directories, never symlinks: through one nothing is read or
    written (a miss, and a warning that the cache is not written).
    """

    _MAGIC = b"memorykit-vector-1\n"
    _DIGEST = 16

    def __init__(self, root: Path, name: str, dimension: int) -> None:
        self.name = name
        self.dimension = dimension
        slug = re.sub(r"[^A-Za-z0-9._-]+", "_", name)[:60]
        tag = hashlib.sha256(name.encode()).hexdigest()[:12]
        self.root = Path(root) / f"{slug}-{tag}-{dimension}"
        self._size = len(self._MAGIC) + 32 + 4 + 4 * dimension + self._DIGEST
        self._warned = False
        self._checked: set[Path] = set()  # shards found to be real directories

    def _key(self, text: str) -> bytes:
        return hashlib.sha256(self.name.encode() + b"\0" + text.encode("utf-8", "surrogatepass")
                              ).digest()

    def _path(self, key: bytes) -> Path:
        hexkey = key.hex()
        return self.root / hexkey[:2] / f"{hexkey}.vec"

    def _real_folders(self, shard: Path, *, make: bool = False) -> bool:
        """Whether the embedder's folder and ``shard`` are directories, not symlinks (``make``:
        each is made first, once the one above it is known to be real)."""
        for folder in (self.root, shard):
            if make:
                with contextlib.suppress(FileExistsError):
                    folder.mkdir()
            try:
                if not stat.S_ISDIR(os.lstat(folder).st_mode):
                    return False
            except OSError:
                return False
        return True

    def get(self, text: str) -> np.ndarray | None:
        key = self._key(text)
        path = self._path(key)
        # checked once per shard: a folder swapped for a symlink later could only serve files
        # that pass every check below, as a file planted in the cache itself could
        if path.parent not in self._checked:
            if not self._real_folders(path.parent):
                return None
            self._checked.add(path.parent)
        try:
            fd = os.open(path, _READ_FLAGS)
        except OSError:  # absent, or a symlink (ELOOP)
            return None
        try:
            info = os.fstat(fd)  # the size is known: nothing else is read, a FIFO never waited on
            if not stat.S_ISREG(info.st_mode) or info.st_size != self._size:
                return None
            data = os.read(fd, self._size)
        except OSError:
            return None
        finally:
            os.close(fd)
        body, digest = data[:-self._DIGEST], data[-self._DIGEST:]
        head = len(self._MAGIC)
        if (len(data) != self._size or not data.startswith(self._MAGIC)
                or body[head:head + 32] != key
                or struct.unpack("<I", body[head + 32:head + 36])[0] != self.dimension
                or hashlib.blake2b(body, digest_size=self._DIGEST).digest() != digest):
            return None
        vector = np.frombuffer(body, dtype="<f4", offset=head + 36).astype(np.float32)
        return vector if np.isfinite(vector).all() else None

    def put(self, text: str, vector: np.ndarray) -> None:
        key = self._key(text)
        row = np.ascontiguousarray(vector, dtype="<f4")
        if not np.isfinite(row).all():  # it would be a miss when read: not worth a file
            return
        body = self._MAGIC + key + struct.pack("<I", self.dimension) + row.tobytes()
        path = self._path(key)
        try:
            self.root.parent.mkdir(parents=True, exist_ok=True)  # the user's: may be a symlink
            if not self._real_folders(path.parent, make=True):
                raise OSError(f"{path.parent} or the folder above it is not a directory "
                              "(a symlink is not followed)")
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
            try:
                with os.fdopen(fd, "wb") as f:
                    f.write(body + hashlib.blake2b(body, digest_size=self._DIGEST).digest())
                os.replace(tmp, path)  # replaces whatever entry was there, never its target
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        except OSError as exc:  # a read-only or full disk costs speed, not correctness
            if not self._warned:
                self._warned = True
                warnings.warn(f"embedding cache not written under {self.root}: {exc}",
                              RuntimeWarning, stacklevel=3)


class MemoEmbedder:
    """An ``Embedder`` that remembers the vector of each of the last ``maxsize`` texts.

    A replay embeds the same texts again (a lesson's slider rebuilds a memory over one
    conversation under many settings); each text is embedded once, the texts not
    remembered in one call to ``embedder``. Vectors are the embedder's own: this is exact
    for embedders that embed each text on its own (``LexicalHashingEmbedder``, and the
    API and sentence-transformer embedders up to their batching noise).

    Bounded: at most ``maxsize`` vectors are remembered, the least recently used leave
    first. Every call returns a new array, so a caller writing into it changes nothing here.
    Safe from several threads (the memo's order is updated under a lock; the wrapped
    embedder is called outside it, so it must be thread-safe itself).

    ``cache_dir`` adds a disk layer under the memory one (see ``default_cache_dir``): vectors are
    keyed by the embedder's ``name`` and the text, so the name must change whenever the
    vectors would (a model, its version or settings). Safe with several processes sharing it.
    ``~`` in ``cache_dir`` is the home folder; a relative one is taken from the working directory
    when the memo is made. What the folder holds is checked, never trusted (see ``_DiskVectors``).
    """

    def __init__(self, embedder: Embedder | None = None, *, maxsize: int = 16_384,
                 cache_dir: str | os.PathLike[str] | None = None) -> None:
        if embedder is not None and not callable(getattr(embedder, "embed", None)):
            raise TypeError(f"embedder must have an embed(texts) method, got {embedder!r}")
        self.embedder: Embedder = embedder if embedder is not None else LexicalHashingEmbedder()
        """The embedder asked for texts not remembered."""
        self.maxsize = require_int("maxsize", maxsize, minimum=1)
        """Vectors remembered at most (least recently used leave first)."""
        self.name = self.embedder.name
        self.dimension = self.embedder.dimension
        self.cache_dir = None if cache_dir is None else _absolute(cache_dir)
        """Directory of the on-disk layer (absolute, ``~`` expanded), or None for memory only."""
        self._disk = (None if self.cache_dir is None
                      else _DiskVectors(self.cache_dir, self.name, self.dimension))
        self._rows: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def __getstate__(self) -> dict[str, Any]:
        return without_locks(self.__dict__)

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if isinstance(texts, str):
            raise TypeError(f"texts must be a sequence of str, not one str: got {texts!r}")
        rows = self._rows
        missing: list[str] = []
        found: dict[str, np.ndarray] = {}
        for text in texts:
            if type(text) is not str:
                raise TypeError(f"texts must hold str, got {text!r} ({type(text).__name__})")
        with self._lock:
            for text in texts:
                row = rows.get(text)
                if row is not None:
                    rows.move_to_end(text)
                    found[text] = row
                elif text not in found and text not in missing:
                    missing.append(text)
        if missing and self._disk is not None:
            on_disk = {t: v for t in missing if (v := self._disk.get(t)) is not None}
            if on_disk:
                self._remember(on_disk)
                found.update(on_disk)
                missing = [t for t in missing if t not in on_disk]
        if missing:
            vectors = np.asarray(self.embedder.embed(missing))
            if vectors.shape != (len(missing), self.dimension):
                raise ValueError(f"embedder returned shape {vectors.shape} for {len(missing)} "
                                 f"texts, expected ({len(missing)}, {self.dimension})")
            fresh = dict(zip(missing, vectors))
            self._remember(fresh)
            found.update(fresh)
            if self._disk is not None:
                for text, vector in fresh.items():
                    self._disk.put(text, vector)
        if not len(texts):
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.stack([found[t] for t in texts])

    def _remember(self, vectors: dict[str, np.ndarray]) -> None:
        with self._lock:
            self._rows.update(vectors)
            while len(self._rows) > self.maxsize:
                self._rows.popitem(last=False)

    def __repr__(self) -> str:
        disk = "" if self.cache_dir is None else f", cache_dir={str(self.cache_dir)!r}"
        return f"MemoEmbedder({self.embedder!r}, maxsize={self.maxsize}{disk})"


def cosine_similarity(matrix: np.ndarray, vector: np.ndarray) -> np.ndarray:
    """Cosine of each row of ``matrix`` (n, d) with ``vector`` (d,); 0 where a norm is 0."""
    m = np.asarray(matrix, dtype=np.float64)
    v = np.asarray(vector, dtype=np.float64)
    if m.ndim != 2:
        raise ValueError(f"matrix must be 2-D (n, d), got shape {m.shape}")
    if v.ndim != 1 or v.shape[0] != m.shape[1]:
        raise ValueError(f"vector must have shape ({m.shape[1]},), got {v.shape}")
    norms = np.linalg.norm(m, axis=1) * np.linalg.norm(v)
    dots = m @ v
    out = np.zeros(m.shape[0])
    np.divide(dots, norms, out=out, where=norms > 0)
    return out


__all__ = ["ENV_CACHE_DIR", "Embedder", "LexicalHashingEmbedder", "MemoEmbedder",
           "cosine_similarity", "default_cache_dir"]
