"""Scoring that cannot be gamed: over-budget contexts and lost text earn nothing, answers are
checked in the text, units are stated, coinciding policies are named (memorykit.evaluation.scoring)."""

from __future__ import annotations

from pathlib import Path

import pytest

from memorykit.context import Context, ContextItem
from memorykit.evaluation.baselines import FullContext, baseline_policies
from memorykit.evaluation.harness import HarnessSettings, compare_policies, evaluate
from memorykit.evaluation.pareto import cheapest_reaching, pareto_front
from memorykit.evaluation.locomo import load_locomo
from memorykit.evaluation.toolkit import toolkit_policies
from memorykit.evaluation.harness import coinciding_policies
from memorykit.evaluation.scoring import (
    answer_contained,
    answer_in,
    content_tokens,
    covered_evidence,
    normalize_answer,
    salient_terms,
    searchable_text,
)
from memorykit.messages import MessageFactory

FIXTURE = Path(__file__).parent / "fixtures" / "locomo_mini.json"


@pytest.fixture(scope="module")
def mini():
    return load_locomo(FIXTURE, verify=False)


def _rows(result):
    return {q.question_id: q for q in result.questions}


# ---------------------------------------------- must show: no score over budget or for lost text
def test_full_context_scores_nothing_at_a_budget_it_exceeds(mini):
    conv = mini.conversations[0]
    whole = sum(m.billed_tokens for m in conv.messages) + 3  # every question sees all 9 turns
    over = evaluate(FullContext(), conv, whole - 1).summary()
    assert (over["recall"], over["strict_recall"], over["answer_recall"]) == (0.0, 0.0, 0.0)
    assert over["over_budget"] == 1.0 and over["tokens"] == whole
    fits = evaluate(FullContext(), conv, whole).summary()
    assert (fits["recall"], fits["over_budget"]) == (1.0, 0.0)


def test_a_window_policy_over_its_budget_scores_nothing(mini):
    window = toolkit_policies()["window-20"]  # keeps 20 messages whatever the budget
    result = evaluate(window, mini, 60)
    over = [q for q in result.questions if q.over_budget]
    assert over and all(q.tokens > 60 and q.recall == 0.0 and q.n_covered == 0 for q in over)
    assert all(q.answer_recall in (None, 0.0) for q in over)


def test_summary_buffer_is_not_credited_for_a_turn_its_text_lost(mini):
    summary = toolkit_policies()["summary"]
    conv = mini.conversations[0]
    q0, q2 = conv.questions[0], conv.questions[2]  # evidence D1:2 (paints sunsets), D2:1 (Biscuit)
    ctx = summary.build_context(conv.history(q0), q0.question, 100)
    condensed = next(i for i in ctx.items if i.kind == "summary")
    # the summary cites both turns, but kept only the Biscuit one's words
    assert {"D1:2", "D2:1"} <= set(condensed.sources)
    assert "sunsets" not in condensed.content and "Biscuit on Sunday" in condensed.content
    rows = _rows(evaluate(summary, mini, 100))
    assert rows["conv-a:q0"].n_covered == 0  # provenance alone used to give 1.0
    assert rows["conv-a:q2"].recall == 1.0


def test_summary_buffer_no_longer_recalls_everything_it_condensed(mini):
    summary = toolkit_policies()["summary"]
    result = evaluate(summary, mini, 100)
    cited = credited = 0
    for conv in mini:
        for q in conv.questions:
            ctx = summary.build_context(conv.history(q), q.question, 100)
            cited += len(set(q.evidence_ids) & ctx.covered_ids())
            credited += _rows(result)[q.id].n_covered
    assert credited < cited


# ---------------------------------------------------------------- the evidence rule
def _factory():
    return MessageFactory()


def test_an_item_citing_a_message_must_keep_half_its_salient_terms():
    m = _factory().user("Melanie started painting sunsets with watercolors last week.")
    messages = {m.id: m}
    assert salient_terms(m.content) >= {"melanie", "painting", "sunsets", "watercolors"}

    def summary(text):
        return Context((ContextItem("system", text, 10, (m.id,), "summary"),), 100, "t")

    kept = summary("Melanie paints: she started painting sunsets with watercolors.")
    lost = summary("Melanie talked about her week.")
    assert covered_evidence(kept, [m.id], messages, 0.5) == {m.id}
    assert covered_evidence(lost, [m.id], messages, 0.5) == frozenset()
    # an item that does not cite the message earns nothing, however much it quotes
    stray = Context((ContextItem("user", m.content, 10, ("other",)),), 100, "t")
    assert covered_evidence(stray, [m.id], messages, 0.5) == frozenset()
    # a message with no salient term needs to be quoted
    ok = _factory().user("Okay!")
    assert covered_evidence(summary("Fine."), [ok.id], {ok.id: ok}, 1.0) == frozenset()


def test_min_overlap_is_the_stated_share():
    m = _factory().user("alpha beta gamma delta")
    item = Context((ContextItem("system", "alpha beta", 5, (m.id,), "summary"),), 100, "t")
    assert covered_evidence(item, [m.id], {m.id: m}, 0.5) == {m.id}
    assert covered_evidence(item, [m.id], {m.id: m}, 0.51) == frozenset()
    with pytest.raises(ValueError, match="min_overlap must be in \\(0, 1\\], got 1.5"):
        HarnessSettings(min_overlap=1.5)
    with pytest.raises(ValueError, match="min_overlap must be in \\(0, 1\\], got 0"):
        HarnessSettings(min_overlap=0)


# ---------------------------------------------------------------- answer containment
@pytest.mark.parametrize("context, answer, expected", [
    ("I moved to Boston in 2022.", "2022", True),
    ("started painting Sunsets, with watercolors", "sunsets", True),
    ("we went to a party", "art", False),  # whole words only
    ("Her painting teacher recommended the breeder", "her painting teacher", True),
    ("the breeder", "a breeder", True),  # articles dropped
    ("on Sunday", "the Sunday before 27 June 2023", False),  # a paraphrase is not contained
    ("anything", "?!", False),  # nothing left to look for
])
def test_answer_containment_is_normalised_whole_words(context, answer, expected):
    assert answer_contained(context, answer) is expected


def test_normalize_answer():
    assert normalize_answer("The Sunday before 27-June, 2023!") == "sunday before 27 june 2023"


def test_searchable_text_equals_the_whole_text_normalised():
    items = tuple(ContextItem("user", t, 5, ()) for t in ("Her painting", "!!", "teacher, the breeder."))
    ctx = Context(items, 100, "t")
    cache: dict[str, str] = {}
    text = searchable_text(ctx, cache)
    assert text == f" {normalize_answer(' '.join(i.content for i in items))} " == searchable_text(ctx)
    assert cache["!!"] == "" and answer_in(text, "painting teacher") and not answer_in(text, "ing")


def test_answer_recall_is_reported_for_every_policy_and_none_without_an_answer(mini):
    summary, _ = compare_policies({**toolkit_policies(), **baseline_policies()}, mini, 1000)
    assert all(0.0 <= row["answer_recall"] <= 1.0 for row in summary)
    rows = _rows(evaluate(FullContext(), mini, 1000))
    assert rows["conv-a:q4"].answer_recall is None  # adversarial: no reference answer
    assert rows["conv-a:q0"].answer_recall == 1.0  # "sunsets" is in the history
    assert rows["conv-a:q2"].answer_recall == 0.0  # the dated answer is not said as such


# ---------------------------------------------------------------- units
def test_content_tokens_are_the_messages_text_alone(mini):
    conv = mini.conversations[0]
    ctx = FullContext().build_context(conv.messages, "q", 10_000)
    assert content_tokens(ctx) == sum(m.content_tokens for m in conv.messages)
    assert ctx.tokens == sum(m.billed_tokens for m in conv.messages) + 3


def test_units_choose_the_tokens_reported_and_the_budget_check(mini):
    conv = mini.conversations[0]
    text = sum(m.content_tokens for m in conv.messages)
    billed = evaluate(FullContext(), conv, text).summary()
    content = evaluate(FullContext(), conv, text, settings=HarnessSettings(units="content")).summary()
    assert (billed["units"], billed["over_budget"], billed["recall"]) == ("billed", 1.0, 0.0)
    assert (content["units"], content["over_budget"], content["recall"]) == ("content", 0.0, 1.0)
    assert content["tokens"] == text
    with pytest.raises(ValueError, match="units must be one of 'billed', 'content', got 'words'"):
        HarnessSettings(units="words")


def test_every_table_says_its_units(mini):
    summary, categories = compare_policies([FullContext()], mini, 1000)
    for table in (summary, categories, evaluate(FullContext(), mini, 1000).table()):
        assert "billed tokens" in table.notes[0]
        assert "Note: tokens and budgets are billed tokens" in table.to_markdown()
    content, _ = compare_policies([FullContext()], mini, 1000,
                                  settings=HarnessSettings(units="content"))
    assert "content tokens" in content.notes[0]


# ---------------------------------------------------------------- front and cheapest
def test_front_and_cheapest_never_list_an_over_budget_point():
    rows = [
        {"label": "full-context@250", "tokens": 9740.0, "recall": 1.0, "over_budget": 1.0},
        {"label": "window@500", "tokens": 395.0, "recall": 0.9, "over_budget": 0.25},
        {"label": "bm25@250", "tokens": 246.0, "recall": 0.65, "over_budget": 0.0},
        {"label": "bm25@1000", "tokens": 994.0, "recall": 0.75, "over_budget": 0.0},
    ]
    assert [r["label"] for r in pareto_front(rows)] == ["bm25@250", "bm25@1000"]
    assert cheapest_reaching(rows, 0.7)["label"] == "bm25@1000"
    assert cheapest_reaching(rows, 0.9) is None


# ---------------------------------------------------------------- policies that coincide
def test_policies_that_coincide_are_named_with_the_missing_signal(mini):
    summary, _ = compare_policies(toolkit_policies(), mini, 60)
    notes = [n for n in summary.notes if "identical" in n]
    assert notes[0] == (
        "fifo, importance, hybrid, recency give identical results on all 7 questions at 60 tokens;"
        " the data carries no importance signal (every message's importance is 1.0), so"
        " importance, hybrid, recency fall back to arrival order")
    # window-20 keeps the whole of these short histories: no signal to blame, none named
    assert [n for n in notes if n.startswith("window-20")] == []
    full = compare_policies([FullContext(), toolkit_policies()["window-20"]], mini, 60)[0]
    assert full.notes[1] == "full-context, window-20 give identical results on all 7 questions at 60 tokens"


def test_no_signal_note_when_the_data_carries_importance():
    f = MessageFactory()
    from memorykit.evaluation.dataset import EvalConversation, EvalQuestion

    msgs = [f.user(f"note {i} about topic {i}", importance=0.9 if i == 5 else 0.1)
            for i in range(30)]
    q = EvalQuestion("q", "topic 5?", "topic 5", (msgs[5].id,), "single-hop")
    conv = EvalConversation("c", tuple(msgs), (q,))
    policies = {n: p for n, p in toolkit_policies().items() if n in ("fifo", "importance")}
    summary, _ = compare_policies(policies, conv, 100)
    assert not any("importance is" in n for n in summary.notes)
    results = {n: evaluate(p, conv, 100) for n, p in policies.items()}
    assert coinciding_policies(results) == []  # importance keeps the important early note


def test_a_fingerprint_is_the_outcome_of_every_question(mini):
    import dataclasses

    from memorykit.evaluation.harness import EvalResult

    fifo = toolkit_policies()["fifo"]
    a, b = evaluate(fifo, mini, 60), evaluate(fifo, mini, 60)
    assert a.fingerprint() == b.fingerprint()
    assert coinciding_policies({"a": a, "b": b.fingerprint()}) == [("a", "b")]
    assert evaluate(fifo, mini, 200).fingerprint() != a.fingerprint()
    # one question's tokens differing is enough to tell two results apart
    first = dataclasses.replace(b.questions[0], tokens=b.questions[0].tokens + 1)
    other = EvalResult(b.policy, b.budget, (first, *b.questions[1:]))
    assert other.fingerprint() != a.fingerprint() and coinciding_policies({"a": a, "b": other}) == []
