"""Each policy picks the victim its rule names, at hand-computed points."""

from __future__ import annotations

import math

import numpy as np
import pytest

from memorykit.buffers import (
    BufferWindow,
    FIFOBuffer,
    HybridBuffer,
    ImportanceBuffer,
    RecencyWeightedBuffer,
    TokenBuffer,
    effective_importance_curves,
    recency_weight,
    true_half_life_minutes,
)
from memorykit.clock import StepClock
from memorykit.messages import Message, ToolCall


def msg(mid, importance=1.0, tokens=10, role="user", minute=0.0, **kw):
    return Message(mid, role, mid, tokens, tokens + 4, importance, created_at=minute * 60, **kw)


def fill(buffer, *messages):
    for m in messages:
        buffer.add(m)
    return [m.id for m in buffer]


# Every message costs 14 billed tokens; with the 3-token primer, four fit in 59.
BUDGET = 59


def test_fifo_evicts_oldest_but_keeps_system():
    b = FIFOBuffer(max_tokens=BUDGET)
    kept = fill(b, msg("sys", role="system"), msg("a"), msg("b"), msg("c"), msg("d"))
    assert kept == ["sys", "b", "c", "d"]
    (event,) = b.trace.evictions()
    assert event.message_ids == ("a",) and event.rule == "fifo"
    assert event.tokens_before == 73 and event.tokens_after == 59
    assert "73 tokens > max_tokens 59" in event.reason


def test_importance_evicts_lowest_and_oldest_among_equals():
    b = ImportanceBuffer(max_tokens=BUDGET)
    kept = fill(b, msg("a", 0.9), msg("b", 0.2), msg("c", 0.2), msg("d", 0.5), msg("e", 0.95))
    assert kept == ["a", "c", "d", "e"]
    assert b.trace.evictions()[0].score == pytest.approx(0.2)
    fill(b, msg("f", 0.99))
    assert [m.id for m in b] == ["a", "d", "e", "f"]


def test_importance_respects_updates():
    b = ImportanceBuffer(max_tokens=BUDGET)
    fill(b, msg("a", 0.1), msg("b", 0.5), msg("c", 0.6), msg("d", 0.7))
    b.set_importance("a", 0.95)
    fill(b, msg("e", 0.9))
    assert [m.id for m in b] == ["a", "c", "d", "e"]
    assert b.get("a").importance == 0.95


def test_hybrid_evicts_oldest_below_threshold_then_falls_back_to_fifo():
    b = HybridBuffer(max_tokens=BUDGET, importance_threshold=0.5)
    fill(b, msg("a", 0.9), msg("b", 0.45), msg("c", 0.1), msg("d", 0.8), msg("e", 0.7))
    # b is older than c: among low-importance messages the oldest leaves first.
    assert [m.id for m in b] == ["a", "c", "d", "e"]
    fill(b, msg("f", 0.7))
    assert [m.id for m in b] == ["a", "d", "e", "f"]
    fill(b, msg("g", 0.7))  # nobody under 0.5 remains: FIFO fallback
    assert [m.id for m in b] == ["d", "e", "f", "g"]
    rules = [e.rule for e in b.trace.evictions()]
    assert rules == ["hybrid-below-threshold", "hybrid-below-threshold", "hybrid-fifo-fallback"]


def test_hybrid_threshold_is_strict():
    b = HybridBuffer(max_tokens=BUDGET, importance_threshold=0.5)
    fill(b, msg("a", 0.6), msg("b", 0.5), msg("c", 0.6), msg("d", 0.6), msg("e", 0.6))
    assert b.trace.evictions()[0].rule == "hybrid-fifo-fallback"
    assert b.trace.evictions()[0].message_ids == ("a",)


def test_recency_weight_formula_at_hand_computed_points():
    assert recency_weight(0.0) == pytest.approx(1.0)
    assert recency_weight(5.0) == pytest.approx(math.exp(-0.1))  # 0.904837
    assert recency_weight(50.0) == pytest.approx(math.exp(-1.0))  # 0.367879
    assert recency_weight(10.0, decay_rate=0.5, half_life_minutes=2.0) == pytest.approx(math.exp(-2.5))
    assert true_half_life_minutes() == pytest.approx(34.657359, rel=1e-6)
    assert recency_weight(true_half_life_minutes()) == pytest.approx(0.5)


def test_recency_weighted_eviction_trades_importance_for_age():
    clock = StepClock()
    b = RecencyWeightedBuffer(max_tokens=BUDGET, clock=clock)
    # At minute 100: a (0.9, age 100) -> 0.9*e^-2 = 0.1218; b (0.3, age 0) -> 0.3.
    fill(b, msg("a", 0.9, minute=0), msg("b", 0.3, minute=100), msg("c", 1.0, minute=100),
         msg("d", 1.0, minute=100))
    clock.set(100 * 60)
    fill(b, msg("e", 1.0, minute=100))
    (event,) = b.trace.evictions()
    assert event.message_ids == ("a",)
    assert event.score == pytest.approx(0.9 * math.exp(-2.0))
    assert "0.122 = 0.90 x exp(-0.1 x 100.0 min / 5)" in event.reason


def test_recency_ranking_is_time_invariant_and_matches_direct_computation():
    clock = StepClock()
    b = RecencyWeightedBuffer(max_tokens=10_000, clock=clock)
    rng = np.random.default_rng(3)
    for i in range(40):
        fill(b, msg(f"m{i}", float(rng.uniform(0.01, 1)), minute=float(i * 3)))
    for now in (120.0 * 60, 500.0 * 60):
        direct = [b.effective_importance(m, now) for m in b]
        assert np.allclose(b.effective_importances(now), direct)
        ordered = b.weighted_context(now)
        scores = [b.effective_importance(m, now) for m in ordered]
        assert scores == sorted(scores, reverse=True)


def test_effective_importance_curves_are_nan_before_creation():
    curves = effective_importance_curves([1.0, 0.5], [0.0, 10.0], [0.0, 5.0, 10.0, 15.0])
    assert np.isnan(curves[1, 0]) and np.isnan(curves[1, 1])
    assert curves[0, 1] == pytest.approx(math.exp(-0.1))
    assert curves[1, 3] == pytest.approx(0.5 * math.exp(-0.1))


def test_window_keeps_last_n_and_pins_system():
    b = BufferWindow(window_size=3)
    kept = fill(b, msg("sys", role="system"), msg("a"), msg("b"), msg("c"), msg("d"))
    assert kept == ["sys", "c", "d"]
    assert b.max_tokens is None


def test_token_buffer_defaults_follow_seed():
    b = TokenBuffer()
    assert (b.max_tokens, b.max_entries) == (8000, 100)
    for i in range(101):
        b.add(msg(f"m{i}"))
    assert len(b) == 100 and "m0" not in b


def test_tool_group_leaves_together():
    b = FIFOBuffer(max_tokens=70)
    fill(b, msg("call", role="assistant", tool_calls=(ToolCall("c1", "lookup"),)), msg("res", role="tool", tool_call_id="c1"),
         msg("u1"), msg("u2"))
    fill(b, msg("u3"))
    (event,) = b.trace.evictions()
    assert event.message_ids == ("call", "res")
    assert "left together" in event.reason


def test_clear_returns_everything_and_resets_tokens():
    b = ImportanceBuffer(max_tokens=BUDGET)
    fill(b, msg("sys", role="system"), msg("a", 0.2))
    removed = b.clear()
    assert [m.id for m in removed] == ["sys", "a"]
    assert len(b) == 0 and b.tokens == 3
    fill(b, msg("a", 0.2))
    assert [m.id for m in b] == ["a"]


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: FIFOBuffer(max_tokens=0), "max_tokens must be >= 1, got 0"),
        (lambda: FIFOBuffer(max_tokens=-5), "max_tokens must be >= 1, got -5"),
        (lambda: FIFOBuffer(max_entries=0), "max_entries must be >= 1, got 0"),
        (lambda: HybridBuffer(importance_threshold=1.5), r"importance_threshold must be in \(0, 1\], got 1.5"),
        (lambda: HybridBuffer(importance_threshold=0), r"importance_threshold must be in \(0, 1\], got 0"),
        (lambda: HybridBuffer(importance_threshold=float("nan")), "importance_threshold must be finite, got nan"),
        (lambda: RecencyWeightedBuffer(decay_rate=-0.1), "decay_rate must be >= 0, got -0.1"),
        (lambda: RecencyWeightedBuffer(half_life_minutes=0), "half_life_minutes must be > 0, got 0"),
        (lambda: BufferWindow(window_size=0), "window_size must be >= 1, got 0"),
    ],
)
def test_bad_parameters_name_the_value(make, message):
    with pytest.raises(ValueError, match=message):
        make()


@pytest.mark.parametrize(
    "make, error, message",
    [
        (lambda: FIFOBuffer(max_tokens=2.5), TypeError, "max_tokens must be an integer, got 2.5"),
        (lambda: FIFOBuffer(max_tokens="100"), TypeError, "max_tokens must be an integer, got '100'"),
        (lambda: HybridBuffer(importance_threshold="high"), TypeError, "importance_threshold must be a number"),
    ],
)
def test_bad_parameter_types_name_the_value(make, error, message):
    with pytest.raises(error, match=message):
        make()


def test_set_importance_on_unknown_id_names_it():
    b = FIFOBuffer()
    with pytest.raises(KeyError, match="'zz'"):
        b.set_importance("zz", 0.5)
    b.add(msg("a"))
    with pytest.raises(ValueError, match=r"importance must be in \[0, 1\], got 1.2"):
        b.set_importance("a", 1.2)
