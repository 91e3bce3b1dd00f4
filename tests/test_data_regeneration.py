"""The committed data files are exactly what data/generate.py writes."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from memorykit.classroom.scenarios.conversation import SIMULATOR_VERSION, load_conversation

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "data" / "conversations"


def _generator():
    spec = importlib.util.spec_from_file_location("memorykit_data_generate", ROOT / "data" / "generate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def gen():
    return _generator()


def test_regenerated_files_are_byte_identical(gen, tmp_path):
    assert gen.main(["--out", str(tmp_path)]) == 0  # its duration: python -m bench.simulate
    names = sorted(gen.SCENARIOS)
    assert {"default_500.jsonl", "short_60.jsonl", "long_2000.jsonl"} <= set(names)
    assert sorted(p.name for p in tmp_path.iterdir()) == names
    for name in names:
        committed = DATA / name
        assert committed.is_file(), f"{committed} is missing: run python data/generate.py"
        assert (tmp_path / name).read_bytes() == committed.read_bytes(), (
            f"{name} differs from the generator's output: run python data/generate.py"
        )
    assert gen.main(["--check", "--out", str(tmp_path)]) == 0


def test_check_mode_detects_changes(gen, tmp_path, capsys):
    assert gen.main(["--check", "--out", str(tmp_path)]) == 1  # all missing
    gen.main(["--out", str(tmp_path)])
    victim = tmp_path / "short_60.jsonl"
    victim.write_bytes(victim.read_bytes().replace(b"\n", b"\r\n", 1))
    assert gen.main(["--check", "--out", str(tmp_path)]) == 1
    assert "short_60.jsonl" in capsys.readouterr().err


def test_files_load_and_match_their_headers(gen):
    total = 0
    for name, kwargs in gen.SCENARIOS.items():
        path = DATA / name
        total += path.stat().st_size
        lines = path.read_bytes().split(b"\n")
        assert lines[-1] == b"" and all(lines[:-1])
        conv = load_conversation(path)
        assert conv.version == SIMULATOR_VERSION
        assert conv.seed == kwargs["seed"] and conv.n_turns == kwargs["n_turns"]
        assert conv.encoding == "cl100k_base"
        for key, value in kwargs.items():
            if key != "seed":
                assert conv.params[key] == value
        by_id = {m.id: m for m in conv.messages}
        assert all(f.key in by_id[f.message_id].content for f in conv.facts)
    assert total < 5_000_000
