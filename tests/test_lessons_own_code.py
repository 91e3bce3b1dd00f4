"""The build-it-yourself checkers of lessons 08, 10 and 11 refuse the library's own function
and any wrapper around it (issue 24: each passed every contract with no work done), while a
student's function that merely uses other library helpers is graded on its contracts."""

from __future__ import annotations

import functools

import pytest

import memorykit
import memorykit.longterm.semantic as semantic
from memorykit.classroom.contracts import run_contracts
from memorykit.classroom.contracts.own_code import own_code, reaches as _reaches
from memorykit.longterm.semantic import select_recalled as library


def rebuilt(scores, threshold, limit):
    above = [i for i, s in enumerate(scores) if s > threshold]
    return sorted(above, key=lambda i: -scores[i])[:limit]


def through_a_global(scores, threshold, limit):
    return library(scores, threshold, limit)


def through_its_module(scores, threshold, limit):
    return semantic.select_recalled(scores, threshold, limit)


def through_the_package(scores, threshold, limit):
    return memorykit.longterm.semantic.select_recalled(scores, threshold, limit)


def imported_inside(scores, threshold, limit):
    from memorykit.longterm.semantic import select_recalled as rule

    return rule(scores, threshold, limit)


def in_an_inner_lambda(scores, threshold, limit):
    return (lambda: library(scores, threshold, limit))()


def _closure():
    held = library

    def rule(scores, threshold, limit):
        return held(scores, threshold, limit)
    return rule


def uses_another_helper(scores, threshold, limit):
    from memorykit.longterm.semantic import split_units  # noqa: F401  (not the rule)

    return rebuilt(scores, threshold, limit)


def test_every_way_of_handing_the_work_to_the_library_is_seen():
    handed_over = (library, through_a_global, through_its_module, through_the_package,
                   imported_inside, in_an_inner_lambda, _closure(), functools.partial(library))
    assert [_reaches(f, library) for f in handed_over] == [True] * len(handed_over)
    assert not _reaches(rebuilt, library) and not _reaches(uses_another_helper, library)


def test_own_code_is_a_contract_naming_the_library_function():
    contract = own_code(library)
    assert contract.name == "your own code, not a call to the library's select_recalled"
    assert run_contracts(rebuilt, (contract,), exercise="t")
    v = run_contracts(through_its_module, (contract,), exercise="t")
    assert not v and "hands the work to the library's select_recalled" in v.details[0]


def test_a_probe_sees_a_library_method_reached_through_an_argument():
    """``weights.score(...)`` names no global: only running it shows the library's score ran."""
    from memorykit.classroom.contracts.own_code import own_code as shared
    from memorykit.entities.scoring import RelevanceWeights

    def through_the_argument(age, mentions, weights):
        return weights.score(age, mentions)

    def by_hand(age, mentions, weights):
        return 0.5 * age + mentions

    probe = lambda f: f(3.0, 2, RelevanceWeights())  # noqa: E731
    assert shared(RelevanceWeights.score).check(through_the_argument) is None  # reads only
    with pytest.raises(AssertionError, match="hands the work to the library's RelevanceWeights.score"):
        shared(RelevanceWeights.score, probe=probe).check(through_the_argument)
    assert shared(RelevanceWeights.score, probe=probe).check(by_hand) is None
    with pytest.raises(ValueError, match="at least one library function"):
        shared()
