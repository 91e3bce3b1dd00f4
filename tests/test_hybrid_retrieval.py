"""HybridRetrieval on the hand-made LoCoMo fixture, with a lexical embedder (no model needed)."""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
import pytest

from memorykit.embeddings import LexicalHashingEmbedder
from memorykit.evaluation.baselines import BM25Retrieval
from memorykit.evaluation.harness import evaluate
from memorykit.evaluation.locomo import load_locomo
from memorykit.evaluation.hybrid import HybridRetrieval, HybridSettings, make_hybrid

FIXTURE = Path(__file__).parent / "fixtures" / "locomo_mini.json"


@pytest.fixture(scope="module")
def conv():
    return load_locomo(FIXTURE, verify=False).conversations[0]


def hybrid(**settings):
    return HybridRetrieval(HybridSettings(**settings), embedder=LexicalHashingEmbedder(256))


def ids(ctx):
    return [i for item in ctx.items for i in item.sources]


def test_session_headers_carry_the_date_and_count_against_the_budget(conv):
    # The fixture dates session 2 "10:37 am on 27 June, 2023"; the loader stamps it on its turns.
    ctx = hybrid(neighbours=0).build_context(conv.messages, "When did Caroline adopt Biscuit?", 60)
    headers = [item for item in ctx.items if item.kind == "date"]
    assert ids(ctx) == ["D2:1", "D2:2"]  # one header for the two turns of session 2
    assert [h.content for h in headers] == ["27 June 2023"]  # the day alone: cheapest (issue 26)
    assert ctx.items[0] is headers[0] and headers[0].sources == () and headers[0].tokens > 0
    assert ctx.tokens == sum(i.tokens for i in ctx.items) + ctx.chat_format.reply_primer <= 60
    plain = hybrid(neighbours=0, dates=False).build_context(conv.messages, "When did Caroline adopt Biscuit?", 60)
    assert all(item.kind == "message" for item in plain.items)
    assert ids(plain)[0] == "D2:1" and plain.tokens <= 60


def test_neighbours_stay_in_the_hits_session(conv):
    query = "How is the job search going?"  # D10:1, first of its session
    one = hybrid(neighbours=1, dates=False).build_context(conv.messages, query, 40)
    assert ids(one) == ["D10:1", "D10:2"]  # D2:3 sits just before D10:1 but in session 2
    none = hybrid(neighbours=0, smoothing=0.0, dates=False).build_context(conv.messages, query, 20)
    assert ids(none) == ["D10:1"]


def test_smoothing_lifts_the_reply_to_a_matching_turn(conv):
    # "breeder" is only in D2:3; D2:2 asked the question it answers.
    query = "Which breeder?"
    alone = dict(neighbours=0, dates=False, session_weight=0.0, other_speakers=1.0)
    flat = hybrid(lexical_weight=1.0, smoothing=0.0, **alone)
    smooth = hybrid(lexical_weight=1.0, smoothing=1.0, **alone)
    p = flat.prepare(conv).prepared
    s0, s1 = flat.scores(p, 9, query), smooth.scores(p, 9, query)
    at = {m.id: i for i, m in enumerate(conv.messages)}
    assert s0[at["D2:2"]] == 0 and s1[at["D2:2"]] == pytest.approx(0.5)  # mean of D2:1 (0), D2:3 (1)
    assert s1[at["D2:3"]] == pytest.approx(1.0)  # its only same-session neighbour, D2:2, scores 0
    assert s1[at["D10:1"]] == 0  # D2:3 is its neighbour in the list, not in its session


def test_lexical_weight_one_ranks_as_bm25(conv):
    h = hybrid(lexical_weight=1.0, smoothing=0.0, neighbours=0, dates=False, session_weight=0.0,
               other_speakers=1.0)
    p = h.prepare(conv).prepared
    for q in conv.questions:
        bm25 = np.asarray(BM25Retrieval().scores(p, len(conv), q.question), dtype=float)
        expected = bm25 / bm25.max() if bm25.max() > 0 else bm25
        assert np.allclose(h.scores(p, len(conv), q.question), expected)


def test_prepared_path_equals_plain_path_and_budgets_hold(conv):
    for policy in (hybrid(), hybrid(neighbours=2, lexical_weight=0.2)):
        state = policy.prepare(conv)
        for q in conv.questions:
            for position in (0, 3, 7, len(conv)):
                if position <= len(conv):
                    for budget in (4, 30, 80, 400):
                        plain = policy.build_context(conv.messages[:position], q.question, budget)
                        fast = state.build_context(position, q.question, budget)
                        assert plain == fast
                        assert fast.tokens <= budget


def test_recall_on_the_fixture_at_a_roomy_budget(conv):
    result = evaluate(hybrid(), conv, 400, progress=False)
    assert result.summary()["recall"] == 1.0


@pytest.mark.parametrize("field, value, error", [
    ("lexical_weight", 1.5, "lexical_weight must be in [0, 1], got 1.5"),
    ("smoothing", -0.1, "smoothing must be in [0, 1], got -0.1"),
    ("smoothing", 2, "smoothing must be in [0, 1], got 2.0"),
    ("k1", -1.0, "k1 must be >= 0, got -1.0"),
    ("b", 1.5, "b must be in [0, 1], got 1.5"),
    ("neighbours", -1, "neighbours must be >= 0, got -1"),
])
def test_bad_settings_name_the_value(field, value, error):
    with pytest.raises(ValueError, match=error.replace("[", r"\[").replace("]", r"\]")):
        HybridSettings(**{field: value})


def test_bad_analyzer_and_embedder():
    with pytest.raises(ValueError, match="analyzer must be one of 'stemmed', 'plain', got 'x'"):
        HybridRetrieval(HybridSettings(analyzer="x"))
    with pytest.raises(TypeError, match="embedder must have an embed"):
        HybridRetrieval(embedder=3)  # type: ignore[arg-type]


def test_factory_pickles_for_process_pools():
    policy = pickle.loads(pickle.dumps(make_hybrid(0.3, 2)))
    assert policy.settings.lexical_weight == 0.3 and policy.settings.neighbours == 2
    assert policy.embedder is None  # the shared MiniLM, loaded in the worker
