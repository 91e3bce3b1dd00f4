"""The conversation simulator: determinism, structure, planted facts, records."""

from __future__ import annotations

import json
import re

import pytest

from memorykit.buffers import FIFOBuffer
from memorykit.messages import Message, MessageFactory
from memorykit.classroom.scenarios.conversation import (
    KINDS,
    SimulatedConversation,
    load_conversation,
    random_messages,
    save_conversation,
    simulate_conversation,
)
from memorykit.classroom.scenarios.facts import PlantedFact, fact_survival
from memorykit.classroom.scenarios.prose import TOPICS
from memorykit.tokens import Tokenizer

TOKENIZER = Tokenizer("cl100k_base")


@pytest.fixture(scope="module")
def conv() -> SimulatedConversation:
    return simulate_conversation(300, seed=11, tool_call_rate=0.2, counter=TOKENIZER)


def sim(n_turns: int = 40, **kw) -> SimulatedConversation:
    kw.setdefault("counter", TOKENIZER)
    return simulate_conversation(n_turns, **kw)


def test_same_seed_same_conversation():
    a, b = sim(80, seed=3), sim(80, seed=3)
    assert a.messages == b.messages
    assert a.facts == b.facts
    assert a.to_jsonl() == b.to_jsonl()


def test_different_seeds_differ():
    a, b = sim(80, seed=3), sim(80, seed=4)
    assert [m.content for m in a.messages] != [m.content for m in b.messages]
    assert [f.key for f in a.facts] != [f.key for f in b.facts]


def test_default_counter_is_cl100k():
    c = simulate_conversation(3, seed=1)
    assert c.encoding == "cl100k_base"
    assert all(m.content_tokens == TOKENIZER.count(m.content) for m in c.messages)


def test_turns_alternate_and_system_prompt_first(conv):
    msgs = conv.messages
    assert msgs[0].role == "system" and msgs[0].pinned and msgs[0].turn == 0
    assert conv.n_turns == 300
    users = [m for m in msgs if m.role == "user"]
    assert [m.turn for m in users] == list(range(1, 301))
    # After the system prompt: user, then assistant (tool call, tool result, assistant)*
    for prev, cur in zip(msgs[1:], msgs[2:]):
        if cur.role == "user":
            assert prev.role == "assistant" and not prev.tool_calls
        if cur.role == "assistant":
            assert prev.role in ("user", "tool")
    assert msgs[-1].role == "assistant"
    assert len({m.id for m in msgs}) == len(msgs)


def test_no_system_prompt_and_custom_prompt():
    assert sim(5, system_prompt=False).messages[0].role == "user"
    c = sim(5, system_prompt="Be terse. Code 1234 is not a fact.")
    assert c.messages[0].content.startswith("Be terse.")
    for f in c.facts:
        assert f.key not in c.messages[0].content


def test_tool_results_follow_their_call(conv):
    msgs = conv.messages
    calls = [i for i, m in enumerate(msgs) if m.tool_calls]
    assert calls, "tool_call_rate=0.2 over 300 turns should produce tool calls"
    answered = set()
    for i in calls:
        call, result = msgs[i], msgs[i + 1]
        assert call.role == "assistant" and len(call.tool_calls) == 1
        assert result.role == "tool" and result.tool_call_id == call.tool_call_ids[0]
        assert msgs[i + 2].role == "assistant"  # the answer that uses the result
        json.loads(result.content)
        answered.add(result.tool_call_id)
    tool_msgs = [m for m in msgs if m.role == "tool"]
    assert len(tool_msgs) == len(calls) == len(answered)
    assert re.fullmatch(r"call_\d+", msgs[calls[0]].tool_call_ids[0])
    # a realistic call: one of the topic's tools, asked the user's question
    first = msgs[calls[0]]
    assert first.tool_calls[0].name in first.content
    assert json.loads(first.tool_calls[0].arguments) == {"query": msgs[calls[0] - 1].content}


def test_a_buffer_accepts_the_stream(conv):
    buf = FIFOBuffer(max_tokens=2000)
    buf.extend(conv.messages)
    assert buf.added_count == len(conv.messages)


def test_no_tool_calls_when_rate_zero():
    assert not any(m.tool_calls or m.role == "tool" for m in sim(100, tool_call_rate=0.0))


def test_time_is_non_decreasing_and_realistic(conv):
    times = [m.created_at for m in conv.messages]
    assert times == sorted(times)
    users = [m.created_at for m in conv.messages if m.role == "user"]
    gaps = [b - a for a, b in zip(users, users[1:])]
    assert min(gaps) >= 10
    assert sum(g > 1800 for g in gaps) >= 1  # occasional long breaks
    assert sorted(gaps)[len(gaps) // 2] < 300


def test_start_time_offsets_the_clock():
    a, b = sim(10, seed=2), sim(10, seed=2, start_time=1_700_000_000.5)
    assert [m.created_at + 1_700_000_000.5 for m in a] == [m.created_at for m in b]


def test_importance_and_metadata(conv):
    for m in conv.messages:
        assert 0.0 <= m.importance <= 1.0
        assert round(m.importance, 3) == m.importance
        assert set(m.metadata) == {"topic", "kind", "facts"}
        assert m.metadata["kind"] in KINDS
        assert m.metadata["topic"] in TOPICS or m.role == "system"
        assert isinstance(m.metadata["facts"], tuple)
    by_kind: dict[str, list[float]] = {}
    for m in conv.messages:
        by_kind.setdefault(m.metadata["kind"], []).append(m.importance)
    mean = {k: sum(v) / len(v) for k, v in by_kind.items()}
    assert mean["chitchat"] < mean["question"] < mean["decision"] < mean["fact"]
    assert max(by_kind["chitchat"]) < 0.5


def test_topics_switch(conv):
    topics = [m.metadata["topic"] for m in conv.messages if m.role == "user"]
    switches = sum(a != b for a, b in zip(topics, topics[1:]))
    assert len(set(topics)) >= 3 and 5 <= switches <= 100
    only = sim(50, topics=["recipe"])
    assert {m.metadata["topic"] for m in only if m.role != "system"} == {"recipe"}


def test_planted_facts(conv):
    facts = conv.facts
    assert len(facts) == 30  # one per block of fact_every=10 turns
    assert len({f.id for f in facts}) == len({f.key for f in facts}) == len(facts)
    assert len({f.question for f in facts}) == len(facts)
    by_id = {m.id: m for m in conv.messages}
    for f in facts:
        m = by_id[f.message_id]
        assert f.text in m.content and f.key in f.text
        assert m.turn == f.turn and m.metadata["topic"] == f.topic
        assert m.metadata["facts"] == (f.id,)
        assert m.metadata["kind"] in ("fact", "decision")
        assert 0.8 <= m.importance <= 1.0
        assert f.question.endswith("?") and f.key not in f.question
        # The key is found in its own message and nowhere else.
        assert [x.id for x in conv.messages if f.key in x.content] == [m.id]
    assert {f.message_id for f in facts} == {
        m.id for m in conv.messages if m.metadata["facts"]
    }
    roles = {by_id[f.message_id].role for f in facts}
    assert roles == {"user", "assistant"}


def test_fact_blocks_and_no_facts():
    c = sim(95, fact_every=10)
    turns = [f.turn for f in c.facts]
    assert [(t - 1) // 10 for t in turns] == list(range(10))
    assert sim(40, fact_every=0).facts == []
    assert [f.turn for f in sim(3, fact_every=1).facts] == [1, 2, 3]


def test_only_fact_messages_contain_digits():
    c = sim(200, seed=5, tool_call_rate=0.3)
    for m in c.messages:
        if not m.metadata["facts"]:
            assert not re.search(r"\d", m.content), m.content


def test_message_lengths(conv):
    low, high = 5, 400
    for m in conv.messages:
        kind = m.metadata["kind"]
        n = len(m.content.split())
        if kind in ("question", "answer", "chitchat") or (kind == "decision" and not m.metadata["facts"]):
            assert low <= n <= high, (kind, n)
    assistant = sorted(len(m.content.split()) for m in conv.messages
                       if m.metadata["kind"] == "answer")
    user = sorted(len(m.content.split()) for m in conv.messages
                  if m.metadata["kind"] == "question")
    assert user[len(user) // 2] < assistant[len(assistant) // 2]  # users are terser
    assert assistant[-1] > 3 * assistant[len(assistant) // 2]  # a long tail
    tight = sim(60, words=(8, 12))
    for m in tight.messages:
        if m.metadata["kind"] in ("question", "answer"):
            assert 8 <= len(m.content.split()) <= 12


def test_argument_validation_names_the_value():
    cases = [
        ({"n_turns": 0}, ValueError, "n_turns"),
        ({"n_turns": 2.5}, TypeError, "n_turns"),
        ({"seed": -1}, ValueError, "seed"),
        ({"tool_call_rate": 1.5}, ValueError, "tool_call_rate"),
        ({"tool_call_rate": -0.1}, ValueError, "tool_call_rate"),
        ({"topic_switch_rate": 2}, ValueError, "topic_switch_rate"),
        ({"long_break_rate": float("nan")}, ValueError, "long_break_rate"),
        ({"fact_every": -3}, ValueError, "fact_every"),
        ({"words": (0, 10)}, ValueError, "words"),
        ({"words": (50, 10)}, ValueError, "words"),
        ({"words": (5,)}, TypeError, "words"),
        ({"words": (5.0, 10)}, TypeError, "words"),
        ({"topics": ["space travel"]}, ValueError, "topics"),
        ({"topics": []}, ValueError, "topics"),
        ({"system_prompt": 3}, TypeError, "system_prompt"),
        ({"counter": object()}, TypeError, "counter"),
        ({"start_time": float("inf")}, ValueError, "start_time"),
    ]
    for kw, exc, name in cases:
        args = {"n_turns": 3, **kw}
        n_turns = args.pop("n_turns")
        with pytest.raises(exc, match=name) as info:
            simulate_conversation(n_turns, **args)
        value = next(iter(kw.values()))
        assert repr(value) in str(info.value) or name == "counter", str(info.value)


def test_records_round_trip(conv, tmp_path):
    records = conv.to_records()
    assert records[0]["type"] == "header" and records[0]["seed"] == 11
    json.dumps(records)  # serialisable as is
    back = SimulatedConversation.from_records(json.loads(json.dumps(records)))
    assert back.messages == conv.messages
    assert back.facts == conv.facts
    assert back.params == conv.params and back.seed == conv.seed
    assert back.to_jsonl() == conv.to_jsonl()
    path = tmp_path / "c.jsonl"
    save_conversation(conv, path)
    loaded = load_conversation(path)
    assert loaded.messages == conv.messages and loaded.facts == conv.facts
    raw = path.read_bytes()
    assert b"\r\n" not in raw and raw.endswith(b"\n")


def test_records_keep_summaries_and_stored_counts():
    f = MessageFactory(TOKENIZER)
    a = f.user("The code is 4721.", metadata={"kind": "fact", "facts": ("f0001",)})
    s = f.summary("Summary: code 4721.", [a])
    conv = SimulatedConversation([a, s], [], seed=0)
    back = SimulatedConversation.from_records(conv.to_records())
    assert back.messages == [a, s] and back.messages[1].sources == (a.id,)
    # Counts come from the record, not a re-count.
    rec = conv.to_records()
    rec[1]["content_tokens"], rec[1]["billed_tokens"] = 999, 1003
    assert SimulatedConversation.from_records(rec).messages[0].content_tokens == 999


def test_from_records_rejects_bad_input(tmp_path):
    good = sim(3).to_records()
    with pytest.raises(ValueError, match="header"):
        SimulatedConversation.from_records(good[1:])
    with pytest.raises(ValueError, match="type"):
        SimulatedConversation.from_records([*good, {"type": "banana"}])
    with pytest.raises(ValueError, match="n_messages"):
        SimulatedConversation.from_records(good[:2])
    path = tmp_path / "bad.jsonl"
    path.write_text('{"type": "header"\n')
    with pytest.raises(ValueError, match="bad.jsonl:1"):
        load_conversation(path)


def _msg(mid: str, content: str, **kw) -> Message:
    return Message(mid, kw.pop("role", "user"), content, 1, 5, **kw)


def test_fact_survival_hand_made():
    facts = [
        PlantedFact("f1", "The locker code is 4721.", "4721", 1, "m1", "trip", "Locker code?"),
        PlantedFact("f2", "Maya's flight is UA 917.", "UA 917", 2, "m2", "trip", "Flight?"),
        PlantedFact("f3", "Rent is $1,850.", "$1,850", 3, "m3", "budget", "Rent?"),
    ]
    kept = [_msg("m2", "Maya's flight is UA 917."), _msg("m9", "unrelated")]
    assert fact_survival(facts, kept) == {"f1": False, "f2": True, "f3": False}
    summary = _msg("s1", "Earlier: locker 4721; rent $1,850.", role="system",
                   sources=("m1", "m3"), summary_depth=1)
    assert fact_survival(facts, [summary]) == {"f1": True, "f2": False, "f3": True}
    assert fact_survival(facts, []) == {"f1": False, "f2": False, "f3": False}
    # The key must appear whole, not split across messages.
    assert fact_survival(facts, [_msg("a", "UA"), _msg("b", "917")])["f2"] is False
    # Paraphrase does not count: the key is the test.
    assert fact_survival(facts, [_msg("c", "UA nine one seven")])["f2"] is False


def test_fact_survival_after_a_buffer(conv):
    buf = FIFOBuffer(max_tokens=3000)
    buf.extend(conv.messages)
    alive = conv.fact_survival(buf.messages())
    assert alive == fact_survival(conv.facts, buf)
    kept = {m.id for m in buf}
    assert alive == {f.id: f.message_id in kept for f in conv.facts}
    assert not all(alive.values()) and any(alive.values())


def test_random_messages():
    a = list(random_messages(200, seed=1))
    assert a == list(random_messages(200, seed=1))
    assert a != list(random_messages(200, seed=2))
    lengths = [len(t.split()) for t in a]
    assert len(a) == 200 and min(lengths) >= 5 and max(lengths) <= 400
    assert sorted(lengths[1::2])[50] > sorted(lengths[::2])[50]
    assert all(5 <= len(t.split()) <= 9 for t in random_messages(50, 0, words=(5, 9)))
    assert list(random_messages(0)) == []
    with pytest.raises(ValueError, match="words"):
        random_messages(3, words=(9, 5))
    with pytest.raises(ValueError, match="-1"):
        random_messages(-1)
