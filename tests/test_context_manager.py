"""ContextManager: switch/return stack, boosting, merge arithmetic, stats."""

from __future__ import annotations

import pytest

from memorykit.buffers import ContextManager, FIFOBuffer, RecencyWeightedBuffer
from memorykit.messages import Message


def msg(mid: str, importance: float, tokens: int = 10) -> Message:
    return Message(mid, "user", mid, tokens, tokens + 4, importance)


def test_starts_in_main_with_recency_buffers():
    cm = ContextManager(max_tokens_per_context=500)
    assert cm.active_context == "main" and isinstance(cm.active, RecencyWeightedBuffer)
    assert cm.active.max_tokens == 500
    assert ContextManager(initial=None).active is None


def test_switch_boosts_last_message_of_context_left_and_return_pops():
    cm = ContextManager()
    cm.add(msg("a", 0.2))
    cm.add(msg("b", 0.4))
    cm.switch("billing")
    assert cm.stack == ["main"] and cm.active_context == "billing"
    assert cm["main"].get("b").importance == 0.9  # raised to 0.9
    assert cm["main"].get("a").importance == 0.2  # only the last one
    cm.add(msg("c", 0.95))
    cm.switch("shipping")
    assert cm["billing"].get("c").importance == 0.95  # already above 0.9: unchanged
    assert cm.stack == ["main", "billing"]
    assert cm.switch("shipping") is cm.active and cm.stack == ["main", "billing"]
    assert cm.return_to_previous() == "billing"
    assert cm.return_to_previous() == "main"
    assert cm.return_to_previous() is None and cm.active_context == "main"


def test_merge_scales_importance_and_deletes_source():
    cm = ContextManager()
    cm.add(msg("a", 0.3))
    cm.switch("side")
    cm.add(msg("x", 0.5))
    cm.add(msg("y", 1.0))
    assert cm.merge("side", "main") == []
    assert "side" not in cm and cm.active_context == "main"
    main = cm["main"]
    assert [m.id for m in main] == ["a", "x", "y"]
    assert main.get("x").importance == pytest.approx(0.35)
    assert main.get("y").importance == pytest.approx(0.7)
    assert main.get("a").importance == pytest.approx(0.9)  # boosted when we left main
    assert cm.stack == []  # main was both the stack top and the new active context


def test_merge_enforces_target_limits_and_traces_evictions():
    cm = ContextManager(100, buffer_factory=lambda n: FIFOBuffer(max_tokens=n))
    for k in range(4):
        cm.add(msg(f"m{k}", 1.0, 16))  # 3 + 4 x 20 = 83
    cm.switch("side")
    cm.add(msg("s0", 1.0, 16))
    events = cm.merge("side", "main")
    assert [e.message_ids for e in events] == [("m0",)]
    assert cm["main"].trace.evicted_ids() == ["m0"] and cm["main"].tokens == 83


@pytest.mark.parametrize(
    "source, target, match",
    [
        ("main", "main", "cannot merge a context into itself: source == target == 'main'"),
        ("nope", "main", "source must name a context, got 'nope'"),
        ("main", "nope", "target must name a context, got 'nope'"),
    ],
)
def test_merge_errors_name_the_value(source, target, match):
    cm = ContextManager()
    with pytest.raises(ValueError, match=match):
        cm.merge(source, target)


def test_stats_and_validation():
    cm = ContextManager(200)
    cm.add(msg("a", 1.0, 16))
    cm.switch("other")
    cm.add(msg("b", 1.0, 36))
    s = cm.stats()
    assert s["entries"] == 1 and s["tokens"] == 43 and s["utilization"] == pytest.approx(43 / 200)
    assert s["active_context"] == "other" and s["context_count"] == 2
    assert s["total_entries"] == 2 and s["total_tokens"] == 23 + 43
    with pytest.raises(ValueError, match="max_tokens_per_context must be >= 1, got 0"):
        ContextManager(0)
    with pytest.raises(ValueError, match="name must be a non-empty string, got ''"):
        cm.switch("")
    with pytest.raises(ValueError, match="name 'other' is already a context"):
        cm.create("other")
    with pytest.raises(RuntimeError, match="no active context"):
        ContextManager(initial=None).add(msg("z", 1.0))
