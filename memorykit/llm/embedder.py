"""Embeddings from an OpenAI-compatible endpoint, fitting the ``Embedder`` protocol.

``OpenAIEmbedder.embed(texts)`` sends the texts in batches of ``batch_size``
through ``client.embeddings.create`` and returns an ``(n, dimension)`` float32
array with L2-normalised rows, like ``LexicalHashingEmbedder``. The ``openai``
client asks for base64 by default and decodes it; this class just uses the
client. It checks what comes back: one vector per input (by ``index``), each of
the expected dimension and finite -- otherwise ``EmbeddingFailed``. Empty or
blank texts are not sent (the API rejects them): they embed to the zero
vector, as in the lexical embedder.

Unlike the lexical embedder these vectors come from a neural model and measure
(some) meaning; they also cost money and need the network.

Taught in ``notebooks/11_llm_in_the_loop.ipynb``.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any

import numpy as np

from memorykit._validate import (
    require_bool,
    require_int,
    require_optional_int,
    require_str,
    require_texts,
)
from memorykit.embeddings import MAX_DIMENSION
from memorykit.llm.client import (
    DeadlinePassed,
    LLMError,
    call_deadline,
    classify_error,
    client_base_url,
    describe_error,
    require_openai,
    resolve_client,
    run_with_deadline,
)

KNOWN_DIMENSIONS: dict[str, int] = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
}
"""Native output sizes of OpenAI's embedding models."""

_SHORTENABLE = ("text-embedding-3-",)


class EmbeddingFailed(LLMError):
    """The endpoint did not return usable vectors; ``kind`` and ``cause`` say why."""

    def __init__(self, message: str, *, kind: str, cause: BaseException | None = None) -> None:
        super().__init__(message, cause=cause)
        self.kind = kind


class OpenAIEmbedder:
    """An embedder behind an OpenAI-compatible ``/embeddings`` endpoint.

    ``dimension``: the vector size. For OpenAI's text-embedding-3 models a
    value below the native size is requested through the API's ``dimensions``
    parameter (shortened embeddings); for other models it is only checked.
    It may be omitted for the models in ``KNOWN_DIMENSIONS``. ``batch_size``
    texts go in one request (OpenAI accepts up to 2048). ``client``, ``timeout``
    and ``max_retries`` work as for ``OpenAIChatModel``.
    """

    is_scripted = False

    def __init__(
        self,
        model: str = "text-embedding-3-small",
        client: Any = None,
        *,
        dimension: int | None = None,
        batch_size: int = 256,
        timeout: float | None = None,
        max_retries: int | None = None,
        send_dimensions: bool | None = None,
    ) -> None:
        self.model = require_str("model", model, non_empty=True)
        # each vector is a dense row of this size (see MAX_DIMENSION): beyond it is a typo
        require_optional_int("dimension", dimension, minimum=1, maximum=MAX_DIMENSION)
        native = KNOWN_DIMENSIONS.get(self.model)
        if dimension is None:
            if native is None:
                raise ValueError(
                    f"dimension is required for model {self.model!r} (known: "
                    f"{', '.join(sorted(KNOWN_DIMENSIONS))})"
                )
            dimension = native
        self.dimension: int = dimension
        if send_dimensions is None:
            send_dimensions = self.model.startswith(_SHORTENABLE) and dimension != native
        self.send_dimensions = require_bool("send_dimensions", send_dimensions)
        self.batch_size = require_int("batch_size", batch_size, minimum=1)
        client = resolve_client(
            client, timeout=timeout, max_retries=max_retries, needs="embeddings"
        )
        self.client = client
        self.name = f"openai:{self.model}" + (f"@{dimension}" if self.send_dimensions else "")
        self.requests = 0
        self.texts_sent = 0

    def _fail(self, message: str, kind: str, cause: BaseException | None = None) -> EmbeddingFailed:
        return EmbeddingFailed(
            f"{self.name} at {client_base_url(self.client)}: {message}", kind=kind, cause=cause
        )

    def _batch(self, texts: list[str]) -> np.ndarray:
        openai = require_openai()
        kwargs: dict[str, Any] = {"model": self.model, "input": texts}
        if self.send_dimensions:
            kwargs["dimensions"] = self.dimension
        self.requests += 1
        try:
            response = run_with_deadline(partial(self.client.embeddings.create, **kwargs),
                                         call_deadline(self.client))  # whole call, not per read
        except (openai.OpenAIError, ValueError, TypeError, KeyError, DeadlinePassed) as exc:
            kind = classify_error(exc)
            raise self._fail(f"request failed ({kind}): {describe_error(exc)}", kind, exc) from exc
        data = list(getattr(response, "data", None) or [])
        if len(data) != len(texts):
            raise self._fail(
                f"sent {len(texts)} texts but got {len(data)} embeddings", "malformed reply"
            )
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        filled = set()
        for position, item in enumerate(data):
            index = getattr(item, "index", position)
            if not isinstance(index, int) or not 0 <= index < len(texts) or index in filled:
                raise self._fail(f"embedding index {index!r} is invalid or repeated",
                                 "malformed reply")
            try:
                vec = np.asarray(item.embedding, dtype=np.float32)
            except (TypeError, ValueError) as exc:
                raise self._fail(f"embedding {index} is not a list of numbers",
                                 "malformed reply", exc) from exc
            if vec.shape != (self.dimension,):
                raise self._fail(
                    f"embedding {index} has shape {vec.shape}, expected ({self.dimension},)",
                    "malformed reply",
                )
            if not np.all(np.isfinite(vec)):
                raise self._fail(f"embedding {index} holds non-finite values", "malformed reply")
            out[index] = vec
            filled.add(index)
        self.texts_sent += len(texts)
        return out

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        texts = require_texts("texts", texts)
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        todo = [i for i, t in enumerate(texts) if t.strip()]
        for start in range(0, len(todo), self.batch_size):
            rows = todo[start : start + self.batch_size]
            out[rows] = self._batch([texts[i] for i in rows])
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        np.divide(out, norms, out=out, where=norms > 0)
        return out

    def __repr__(self) -> str:
        return (
            f"OpenAIEmbedder(model={self.model!r}, dimension={self.dimension}, "
            f"base_url={client_base_url(self.client)!r})"
        )


__all__ = ["KNOWN_DIMENSIONS", "EmbeddingFailed", "OpenAIEmbedder"]
