"""The neutral evaluation representation: validation, simulated facts as questions, pickling."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from memorykit.classroom.scenarios.conversation import from_simulated
from memorykit.evaluation.dataset import EvalConversation, EvalDataset, EvalQuestion
from memorykit.evaluation.locomo import load_locomo
from memorykit.messages import MessageFactory
from memorykit.classroom.scenarios.conversation import load_conversation

DATA = Path(__file__).parent.parent / "data" / "conversations"


def test_facts_become_questions_with_their_message_as_evidence():
    sim = load_conversation(DATA / "short_60.jsonl")
    conv = from_simulated(sim)
    assert len(conv.questions) == len(sim.facts) == 12
    for q, fact in zip(conv.questions, sim.facts):
        assert q.evidence_ids == (fact.message_id,) and q.answer == fact.key
        assert q.category == fact.topic and q.question == fact.question and q.position is None
        assert fact.key in conv.messages[conv.index_of(fact.message_id)].content
    delayed = from_simulated(sim, delay=3)
    q = delayed.questions[0]
    assert q.position == conv.index_of(q.evidence_ids[0]) + 4
    assert len(delayed.history(q)) == q.position


def test_validation_names_the_problem():
    f = MessageFactory()
    a, b = f.user("a"), f.user("b")
    with pytest.raises(ValueError, match="evidence_ids must name at least one"):
        EvalQuestion("q", "?", None, (), "x")
    with pytest.raises(ValueError, match="which is no message"):
        EvalConversation("c", (a, b), (EvalQuestion("q", "?", None, ("zz",), "x"),))
    with pytest.raises(ValueError, match="comes later"):
        EvalConversation("c", (a, b), (EvalQuestion("q", "?", None, (b.id,), "x", position=1),))
    with pytest.raises(ValueError, match="past the 2 messages"):
        EvalConversation("c", (a, b), (EvalQuestion("q", "?", None, (a.id,), "x", position=5),))
    with pytest.raises(ValueError, match="unique"):
        EvalConversation("c", (a, a), ())
    with pytest.raises(TypeError, match="evidence_ids must be a sequence"):
        EvalQuestion("q", "?", None, "m1", "x")
    # metadata of the wrong type is named, not dict()'s "cannot convert ... sequence" (issue 25)
    with pytest.raises(TypeError, match=r"^metadata must be a mapping, got \[1, 2\]$"):
        EvalQuestion("q", "?", None, (a.id,), "x", metadata=[1, 2])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^metadata must be a mapping, got \[\(1, 2\)\]$"):
        EvalConversation("c", (a, b), (), metadata=[(1, 2)])  # type: ignore[arg-type]


def test_select_and_counts():
    data = load_locomo(Path(__file__).parent / "fixtures" / "locomo_mini.json", verify=False)
    assert data.n_questions == 7 and data.n_messages == 11
    assert data.categories()["single-hop"] == 3
    only = data.select(categories=["multi-hop"])
    assert only.n_questions == 1 and only.report is data.report
    assert data.select(conversations=["conv-b"]).n_questions == 1


def test_datasets_pickle_for_process_pools():
    data = EvalDataset("s", (from_simulated(load_conversation(DATA / "short_60.jsonl")),))
    back = pickle.loads(pickle.dumps(data))
    assert back.conversations[0].messages == data.conversations[0].messages
    assert back.conversations[0].questions == data.conversations[0].questions
