"""ContextBudget's overflow handling and lesson 01's picture and explorer built on it."""

import pytest

from memorykit.classroom.data import default_conversation
from memorykit.classroom.lesson01 import BudgetExplorer, budget_picture
from memorykit.tokens import ContextBudget


def test_a_strict_budget_refuses_to_overflow_and_a_loose_one_says_it_does():
    with pytest.raises(ValueError, match="5500 tokens, more than context_window=5000"):
        ContextBudget(5_000, memory=500)
    loose = ContextBudget(5_000, memory=500, strict=False)
    assert (loose.fits, loose.response_reserve) == (False, -500)
    assert loose.shares()["response reserve"] == 0
    assert ContextBudget().fits and ContextBudget().response_reserve == 121_000


def test_memory_share_is_rounded_to_whole_tokens_and_checked():
    assert ContextBudget.with_memory_share(128_000, 0.02).memory == 2_560
    for bad in (-0.1, 1.5):
        with pytest.raises(ValueError, match=f"memory_share must be in \\[0, 1\\], got {bad}"):
            ContextBudget.with_memory_share(128_000, bad)
    with pytest.raises(TypeError, match="strict must be a bool"):
        ContextBudget(strict="no")


def test_budget_picture_takes_exactly_one_memory_form():
    assert budget_picture(128_000, memory=2_000) == ContextBudget(strict=False)
    with pytest.raises(ValueError, match="exactly one of memory or memory_share"):
        budget_picture(128_000, memory=10, memory_share=0.1)


def test_budget_explorer_draws_each_part_by_name_and_shows_an_overflow():
    ex = BudgetExplorer(default_conversation().messages, context_window_k=8, memory_share=0.5)
    assert ex.summary()["fits"] is False
    assert list(ex.trace("memory").x) == [4_000]
    assert list(ex.trace("response reserve").x) == [0]
    assert list(ex.trace("window edge").x) == [8_000, 8_000]
    with pytest.raises(TypeError, match="unknown setting"):
        BudgetExplorer([], window=3)
