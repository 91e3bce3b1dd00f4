"""The replay's fast path makes exactly the decisions of the straightforward loop."""

import itertools
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from memorykit.entities import (
    EntityMemory,
    ReferenceResolver,
    RelevanceMemory,
    RelevanceWeights,
    SlidingWindowMemory,
)
from memorykit.evaluation.entity_replay import replay
from memorykit.scenarios import load_scenario

replay_module = sys.modules["memorykit.evaluation.entity_replay"]
DATA = Path(__file__).resolve().parent.parent / "data" / "entities"


@pytest.fixture(scope="module")
def small():
    return load_scenario(DATA / "cms_small.jsonl")


def assert_same(a, b):
    assert a.policy == b.policy and a.keys == b.keys
    for name in ("turns", "t_minutes", "last_access_minutes", "access_count"):
        assert np.array_equal(getattr(a, name), getattr(b, name), equal_nan=True), name
    assert a.evictions == b.evictions  # key, rule, reason, score components, sizes, time, turn
    assert a.outcomes == b.outcomes
    assert a.spurious == b.spurious
    assert a.memory_stats == b.memory_stats
    assert a.summary() == b.summary()


SETTINGS = list(itertools.product(
    ("fifo", "relevance", "plain"),
    (1, 3, 8, 20),
    (None, 1.5, 5.0),
    (RelevanceWeights(), RelevanceWeights(0.5, 0.5, 0.05, 3), RelevanceWeights(0.0, 1.0, 0.0, 1)),
    (False, True),
))


@pytest.mark.parametrize("rule, max_size, ttl, weights, readd", SETTINGS)
def test_fast_path_equals_the_straightforward_loop(small, rule, max_size, ttl, weights, readd):
    cls = {"fifo": SlidingWindowMemory, "plain": EntityMemory}.get(rule)
    if cls is None:
        def factory(c):
            return RelevanceMemory(max_size, weights, clock=c, ttl_minutes=ttl)
    else:
        def factory(c):
            return cls(max_size, clock=c, ttl_minutes=ttl, weights=weights)
    fast = replay(small, factory, readd_resolved=readd, fast=True)
    slow = replay(small, factory, readd_resolved=readd, fast=False)
    assert_same(fast, slow)
    assert replay(small, factory, readd_resolved=readd).evictions == fast.evictions  # auto = fast


def test_fast_path_declines_what_it_cannot_stand_in_for(small):
    class Custom(RelevanceMemory):  # a policy of its own: only the real loop knows it
        pass

    def custom(c):
        return Custom(5, clock=c)

    with pytest.raises(ValueError, match="fast path does not apply: Custom is not"):
        replay(small, custom, fast=True)
    assert_same(replay(small, custom), replay(small, custom, fast=False))

    class Resolver(ReferenceResolver):
        pass

    with pytest.raises(ValueError, match="not the stock ReferenceResolver"):
        replay(small, lambda c: RelevanceMemory(5, clock=c), resolver=Resolver(), fast=True)

    def used(c):
        m = RelevanceMemory(5, clock=c)
        m.add(small.entities[0])
        return m

    with pytest.raises(ValueError, match="not fresh"):
        replay(small, used, fast=True)

    def strict(c):
        return RelevanceMemory(5, clock=c, max_payload_chars=3)

    with pytest.raises(ValueError, match="max_payload_chars"):
        replay(small, strict, fast=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        replay(small, strict)  # falls back to the straightforward loop, which warns
    with pytest.raises(TypeError, match="fast must be None, True or False"):
        replay(small, lambda c: RelevanceMemory(5, clock=c), fast="yes")


def test_plan_is_built_once_per_scenario_and_vocabulary(small):
    a = replay_module.replay_plan(small)
    assert replay_module.replay_plan(small) is a
    other = replay_module.replay_plan(small, ReferenceResolver({"page": "page"}))
    assert other is not a and len(other.steps) == len(a.steps) == len(small.turns)


def test_scores_only_fill_cells_in_memory(small):
    result = replay(small, lambda c: RelevanceMemory(6, clock=c))
    rec, freq, score = result.scores()
    mask = result.in_memory
    assert np.isnan(score[~mask]).all() and not np.isnan(score[mask]).any()
    w = RelevanceWeights()
    ages = result.ages_minutes()
    expected = w.w_recency * np.exp(-w.decay_per_minute * ages) + w.w_frequency * np.minimum(
        result.access_count / w.frequency_cap, 1.0)
    np.testing.assert_allclose(score[mask], expected[mask], rtol=1e-12)
