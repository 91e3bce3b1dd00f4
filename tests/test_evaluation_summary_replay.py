"""replay_summary_buffer: what it measures, and the buffers it refuses."""

from __future__ import annotations

import pytest

from memorykit.buffers.base import MessageBuffer
from memorykit.buffers.summary_buffer import SummaryBuffer
from memorykit.classroom.replays.summary_replay import replay_summary_buffer
from memorykit.classroom.scenarios.conversation import simulate_conversation


def test_replay_measures_rounds_sawtooth_and_facts():
    conv = simulate_conversation(60, seed=3)
    run = replay_summary_buffer(conv, SummaryBuffer(600, 0.8, 0.5, 2))
    assert (run.budget, run.threshold, run.target, run.min_recent) == (600, 0.8, 0.5, 2)
    assert len(run.turns) == len(run.before) == len(run.after) == len(conv.messages)
    assert run.rounds and all(r.tokens_after < r.tokens_before for r in run.rounds)
    assert run.after.max() <= 600 < run.before.max()
    assert set(run.fact_alive) == {f.id for f in conv.facts}
    for f in conv.facts:
        assert (run.fact_lost_turn[f.id] is None) == run.fact_alive[f.id]
    assert run.summarizer.startswith("extractive")


def test_replay_refuses_other_or_used_buffers():
    conv = simulate_conversation(5, seed=1)
    with pytest.raises(TypeError, match="buf must be a SummaryBuffer, got MessageBuffer"):
        replay_summary_buffer(conv, MessageBuffer(100))
    used = SummaryBuffer(2000)
    used.add(conv.messages[0])
    with pytest.raises(ValueError, match="holding 1 messages"):
        replay_summary_buffer(conv, used)
