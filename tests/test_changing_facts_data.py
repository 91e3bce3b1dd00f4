"""The bundled changing-facts set: regenerable byte for byte, readable, labelled consistently."""

from __future__ import annotations

import importlib.util
import json
from collections import Counter
from pathlib import Path

import pytest

from memorykit.classroom.scenarios.changing_facts import (CATEGORIES, changing_facts_dataset,
                                                          changing_facts_files,
                                                          render_changing_facts)
from memorykit.evaluation.chatlog import load_chat_logs
from memorykit.evaluation.scoring import answer_contained
from memorykit.tokens import Tokenizer

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "data" / "changing_facts"
CHATS, QUESTIONS = DATA / "changing_facts.jsonl", DATA / "changing_facts_questions.jsonl"


def _generator():
    spec = importlib.util.spec_from_file_location("memorykit_changing_facts_generate",
                                                  DATA / "generate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def records() -> tuple[list[dict], list[dict]]:
    chats = [json.loads(line) for line in CHATS.read_text(encoding="utf-8").splitlines()]
    questions = [json.loads(line) for line in QUESTIONS.read_text(encoding="utf-8").splitlines()]
    return chats, questions


def test_regenerated_files_are_byte_identical(tmp_path, capsys):
    gen = _generator()
    assert gen.main(["--out", str(tmp_path)]) == 0
    for name in gen.FILES:
        assert (tmp_path / name).read_bytes() == (DATA / name).read_bytes(), (
            f"{name} differs from the generator's output: run data/changing_facts/generate.py")
    assert gen.main(["--check", "--out", str(tmp_path)]) == 0
    printed = capsys.readouterr().out.strip().splitlines()[-1]
    assert printed == gen.summary(gen.render())
    assert printed in (DATA / "README.md").read_text(encoding="utf-8"), (
        "the README's counts are not the generator's: paste the line generate.py prints")
    victim = tmp_path / gen.FILES[1]
    victim.write_bytes(victim.read_bytes().replace(b"\n", b"\r\n", 1))
    assert gen.main(["--check", "--out", str(tmp_path)]) == 1
    assert gen.FILES[1] in capsys.readouterr().err


def test_the_files_load_as_tune_reads_them(records):
    chats, questions = records
    data = load_chat_logs(CHATS, QUESTIONS)
    assert [c.id for c in data.conversations] == [c["id"] for c in chats]
    loaded = {q.id: q for c in data.conversations for q in c.questions}
    assert len(loaded) == len(questions)
    for q in questions:
        assert loaded[q["id"]].superseded_ids == tuple(q.get("superseded", ()))
        assert loaded[q["id"]].evidence_ids == tuple(q["evidence"])


def test_size_and_mix(records):
    """Long enough that a 1,000-token budget must choose; every kind of change well represented."""
    chats, questions = records
    counter = Tokenizer("cl100k_base")
    assert 14 <= len(chats) <= 20 and 100 <= len(questions) <= 200
    for chat in chats:
        assert 100 <= len(chat["messages"]) <= 250, chat["id"]
        assert sum(counter.count(m["content"]) for m in chat["messages"]) >= 2_000, chat["id"]
    by = Counter(q["category"] for q in questions)
    assert set(by) == set(CATEGORIES) and min(by.values()) >= 10, by
    gaps = [q["metadata"]["gap"] for q in questions if "superseded" in q]
    assert min(gaps) == 0 and max(gaps) >= 100  # from the very next message to far apart
    assert sum(g <= 5 for g in gaps) >= 10 and sum(g >= 40 for g in gaps) >= 10
    assert any(q.get("position") is not None for q in questions)  # some asked between changes


def test_labels_are_consistent(records):
    """The rules a policy's stale answers are scored by, checked on every question."""
    chats, questions = records
    messages = {c["id"]: c["messages"] for c in chats}
    links = {(c["id"], u["old"], u["new"]) for c in chats for u in c["updates"]}
    for q in questions:
        msgs = messages[q["conversation"]]
        index = {m["id"]: i for i, m in enumerate(msgs)}
        position = q.get("position", len(msgs))
        evidence = [index[e] for e in q["evidence"]]
        superseded = [index[s] for s in q.get("superseded", [])]
        where = q["id"]
        assert evidence and max(evidence) < position, where
        # the answer is the current value: in every evidence message, in no superseded one
        for i in evidence:
            assert answer_contained(msgs[i]["content"], q["answer"]), (where, msgs[i]["content"])
        for i in superseded:
            assert not answer_contained(msgs[i]["content"], q["answer"]), (where, i)
        if q["category"] != "cancelled":  # ... nor anywhere else the question can see
            for i, m in enumerate(msgs[:position]):
                if i not in evidence and m["content"]:
                    assert not answer_contained(m["content"], q["answer"]), (where, m["content"])
        if q["category"] == "unchanged":
            assert "superseded" not in q and q["metadata"]["gap"] is None, where
            continue
        assert superseded and max(superseded) < min(evidence), where
        assert q["metadata"]["gap"] == min(evidence) - max(superseded) - 1, where
        if q["category"] == "changed twice":
            assert q["metadata"]["statements"] == 3, where
        # every superseded message is linked to what replaced it in the conversation's record
        for s in q.get("superseded", []):
            later = (msgs[i]["id"] for i in range(index[s] + 1, position))
            assert any((q["conversation"], s, new) in links for new in later), (where, s)


def test_old_values_occur_only_where_labelled(records):
    """A replaced value is said only in the messages labelled superseded, or in the evidence (a
    correction names what it corrects): no unlabelled statement of an old value hides in the
    filler, and the hypotheticals and the similar facts use values of their own."""
    chats, questions = records
    messages = {c["id"]: c["messages"] for c in chats}
    n = 0
    for q in questions:
        msgs = messages[q["conversation"]][:q.get("position", None)]
        labelled = set(q.get("superseded", ())) | set(q["evidence"])
        assert len(q["metadata"]["replaced"]) == q["metadata"]["statements"] - 1, q["id"]
        for old in q["metadata"]["replaced"]:
            said = {m["id"] for m in msgs if m["content"] and answer_contained(m["content"], old)}
            assert said and said <= labelled, (q["id"], old, sorted(said - labelled))
            n += 1
    assert n >= 100


def test_gap_forces_every_change_distance():
    for gap in (0, 1, 8, 60):
        data = changing_facts_dataset(seed=3, conversations=3, gap=gap)
        changed = [q for c in data.conversations for q in c.questions if q.superseded_ids]
        assert changed and {q.metadata["gap"] for q in changed} == {gap}
        assert data.name == f"changing facts (gap {gap})"


def test_seeded_and_deterministic():
    five = changing_facts_files(seed=5, conversations=2)
    assert five == changing_facts_files(seed=5, conversations=2)
    assert five != changing_facts_files(seed=6, conversations=2)
    chats, questions = render_changing_facts(seed=5, conversations=2, facts_per_conversation=3)
    assert len(chats) == 2 and {q["conversation"] for q in questions} == {"cf-01", "cf-02"}


@pytest.mark.parametrize(("kwargs", "error", "named"), [
    ({"gap": -1}, ValueError, "-1"),
    ({"gap": 3.0}, ValueError, "3.0"),
    ({"gap": True}, ValueError, "True"),
    ({"conversations": 0}, ValueError, "0"),
    ({"conversations": "2"}, TypeError, "'2'"),
    ({"seed": None}, TypeError, "None"),
    ({"facts_per_conversation": 40}, ValueError, "40"),
])
def test_bad_arguments_are_refused_by_name(kwargs, error, named):
    with pytest.raises(error, match=named):
        render_changing_facts(**kwargs)
