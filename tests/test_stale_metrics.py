"""Questions that name what was replaced (``superseded``) and the metrics that see staleness:
``stale_only``, ``both``, ``both_unclear`` (``memorykit.evaluation.scoring.staleness``), from
the questions file through the harness to ``python -m memorykit tune --json``."""

from __future__ import annotations

import json
import pickle

import pytest

from memorykit.cli import main
from memorykit.context import Context, ContextItem
from memorykit.evaluation.chatlog import ChatLogError, parse_chat_logs
from memorykit.evaluation.dataset import EvalConversation, EvalQuestion
from memorykit.evaluation.harness import evaluate
from memorykit.evaluation.scoring import staleness
from memorykit.evaluation.toolkit import FIXED_POLICIES
from memorykit.evaluation.tune import tune
from memorykit.messages import MessageFactory

TEXTS = ["The deadline for the report is Monday.", "Noted.", "How is the weather?",
         "Sunny and mild.", "Change of plan: the report deadline moved to Friday.", "Got it.",
         "Thanks!", "You're welcome."]


def conversation(cid: str = "c1") -> str:
    roles = ["user", "assistant"] * 4
    return json.dumps({"id": cid, "messages": [{"id": f"{cid}-m{i}", "role": r, "content": t}
                                               for i, (r, t) in enumerate(zip(roles, TEXTS))]})


def question(cid: str = "c1", **fields) -> str:
    q = {"conversation": cid, "id": f"{cid}-q", "question": "What is the deadline for the report?",
         "answer": "Friday", "evidence": [4], "superseded": [0]}
    q.update(fields)
    return json.dumps({k: v for k, v in q.items() if v is not None})


def test_superseded_is_read_as_ids_or_indices_and_empty_means_none():
    by_index = parse_chat_logs(conversation(), question())
    by_id = parse_chat_logs(conversation(), question(superseded=["c1-m0"]))
    none = parse_chat_logs(conversation(), question(superseded=[]))
    absent = parse_chat_logs(conversation(), question(superseded=None))
    assert by_index.conversations[0].questions[0].superseded_ids == ("c1-m0",)
    assert by_id.conversations[0].questions[0].superseded_ids == ("c1-m0",)
    assert none.conversations[0].questions[0].superseded_ids == ()
    assert absent.conversations[0].questions[0].superseded_ids == ()


@pytest.mark.parametrize("bad,field,problem", [
    ([99], "superseded[0]", "outside conversation"),
    (["nope"], "superseded[0]", "names no message"),
    ([True], "superseded[0]", "names no message"),
    ([0, 0], "superseded[1]", "repeats message"),
    ("c1-m7", "superseded[0]", "comes at or after the question's position"),
    ([4], "superseded[0]", "is evidence too"),
    ([6], "superseded[0]", "comes after every evidence message"),
    ({"a": 1}, "superseded", "must be a non-empty list"),
])
def test_bad_superseded_values_are_refused_naming_line_and_field(bad, field, problem):
    with pytest.raises(ChatLogError) as info:
        parse_chat_logs(conversation(), "\n" + question(superseded=bad, position=7))
    message = str(info.value)
    assert info.value.where == "line 2" and info.value.field == field, message
    assert problem in message


def test_the_dataset_itself_refuses_inconsistent_superseded_ids():
    f = MessageFactory()
    msgs = tuple(f.message("user", t) for t in TEXTS[:3])
    with pytest.raises(ValueError, match="evidence and superseded at once"):
        EvalQuestion("q", "when?", None, (msgs[1].id,), "c", superseded_ids=(msgs[1].id,))
    with pytest.raises(TypeError, match="superseded_ids must be a sequence"):
        EvalQuestion("q", "when?", None, (msgs[1].id,), "c", superseded_ids="m0")
    late = EvalQuestion("q", "when?", None, (msgs[0].id,), "c", position=2,
                        superseded_ids=(msgs[2].id,))
    with pytest.raises(ValueError, match="its superseded"):
        EvalConversation("c", msgs, (late,))
    q = EvalQuestion("q", "when?", None, (msgs[1].id,), "c", superseded_ids=(msgs[0].id,))
    assert pickle.loads(pickle.dumps(q)) == q  # process pools send questions


def _item(text: str, source: str, kind: str = "message") -> ContextItem:
    return ContextItem("user", text, 10, (source,), kind)


@pytest.fixture()
def messages():
    f = MessageFactory()
    return {m.id: m for m in (f.message("user", TEXTS[0], id="old"),
                              f.message("user", TEXTS[4], id="new"),
                              f.message("user", TEXTS[2], id="other"))}


@pytest.mark.parametrize("items,expected", [
    ([("other", "message")], (False, False, False, False)),
    ([("old", "message"), ("other", "message")], (True, False, False, False)),
    ([("new", "message")], (False, False, False, False)),
    ([("old", "message"), ("new", "message")], (False, True, False, False)),
    ([("new", "message"), ("old", "message")], (False, True, True, False)),
    ([("new", "message"), ("old", "superseded")], (False, True, False, False)),
    ([("new", "superseded"), ("old", "message")], (False, True, True, True)),
    ([("new", "superseded")], (False, False, False, True)),
])
def test_staleness_reads_which_statements_the_context_holds_and_in_what_order(
        messages, items, expected):
    ctx = Context(tuple(_item(("[superseded] " if kind == "superseded" else "")
                              + messages[s].content, s, kind) for s, kind in items), 1000, "test")
    assert staleness(ctx, ["new"], ["old"], messages, 0.5) == expected


def test_an_item_citing_the_old_statement_without_saying_it_is_not_stale(messages):
    ctx = Context((_item("Something else entirely.", "old"),), 1000, "test")
    assert staleness(ctx, ["new"], ["old"], messages, 0.5) == (False, False, False, False)


def test_marking_the_current_statement_superseded_is_caught_without_superseded_ids(messages):
    ctx = Context((_item("[superseded] " + messages["new"].content, "new", "superseded"),),
                  1000, "test")
    assert staleness(ctx, ["new"], [], messages, 0.5) == (False, False, False, True)
    plain = Context((_item(messages["new"].content, "new"),), 1000, "test")
    assert staleness(plain, ["new"], [], messages, 0.5) == (False, False, False, False)


def test_the_harness_reports_staleness_only_for_data_that_names_superseded_messages():
    changed = parse_chat_logs(conversation(), question())
    plain = parse_chat_logs(conversation(), question(superseded=None))
    bm25 = FIXED_POLICIES["bm25"]
    # 20 tokens hold one statement: BM25 ranks the old one ("deadline for the report") first
    tight = evaluate(bm25, changed, 20)
    q = tight.questions[0]
    assert (q.n_superseded, q.stale_only, q.both) == (1, True, False) and q.recall == 0.0
    assert tight.summary()["stale_only"] == 1.0 and tight.summary()["changed_questions"] == 1
    roomy = evaluate(bm25, changed, 500).summary()
    assert (roomy["stale_only"], roomy["both"]) == (0.0, 1.0)
    summary = evaluate(bm25, plain, 20).summary()
    assert "stale_only" not in summary and "changed_questions" not in summary
    assert evaluate(bm25, plain, 20).questions[0].stale_only is None


def test_tune_rows_and_tables_carry_staleness_and_the_cli_writes_it(tmp_path):
    chats = tmp_path / "chats.jsonl"
    questions = tmp_path / "questions.jsonl"
    chats.write_text("\n".join(conversation(f"c{i}") for i in range(4)) + "\n")
    questions.write_text("\n".join(question(f"c{i}") for i in range(4)) + "\n")
    result = tune(parse_chat_logs(chats.read_text(), questions.read_text()), [20, 500],
                  ["bm25", "recency"], holdout=0)
    for row in result.table:
        assert {"stale_only", "both", "both_unclear", "changed_questions",
                "marked_current"} <= set(row)
    assert any("stale_only" in note for note in result.notes())
    out = tmp_path / "out.json"
    assert main(["tune", str(chats), "-q", str(questions), "-b", "20", "500", "-p", "bm25",
                 "--json", str(out), "--no-progress"]) == 0
    payload = json.loads(out.read_text())
    for key in ("rows", "best", "pareto_front"):
        assert all("stale_only" in r and "both" in r for r in payload[key]), key
    # 20 tokens hold one of the two statements: a configuration that misses the new one holds
    # the old one (some of BM25's grid do, the pick does not); 500 tokens hold both
    tight = [r for r in payload["rows"] if r["budget"] == 20]
    assert all(r["stale_only"] == 1.0 - r["recall"] for r in tight)
    assert {r["stale_only"] for r in tight} == {0.0, 1.0}
    assert [r["stale_only"] for r in payload["best"] if r["budget"] == 20] == [0.0]
    assert all(r["both"] == 1.0 for r in payload["rows"] if r["budget"] == 500)


def test_the_cli_refuses_a_bad_superseded_value_naming_file_line_and_field(tmp_path, capsys):
    chats = tmp_path / "chats.jsonl"
    questions = tmp_path / "qs.jsonl"
    chats.write_text(conversation() + "\n")
    questions.write_text(question() + "\n" + question(id="q2", superseded=["missing"]) + "\n")
    with pytest.raises(SystemExit) as info:
        main(["tune", str(chats), "-q", str(questions), "--no-progress"])
    assert info.value.code == 2
    assert f"{questions}:line 2: superseded[0]: names no message" in capsys.readouterr().err
