"""Evidence recall through the common context interface, hand-checked on the LoCoMo fixture."""

from __future__ import annotations

from pathlib import Path

import pytest

from memorykit.buffers import FIFOBuffer
from memorykit.context import BufferPolicy, Context, ContextItem
from memorykit.classroom.scenarios.conversation import from_simulated
from memorykit.evaluation.baselines import (
    BM25Retrieval,
    FullContext,
    LastMessages,
    LastTokens,
    analyze,
)
from memorykit.evaluation.dataset import EvalConversation, EvalQuestion
from memorykit.evaluation.harness import (
    HarnessSettings,
    PreparablePolicy,
    compare_policies,
    evaluate,
    is_query_independent,
)
from memorykit.evaluation.locomo import load_locomo
from memorykit.evaluation.toolkit import toolkit_policies
from memorykit.messages import MessageFactory
from memorykit.classroom.scenarios.conversation import load_conversation

FIXTURE = Path(__file__).parent / "fixtures" / "locomo_mini.json"
DATA = Path(__file__).parent.parent / "data" / "conversations"


@pytest.fixture(scope="module")
def locomo():
    return load_locomo(FIXTURE, verify=False)


class Fixed:
    """Sends the same messages for every question, plus a summary citing ``summarized``
    whose text is ``summary_text``."""

    def __init__(self, ids, summarized=(), summary_text="summary"):
        self.name = "fixed"
        self.ids = set(ids)
        self.summarized = tuple(summarized)
        self.summary_text = summary_text
        self.calls = 0

    def build_context(self, history, query, budget):
        self.calls += 1
        items = [ContextItem.from_message(m) for m in history if m.id in self.ids]
        if self.summarized:
            items.append(ContextItem("system", self.summary_text, 10, self.summarized, "summary"))
        return Context(tuple(items), budget, self.name)


def test_hand_checked_recall_and_strict(locomo):
    # Covers D1:2 and D2:1 directly; a summary cites D10:1 but its text ("summary") does not say it.
    result = evaluate(Fixed({"D1:2", "D2:1"}, summarized=("D10:1",)), locomo, 500)
    rows = {r["question_id"]: r for r in result.to_records()}
    assert (rows["conv-a:q0"]["recall"], rows["conv-a:q0"]["strict"]) == (1.0, 1.0)
    # two evidence turns (D1:2, D2:3), one covered: recall 0.5, strict 0
    assert (rows["conv-a:q1"]["n_evidence"], rows["conv-a:q1"]["n_covered"]) == (2, 1)
    assert (rows["conv-a:q1"]["recall"], rows["conv-a:q1"]["strict"]) == (0.5, 0.0)
    assert rows["conv-a:q2"]["recall"] == 1.0
    assert rows["conv-a:q3"]["recall"] == 0.0  # D10:2, not D10:1
    assert rows["conv-a:q4"]["recall"] == 0.0  # adversarial
    assert rows["conv-a:q6"]["recall"] == 0.0
    assert rows["conv-b:q0"]["recall"] == 0.0
    s = result.summary()
    # overall leaves the adversarial question out: (1 + .5 + 1 + 0 + 0 + 0) / 6
    assert s["questions"] == 6
    assert s["recall"] == pytest.approx(2.5 / 6)
    assert s["strict_recall"] == pytest.approx(2 / 6)
    assert (s["adversarial_questions"], s["adversarial_recall"]) == (1, 0.0)
    cats = {r["category"]: r for r in result.by_category()}
    assert cats["single-hop"]["questions"] == 3
    assert cats["single-hop"]["recall"] == pytest.approx(1 / 3)
    assert cats["multi-hop"]["recall"] == 0.5 and cats["multi-hop"]["strict_recall"] == 0.0
    assert cats["adversarial"]["separate"] and not cats["temporal"]["separate"]


def test_a_summary_is_credited_only_with_what_its_text_still_says(locomo):
    cited = ("D1:2", "D2:3")
    kept = Fixed(set(), cited, "Melanie started painting sunsets with watercolors. Caroline's "
                               "golden retriever came from a breeder her painting teacher recommended.")
    rows = {r["question_id"]: r for r in evaluate(kept, locomo, 500).to_records()}
    assert rows["conv-a:q1"]["recall"] == 1.0 and rows["conv-a:q1"]["strict"] == 1.0
    # the same provenance, but the breeder fact (D2:3) was lost when condensing
    lost = Fixed(set(), cited, "Melanie started painting sunsets with watercolors.")
    rows = {r["question_id"]: r for r in evaluate(lost, locomo, 500).to_records()}
    assert (rows["conv-a:q1"]["n_covered"], rows["conv-a:q1"]["strict"]) == (1, 0.0)
    assert rows["conv-a:q0"]["recall"] == 1.0  # D1:2 is still said


def test_tokens_are_the_contexts_and_over_budget_flagged(locomo):
    a = locomo.conversations[0]
    full = evaluate(FullContext(), locomo, 20)
    first = full.questions[0]
    assert first.tokens == sum(m.billed_tokens for m in a.messages) + 3
    assert first.over_budget and full.summary()["over_budget"] == 1.0
    # every context holds the evidence, but none fits 20 tokens: nothing is scored
    assert first.n_covered == 0 and full.summary()["recall"] == 0.0
    assert full.summary()["answer_recall"] == 0.0 and full.summary()["strict_recall"] == 0.0


def test_last_tokens_packs_exactly_the_newest_that_fit(locomo):
    a = locomo.conversations[0]
    last3 = sum(m.billed_tokens for m in a.messages[-3:])
    ctx = LastTokens().build_context(a.messages, "q", last3 + 3)
    assert [i.sources[0] for i in ctx.items] == ["D2:3", "D10:1", "D10:2"]
    assert ctx.tokens == last3 + 3
    ctx = LastTokens().build_context(a.messages, "q", last3 + 2)
    assert [i.sources[0] for i in ctx.items] == ["D10:1", "D10:2"]
    result = evaluate(LastTokens(), locomo.select(conversations=["conv-a"]), last3 + 3)
    rows = {r["question_id"]: r["recall"] for r in result.to_records()}
    assert rows == {"conv-a:q0": 0.0, "conv-a:q1": 0.5, "conv-a:q2": 0.0, "conv-a:q3": 1.0,
                    "conv-a:q4": 0.0, "conv-a:q6": 0.0}


def test_last_messages_counts_messages_and_respects_budget(locomo):
    a = locomo.conversations[0]
    ctx = LastMessages(2).build_context(a.messages, "q", 10_000)
    assert [i.sources[0] for i in ctx.items] == ["D10:1", "D10:2"]
    tight = a.messages[-1].billed_tokens + 3
    assert [i.sources[0] for i in LastMessages(2).build_context(a.messages, "q", tight).items] == ["D10:2"]
    loose = LastMessages(2, fit_budget=False).build_context(a.messages, "q", tight)
    assert len(loose) == 2 and loose.over_budget


def test_bm25_finds_the_evidence_and_stays_in_budget(locomo):
    a = locomo.conversations[0]
    ctx = BM25Retrieval().build_context(a.messages, "Who started painting sunsets?", 30)
    assert ctx.covered_ids() == {"D1:2"} and ctx.tokens <= 30
    # The plain analyzer does not stem: "paint" misses "painting", "Melanie" matches all her turns.
    plain = BM25Retrieval(analyzer="plain").build_context(a.messages, "What does Melanie paint?", 60)
    assert "D1:2" not in plain.covered_ids() and plain.covered_ids() <= {"D1:2", "D1:4", "D2:2", "D10:1"}
    # The default analyzer stems: "paint" finds "I started painting sunsets".
    ctx = BM25Retrieval().build_context(a.messages, "What does Melanie paint?", 60)
    assert "D1:2" in ctx.covered_ids()
    for budget in (4, 20, 40, 80, 200):
        for q in a.questions:
            assert BM25Retrieval().build_context(a.messages, q.question, budget).tokens <= budget
    # No query word in the history: nothing retrieved.
    assert len(BM25Retrieval().build_context(a.messages, "zzz qqq", 500)) == 0
    assert analyze("What does Melanie PAINT?") == ["melanie", "paint"]


def test_baselines_pack_within_budget_on_simulated_data():
    conv = from_simulated(load_conversation(DATA / "short_60.jsonl"))
    for policy in (LastTokens(), LastMessages(10), BM25Retrieval()):
        for budget in (50, 300, 1000):
            result = evaluate(policy, conv, budget)
            assert max(q.tokens for q in result.questions) <= budget, (policy, budget)
    # The system prompt is kept first when it fits.
    ctx = LastTokens().build_context(conv.messages, "q", 500)
    assert ctx.items[0].sources == (conv.messages[0].id,)


def test_prepared_path_equals_plain_path():
    conv = from_simulated(load_conversation(DATA / "short_60.jsonl"), delay=7)
    plain = HarnessSettings(use_prepare=False)
    for policy in (LastTokens(), LastMessages(6), BM25Retrieval(), FullContext()):
        assert isinstance(policy, PreparablePolicy)
        fast = evaluate(policy, conv, 600).to_records()
        slow = evaluate(policy, conv, 600, settings=plain).to_records()
        key = lambda rows: [(r["question_id"], r["position"], r["recall"], r["tokens"]) for r in rows]  # noqa: E731
        assert key(fast) == key(slow)


def test_questions_are_asked_at_their_position():
    f = MessageFactory()
    msgs = tuple(f.user(f"message {i} about topic{i}") for i in range(6))
    qs = (EvalQuestion("early", "topic1?", "1", (msgs[1].id,), "x", position=2),
          EvalQuestion("late", "topic1?", "1", (msgs[1].id,), "x"))
    conv = EvalConversation("c", msgs, qs)
    last = msgs[-1].billed_tokens + msgs[-2].billed_tokens + 3
    rows = {r.question_id: r for r in evaluate(LastTokens(), conv, last).questions}
    assert rows["early"].recall == 1.0 and rows["early"].position == 2
    assert rows["late"].recall == 0.0 and rows["late"].position == 6


def test_query_independent_policy_is_built_once_per_position(locomo):
    policy = Fixed({"D1:2"})
    policy.query_independent = True
    evaluate(policy, locomo, 100)
    assert policy.calls == 2  # one position (the end) per conversation
    again = Fixed({"D1:2"})
    evaluate(again, locomo, 100)
    assert again.calls == 7  # one per question
    assert is_query_independent(BufferPolicy(FIFOBuffer, "fifo"))
    assert not is_query_independent(BM25Retrieval())


def test_buffer_policies_and_attention_through_the_same_harness():
    conv = from_simulated(load_conversation(DATA / "short_60.jsonl"))
    summary, categories = compare_policies(toolkit_policies(), conv, 1000)
    names = [r["policy"] for r in summary]
    assert names == ["fifo", "importance", "hybrid", "recency", "window-20", "summary", "attention",
                     "hybrid-retrieval"]
    by_name = {r["policy"]: r for r in summary}
    # FIFO keeps what LastTokens keeps: the same newest stretch.
    last = evaluate(LastTokens(), conv, 1000).summary()
    assert by_name["fifo"]["recall"] == last["recall"] and by_name["fifo"]["tokens"] == last["tokens"]
    assert {r["category"] for r in categories} == {q.category for q in conv.questions}
    assert all(0.0 <= r["recall"] <= 1.0 for r in summary)


def test_bad_arguments_name_the_value(locomo):
    with pytest.raises(ValueError, match="budget must be >= 1, got 0"):
        evaluate(LastTokens(), locomo, 0)
    with pytest.raises(TypeError, match="policy must be a ContextPolicy"):
        evaluate(object(), locomo, 10)
    with pytest.raises(TypeError, match="dataset must be"):
        evaluate(LastTokens(), 42, 10)

    class Bad:
        name = "bad"

        def build_context(self, history, query, budget):
            return []

    with pytest.raises(TypeError, match="'bad' returned list"):
        evaluate(Bad(), locomo, 10)
    with pytest.raises(ValueError, match="b must be in"):
        BM25Retrieval(b=2)
    with pytest.raises(ValueError, match="n must be >= 1"):
        LastMessages(0)
