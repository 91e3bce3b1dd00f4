"""Lesson 11's explorer path (memoized summarizer, counter and embedder: MemoSummarizer,
MemoCounter, MemoEmbedder) gives run_loop's results with the plain offline components."""

from __future__ import annotations

import random

import pytest

from memorykit.classroom import lesson11 as llm_app


def _grid():
    combos = [(b, t, r) for b in range(300, 2001, 100)
              for t in (0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95) for r in range(9)]
    return [(600, 0.8, 3), (300, 0.5, 0), (2000, 0.95, 8)] + random.Random(11).sample(combos, 12)


@pytest.mark.parametrize("budget,threshold,recall_limit", _grid())
def test_explorer_loop_equals_plain_run_loop(budget, threshold, recall_limit):
    fast = llm_app._offline_loop(budget, threshold, recall_limit, 30, 0)
    plain = llm_app.run_loop(llm_app.offline_backend(), budget=budget, threshold=threshold,
                             recall_limit=recall_limit)
    assert fast == plain


def test_explorer_summarizer_is_named_like_the_offline_one():
    backend, _, _ = llm_app._explorer_components()
    assert backend.components() == llm_app.offline_backend().components()
