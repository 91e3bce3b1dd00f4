"""Lesson 11's explorer path (memoized summarizer, counter and embedder: MemoSummarizer,
MemoCounter, MemoEmbedder) gives run_loop's results with the plain offline components."""

from __future__ import annotations

import random

import pytest

from memorykit.classroom import lesson11 as llm_app
from memorykit.classroom import lesson11_explorer as explorer_app


def _grid():
    combos = [(b, t, r) for b in range(300, 2001, 100)
              for t in (0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95) for r in range(9)]
    return [(600, 0.8, 3), (300, 0.5, 0), (2000, 0.95, 8)] + random.Random(11).sample(combos, 12)


@pytest.mark.parametrize("budget,threshold,recall_limit", _grid())
def test_explorer_loop_equals_plain_run_loop(budget, threshold, recall_limit):
    fast = explorer_app._offline_loop(budget, threshold, recall_limit, 30, 0)
    plain = llm_app.run_loop(llm_app.offline_backend(), budget=budget, threshold=threshold,
                             recall_limit=recall_limit)
    assert fast == plain


def test_explorer_summarizer_is_named_like_the_offline_one():
    backend, _, _ = explorer_app._explorer_components()
    assert backend.components() == llm_app.offline_backend().components()


@pytest.mark.parametrize("budget,threshold", [(600, 0.8), (300, 0.5), (1000, 0.95)])
def test_judged_loop_with_the_library_judge_is_the_lessons_summarizer(budget, threshold):
    """``JudgedSummarizer`` judged by ``refusal`` is ``FallbackSummarizer(OpenAISummarizer(...,
    min_overlap=0.3))``, the real-model section's summarizer, on the same replies."""
    from memorykit.classroom.lesson11 import library_judge, recorded_replies
    from memorykit.llm.backend import Backend
    from memorykit.llm.summarizer import FallbackSummarizer, OpenAISummarizer

    judged = explorer_app.judged_loop(library_judge, budget=budget, threshold=threshold)
    replies = [(c.reply, c.finish_reason) for c in recorded_replies()]
    base, embedder, counter = explorer_app._explorer_components()
    summarizer = FallbackSummarizer(OpenAISummarizer(explorer_app.InOrderReplies(replies),
                                                     min_overlap=0.3), base.summarizer)
    plain = llm_app.run_loop(Backend("offline", "t", base.chat, summarizer, base.critic,
                                     base.actor), budget=budget, threshold=threshold,
                             embedder=embedder, counter=counter)
    assert judged.loop.probes == plain.probes and judged.loop.summary() == plain.summary()
    assert [r.verdict for r in judged.replies] == [
        a.reason or "accepted" for a in summarizer.attempts]
