"""One score contract, every implementation of D0's relevance formula in the library."""

from __future__ import annotations

import math

import numpy as np
import pytest

from memorykit.classroom.contracts import run_contracts
from memorykit.classroom.contracts.entities import SCORE_CONTRACTS, agrees_with_library, library_score
from memorykit.entities.scoring import candidate_scores, components, relevance_scores

# The contract lives in the package (memorykit.classroom.contracts.entities) so that lesson 04's
# build-it-yourself exercise runs exactly these checks over a student's score.
IMPLEMENTATIONS = {
    "RelevanceWeights.score": library_score,
    "relevance_scores": lambda age, count, w: float(relevance_scores(np.array([age]),
                                                                     np.array([count]), w)[2][0]),
    "components": lambda age, count, w: components(age, count, w)[2],
    "candidate_scores": lambda age, count, w: candidate_scores([age], [count], w)[0],
}


@pytest.mark.parametrize("contract", (*SCORE_CONTRACTS, agrees_with_library()),
                         ids=lambda c: c.name[:40])
@pytest.mark.parametrize("implementation", sorted(IMPLEMENTATIONS))
def test_every_implementation_keeps_the_score_contract(implementation, contract):
    contract(IMPLEMENTATIONS[implementation])


def test_a_score_without_the_cap_fails_with_the_smallest_input():
    def uncapped(age, count, w):
        return w.w_recency * math.exp(-w.decay_per_minute * age) + w.w_frequency * count / w.frequency_cap

    verdict = run_contracts(uncapped, (*SCORE_CONTRACTS, agrees_with_library()), exercise="x")
    assert not verdict.passed and "4 of 5 contracts failed" in verdict.reason
    assert any("accesses past the cap add nothing" in d and "count=10, more=11" in d
               for d in verdict.details)


def test_a_score_that_returns_the_three_components_is_told_to_return_one_float():
    verdict = run_contracts(lambda age, count, w: w.score(age, count), SCORE_CONTRACTS,
                            exercise="x")
    assert not verdict.passed
    assert "return the score alone, one float" in verdict.details[0]
