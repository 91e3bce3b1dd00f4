"""Episodic memory (architecture B): the score by hand, consolidation, provenance."""

from __future__ import annotations

import math

import numpy as np
import pytest

from memorykit.longterm.architectures import EpisodicArchitecture
from memorykit.longterm.episodic import EpisodicMemory, EpisodicSettings
from memorykit.longterm.episodic import (
    HOUR,
    episode_scores,
    extract_keywords,
    keyword_overlap,
    query_terms,
)
from memorykit.clock import StepClock
from memorykit.messages import MessageFactory, ToolCall


def test_hand_computed_score_two_of_four_words_one_day_old():
    # 2 of 4 query words among the keywords, dt = tau = 24 h: 0.6 * 0.5 + 0.4 * e^-1.
    assert episode_scores(0.5, 24 * HOUR) == pytest.approx(0.4472, abs=5e-5)
    assert 0.6 * 0.5 + 0.4 * math.exp(-1) == pytest.approx(0.44715, abs=1e-5)


def test_memory_scores_match_the_formula():
    clock = StepClock()
    f = MessageFactory(clock=clock)
    mem = EpisodicMemory(EpisodicSettings(stm_limit=2, query_tokens="content"))
    for text in ["The locker code is 4721.", "The gym opens early.", "Trains run late.",
                 "Weather is grey.", "More filler here."]:
        mem.add(f.user(text))
    assert len(mem.episodes) == 1  # 4 > 1.5 * 2 after the 4th message
    ep = mem.episodes[0]
    assert {"locker", "code", "4721", "gym"} <= set(ep.keywords)
    # Content words only: T_q = {locker, code, gym, pool}: 3 of 4 match; 24 h after the episode ended.
    [s] = mem.score("Where is the locker code for the gym pool?", ep.end_time + 24 * HOUR)
    assert s.overlap == 0.75 and s.matched == ("code", "gym", "locker")
    assert s.score == pytest.approx(0.6 * 0.75 + 0.4 * math.exp(-1))  # 0.5972 <= 0.7
    assert not s.recalled
    assert mem.recall("Where is the locker code for the gym pool?", ep.end_time + 24 * HOUR) == []
    # The same words an hour after the episode: 0.45 + 0.4 * e^(-1/24) = 0.8337 > 0.7.
    [hit] = mem.recall("Where is the locker code for the gym pool?", ep.end_time + HOUR)
    assert hit.score == pytest.approx(0.45 + 0.4 * math.exp(-1 / 24))


def test_threshold_is_strict():
    assert EpisodicSettings().trigger == 30.0
    f = MessageFactory()
    threshold = 0.3 * 1.0 + 0.4 * math.exp(0.0)
    mem = EpisodicMemory(EpisodicSettings(stm_limit=1, alpha=0.3, beta=0.4, threshold=threshold))
    for text in ["alpha beta", "gamma"]:
        mem.add(f.user(text))
    [ep] = mem.episodes
    # overlap 1, age 0: S equals the threshold exactly, which is not above it.
    [score] = mem.score("alpha", ep.end_time)
    assert score.score == threshold and not score.recalled
    assert mem.recall("alpha", ep.end_time) == []


def test_query_terms_are_every_word_by_default_as_seed_003_defines_them():
    assert query_terms("What is the locker code at the gym?") == {
        "what", "is", "the", "locker", "code", "at", "gym"}
    assert query_terms("is it?") == {"is", "it"}
    assert query_terms("?") == frozenset()
    assert keyword_overlap(("locker",), frozenset()) == 0.0


def test_content_variant_drops_stopwords_and_short_words():
    assert query_terms("What is the locker code at the gym?", "content") == {"locker", "code", "gym"}
    assert query_terms("is it?", "content") == frozenset()
    with pytest.raises(ValueError, match="query_tokens must be one of 'all', 'content', got 'some'"):
        query_terms("x", "some")
    with pytest.raises(ValueError, match="query_tokens must be one of"):
        EpisodicSettings(query_tokens="stop")


def _refund_episode(query_tokens: str) -> EpisodicMemory:
    """One episode whose keywords are seed 003's example {refund, policy, ticket}."""
    f = MessageFactory(clock=StepClock())
    mem = EpisodicMemory(EpisodicSettings(stm_limit=1, consolidation_factor=1.0, query_tokens=query_tokens))
    mem.add(f.user("refund policy ticket"))
    mem.add(f.user("later"))
    assert mem.episodes[0].keywords == ("refund", "policy", "ticket")
    return mem


def test_refund_query_a_day_later_scores_the_document_value_by_default():
    # Seed 003: T_q = {what, refund, policy}, 2 of 3 match, dt = tau = 24 h:
    # S = 0.6 * 2/3 + 0.4 * e^-1 = 0.4 + 0.1472 = 0.5472 <= 0.7: not injected.
    mem = _refund_episode("all")
    [s] = mem.score("what refund policy", mem.episodes[0].end_time + 24 * HOUR)
    assert s.overlap == pytest.approx(2 / 3) and s.matched == ("policy", "refund")
    assert s.score == pytest.approx(0.5472, abs=5e-5) and not s.recalled


def test_refund_query_under_the_content_variant_is_injected():
    # "what" is a stop word: T_q = {refund, policy}, overlap 1: S = 0.6 + 0.1472 = 0.7472 > 0.7.
    mem = _refund_episode("content")
    [s] = mem.score("what refund policy", mem.episodes[0].end_time + 24 * HOUR)
    assert s.overlap == 1.0 and s.score == pytest.approx(0.7472, abs=5e-5) and s.recalled


def test_keywords_rank_by_frequency_and_keep_every_code():
    kw = extract_keywords(["apple apple banana cherry", "banana apple PAY-1234 and 99"], 2)
    assert kw == ("apple", "banana", "pay-1234", "99")


def test_consolidation_triggers_exactly_above_one_and_a_half_limits():
    f = MessageFactory()
    mem = EpisodicMemory(EpisodicSettings(stm_limit=10))
    mem.add(f.system("Be brief."))  # instructions never count
    for i in range(15):
        assert mem.add(f.user(f"message {i}")) is None
    assert len(mem.stm) == 15 and not mem.episodes  # 15 = 1.5 x 10: not more
    ep = mem.add(f.user("message 15"))
    assert ep is not None and len(mem.stm) == 10
    assert ep.source_message_ids == tuple(f"m{n:06d}" for n in range(2, 8))
    assert ep.participants == ("user",)
    [event] = mem.trace.summarizations()
    assert event.rule == "episodic-consolidation" and "16 messages > 1.5 x stm_limit 10" in event.reason


def test_episodes_keep_summary_sources():
    f = MessageFactory()
    a, b = f.user("first"), f.assistant("second")
    summary = f.summary("first and second", [a, b])
    mem = EpisodicMemory(EpisodicSettings(stm_limit=1, consolidation_factor=1.0))
    mem.add(summary)
    ep = mem.add(f.user("third"))
    assert ep.source_message_ids == (a.id, b.id)


def test_tool_result_is_not_left_without_its_call():
    f = MessageFactory()
    mem = EpisodicMemory(EpisodicSettings(stm_limit=2, consolidation_factor=1.0))
    mem.add(f.user("look it up"))
    call = f.assistant("checking", tool_calls=(ToolCall("call_1", "lookup"),))
    result = f.tool("result", call_id="call_1")
    mem.add(call)
    mem.add(result)  # 3 > 2: the first user message becomes an episode
    last = f.user("thanks")
    ep = mem.add(last)  # 3 > 2 again: the cut would fall on the result; it moves past it
    assert mem.stm == [last]
    assert ep.source_message_ids == (call.id, result.id)


def test_episode_scores_is_vectorized_over_a_grid():
    overlap = np.linspace(0, 1, 5)
    ages = np.array([0.0, 24 * HOUR, 48 * HOUR])
    grid = episode_scores(overlap[:, None], ages[None, :])
    assert grid.shape == (5, 3)
    assert grid[4, 0] == pytest.approx(1.0) and grid[0, 1] == pytest.approx(0.4 * math.exp(-1))


@pytest.mark.parametrize(
    "kwargs, error, text",
    [
        ({"overlap": 1.5, "age_seconds": 0}, ValueError, "overlap must be in"),
        ({"overlap": 0.5, "age_seconds": -1}, ValueError, "age_seconds must be finite and >= 0"),
        ({"overlap": 0.5, "age_seconds": 0, "tau_seconds": 0}, ValueError, "tau_seconds must be > 0"),
        ({"overlap": 0.5, "age_seconds": 0, "alpha": "x"}, TypeError, "alpha must be a number"),
    ],
)
def test_bad_score_inputs_are_named(kwargs, error, text):
    with pytest.raises(error, match=text):
        episode_scores(**kwargs)


@pytest.mark.parametrize(
    "kwargs, error, text",
    [
        ({"stm_limit": 0}, ValueError, "stm_limit must be >= 1, got 0"),
        ({"consolidation_factor": 0.5}, ValueError, "consolidation_factor must be >= 1"),
        ({"tau_hours": 0}, ValueError, "tau_hours must be > 0"),
        ({"recall_limit": -1}, ValueError, "recall_limit must be >= 0"),
        ({"max_keywords": 1.5}, TypeError, "max_keywords must be an integer"),
    ],
)
def test_bad_settings_are_named(kwargs, error, text):
    with pytest.raises(error, match=text):
        EpisodicSettings(**kwargs)


def test_architecture_injects_recalled_episode_with_provenance():
    clock = StepClock()
    f = MessageFactory(clock=clock)
    history = [f.system("Be helpful."), f.user("The locker code at the gym is 4721.")]
    for i in range(8):
        clock.advance(60)
        history.append(f.user(f"Unrelated chatter about weather number {chr(97 + i)}."))
    question = "What is the locker code at the gym?"
    # Seed 003's T_q counts all 7 words: overlap at most 3/7, S < 0.7, nothing is injected.
    seed = EpisodicArchitecture(EpisodicSettings(stm_limit=4)).build_context(history, question, 2000)
    assert not [i for i in seed.items if i.kind == "episode"]
    arch = EpisodicArchitecture(EpisodicSettings(stm_limit=4, query_tokens="content"))
    ctx = arch.build_context(history, question, 2000)
    episodes = [i for i in ctx.items if i.kind == "episode"]
    assert episodes and history[1].id in episodes[0].sources
    assert "4721" in episodes[0].content and episodes[0].score > 0.7
    assert [i.kind for i in ctx.items][0] == "message" and ctx.items[-1].kind == "query"
    assert any(r.kind == "recall" and r.chosen for r in arch.last_trace)
