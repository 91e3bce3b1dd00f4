"""Why not (issue 26, item 3): the rank, score and cutoff reported for a missed evidence
message are the policy's own, checked against BM25 computed here from the bm25s library."""

from __future__ import annotations

import bm25s
import pytest

from memorykit.evaluation.baselines import BM25Retrieval, LastTokens, analyze_stemmed
from memorykit.evaluation.dataset import EvalConversation, EvalQuestion
from memorykit.evaluation.explain import explain_misses, format_misses
from memorykit.evaluation.harness import HarnessSettings, evaluate
from memorykit.evaluation.hybrid import HybridRetrieval, HybridSettings
from memorykit.evaluation.toolkit import AttentionPolicy, _history_buffer
from memorykit.embeddings import LexicalHashingEmbedder
from memorykit.messages import MessageFactory
from memorykit.tokens import ChatFormat

PRIMER = ChatFormat().reply_primer

TEXTS = ["Ada has a parrot called Kiwi.", "The weather is rainy today.",
         "Ada talked about her pet shop visit and pet food prices for her pet.",
         "Pet insurance for a pet is pricey, Ada said.", "Ada loves pet videos.",
         "Her pet Kiwi learned a new word.", "Lunch was pasta again.", "The train was late."]


def make_conv(cid="c1", sessions=False):
    f = MessageFactory()
    m = [f.user(t, metadata={"session": 1 + (i >= 4)} if sessions else None)
         for i, t in enumerate(TEXTS)]
    return EvalConversation(cid, tuple(m), (
        EvalQuestion("kiwi", "What did Kiwi learn?", "a word", (m[5].id, m[0].id), "multi-hop"),
        EvalQuestion("weather", "What is the weather like?", "rainy", (m[1].id,), "single-hop"),
        EvalQuestion("pet", "What pet does Ada have?", "parrot", (m[0].id, m[2].id), "multi-hop"),
        EvalQuestion("train", "Was the train late?", "late", (m[7].id, m[6].id), "multi-hop")))


@pytest.fixture(scope="module")
def conv():
    return make_conv()


def bm25(conv, query):
    """BM25's ranking, rebuilt from bm25s: scores, then candidates above 0, best first, ties newer."""
    index = bm25s.BM25(k1=1.5, b=0.75, method="lucene")
    index.index([analyze_stemmed(m.content) for m in conv.messages], show_progress=False)
    terms = [index.vocab_dict[t] for t in analyze_stemmed(query) if t in index.vocab_dict]
    scores = index.get_scores(terms)
    order = sorted((i for i in range(len(conv)) if scores[i] > 0), key=lambda i: (-scores[i], -i))
    return order, scores


def pack(conv, order, budget):
    """The messages greedy packing takes, in ranked order."""
    room, taken = budget - PRIMER, []
    for i in order:
        if conv.messages[i].billed_tokens <= room:
            taken.append(i)
            room -= conv.messages[i].billed_tokens
    return taken


@pytest.mark.parametrize("budget", [40, 50])
@pytest.mark.parametrize("use_prepare", [True, False])  # False: contexts from build_context
def test_rank_score_and_cutoff_are_bm25s_own(conv, budget, use_prepare):
    misses = {m.question_id: m for m in explain_misses(
        BM25Retrieval(), conv, budget, settings=HarnessSettings(use_prepare=use_prepare))}
    q = conv.questions[2]
    order, scores = bm25(conv, q.question)
    taken = pack(conv, order, budget)
    miss = misses["pet"]
    ids = [conv.messages[i].id for i in taken]
    assert {e.message_id for e in miss.missed} == set(q.evidence_ids) - set(ids)
    for e in miss.missed:
        i = conv.index_of(e.message_id)
        assert (e.rank, e.score) == (order.index(i) + 1, pytest.approx(float(scores[i])))
        assert e.back == len(conv) - i and e.tokens == conv.messages[i].billed_tokens
    last = max(taken, key=order.index)
    assert (miss.cutoff.rank, miss.cutoff.message_id) == (order.index(last) + 1, conv.messages[last].id)
    assert miss.cutoff.score == pytest.approx(float(scores[last])) and miss.cutoff.tokens == miss.tokens
    first = order.index(conv.index_of(miss.missed[0].message_id))
    above = [i for i in taken if order.index(i) < first]
    assert miss.above.count == len(above)
    assert miss.above.tokens == sum(conv.messages[i].billed_tokens for i in above)
    assert [t[0] for t in miss.above.top] == [conv.messages[i].id for i in above[:3]]
    assert miss.recall == evaluate(BM25Retrieval(), conv, budget).questions[2].recall


def test_reasons_say_ran_out_skipped_and_unranked(conv):
    at50 = {m.question_id: m for m in explain_misses(BM25Retrieval(), conv, 50)}
    assert at50["pet"].reason == ("ranked 4th (score 0.29); the budget ran out at rank 3 (score "
                                  "0.55) after 46 tokens: 3 messages ranked above it filled it")
    at40 = {m.question_id: m for m in explain_misses(BM25Retrieval(), conv, 40)}
    assert at40["pet"].reason == ("ranked 3rd (score 0.55), above the cutoff (rank 4), but its "
                                  "19 billed tokens did not fit the room left when its turn came")
    content = explain_misses(BM25Retrieval(), conv, 50, settings=HarnessSettings(units="content"))
    pet = next(m for m in content if m.question_id == "pet")
    assert "the budget ran out at rank 3" in pet.reason  # fit is judged in billed tokens, as packed
    assert pet.missed[0].tokens == conv.messages[0].content_tokens < conv.messages[0].billed_tokens
    lunch = at50["train"].missed[0]  # shares no term with the question: BM25 never ranks it
    assert (lunch.rank, lunch.score) == (None, 0.0) and lunch.reason.startswith("not ranked at all")
    assert at50["train"].above.count == 1  # every ranked message taken is above an unranked one


def test_a_recency_buffer_is_explained_by_what_it_keeps(conv):
    misses = explain_misses(LastTokens(), conv, 50)
    kept, room = 0, 50 - PRIMER
    while conv.messages[-1 - kept].billed_tokens <= room:
        room -= conv.messages[-1 - kept].billed_tokens
        kept += 1
    weather = next(m for m in misses if m.question_id == "weather")
    assert weather.reason == (f"keeps the newest {kept} messages ({weather.tokens} tokens); "
                              f"the evidence is {len(conv) - 1} messages back")
    assert weather.cutoff is None and weather.above is None
    assert all(e.rank is None and e.score is None for m in misses for e in m.missed)


def test_worst_first_and_covered_questions_never_listed(conv):
    for policy in (BM25Retrieval(), LastTokens()):
        misses = explain_misses(policy, conv, 50, worst=10)
        rows = {r.question_id: r for r in evaluate(policy, conv, 50).questions}
        assert {m.question_id for m in misses} == {k for k, r in rows.items() if r.recall < 1}
        assert [m.recall for m in misses] == sorted(m.recall for m in misses)
    assert "weather" not in {m.question_id for m in explain_misses(BM25Retrieval(), conv, 50)}
    # recall 0 before 0.5; at equal recall, two evidence messages missed before one
    assert [m.question_id for m in explain_misses(LastTokens(), conv, 50)] == ["pet", "weather", "kiwi"]
    assert [m.question_id for m in explain_misses(LastTokens(), conv, 50, worst=1)] == ["pet"]
    # categories the harness reports apart (adversarial by default) are left out here too
    apart = HarnessSettings(separate=("multi-hop",))
    assert [m.question_id for m in explain_misses(LastTokens(), conv, 50, settings=apart)] == ["weather"]


def test_a_policy_with_only_scores_is_ranked_best_first_ties_newer_first(conv):
    class ScoresOnly:
        name, query_independent = "scores-only", False
        inner = BM25Retrieval()

        def prepare(self, c):
            return self.inner.prepare(c)

        def scores(self, p, position, query):
            return self.inner.scores(p, position, query)

    lunch = next(m for m in explain_misses(ScoresOnly(), conv, 50)
                 if m.question_id == "train").missed[0]
    # one message scores above 0; the zeros follow newest first: lunch (index 6) is second
    assert (lunch.rank, lunch.score) == (2, 0.0)


def test_neighbours_taken_with_a_hit_do_not_move_the_cutoff(conv):
    # two sessions; each hit brings its same-session neighbours, which may rank far below it
    c = make_conv("c2", sessions=True)
    policy = HybridRetrieval(HybridSettings(neighbours=1, dates=False, smoothing=0.0),
                             embedder=LexicalHashingEmbedder(256))
    budget = 50
    for miss in explain_misses(policy, c, budget, worst=10):
        q = next(q for q in c.questions if q.id == miss.question_id)
        order = policy.ranking(policy.prepare(c).prepared, len(c), q.question)[0].tolist()
        room, turn = budget - PRIMER, {}  # the hit rank each message was taken at, replayed
        for rank, hit in enumerate(order, 1):
            for i in (hit, hit - 1, hit + 1):
                same = 0 <= i < len(c) and (i < 4) == (hit < 4)
                if same and i not in turn and c.messages[i].billed_tokens <= room:
                    turn[i] = rank
                    room -= c.messages[i].billed_tokens
        assert miss.cutoff.rank == max(turn.values())
        first = miss.missed[0].rank
        assert miss.above.count == sum(1 for t in turn.values() if t < first)


def test_attention_ranks_by_its_window_scores(conv):
    policy = AttentionPolicy(LexicalHashingEmbedder(256))
    state = policy.prepare(conv)
    window = policy.window(_history_buffer(conv.messages), 50, state.embedder, state.vectors)
    for miss in explain_misses(policy, conv, 50, worst=10):
        sims = window.scores(conv.questions[[q.id for q in conv.questions].index(
            miss.question_id)].question)
        ranked = sorted(sims, key=lambda k: -sims[k])  # stable: ties older first
        for e in miss.missed:
            assert e.rank == ranked.index(e.message_id) + 1
            assert e.score == pytest.approx(sims[e.message_id])


@pytest.mark.parametrize("worst, error", [(0, ValueError), (-1, ValueError), ("5", TypeError),
                                          (True, TypeError)])
def test_bad_worst_is_refused_naming_it(conv, worst, error):
    with pytest.raises(error, match=rf"worst .*{worst!r}"):
        explain_misses(BM25Retrieval(), conv, 50, worst=worst)


def test_conversations_must_name_known_ids(conv):
    with pytest.raises(ValueError, match="'nope'"):
        explain_misses(BM25Retrieval(), conv, 50, conversations=["c1", "nope"])
    with pytest.raises(TypeError, match="'c1'"):
        explain_misses(BM25Retrieval(), conv, 50, conversations="c1")
    assert explain_misses(BM25Retrieval(), conv, 50, conversations=["c1"])


def test_format_misses_prints_rank_score_and_cutoff(conv):
    text = format_misses(explain_misses(BM25Retrieval(), conv, 50))
    assert "1. c1 / pet (multi-hop): recall 0.50, 1 evidence message missed" in text
    assert "rank 4, score 0.29" in text and "cutoff: rank 3" in text and "above it: 3 messages" in text
    assert format_misses([]) == "No question missed any evidence."
    with pytest.raises(TypeError, match="misses"):
        format_misses(["not a miss"])


def test_over_budget_and_a_summary_that_lost_the_words_are_named(conv):
    from memorykit.context import Context, ContextItem
    from memorykit.evaluation.baselines import FullContext

    full = explain_misses(FullContext(), conv, 50, worst=1)[0]
    assert full.reason == f"the context is over budget ({full.tokens} > 50 tokens): it scores 0"

    class Summary:  # one summary citing every message, saying none of them
        name = "summary"

        def build_context(self, history, query, budget):
            item = ContextItem("system", "They chatted.", 8, tuple(m.id for m in history), "summary")
            return Context((item,), budget, self.name)

    misses = explain_misses(Summary(), conv, 50, worst=10)
    assert len(misses) == 4 and all(m.reason.startswith("the context cites it, but no item still")
                                    for m in misses)
