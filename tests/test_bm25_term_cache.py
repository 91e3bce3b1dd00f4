"""BM25's term memo: an agent calling ``build_context`` with its whole history every turn pays the
analyzer only for messages it has not seen, and gets the same contexts as without the memo."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from memorykit.embeddings import LexicalHashingEmbedder
from memorykit.evaluation.baselines import (TERM_MEMO_SIZE, BM25Retrieval, _TermMemo,
                                            analyze_stemmed)
from memorykit.evaluation.chatlog import load_chat_logs
from memorykit.evaluation.hybrid import HybridRetrieval
from memorykit.messages import MessageFactory

LOGS = Path(__file__).resolve().parents[1] / "data" / "chat_logs"


@pytest.fixture(scope="module")
def support():
    return load_chat_logs(LOGS / "support_chats.jsonl", LOGS / "support_questions.jsonl")


class CountingAnalyzer:
    """The default analyzer, remembering every text it was given (picklable: module level)."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def __call__(self, text: str) -> list[str]:
        self.texts.append(text)
        return analyze_stemmed(text)


def bm25(analyzer=analyze_stemmed) -> BM25Retrieval:
    return BM25Retrieval(analyzer=analyzer)


def hybrid() -> HybridRetrieval:
    return HybridRetrieval(embedder=LexicalHashingEmbedder(256))


def as_tuple(ctx):
    return ctx.items, ctx.tokens, ctx.notes, ctx.policy


@pytest.mark.parametrize("make", [bm25, hybrid], ids=["bm25", "hybrid"])
def test_a_reused_policy_builds_the_contexts_a_fresh_one_does(support, make):
    # One policy for every question of every conversation (its memo warm, as an agent's is
    # turn after turn), against a new policy per call (nothing remembered) and the harness's
    # per-conversation fast path.
    reused = make()
    compared = 0
    for conv in support:
        state = make().prepare(conv)
        for q in conv.questions:
            position = conv.position(q)
            history = conv.messages[:position]
            for budget in (200, 1000):
                warm = reused.build_context(history, q.question, budget)
                cold = make().build_context(history, q.question, budget)
                fast = state.build_context(position, q.question, budget)
                assert as_tuple(warm) == as_tuple(cold) == as_tuple(fast)
                compared += 1
    assert compared == 2 * sum(len(c.questions) for c in support) > 0
    # what the index is built from is exactly what the analyzer gives for each message now
    whole = support.conversations[0].messages
    docs = reused._prepare(whole).prepared.docs
    assert docs == [analyze_stemmed(m.content) for m in whole]


def test_a_second_call_analyzes_only_the_new_message(support):
    counting = CountingAnalyzer()
    policy = bm25(counting)
    history = list(support.conversations[0].messages)
    query = "What is my order number?"
    policy.build_context(history, query, 500)
    assert set(counting.texts) == {m.content for m in history} | {query}
    counting.texts.clear()
    new = MessageFactory().user("My parcel tracking code is ZX-4471, please note it down.")
    ctx = policy.build_context(history + [new], "What is my parcel tracking code?", 500)
    assert counting.texts == [new.content, "What is my parcel tracking code?"]  # then the query
    assert new.id in [i for item in ctx.items for i in item.sources]


def test_hybrid_retrieval_shares_the_memo_of_its_bm25(support):
    policy = hybrid()
    history = support.conversations[1].messages
    policy.build_context(history, "Which ingredient must the recipes leave out?", 500)
    assert len(policy.bm25.terms) == len({m.content for m in history})


def test_a_message_whose_content_changed_is_analyzed_again():
    counting = CountingAnalyzer()
    policy = bm25(counting)
    factory = MessageFactory()
    first = [factory.user("I live in Lisbon now."), factory.assistant("Noted: Lisbon.", id="m-fact")]
    policy.build_context(first, "Where do I live?", 200)
    counting.texts.clear()
    changed = [first[0], factory.assistant("Noted: Porto.", id="m-fact")]  # same id, new text
    ctx = policy.build_context(changed, "Is it Porto?", 200)
    assert counting.texts == ["Noted: Porto.", "Is it Porto?"]
    assert [item.content for item in ctx.items] == ["Noted: Porto."]


def test_the_memo_is_bounded_and_forgets_the_least_recently_used_first():
    counting = CountingAnalyzer()
    memo = _TermMemo(counting, maxsize=3)
    assert memo.documents(["red apples", "green pears", "blue plums"]) == [
        ["red", "appl"], ["green", "pear"], ["blue", "plum"]]
    memo.documents(["red apples"])  # used again: now the newest
    memo.documents(["ripe figs"])  # a fourth text pushes out the least recently used
    assert len(memo) == 3
    counting.texts.clear()
    memo.documents(["red apples", "blue plums", "green pears"])
    assert counting.texts == ["green pears"]  # the one forgotten, analyzed again
    assert len(memo) == 3
    # a call with more distinct texts than the bound still gets every text's terms
    many = [f"word{i} apples" for i in range(7)]
    assert memo.documents(many) == [analyze_stemmed(t) for t in many] and len(memo) == 3
    assert BM25Retrieval().terms.maxsize == TERM_MEMO_SIZE


def test_terms_handed_out_are_copies_and_repeated_texts_are_analyzed_once():
    counting = CountingAnalyzer()
    memo = _TermMemo(counting)
    docs = memo.documents(["ship the parcel", "ship the parcel"])
    assert counting.texts == ["ship the parcel"] and docs[0] == docs[1] and docs[0] is not docs[1]
    docs[0].append("changed")
    assert memo.documents(["ship the parcel"]) == [["ship", "parcel"]]


def test_bad_settings_are_refused_by_name():
    with pytest.raises(ValueError, match="maxsize"):
        _TermMemo(analyze_stemmed, maxsize=0)
    with pytest.raises(TypeError, match="maxsize"):
        _TermMemo(analyze_stemmed, maxsize=2.5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="analyzer"):
        _TermMemo("stemmed")  # type: ignore[arg-type]


def test_a_pickled_policy_starts_with_an_empty_memo_and_still_works(support):
    policy = bm25()
    history = support.conversations[0].messages
    before = policy.build_context(history, "What is my order number?", 300)
    assert len(policy.terms) > 0
    copy = pickle.loads(pickle.dumps(policy))  # a process pool's copy: the cache is not sent
    assert len(copy.terms) == 0 and copy.terms.maxsize == policy.terms.maxsize
    assert as_tuple(copy.build_context(history, "What is my order number?", 300)) == as_tuple(before)
