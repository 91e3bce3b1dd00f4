"""HybridRetrieval's ranking() and its retrieval ideas (issue 26) on tiny hand-made histories."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from memorykit.embeddings import LexicalHashingEmbedder
from memorykit.evaluation.hybrid import HybridRetrieval, HybridSettings
from memorykit.evaluation.locomo import load_locomo

FIXTURE = Path(__file__).parent / "fixtures" / "locomo_mini.json"


@pytest.fixture(scope="module")
def conv():
    return load_locomo(FIXTURE, verify=False).conversations[0]


def hybrid(**settings):
    return HybridRetrieval(HybridSettings(**settings), embedder=LexicalHashingEmbedder(256))


def ids(ctx):
    return [i for item in ctx.items for i in item.sources]


def test_ranking_is_what_the_context_is_built_from(conv):
    policy = hybrid(neighbours=0, dates=False, smoothing=0.0)
    p = policy.prepare(conv).prepared
    for q in conv.questions:
        order, score = policy.ranking(p, len(conv), q.question)
        assert sorted(order.tolist()) == list(range(len(conv))) and score.shape == (len(conv),)
        assert all(score[a] >= score[b] for a, b in zip(order[:-1], order[1:]))
        # a budget of one message's tokens (plus the primer) holds exactly the top-ranked message
        top = int(order[0])
        budget = int(p.tokens[top]) + p.primer
        assert ids(policy.build_context(conv.messages, q.question, budget))[:1] == [conv.messages[top].id]
