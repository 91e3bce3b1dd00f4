"""Lesson 01's checkers: the billed-tokens build-it-yourself exercise and the budget exercise."""

from __future__ import annotations

import math

import pytest

from memorykit.classroom.verdict import Verdict
from memorykit.classroom.lesson01_checks import check_billed_tokens, check_budget
from memorykit.tokens import count_chat_tokens


def _forgets_tool_call_framing(messages, counter):
    total = 3
    for m in messages:
        total += 4 + counter.count(m.get("content") or "")
        if "name" in m:
            total += 1 + counter.count(m["name"])
        for call in m.get("tool_calls") or ():
            total += counter.count(call["function"]["name"])
            total += counter.count(call["function"]["arguments"])
    return total


def _forgets_the_primer(messages, counter):
    return count_chat_tokens(messages, counter) - 3


def test_the_library_count_passes_and_the_verdict_is_returned_not_printed(capsys):
    verdict = check_billed_tokens(count_chat_tokens)
    assert isinstance(verdict, Verdict) and verdict.passed, verdict
    assert capsys.readouterr().out == ""


@pytest.mark.parametrize("wrong, says", [
    (_forgets_tool_call_framing, "3 framing per call"),
    (_forgets_the_primer, "an empty request costs only the reply primer, 3 tokens, you count 0"),
    (lambda messages, counter: float(count_chat_tokens(messages, counter)),
     "the count must be an int number of tokens"),
])
def test_wrong_counts_fail_saying_what_to_change(wrong, says):
    verdict = check_billed_tokens(wrong)
    assert not verdict.passed
    assert says in str(verdict)


def test_unfinished_answer_says_to_replace_the_placeholder():
    def unfinished(messages, counter):
        raise NotImplementedError()

    assert "NotImplementedError" in str(check_billed_tokens(unfinished))


@pytest.mark.parametrize("value", [42, "count_chat_tokens", None, int])
def test_billed_tokens_checker_refuses_a_non_function(value):
    with pytest.raises(TypeError, match="billed_tokens must be a function"):
        check_billed_tokens(value)


@pytest.mark.parametrize("value, error, text", [
    (4500.5, TypeError, "budget must be an int number of tokens, got 4500.5"),
    (True, TypeError, "budget must be an int number of tokens, got True"),
    (math.nan, TypeError, "budget must be an int number of tokens, got nan"),
    ("4500", TypeError, "budget must be an int number of tokens, got '4500'"),
    (-1, ValueError, "budget must be a number of tokens >= 0, got -1"),
])
def test_check_budget_refuses_nonsense_naming_it(value, error, text):
    with pytest.raises(error, match=text.replace("(", r"\(").replace(")", r"\)")):
        check_budget(value)


def test_check_budget_verdicts(capsys):
    assert check_budget(4197).passed
    low = check_budget(3908)
    assert not low and "289 more" in low.reason
    assert not check_budget(6000) and "overflow" in check_budget(6000).reason
    assert capsys.readouterr().out == ""


@pytest.mark.parametrize("passed", ["false", 1, None, math.nan, [True]])
def test_a_verdict_refuses_a_passed_that_is_not_a_bool(passed):
    with pytest.raises(TypeError, match="passed must be a bool, got"):
        Verdict("01 budget", passed, "reason")


def test_a_numpy_bool_verdict_is_read_as_the_bool():
    import numpy as np

    assert Verdict("01 budget", np.bool_(False), "reason").passed is False
