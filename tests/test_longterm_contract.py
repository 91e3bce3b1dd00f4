"""The long-term memory contracts (memorykit.classroom.contracts.longterm) over the library's own code.

The contracts live in the package so that lessons 09 and 10's build-it-yourself exercises run
exactly these checks over a student's episodic score and recall rule.
"""

from __future__ import annotations

import pytest

from memorykit.classroom.contracts import run_contracts
from memorykit.classroom.contracts.longterm import (
    EPISODIC_SCORE_CONTRACTS,
    RECALL_RULE_CONTRACTS,
    agrees_with_library_rule,
    agrees_with_library_score,
    library_episodic_score,
)
from memorykit.longterm.semantic import select_recalled


@pytest.mark.parametrize("contract", [*EPISODIC_SCORE_CONTRACTS, agrees_with_library_score()],
                         ids=lambda c: c.name[:40])
def test_the_library_score_keeps_the_episodic_score_contract(contract):
    contract(library_episodic_score)


@pytest.mark.parametrize("contract", [*RECALL_RULE_CONTRACTS, agrees_with_library_rule()],
                         ids=lambda c: c.name[:40])
def test_the_library_recall_rule_keeps_the_recall_contract(contract):
    contract(select_recalled)


def test_a_score_rising_with_age_fails_with_the_smallest_input():
    import math

    def grows(keywords, query_words, age_hours, alpha=0.6, beta=0.4, tau_hours=24.0):
        overlap = len(set(keywords) & set(query_words)) / len(query_words) if query_words else 0.0
        return alpha * overlap + beta * (1 - math.exp(-age_hours / tau_hours))

    verdict = run_contracts(grows, EPISODIC_SCORE_CONTRACTS, exercise="grows")
    assert not verdict.passed
    assert any(d.startswith("an older episode never scores higher") and "smallest failing input"
               in d for d in verdict.details), str(verdict)


def test_a_rule_ignoring_the_limit_breaks_the_budget():
    verdict = run_contracts(lambda scores, threshold, limit: [i for i, s in enumerate(scores)
                                                             if s > threshold],
                            RECALL_RULE_CONTRACTS, exercise="no limit")
    assert not verdict.passed and "never more than limit" in verdict.details[0]


def test_select_recalled_keeps_order_among_ties_and_refuses_nonsense():
    assert select_recalled([0.7, 0.9, 0.7, 0.65, 0.8], 0.65, 3) == [1, 4, 0]
    assert select_recalled([0.7, 0.9], 0.65, 0) == []
    with pytest.raises(TypeError, match="limit must be an integer, got 2.0"):
        select_recalled([0.7], 0.5, 2.0)
    with pytest.raises(ValueError, match="threshold must be finite, got nan"):
        select_recalled([0.7], float("nan"), 2)
    with pytest.raises(TypeError, match="scores\\[\\] must be a number, got '0.7'"):
        select_recalled(["0.7"], 0.5, 2)
