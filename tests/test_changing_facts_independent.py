"""The independent held-out set of changing-fact conversations loads, and its labels hold together.

``tests/fixtures/changing_facts_independent/`` is hand-written, apart from the bundled generator,
so the supersession work of issue 27 can be checked on text it was not tuned to. This is a format
test only: every conversation and question loads with ``load_chat_logs`` (with and without the
``superseded`` field), the builder rewrites the files byte for byte, and the labels obey the rules
the README states (what a question names as current really says the answer; what it names as
replaced does not; the gap is what the indices say).
"""

from __future__ import annotations

import importlib.util
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from memorykit.evaluation.chatlog import load_chat_logs, parse_chat_logs

HERE = Path(__file__).resolve().parent / "fixtures" / "changing_facts_independent"
CHATS = HERE / "chats.jsonl"
QUESTIONS = HERE / "questions.jsonl"
UNCHANGED = {"control", "hypothetical-rejected"}
"""Categories of facts that never changed: no ``superseded``, no gap."""


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


CHAT_ROWS = _rows(CHATS)
QUESTION_ROWS = _rows(QUESTIONS)
INDEX = {m["id"]: (c["id"], k) for c in CHAT_ROWS for k, m in enumerate(c["messages"])}
TEXT = {m["id"]: m["content"] for c in CHAT_ROWS for m in c["messages"]}
ROLE = {m["id"]: m["role"] for c in CHAT_ROWS for m in c["messages"]}


def _whole(needle: str, text: str) -> bool:
    """``needle`` in ``text`` as whole words, case-insensitive."""
    return re.search(r"(?<!\w)" + re.escape(needle.lower()) + r"(?!\w)", text.lower()) is not None


def test_loads_with_superseded() -> None:
    data = load_chat_logs(CHATS, QUESTIONS)
    assert len(data.conversations) == len(CHAT_ROWS)
    loaded = {q.id: q for c in data.conversations for q in c.questions}
    assert len(loaded) == len(QUESTION_ROWS)
    for row in QUESTION_ROWS:
        q = loaded[row["id"]]
        assert q.evidence_ids == tuple(row["evidence"])
        assert q.superseded_ids == tuple(row.get("superseded", ()))


def test_loads_without_superseded() -> None:
    """A reader that predates the field sees the same set once ``superseded`` is stripped."""
    stripped = "".join(json.dumps({k: v for k, v in r.items() if k != "superseded"}) + "\n"
                       for r in QUESTION_ROWS)
    data = parse_chat_logs(CHATS.read_text(encoding="utf-8"), stripped)
    assert all(q.superseded_ids == () for c in data.conversations for q in c.questions)
    assert sum(len(c.questions) for c in data.conversations) == len(QUESTION_ROWS)


def test_builder_rewrites_the_files_byte_for_byte() -> None:
    spec = importlib.util.spec_from_file_location("independent_build", HERE / "build.py")
    assert spec is not None and spec.loader is not None
    build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build)
    chats, questions = build.build()
    as_text = lambda rows: "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)  # noqa: E731
    assert as_text(chats) == CHATS.read_text(encoding="utf-8")
    assert as_text(questions) == QUESTIONS.read_text(encoding="utf-8")


def test_shape_of_the_set() -> None:
    assert 6 <= len(CHAT_ROWS) <= 8
    assert len({c["domain"] for c in CHAT_ROWS}) >= 5
    for c in CHAT_ROWS:
        assert 60 <= len(c["messages"]) <= 150, c["id"]
        assert [m["id"] for m in c["messages"]] == [f"{c['id']}-m{k:03d}" for k in range(len(c["messages"]))]
        asked = [q for q in QUESTION_ROWS if q["conversation"] == c["id"]]
        changed = [q["category"] for q in asked if q["category"] not in UNCHANGED]
        # 4 to 7 facts that change, in ways that differ from each other, and at least one control
        assert 4 <= len(changed) <= 7 and len(set(changed)) == len(changed), (c["id"], changed)
        assert any(q["category"] == "control" for q in asked), c["id"]
    kinds = Counter(q["category"] for q in QUESTION_ROWS)
    for kind in ("moved", "corrected", "cancelled", "changed-twice", "changed-by-other",
                 "replaced-without-cue", "control", "hypothetical-rejected"):
        assert kinds[kind] >= 3, kind
    assert kinds["reverted"] >= 2


@pytest.mark.parametrize("row", QUESTION_ROWS, ids=lambda r: r["id"])
def test_labels(row: dict[str, Any]) -> None:
    evidence, superseded = row["evidence"], row.get("superseded", [])
    assert row["id"].startswith(row["conversation"] + "-q")
    assert all(INDEX[m][0] == row["conversation"] for m in evidence + superseded)
    assert not set(evidence) & set(superseded)
    # the current statement says the answer; no replaced statement does
    assert any(row["answer"].lower() in TEXT[m].lower() for m in evidence)
    assert not any(_whole(row["answer"], TEXT[m]) for m in superseded)
    if row["category"] in UNCHANGED:
        assert "superseded" not in row and "gap" not in row["metadata"]
        return
    assert superseded
    last_old = max(INDEX[m][1] for m in superseded)
    first_new = min(INDEX[m][1] for m in evidence if INDEX[m][1] > last_old)
    assert row["metadata"]["gap"] == first_new - last_old - 1 >= 0
    # every replaced statement comes before the current one
    assert all(INDEX[m][1] < first_new for m in superseded)
    if row["category"] == "reverted":
        # the value went back to the original: the first statement is current again
        assert min(INDEX[m][1] for m in evidence) < min(INDEX[m][1] for m in superseded)
    if row["category"] == "changed-twice":
        # two earlier values said by the user, not one value and its echo
        assert sum(ROLE[m] == "user" for m in superseded) >= 2


def test_question_ids_unique() -> None:
    ids = [q["id"] for q in QUESTION_ROWS]
    assert len(ids) == len(set(ids))
