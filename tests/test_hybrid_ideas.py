"""HybridRetrieval's ranking() and its retrieval ideas (issue 26) on tiny hand-made histories."""

from __future__ import annotations

import random
import re

import numpy as np
import pytest

from memorykit.evaluation.hybrid import HybridSettings
from memorykit.messages import MessageFactory
from memorykit.tokens import ChatFormat

from tests.test_hybrid_retrieval import conv, hybrid, ids  # noqa: F401 - conv is a fixture

PRIMER = ChatFormat().reply_primer


@pytest.mark.parametrize("diversity", [0.0, 1.0])
def test_ranking_is_what_the_context_is_built_from(conv, diversity):
    policy = hybrid(neighbours=0, dates=False, smoothing=0.0, diversity=diversity)
    p = policy.prepare(conv).prepared
    for q in conv.questions:
        order, score = policy.ranking(p, len(conv), q.question)
        assert sorted(order.tolist()) == list(range(len(conv))) and score.shape == (len(conv),)
        by_score = all(score[a] >= score[b] for a, b in zip(order[:-1], order[1:]))
        assert by_score or diversity  # diversity reorders; the score stays the relevance
        # a budget of the first two ranked messages (plus the primer) holds exactly those two
        first, second = (int(i) for i in order[:2])
        budget = int(p.tokens[first] + p.tokens[second]) + p.primer
        context = policy.build_context(conv.messages, q.question, budget)
        assert sorted(ids(context)) == sorted([conv.messages[first].id, conv.messages[second].id])


def sessions(*turns: tuple[int, str]):
    """Messages of (session, text) pairs, stamped as the LoCoMo loader stamps them."""
    f = MessageFactory()
    return [f.user(text, metadata={"session": s}, created_at=86400.0 * s) for s, text in turns]


PAINTING = [(1, "Melanie: I painted a sunset in my art class."),
            (1, "Melanie: in my art class I painted a sunset."),  # the same words: a near-duplicate
            (2, "Melanie: we went camping at the lake with the kids."),
            (2, "Caroline: the bus was late this morning.")]
ACTIVITIES = "What does Melanie do: painting a sunset in art class, camping?"


def test_diversity_keeps_a_second_sessions_evidence_that_plain_ranking_drops():
    history = sessions(*PAINTING)
    room = history[0].billed_tokens + history[2].billed_tokens + PRIMER  # holds two of the turns
    settings = dict(neighbours=0, dates=False, smoothing=0.0, session_weight=0.0)
    plain = hybrid(diversity=0.0, **settings).build_context(history, ACTIVITIES, room)
    diverse = hybrid(diversity=1.0, **settings).build_context(history, ACTIVITIES, room)
    camping = history[2].id
    assert camping not in ids(plain) and len(ids(plain)) == 2  # two near-duplicate painting turns
    assert len(ids(diverse)) == 2 and camping in ids(diverse)  # one painting turn and the camping


@pytest.mark.parametrize("field, value, error, kind", [
    ("diversity", 1.5, "diversity must be in [0, 1], got 1.5", ValueError),
    ("diversity", -0.5, "diversity must be in [0, 1], got -0.5", ValueError),
])
def test_bad_idea_settings_name_the_value(field, value, error, kind):
    with pytest.raises(kind, match=re.escape(error)):
        HybridSettings(**{field: value})


@pytest.mark.parametrize("settings", [dict(diversity=1.0), dict(diversity=0.5, other_speakers=0.3),
                                      dict(diversity=1.0, neighbours=1, session_weight=1.0)])
def test_ideas_keep_budgets_and_the_prepared_path_agrees(conv, settings):
    policy = hybrid(**settings)
    state = policy.prepare(conv)
    rng = random.Random(26)
    for q in conv.questions:
        for position in (1, 5, len(conv)):
            for budget in [rng.randint(1, 400) for _ in range(6)]:
                plain = policy.build_context(conv.messages[:position], q.question, budget)
                assert plain == state.build_context(position, q.question, budget)
                assert plain.tokens <= budget


def test_diversity_leaves_turns_that_are_only_on_the_same_topic_in_order(conv):
    # Penalising all likeness pushed a relevant same-topic turn out for an unrelated one (the
    # support chats, issue 26): only cosine above 0.5 counts, and no two turns here reach it.
    plain, diverse = hybrid(diversity=0.0), hybrid(diversity=1.0)
    p = plain.prepare(conv).prepared
    similar = p.similarity() - np.eye(len(conv))
    assert similar.max() < 0.5
    for q in conv.questions:
        assert plain.ranking(p, len(conv), q.question)[0].tolist() == \
            diverse.ranking(diverse.prepare(conv).prepared, len(conv), q.question)[0].tolist()


def test_a_long_history_gets_the_same_similarities_without_the_full_matrix(conv):
    p = hybrid().prepare(conv).prepared
    head = np.array([5, 1, 3])
    kept = p.similarity(head)
    p.vectors = np.tile(p.vectors, (500, 1))[:4001]  # past 4,000 messages nothing is kept
    p.similar = None
    assert np.allclose(p.similarity(head), kept) and p.similar is None


def said(*turns: tuple[int, str, str]):
    """Messages of (session, speaker, text), stamped as the LoCoMo loader stamps them."""
    f = MessageFactory()
    return [f.user(f"{who}: {text}", metadata={"session": s, "speaker": who}, created_at=86400.0 * s)
            for s, who, text in turns]


def order(policy, history, question):
    return policy.ranking(policy._prepare(history).prepared, len(history), question)[0].tolist()


def test_speaker_focus_puts_the_named_speakers_turn_first():
    history = said((1, "Ann", "I enjoy the hills on Saturdays."),
                   (1, "Bob", "Ann, I love hiking on weekends, hiking is my thing."),
                   (2, "Bob", "the bus was late."))
    plain = dict(session_weight=0.0, smoothing=0.0, diversity=0.0)
    question = "What does Ann love doing on weekends?"
    assert order(hybrid(other_speakers=1.0, **plain), history, question)[0] == 1  # Bob's words
    assert order(hybrid(other_speakers=0.3, **plain), history, question)[0] == 0  # Ann's turn
    # naming both speakers, or a history without speakers, leaves the order alone
    both = "What do Ann and Bob love doing on weekends?"
    assert order(hybrid(other_speakers=0.3, **plain), history, both) == \
        order(hybrid(other_speakers=1.0, **plain), history, both)
    anonymous = sessions(*((s, text) for s, text in ((1, "I enjoy the hills on Saturdays."),
                                                     (1, "Ann, I love hiking on weekends."))))
    assert order(hybrid(other_speakers=0.3, **plain), anonymous, question) == \
        order(hybrid(other_speakers=1.0, **plain), anonymous, question)


def test_session_keys_lift_a_turn_whose_session_is_about_the_question():
    history = said((1, "Ann", "We planted the garden tomatoes in spring."),
                   (1, "Ann", "They grew tall in the garden, the tomatoes did."),
                   (1, "Ann", "I picked them on Sunday."),  # the evidence: few words of its own
                   (2, "Ann", "The shop sold me a pick for the lock on Sunday."),
                   (2, "Ann", "The radio was dull."))
    question = "When did Ann pick the garden tomatoes?"
    plain = dict(smoothing=0.0, diversity=0.0, other_speakers=1.0)
    without = order(hybrid(session_weight=0.0, **plain), history, question)
    keyed = order(hybrid(session_weight=0.6, **plain), history, question)
    assert without.index(2) > without.index(3)  # the lock's "pick ... Sunday" outranks it
    assert keyed.index(2) < keyed.index(3)  # its session (garden, tomatoes) lifts it
    # a message outside any session gets no session share: the order is the turn score's
    make = MessageFactory()
    lone = [make.user(m.content) for m in history]
    assert order(hybrid(session_weight=0.6, **plain), lone, question) == \
        order(hybrid(session_weight=0.0, **plain), lone, question)


@pytest.mark.parametrize("field, value", [("session_weight", 1.5), ("session_weight", -0.1),
                                          ("other_speakers", 2.0), ("other_speakers", "0.8")])
def test_bad_session_and_speaker_settings_name_the_value(field, value):
    with pytest.raises((ValueError, TypeError), match=re.escape(f"{field} must")):
        HybridSettings(**{field: value})


def test_the_greedy_diversity_order_is_plain_mmr():
    """``_greedy`` skips re-scoring candidates that copy no other: the order must be the one
    scoring every candidate at every step gives (ties to the earlier), on random heads."""
    from memorykit.evaluation.hybrid import _greedy

    rng = np.random.default_rng(26)
    for _ in range(500):
        m = int(rng.integers(1, 40))
        gain = np.sort(rng.choice([0.0, 0.25, 0.5, 1.0], size=m))[::-1].copy()
        like = rng.random((m, m))
        copied = np.maximum((like + like.T) / 2 - rng.choice([0.6, 0.8, 1.0]), 0.0)
        np.fill_diagonal(copied, 0.0)
        value, penalty, plain = gain.copy(), np.zeros(m), []
        for _ in range(m):
            j = int((value - penalty).argmax())
            plain.append(j)
            value[j] = -np.inf
            np.maximum(penalty, copied[j], out=penalty)
        assert list(_greedy(gain.copy(), copied)) == plain
