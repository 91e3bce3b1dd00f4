"""The buffer policy registry: one list that lesson 02, the evaluation toolkit and the benchmark
read, so a policy registered once appears in all three (the toy policy below proves it)."""

from __future__ import annotations

import pytest

from memorykit.buffers import MessageBuffer
from memorykit.buffers.registry import (
    POLICIES,
    PolicyParam,
    PolicySpec,
    policies,
    policy,
    register,
    unregister,
)
from memorykit.trace import Trace, Victim


class LargestFirstBuffer(MessageBuffer):
    """A toy policy: the largest evictable message leaves first."""

    rule = "largest"

    def __init__(self, max_tokens=8000, max_entries=None, *, min_tokens: int = 0, **kw):
        self.min_tokens = min_tokens
        super().__init__(max_tokens, max_entries, **kw)

    def _choose_victim(self, now: float) -> Victim | None:
        candidates = [m for mid, m in self._messages.items() if self._evictable(mid)]
        if not candidates:
            return None
        big = max(candidates, key=lambda m: m.billed_tokens)
        return Victim(big.id, "largest", f"largest message, {big.billed_tokens} tokens",
                      float(big.billed_tokens))


TOY = PolicySpec("largest", LargestFirstBuffer, "largest first", ("largest",),
                 (PolicyParam("min_tokens", 0, 0, 100, 5, "min tokens"),), color="#8c564b")


@pytest.fixture
def toy():
    register(TOY)
    try:
        yield TOY
    finally:
        unregister("largest")


def test_the_seed_policies_are_registered_in_order():
    assert [s.name for s in policies("pruning")] == ["fifo", "importance", "hybrid", "recency"]
    assert {"window", "summary", "token"} <= set(POLICIES)
    assert policy("hybrid").defaults() == {"importance_threshold": 0.5}


def test_build_uses_defaults_and_base_keywords():
    trace = Trace(max_events=5)
    buffer = policy("recency").build(300, trace=trace, half_life_minutes=10)
    assert buffer.max_tokens == 300 and buffer.trace is trace
    assert buffer.decay_rate == 0.1 and buffer.half_life_minutes == 10
    assert policy("window").build(300, window_size=7).max_entries == 7


def test_bad_names_and_settings_are_refused_naming_them():
    with pytest.raises(ValueError, match="no buffer policy named 'lifo'"):
        policy("lifo")
    with pytest.raises(ValueError, match="takes no setting decay_rate"):
        policy("fifo").build(100, decay_rate=0.2)
    with pytest.raises(ValueError, match="importance_threshold must be in"):
        policy("hybrid").build(100, importance_threshold=1.5)   # the class decides
    with pytest.raises(ValueError, match="budget must be"):
        policy("fifo").build(0)
    with pytest.raises(ValueError, match="already registered"):
        register(policy("fifo"))
    with pytest.raises(ValueError, match="kind must be one of"):
        PolicySpec("x", LargestFirstBuffer, "x", ("x",), kind="other")


def test_a_registered_policy_appears_in_lesson_02(toy):
    from memorykit.classroom.data import default_conversation
    from memorykit.classroom.lesson02_checks import check_pruning_choice
    from memorykit.classroom.lesson02 import PruningExplorer, compare_policies, run_policy

    conv = default_conversation()
    run = run_policy(conv, "largest", budget=1500, min_tokens=10)
    assert run.params == {"budget": 1500, "min_tokens": 10} and set(run.rules) == {"largest"}
    assert "largest" in compare_policies(conv, budget=1500)
    explorer = PruningExplorer(conv, budget=1500)
    assert "min_tokens" in explorer.sliders
    assert explorer.trace("largest first").x is not None
    assert "largest_facts_kept" in explorer.summary()
    verdict = check_pruning_choice("largest")
    assert verdict.exercise == "02 pruning" and "largest" in verdict.reason


def test_a_registered_policy_appears_in_the_evaluation_toolkit(toy):
    from memorykit.evaluation.toolkit import toolkit_policies
    from memorykit.messages import MessageFactory

    tools = toolkit_policies()
    assert "largest" in tools
    factory = MessageFactory()
    history = [factory.message("user", "word " * n) for n in (5, 50, 5, 5)]
    context = tools["largest"].build_context(history, "question", 75)
    # FIFO would have dropped the first message; this policy drops the large second one
    assert [i.sources[0] for i in context.items] == [history[0].id, history[2].id, history[3].id]


def test_a_registered_policy_appears_in_the_benchmark(toy):
    from bench.buffers import runners

    keys = {r.key for r in runners()}
    assert {"memorykit-largest", "memorykit-largest-bounded", "buffer-only-largest"} <= keys
    assert "seed-largest" not in keys  # the seed has no such policy to compare with


def test_every_policy_joins_the_contract_suite(toy):
    import importlib

    import buffer_policies

    importlib.reload(buffer_policies)
    try:
        assert set(buffer_policies.POLICIES) == set(POLICIES)
    finally:
        unregister("largest")
        importlib.reload(buffer_policies)
        register(TOY)
