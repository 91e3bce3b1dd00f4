"""The hand-written changing-facts development sets (tests/fixtures/changing_facts_dev*, each by
another writer) load and keep their label invariants: evidence is the current statement,
superseded ones come first, the gap is what the metadata says, and every conversation is long
enough that a 1,000-token context holds only a small part of it."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from memorykit.evaluation.chatlog import load_chat_logs
from memorykit.tokens import Tokenizer, count_chat_tokens

FIXTURES = Path(__file__).resolve().parent / "fixtures"
SETS = sorted(p for p in FIXTURES.glob("changing_facts_dev*") if (p / "questions.jsonl").exists())
BUILD = FIXTURES / "changing_facts_dev" / "build.py"
"""One builder for every set (``python build.py FOLDER``)."""
"""Every development set: the first one (six conversations), then dev2 to dev13 (two each)."""
KINDS = {"moved", "corrected", "cancelled", "replaced_silent", "changed_by_other",
         "changed_twice", "changed_back", "assistant_checked"}


@pytest.fixture(scope="module", params=SETS, ids=lambda p: p.name)
def dev_set(request) -> Path:
    return request.param


@pytest.fixture(scope="module")
def dataset(dev_set):
    return load_chat_logs(dev_set / "chats.jsonl", dev_set / "questions.jsonl")


@pytest.fixture(scope="module")
def rows(dev_set) -> list[dict]:
    return [json.loads(line) for line in (dev_set / "questions.jsonl").read_text("utf-8").splitlines()]


def test_there_are_thirteen_sets() -> None:
    assert sorted(p.name for p in SETS) == sorted(
        ["changing_facts_dev", *(f"changing_facts_dev{k}" for k in range(2, 14))])


def test_loads_long_conversations(dev_set, dataset) -> None:
    """Long enough that a 1,000-token context holds a small part (tokens as billed)."""
    assert len(dataset.conversations) == (6 if dev_set.name == "changing_facts_dev" else 2)
    tokenizer = Tokenizer()
    chats = [json.loads(line) for line in (dev_set / "chats.jsonl").read_text("utf-8").splitlines()]
    for conv, chat in zip(dataset.conversations, chats, strict=True):
        assert 150 <= len(conv.messages) <= 250, (conv.id, len(conv.messages))
        tokens = count_chat_tokens(chat["messages"], tokenizer)
        assert 5_000 <= tokens <= 9_000, (conv.id, tokens)


def test_every_question_keeps_its_labels(dataset) -> None:
    for conv in dataset.conversations:
        index = {m.id: i for i, m in enumerate(conv.messages)}
        kinds = Counter(q.category for q in conv.questions)
        assert kinds["control"] == 2, conv.id
        changing = [q for q in conv.questions if q.category != "control"]
        assert 6 <= len(changing) <= 9, conv.id
        for q in conv.questions:
            assert q.evidence_ids and q.answer, q.id
            if q.category == "control":
                assert q.superseded_ids == () and q.metadata["gap"] is None, q.id
                continue
            assert q.category in KINDS, (q.id, q.category)
            assert q.superseded_ids, q.id
            last_old = max(index[s] for s in q.superseded_ids)
            current = min(index[e] for e in q.evidence_ids if index[e] > last_old)
            assert q.metadata["gap"] == current - last_old - 1, q.id
            for s in q.superseded_ids:  # an old statement is never labelled current too
                assert s not in q.evidence_ids, q.id


_STOP = frozenset(
    "the a an is are was were be to of for in on at by with and or do does did i my me we our us "
    "he his she her it its what which who when where how much many should will can from up this "
    "that there's".split())


def _content_words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9']+", text.lower()) if w not in _STOP}


def test_questions_are_worded_differently_from_their_statements(dataset) -> None:
    """A question that repeats its evidence's words would let lexical retrieval win for free:
    at most 3/4 of a question's content words appear in its evidence, and on average under half."""
    shares = []
    for conv in dataset.conversations:
        text = {m.id: m.content or "" for m in conv.messages}
        for q in conv.questions:
            asked = _content_words(q.question)
            stated = set().union(*(_content_words(text[e]) for e in q.evidence_ids))
            share = len(asked & stated) / len(asked)
            assert share <= 0.75, (q.id, q.question, sorted(asked & stated))
            shares.append(share)
    assert sum(shares) / len(shares) < 0.5


def test_set_covers_every_kind_and_long_gaps(dev_set, rows) -> None:
    kinds = Counter(r["category"] for r in rows)
    assert KINDS <= set(kinds), KINDS - set(kinds)
    gaps = [r["metadata"]["gap"] for r in rows if r.get("superseded")]
    assert sum(50 <= g <= 200 for g in gaps) >= (12 if dev_set.name == "changing_facts_dev" else 4)


def test_build_script_regenerates_the_files_byte_for_byte(dev_set) -> None:
    before = {n: (dev_set / n).read_bytes() for n in ("chats.jsonl", "questions.jsonl")}
    subprocess.run([sys.executable, str(BUILD), str(dev_set)], check=True)
    after = {n: (dev_set / n).read_bytes() for n in ("chats.jsonl", "questions.jsonl")}
    assert before == after
