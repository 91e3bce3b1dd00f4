"""Entity working memory: seed 000's formula, eviction records, TTL, sliding window, bad input."""

import dataclasses
import math
import warnings

import numpy as np
import pytest

from memorykit.clock import StepClock
from memorykit.entities import (
    Entity,
    EntityMemory,
    LargePayloadWarning,
    RelevanceMemory,
    RelevanceWeights,
    SEED_TTL_MINUTES,
    SlidingWindowMemory,
    entity_key,
    parse_key,
    relevance_scores,
)
from memorykit.entities.scoring import candidate_scores, components


def page(i, label=""):
    return Entity("page", i, label or f"Page {i}")


# ------------------------------------------------------------------ the formula
# D0's formula at hand-computed points moved to memorykit/classroom/contracts/entities.py (the score
# contract, run over every implementation in tests/test_entity_score_contract.py).


def test_hand_value_is_the_documented_number():
    assert RelevanceWeights().score(10, 5)[2] == pytest.approx(0.42073, abs=1e-5)


def test_vectorized_scores_match_scalar_and_propagate_nan():
    ages = np.array([[0.0, 10.0], [np.nan, 30.0]])
    counts = np.array([[0.0, 5.0], [np.nan, 1.0]])
    rec, freq, score = relevance_scores(ages, counts)
    assert score.shape == (2, 2)
    assert score[0, 1] == pytest.approx(0.6 * math.exp(-1) + 0.2)
    assert np.isnan(score[1, 0])


@pytest.mark.parametrize("weights", [RelevanceWeights(), RelevanceWeights(0.3, 0.9, 0.45, 3),
                                     RelevanceWeights(1.0, 0.0, 0.0, 1)])
def test_plain_float_scores_are_the_vectorized_formula(weights):
    rng = np.random.default_rng(4)
    ages, counts = rng.uniform(0, 90, 50), rng.integers(0, 25, 50).astype(float)
    rec, freq, score = relevance_scores(ages, counts, weights)
    np.testing.assert_allclose(candidate_scores(list(ages), list(counts), weights), score, rtol=1e-15)
    one = np.array([components(a, c, weights) for a, c in zip(ages, counts)])
    np.testing.assert_allclose(one, np.stack([rec, freq, score], axis=1), rtol=1e-15)


# ------------------------------------------------------------------- eviction
def test_relevance_evicts_lowest_score_and_record_carries_components():
    clock = StepClock()
    mem = RelevanceMemory(3, clock=clock, ttl_minutes=None)  # page 2 idles 6 min, past the TTL
    mem.add(page(1))
    clock.advance_minutes(1)
    mem.add(page(2))
    clock.advance_minutes(1)
    mem.add(page(3))
    for _ in range(4):
        mem.get("page:1")  # page 1: oldest insertion but accessed often
    clock.advance_minutes(5)
    events = mem.add(page(4))
    assert [e.key for e in events] == ["page:2"]
    ev = events[0]
    assert ev.rule == "relevance"
    # page 2: last access (its arrival) 6 minutes ago, no access since.
    assert ev.age_minutes == pytest.approx(6.0)
    assert ev.recency == pytest.approx(math.exp(-0.6))
    assert ev.frequency == 0.0
    assert ev.score == pytest.approx(0.6 * math.exp(-0.6))
    assert ev.access_count == 0 and ev.size_before == 4 and ev.size_after == 3
    assert "lowest relevance" in ev.reason and "next lowest page:3" in ev.reason
    assert mem.evictions() == [ev]
    assert mem.trace.records()[0]["kind"] == "entity_eviction"


def test_fifo_evicts_oldest_insertion_even_when_it_scores_highest():
    clock = StepClock()
    mem = SlidingWindowMemory(2, clock=clock)
    mem.add(page(1))
    mem.add(page(2))
    for _ in range(10):
        mem.get("page:1")
    (ev,) = mem.add(page(3))
    assert ev.key == "page:1" and ev.rule == "fifo"
    assert ev.access_count == 10 and ev.frequency == 1.0 and ev.score == pytest.approx(1.0)
    assert "ranks 2 of 2 from the bottom" in ev.reason


def test_sliding_window_readd_refreshes():
    mem = SlidingWindowMemory(2, clock=StepClock())
    mem.add(page(1))
    mem.add(page(2))
    mem.add(page(1, "renamed"))  # refresh: page 1 becomes the newest
    (ev,) = mem.add(page(3))
    assert ev.key == "page:2"
    assert mem.keys() == ("page:1", "page:3")
    assert mem.peek("page:1").entity.label == "renamed"
    assert mem.peek("page:1").access_count == 1  # the re-add is an access, the arrival was not


def test_get_counts_accesses_and_misses():
    clock = StepClock()
    mem = EntityMemory(5, clock=clock)
    mem.add(page(1))
    clock.advance_minutes(2)
    assert mem.get("page:1") == page(1)
    assert mem.get("page:9") is None
    state = mem.peek("page:1")
    assert state.access_count == 1 and state.last_access == 120.0
    assert mem.stats()["hits"] == 1 and mem.stats()["misses"] == 1


def test_accounting_reads_without_an_access():
    clock = StepClock()
    mem = EntityMemory(5, clock=clock)
    mem.add(page(1))
    clock.advance_minutes(1)
    mem.get("page:1")
    assert mem.accounting("page:1") == (60.0, 1) and mem.accounting("page:9") is None
    assert mem.stats()["hits"] == 1 and mem.stats()["misses"] == 0  # reading is not a lookup


def test_watched_changes_name_every_entity_whose_accounting_moved():
    clock = StepClock()
    mem = EntityMemory(2, clock=clock, ttl_minutes=1)
    mem.add(page(1))
    changed = mem.watch_changes()
    assert changed == set() and mem.watch_changes() is changed
    mem.add(page(2))
    mem.get("page:1")
    mem.get("page:9")  # a miss changes nothing
    assert changed == {"page:1", "page:2"}
    changed.clear()
    mem.add(page(3))  # page 1, added first, leaves
    assert changed == {"page:1", "page:3"}
    changed.clear()
    clock.advance_minutes(2)
    assert mem.get("page:2") is None  # expired on lookup
    assert changed == {"page:2"}
    mem.clear()
    assert changed == {"page:2", "page:3"}


def test_just_added_entity_is_never_its_own_victim():
    clock = StepClock()
    mem = RelevanceMemory(1, clock=clock)
    mem.add(page(1))
    for _ in range(20):
        mem.get("page:1")
    (ev,) = mem.add(page(2))  # page 2 scores 0.64 < page 1's 1.0, yet page 1 leaves
    assert ev.key == "page:1" and "page:2" in mem


def test_recent_orders_by_last_access_and_filters_type():
    clock = StepClock()
    mem = EntityMemory(10, clock=clock)
    mem.add(page(1))
    clock.advance(1)
    mem.add(Entity("task", "T-1", "Fix"))
    clock.advance(1)
    mem.add(page(2))
    clock.advance(1)
    mem.get("page:1")
    assert [e.key for e in mem.recent()] == ["page:1", "page:2", "task:T-1"]
    assert [e.key for e in mem.recent("page", n=1)] == ["page:1"]


# ------------------------------------------------------------------------ TTL
def test_ttl_boundary_is_strict():
    """Idle exactly ttl: kept; idle a moment longer: expired (rule 'ttl')."""
    clock = StepClock()
    mem = EntityMemory(5, ttl_minutes=5, clock=clock)
    mem.add(page(1))
    clock.advance_minutes(5)
    assert mem.expire() == []
    assert mem.get("page:1") is not None  # the get refreshes last access
    clock.advance_minutes(5)
    clock.advance(0.001)
    (ev,) = mem.expire()
    assert ev.rule == "ttl" and ev.key == "page:1" and "ttl 5 min" in ev.reason
    assert len(mem) == 0 and mem.stats()["expirations"] == 1 and mem.stats()["evictions"] == 0


def test_get_of_expired_entity_is_a_miss_and_add_sweeps():
    clock = StepClock()
    mem = EntityMemory(5, ttl_minutes=5, clock=clock)
    mem.add(page(1))
    mem.add(page(2))
    clock.advance_minutes(6)
    assert mem.get("page:1") is None
    events = mem.add(page(3))
    assert [e.key for e in events] == ["page:2"]
    assert mem.keys() == ("page:3",)


# ------------------------------------------------------------- records, payload
def test_key_and_payload_are_computed_with_the_record():
    e = Entity("page", 42, "Home", {"status": "draft"})
    assert e.key == "page:42" and e.payload_chars == len("Home") + len("status") + len("draft")
    renamed = dataclasses.replace(e, id=7, label="Pricing page")
    assert renamed.key == "page:7" and renamed.payload_chars == len("Pricing page") + 11
    assert e == Entity("page", "42", "Home", {"status": "draft"}) and "key" not in repr(e)


def test_keys_and_ids():
    assert entity_key("page", 42) == "page:42"
    assert Entity("page", 42) == Entity("page", "42")
    assert parse_key("task:T-1") == ("task", "T-1")
    assert Entity.from_key("user:dana", "Dana").label == "Dana"


def test_large_payload_warns_or_refuses():
    big = Entity("page", 42, "Home", {"content": "<html>" + "x" * 10_000})
    mem = EntityMemory(5, clock=StepClock())
    with pytest.warns(LargePayloadWarning, match="page:42 carries 10"):
        mem.add(big)
    strict = EntityMemory(5, clock=StepClock(), on_large_payload="refuse")
    with pytest.raises(ValueError, match="max_payload_chars=256"):
        strict.add(big)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        EntityMemory(5, clock=StepClock()).add(Entity("page", 42, "Home", {"status": "draft"}))


# ----------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    "make, exc, match",
    [
        (lambda: Entity("page", ""), ValueError, "entity id must be non-empty, got ''"),
        (lambda: Entity("page", "  "), ValueError, "non-empty"),
        (lambda: Entity("", 1), ValueError, "entity type"),
        (lambda: Entity("pa:ge", 1), ValueError, "'pa:ge'"),
        (lambda: parse_key("page42"), ValueError, "'page42'"),
        (lambda: RelevanceWeights(w_recency=-0.1), ValueError, "w_recency must be >= 0, got -0.1"),
        (lambda: RelevanceWeights(w_frequency=-1), ValueError, "w_frequency must be >= 0, got -1"),
        (lambda: RelevanceWeights(0, 0), ValueError, "w_recency=0 \\+ w_frequency=0"),
        (lambda: RelevanceWeights(decay_per_minute=-0.1), ValueError, "decay_per_minute"),
        (lambda: RelevanceWeights(frequency_cap=0), ValueError, "frequency_cap must be > 0, got 0"),
        (lambda: EntityMemory(0), ValueError, "max_size must be >= 1, got 0"),
        (lambda: RelevanceMemory(-3), ValueError, "max_size must be >= 1, got -3"),
        (lambda: EntityMemory(5, ttl_minutes=0), ValueError, "ttl_minutes must be > 0, got 0"),
        (lambda: EntityMemory(5, ttl_minutes=-5), ValueError, "ttl_minutes must be > 0, got -5"),
        (lambda: EntityMemory(5, on_large_payload="shout"), ValueError, "'shout'"),
        (lambda: relevance_scores(np.array([-1.0]), np.array([1.0])), ValueError, "ages_minutes"),
    ],
)
def test_bad_input_names_the_value(make, exc, match):
    with pytest.raises(exc, match=match):
        make()


def test_add_requires_an_entity():
    with pytest.raises(TypeError, match="entity must be an Entity"):
        EntityMemory(5, clock=StepClock()).add({"type": "page", "id": 1})


# ------------------------------------------------------ seed 000 at its own values
def test_new_entity_scores_the_seed_value_at_age_zero():
    # Arrival is not an access: 0.6 * exp(-0.1 * 0) + 0.4 * min(0 / 10, 1) = 0.60.
    mem = RelevanceMemory(5, clock=StepClock())
    mem.add(page(1))
    table = mem.score_table()
    assert mem.peek("page:1").access_count == 0
    assert table["access_count"].tolist() == [0] and float(table["score"][0]) == pytest.approx(0.60)
    mem.get("page:1")
    assert float(mem.score_table()["score"][0]) == pytest.approx(0.64)  # 0.6 + 0.4 * 1/10


def test_count_arrival_variant_scores_a_new_entity_as_one_access():
    mem = RelevanceMemory(5, clock=StepClock(), count_arrival=True)
    mem.add(page(1))
    assert mem.peek("page:1").access_count == 1
    assert float(mem.score_table()["score"][0]) == pytest.approx(0.64)
    with pytest.raises(TypeError, match="count_arrival must be a bool, got 1"):
        RelevanceMemory(5, count_arrival=1)


def test_ttl_is_the_seed_session_timeout_by_default():
    clock = StepClock()
    mem = EntityMemory(clock=clock)
    assert mem.ttl_minutes == SEED_TTL_MINUTES == 5.0
    mem.add(page(1))
    clock.advance_minutes(5)
    assert mem.get("page:1") == page(1)  # idle exactly 5 min: still remembered
    clock.advance_minutes(5.5)
    assert mem.get("page:1") is None  # idle 5.5 min > 5: expired
    [ev] = mem.evictions()
    assert ev.rule == "ttl" and ev.age_minutes == pytest.approx(5.5)
    off = EntityMemory(clock=clock, ttl_minutes=None)
    off.add(page(2))
    clock.advance_minutes(60)
    assert off.get("page:2") == page(2)
