"""OpenAI-format chat logs and questions as an evaluation dataset (memorykit.evaluation.chatlog)."""

from __future__ import annotations

import json

import pytest

from memorykit.evaluation.harness import evaluate
from memorykit.evaluation.chatlog import ChatLogError, load_chat_logs, parse_chat_logs
from memorykit.evaluation.toolkit import FIXED_POLICIES

CALL = {"id": "call_1", "type": "function",
        "function": {"name": "lookup_order", "arguments": '{"order_id": "K-1"}'}}
CHAT = [
    {"role": "developer", "content": "Be brief."},
    {"role": "user", "content": "My order number is K-1."},
    {"role": "assistant", "content": None, "tool_calls": [CALL]},
    {"role": "tool", "tool_call_id": "call_1", "content": '{"carrier": "Parcelway"}'},
    {"role": "assistant", "content": [{"type": "text", "text": "It ships with Parcelway."},
                                      {"type": "image_url", "image_url": {"url": "x"}}]},
    {"role": "user", "content": "Thanks!", "name": "amara"},
]


def lines(*records) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


def load(chats, questions=None):
    return parse_chat_logs(lines(*chats), None if questions is None else lines(*questions),
                           name="chats.jsonl")


def test_messages_keep_roles_tool_calls_and_text():
    data = load([{"id": "c1", "messages": CHAT, "user": "amara"}, CHAT])
    assert [c.id for c in data] == ["c1", "2"]  # an id, else the place in the file
    conv = data.conversations[0]
    assert conv.metadata["user"] == "amara"
    m = conv.messages
    assert [x.id for x in m] == ["0", "1", "2", "3", "4", "5"]
    assert [x.role for x in m] == ["system", "user", "assistant", "tool", "assistant", "user"]
    assert m[0].metadata["role"] == "developer" and m[5].metadata["name"] == "amara"
    assert m[2].content == "" and m[2].tool_call_ids == ("call_1",)
    assert m[2].tool_calls[0].name == "lookup_order"
    assert m[2].billed_tokens > 0  # the call's name and arguments are billed
    assert m[3].tool_call_id == "call_1"
    assert m[4].content == "It ships with Parcelway."  # text parts only


def test_questions_by_index_by_id_and_by_answer():
    chats = [{"id": "c1", "messages": CHAT},
             {"id": "c2", "messages": [{"id": "a", **CHAT[1]}, {"id": "b", **CHAT[5]}]}]
    data = load(chats, [
        {"conversation": "c1", "question": "What is my order number?", "evidence": [1]},
        {"conversation": "c2", "question": "Order?", "evidence": ["a"], "id": "x", "category": "k"},
        {"conversation": "c1", "question": "Who delivers it?", "answer": "parcelway"},
        {"conversation": "c1", "question": "Who?", "answer": ["Parcelway"], "position": 4},
    ])
    c1, c2 = data.conversations
    q1, q3, q4 = c1.questions
    assert q1.id == "q1" and q1.evidence_ids == ("1",) and q1.category == "question"
    assert q1.position == 6 and q1.metadata["evidence_from"] == "evidence"
    assert c2.questions[0].evidence_ids == ("a",) and c2.questions[0].category == "k"
    # every message holding the answer, case-insensitively: the tool result and the reply
    assert q3.evidence_ids == ("3", "4") and q3.metadata["evidence_from"] == "answer"
    assert q4.evidence_ids == ("3",)  # only what exists when it is asked
    assert data.n_questions == 4


def test_answer_must_match_whole_words():
    chats = [{"id": "c", "messages": [{"role": "user", "content": "I like carsharing."}]}]
    with pytest.raises(ChatLogError, match=r"chats.jsonl \(questions\):line 1: answer: 'car' "
                                           r"occurs in no message"):
        load(chats, [{"conversation": "c", "question": "What?", "answer": "car"}])


def test_the_harness_scores_a_loaded_log():
    data = load([{"id": "c1", "messages": CHAT}],
                [{"conversation": "c1", "question": "order number?", "evidence": [1]}])
    result = evaluate(FIXED_POLICIES["full-context"], data, 4000)
    assert result.summary()["recall"] == 1.0
    assert evaluate(FIXED_POLICIES["last-20-messages"], data, 4000).summary()["recall"] == 1.0


def test_load_from_files_json_and_jsonl(tmp_path):
    one = tmp_path / "one.json"
    one.write_text(json.dumps(CHAT))  # one conversation, a bare messages array
    many = tmp_path / "many.json"
    many.write_text(json.dumps([CHAT, {"id": "b", "messages": CHAT}]))
    questions = tmp_path / "q.json"
    questions.write_text(json.dumps({"conversation": "1", "question": "Order?", "evidence": 1}))
    data = load_chat_logs(one, questions)
    assert data.name == "one.json" and len(data) == 1 and data.n_questions == 1
    assert [c.id for c in load_chat_logs(many)] == ["1", "b"]
    assert load_chat_logs(many).n_questions == 0
    with pytest.raises(FileNotFoundError, match="no such file"):
        load_chat_logs(tmp_path / "missing.jsonl")
    bad = tmp_path / "chats.csv"
    bad.write_text("role,content\n")
    with pytest.raises(ChatLogError, match=r"chats.csv: expected a .json or .jsonl file, got '.csv'"):
        load_chat_logs(bad)
    broken = tmp_path / "broken.json"
    broken.write_text('[\n {"role": "user",\n  "content": }\n]')
    with pytest.raises(ChatLogError, match=r"broken.json:line 3: not valid JSON"):
        load_chat_logs(broken)


def tool_call(**changes):
    call = json.loads(json.dumps(CALL))
    for key, value in changes.items():
        if key in ("name", "arguments"):
            call["function"][key] = value
        else:
            call[key] = value
    return call


def with_message(i, **changes):
    msgs = json.loads(json.dumps(CHAT))
    msgs[i].update(changes)
    return msgs


BAD_CONVERSATIONS = [
    ("x", r"must be a messages array or an object with messages"),
    ({"id": "c"}, r"messages: must be a non-empty list"),
    ({"id": "", "messages": CHAT}, r"id: must be a non-empty str"),
    ({"id": "1", "messages": CHAT}, r"id: repeats conversation id '1' \(first at line 1\)"),
    ([*CHAT[:1], "hi"], r"messages\[1\]: must be an object"),
    (with_message(1, role="function"), r"messages\[1\].role: must be system, developer"),
    (with_message(1, content=5), r"messages\[1\].content: must be a str, null"),
    (with_message(1, content=[{"text": "x"}]), r"messages\[1\].content\[0\]: must be a content part"),
    (with_message(1, content=[{"type": "text"}]), r"messages\[1\].content\[0\].text: must be a str"),
    (with_message(1, id="0"), r"messages\[1\].id: repeats message id '0'"),
    (with_message(2, tool_calls={"id": "x"}), r"messages\[2\].tool_calls: must be a list"),
    (with_message(2, tool_calls=[{"id": "call_1"}]), r"messages\[2\].tool_calls\[0\].function: must be"),
    (with_message(2, tool_calls=[tool_call(name="look up")]),
     r"messages\[2\].tool_calls\[0\].function.name: tool call name must be 1-64"),
    (with_message(2, tool_calls=[tool_call(arguments="{oops")]),
     r"messages\[2\].tool_calls\[0\].function.arguments: tool call arguments must be a JSON object"),
    (with_message(2, tool_calls=[tool_call(id="")]), r"messages\[2\].tool_calls\[0\].id: tool call id"),
    (with_message(1, tool_calls=[CALL]), r"messages\[1\].tool_calls: only assistant messages issue"),
    (with_message(3, tool_call_id=None), r"messages\[3\].tool_call_id: a tool result must name"),
    (with_message(3, tool_call_id="call_9"),
     r"messages: messages\[3\] is a tool result for call 'call_9' that has no call issued"),
    (CHAT[:3], r"messages: messages\[2\] issues tool call 'call_1' with no result: the request ends"),
]


@pytest.mark.parametrize("record, message", BAD_CONVERSATIONS)
def test_bad_conversations_name_the_file_line_and_field(record, message):
    with pytest.raises(ChatLogError, match=r"^chats.jsonl:line 2: " + message):
        load([CHAT, record])


def test_bad_json_line_names_the_line():
    with pytest.raises(ChatLogError, match=r"^chats.jsonl:line 2: not valid JSON"):
        parse_chat_logs(lines(CHAT) + "{nope\n", name="chats.jsonl")
    with pytest.raises(ChatLogError, match=r"^chats.jsonl: holds no conversation"):
        parse_chat_logs("\n", name="chats.jsonl")


Q = {"conversation": "1", "question": "What is my order number?", "evidence": [1]}
BAD_QUESTIONS = [
    ("x", r"must be a question object"),
    ({**Q, "evidense": [1]}, r"evidense: is not a question field"),
    ({**Q, "conversation": "9"}, r"conversation: names no conversation: got '9', ids are 1"),
    ({**Q, "question": ""}, r"question: must be a non-empty str"),
    ({**Q, "evidence": []}, r"evidence: must be a non-empty list"),
    ({**Q, "evidence": [6]}, r"evidence\[0\]: index 6 is outside conversation '1' \(0..5\)"),
    ({**Q, "evidence": ["zz"]}, r"evidence\[0\]: names no message of conversation '1': 'zz'"),
    ({**Q, "evidence": [1, 1]}, r"evidence\[1\]: repeats message '1'"),
    ({**Q, "position": 1}, r"evidence\[0\]: message '1' \(index 1\) comes at or after the question's"),
    ({**Q, "position": 7}, r"position: must be an int in \[0, 6\]"),
    ({**Q, "position": True}, r"position: must be an int"),
    ({"conversation": "1", "question": "Why?"}, r"evidence: a question needs evidence"),
    ({**Q, "answer": ["", "K-1"]}, r"answer: must be a str or a list of str"),
    ({**Q, "id": 3}, r"id: must be a non-empty str, got 3"),
    ({**Q, "category": " "}, r"category: must be a non-empty str"),
]


@pytest.mark.parametrize("record, message", BAD_QUESTIONS)
def test_bad_questions_name_the_file_line_and_field(record, message):
    with pytest.raises(ChatLogError, match=r"^chats.jsonl \(questions\):line 2: " + message):
        load([CHAT], [Q, record])


def test_repeated_question_id_names_both_lines():
    with pytest.raises(ChatLogError, match=r":line 2: id: repeats question id 'a' of conversation "
                                           r"'1' \(first at line 1\)"):
        load([CHAT], [{**Q, "id": "a"}, {**Q, "id": "a"}])


# ------------------------------------------------------------ hostile files (issue 25)
def write(path, data: bytes):
    path.write_bytes(data)
    return path


Q1 = {"conversation": "1", "question": "Order?", "evidence": [1]}


@pytest.mark.parametrize("name, data, message", [
    ("chats.jsonl", lines(CHAT).encode() + b'[{"role": "user", "content": "caf\xe9"}]\n',
     r"^.*chats.jsonl:line 2: is not UTF-8 text \(byte 0xe9 at column 34\)$"),
    ("chats.json", b'[\n' + json.dumps(CHAT).encode() + b',\n"\xff"]',
     r"^.*chats.json:line 3: is not UTF-8 text \(byte 0xff at column 2\)$"),
    ("chats.jsonl", b"[" * 100_000 + b"]" * 100_000 + b"\n",
     r"^.*chats.jsonl:line 1: not readable: arrays or objects nested too deeply"),
    ("chats.json", b"[" * 100_000 + b"]" * 100_000, r"^.*chats.json: not readable: arrays or "
                                                    r"objects nested too deeply"),
    ("chats.jsonl", lines(CHAT).encode() + b'{"messages": ' + json.dumps(CHAT).encode()
     + b', "n": ' + b"9" * 5000 + b"}\n",
     r"^.*chats.jsonl:line 2: not readable: a number of more than 4,300 digits"),
    ("chats.json", b"", r"^.*chats.json: is empty: it holds no JSON document$"),
    ("chats.json", b" \n\n", r"^.*chats.json: is empty: it holds no JSON document$"),
    ("chats.jsonl", b"", r"^.*chats.jsonl: holds no conversation$"),
])
def test_unreadable_conversation_files_name_file_and_line(tmp_path, name, data, message):
    with pytest.raises(ChatLogError, match=message):
        load_chat_logs(write(tmp_path / name, data))


@pytest.mark.parametrize("change, message", [
    ({"metadata": [1, 2]}, r"^.*q.jsonl:line 1: metadata: must be an object, got \[1, 2\]$"),
    ({"metadata": "x"}, r"^.*q.jsonl:line 1: metadata: must be an object, got 'x'$"),
    ({"conversation": [1, 2]}, r"^.*q.jsonl:line 1: conversation: names no conversation: got "
                               r"\[1, 2\]"),
    ({"conversation": {"a": 1}}, r"^.*q.jsonl:line 1: conversation: names no conversation"),
    ({"evidence": [1], "position": 10 ** 4000}, r"^.*q.jsonl:line 1: position: must be an int"),
    ({"metadata": {"deep": json.loads("[" * 900 + "]" * 900)}}, None),  # deep but readable
])
def test_question_fields_of_the_wrong_type_name_the_field(tmp_path, change, message):
    chats = write(tmp_path / "chats.jsonl", lines(CHAT).encode())
    questions = write(tmp_path / "q.jsonl", lines({**Q1, **change}).encode())
    if message is None:
        assert load_chat_logs(chats, questions).n_questions == 1
        return
    with pytest.raises(ChatLogError, match=message):
        load_chat_logs(chats, questions)


def test_a_directory_or_fifo_is_named_as_such_and_never_read(tmp_path):
    import os

    folder = tmp_path / "logs.jsonl"
    folder.mkdir()
    with pytest.raises(ChatLogError, match=r"logs.jsonl: is a directory, not a file$"):
        load_chat_logs(folder)
    chats = write(tmp_path / "chats.jsonl", lines(CHAT).encode())
    with pytest.raises(ChatLogError, match=r"logs.jsonl: is a directory, not a file$"):
        load_chat_logs(chats, folder)
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)  # nobody writes: reading it would block forever
    with pytest.raises(ChatLogError, match=r"pipe.jsonl: is not a regular file \(a FIFO"):
        load_chat_logs(fifo)
    with pytest.raises(ChatLogError, match=r"pipe.jsonl: is not a regular file \(a FIFO"):
        load_chat_logs(chats, fifo)


def test_a_large_json_document_is_refused_before_it_is_read(tmp_path, monkeypatch):
    from memorykit.evaluation import chatlog

    big = write(tmp_path / "chats.json", json.dumps([CHAT, CHAT]).encode())
    assert len(load_chat_logs(big)) == 2
    monkeypatch.setattr(chatlog, "_JSON_MAX_BYTES", big.stat().st_size - 1)
    with pytest.raises(ChatLogError, match=r"chats.json: is [\d,]+ bytes; a .json file is read "
                                           r"whole and may hold at most [\d,]+: write one .* .jsonl"):
        load_chat_logs(big)


def test_jsonl_lines_end_at_newlines_only_and_a_bom_is_skipped(tmp_path):
    # A raw U+2028 inside a JSON string is legal (json.dumps(ensure_ascii=False) writes it):
    # it does not end a JSONL record, from a file or from text.
    chat = [{"role": "user", "content": "one\u2028two\x85three"}]
    text = "\ufeff" + json.dumps(chat, ensure_ascii=False) + "\n"
    assert parse_chat_logs(text).conversations[0].messages[0].content == "one\u2028two\x85three"
    path = write(tmp_path / "chats.jsonl", text.encode())
    assert load_chat_logs(path).conversations[0].messages[0].content == "one\u2028two\x85three"


@pytest.mark.parametrize("role", [[1, 2], {"a": 1}, None, 3])
def test_a_role_of_the_wrong_type_is_named(role):
    with pytest.raises(ChatLogError, match=r"^chats.jsonl:line 1: messages\[1\].role: must be "
                                           r"system, developer, user, assistant or tool, got "):
        load([[CHAT[0], {**CHAT[1], "role": role}]])
