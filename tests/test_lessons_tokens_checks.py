"""Lesson 01's checkers (the billed-tokens build-it-yourself exercise and the budget exercise),
and its explorers drawing the student's ``billed_tokens`` beside the library's count."""

from __future__ import annotations

import math
import re

import pytest

from tests.explorers import traces_drawn

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


_aliased = count_chat_tokens


def _forgets_the_primer(messages, counter):
    return _reference_billed_tokens(messages, counter) - 3


def test_the_reference_count_passes_and_the_verdict_is_returned_not_printed(capsys):
    verdict = check_billed_tokens(_reference_billed_tokens)
    assert isinstance(verdict, Verdict) and verdict.passed, verdict
    assert capsys.readouterr().out == ""


@pytest.mark.parametrize("wrong, says", [
    (_forgets_tool_call_framing, "3 framing per call"),
    (_forgets_the_primer, "an empty request costs only the reply primer, 3 tokens, you count 0"),
    (lambda messages, counter: float(_reference_billed_tokens(messages, counter)),
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


def test_billed_tokens_checker_refuses_the_librarys_own_count():
    """Calling the function the exercise rebuilds passed every contract (issue 24)."""
    for shortcut in (count_chat_tokens, lambda messages, counter: count_chat_tokens(messages, counter),
                     lambda messages, counter: _aliased(messages, counter)):
        verdict = check_billed_tokens(shortcut)
        assert not verdict.passed and "count_chat_tokens" in verdict.reason, verdict
    assert check_billed_tokens(_reference_billed_tokens).passed


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
    assert not low and "hold only the latest 28 of the 30" in low.reason
    assert "content tokens" in low.reason
    assert not check_budget(6000) and "overflow" in check_budget(6000).reason
    assert capsys.readouterr().out == ""


def _first_30():
    from memorykit.classroom.data import default_conversation

    return [m for m in default_conversation().messages if 1 <= m.turn <= 30]


@pytest.mark.parametrize("answer, says", [
    # issue 24: the characters / 4 estimate the lesson prints above "Your turn" passed
    (round(sum(len(m.content) for m in _first_30()) / 4), "characters / 4"),
    (5168, "not the smallest"),  # all the room the window leaves: no counting needed
    (4200, "reply primer"),  # the 30 turns as one request, with count_chat_tokens
    (3908, "content tokens"),
])
def test_check_budget_wants_the_turns_billed_tokens_not_a_budget_that_happens_to_fit(answer, says):
    verdict = check_budget(answer)
    assert not verdict.passed and says in verdict.reason, verdict
    # a wrong answer is told which way to go, not the answer itself
    assert "4,197" not in str(verdict) and "4197" not in str(verdict)


@pytest.mark.parametrize("passed", ["false", 1, None, math.nan, [True]])
def test_a_verdict_refuses_a_passed_that_is_not_a_bool(passed):
    with pytest.raises(TypeError, match="passed must be a bool, got"):
        Verdict("01 budget", passed, "reason")


def test_a_numpy_bool_verdict_is_read_as_the_bool():
    import numpy as np

    assert Verdict("01 budget", np.bool_(False), "reason").passed is False


# ------------------------------------------ the student's billed_tokens in the explorer
def _reference_billed_tokens(messages, counter):
    """The notebook's reference answer to Exercise 2."""
    total = 3
    for message in messages:
        total += 3 + 1 + counter.count(message.get("content") or "")
        if "name" in message:
            total += 1 + counter.count(message["name"])
        for call in message.get("tool_calls") or ():
            function = call["function"]
            total += 3 + counter.count(function["name"]) + counter.count(function["arguments"])
    return total


@pytest.fixture(scope="module")
def messages():
    from memorykit.classroom.data import default_conversation

    return default_conversation().messages



def test_estimate_explorer_draws_the_students_billed_tokens_beside_the_librarys(messages):
    pytest.importorskip("plotly")
    from memorykit.classroom.lesson01 import EstimateExplorer

    ex = EstimateExplorer(messages, yours={"billed_tokens": _reference_billed_tokens,
                                           "forgets tool framing": _forgets_tool_call_framing})
    content = [m.content_tokens for m in messages]
    framing = [m.billed_tokens - m.content_tokens for m in messages]
    assert list(ex.trace("billed (library)").y) == framing
    assert list(ex.trace("yours: billed_tokens").y) == framing
    assert list(ex.trace("yours: billed_tokens").x) == content
    wrong = list(ex.trace("yours: forgets tool framing").y)
    tool_calls = [i for i, m in enumerate(messages) if m.tool_calls]
    assert [i for i, (a, b) in enumerate(zip(wrong, framing)) if a != b] == tool_calls
    assert all(framing[i] - wrong[i] == 3 * len(messages[i].tool_calls) for i in tool_calls)
    summary = ex.summary()
    assert summary["billed_total"] == summary["yours: billed_tokens_billed_total"] \
        == sum(m.billed_tokens for m in messages)
    assert summary["yours: billed_tokens_messages_agreeing"] == f"{len(messages)}/{len(messages)}"
    assert summary["yours: forgets tool framing_messages_agreeing"] == \
        f"{len(messages) - len(tool_calls)}/{len(messages)}"


def test_estimate_explorer_without_yours_draws_and_prints_what_it_did(messages):
    pytest.importorskip("plotly")
    from memorykit.classroom.lesson01 import EstimateExplorer

    ex = EstimateExplorer(messages)
    assert [t.name for t in ex.fig.data] == ["messages", "exact = estimate", "±20%"]
    assert list(ex.summary()) == ["chars_per_token", "messages", "mean_abs_error",
                                  "median_abs_error", "max_abs_error", "share_off_by_over_20pct",
                                  "total_exact", "total_estimate", "total_error"]


@pytest.mark.parametrize("value, text", [
    (42, "yours['int'] must be your function itself"),
    ("billed_tokens", "yours['str'] must be your function itself"),  # its name, not it
    (lambda messages: 0, "must take the arguments (messages, counter)"),
    (int, "yours['int'] must be your function itself"),
])
def test_estimate_explorer_refuses_a_yours_that_is_not_a_billing_function(messages, value, text):
    pytest.importorskip("plotly")
    from memorykit.classroom.lesson01 import EstimateExplorer

    with pytest.raises(TypeError, match=re.escape(text)):
        EstimateExplorer(messages, yours=value)


def test_a_billed_tokens_that_returns_no_int_is_named(messages):
    pytest.importorskip("plotly")
    from memorykit.classroom.lesson01 import EstimateExplorer

    with pytest.raises(TypeError, match=r"billed_tokens must return an int number of tokens, "
                                        r"got 3\.0 for the request \[\]"):
        EstimateExplorer(messages, yours=lambda messages, counter: 3.0)


def test_a_slider_move_redraws_only_the_panels_it_changes(messages):
    pytest.importorskip("plotly")
    from memorykit.classroom.lesson01 import BudgetExplorer, EstimateExplorer

    ex = EstimateExplorer(messages, yours=_reference_billed_tokens)
    before = list(ex.trace("yours: _reference_billed_tokens").y)
    touched = traces_drawn(ex)
    ex.update(chars_per_token=3.0)
    assert touched == ["messages"]  # no slider changes an exact count
    assert list(ex.trace("yours: _reference_billed_tokens").y) == before

    budget = BudgetExplorer(messages)
    touched = traces_drawn(budget)
    budget.update(memory_share=0.1)
    assert touched == ["memory", "response reserve"]  # the fixed parts and the window stay
    touched.clear()
    budget.update(context_window_k=64)
    assert "window edge" in touched and "tools" in touched


def test_the_budget_explorer_starts_at_d4s_picture_and_its_slider_reaches_it(messages):
    """Issue 24: it started at a memory share of 0.02 (2,560 tokens) below a picture of 2,000
    tokens (1.6%), a share the slider's 0.01 steps could not reach."""
    pytest.importorskip("plotly")
    from memorykit.classroom.lesson01 import BudgetExplorer, budget_picture

    picture = budget_picture(128_000, memory=2_000)
    ex = BudgetExplorer(messages)
    assert ex.summary()["memory_tokens"] == picture.memory
    assert ex.summary()["memory_pct"] == round(100 * picture.memory / picture.context_window, 1)
    slider = ex.sliders["memory_share"]
    steps = (slider.value - slider.min) / slider.step
    assert abs(steps - round(steps)) < 1e-9  # a position of the slider, not between two
    slider.value = slider.min + (round(steps) + 1) * slider.step  # one key press up ...
    slider.value = slider.min + round(steps) * slider.step  # ... and back
    assert ex.summary()["memory_tokens"] == picture.memory
