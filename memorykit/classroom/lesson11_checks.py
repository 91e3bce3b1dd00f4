"""Checkers of lesson 11 (``notebooks/11_llm_in_the_loop.ipynb``): the memory service's
settings in the loop, and the judge of a real model's summary replies the student writes.

They replay the lesson's scenario with the offline components and the recorded SmolLM2
transcript (``memorykit.classroom.lesson11``), never a live model. Each returns a ``Verdict``
(printed only with ``show=True``) naming the numbers that decided it, and refuses an answer of
the wrong kind with a ``TypeError`` / ``ValueError`` naming the value. The reply judge is
compared with ``lesson11.library_judge`` on ``lesson11.recorded_replies()``, the replies the
lesson's explorer (``memorykit.classroom.lesson11_explorer``) also judges in the loop.
"""

from __future__ import annotations

import math
from typing import Any

from memorykit.classroom.verdict import Verdict, report, require_answer_dict, require_number


LOOP_TOKEN_TARGET = 650
"""Lesson 11, exercise 2: mean prompt tokens per probe the settings must stay within."""


def _require_whole(name: str, value: Any, low: int, high: int, step: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be a whole number, got {value!r}")
    if not low <= value <= high or value % step:
        what = f"a multiple of {step} in" if step > 1 else "in"
        raise ValueError(f"{name} must be {what} [{low}, {high}] (the slider's values), "
                         f"got {value!r}")
    return value


def _loop_summary(budget: int, threshold: float, recall_limit: int) -> dict[str, Any]:
    from memorykit.classroom.lesson11 import DEFAULTS
    from memorykit.classroom.lesson11_explorer import _offline_loop

    return _offline_loop(budget, float(threshold), recall_limit, DEFAULTS["distractor_turns"],
                         DEFAULTS["seed"]).summary()


def check_recall_limit(answer: Any, *, show: bool = False) -> Verdict:
    """Lesson 11: ``{"recall_limit": r, "tokens_per_call": t}``: the smallest recall_limit that
    puts all four planted facts into the context (working-memory budget 600, summary threshold
    0.8, the lesson's 30 distractor turns) and the mean prompt tokens per call it costs there
    (the explorer's readout). The cost is asked because the limit alone is guessable: it equals
    the number of facts."""
    name = "11 recall_limit"
    answer = require_answer_dict(answer, ("recall_limit", "tokens_per_call"))
    recall_limit = _require_whole("recall_limit", answer["recall_limit"], 0, 20)
    tokens = require_number("tokens_per_call", answer["tokens_per_call"], "a number of tokens")
    mine = _loop_summary(600, 0.8, recall_limit)
    details = (f"recall_limit {recall_limit}: {mine['facts_in_context']}/4 facts in the context",)
    # A wrong limit's cost is shown; the right one's is the other half of the answer.
    costed = (f"{details[0]}, {mine['mean_tokens_per_call']} tokens per call on average",)
    if mine["facts_in_context"] < 4:
        return report(Verdict(name, False, f"only {mine['facts_in_context']} of 4 facts reach the "
                               "context: the summaries lost the others, recall more", costed), show)
    if recall_limit > 0 and _loop_summary(600, 0.8, recall_limit - 1)["facts_in_context"] == 4:
        return report(Verdict(name, False, "a smaller recall_limit also puts all 4 facts into "
                               "the context: every recalled entry costs tokens on every call, find "
                               "the smallest", costed), show)
    if abs(tokens - mine["mean_tokens_per_call"]) > 0.5:
        return report(Verdict(name, False, f"recall_limit {recall_limit} is right, but {tokens:g} "
                               "is not what it costs: read mean_tokens_per_call in the explorer's "
                               "readout at that recall_limit", details), show)
    return report(Verdict(name, True, f"recall_limit {recall_limit} is the smallest that puts all "
                           "4 facts into the context", costed), show)


def check_loop_settings(budget: Any, threshold: Any, recall_limit: Any, *,
                        show: bool = False) -> Verdict:
    """Lesson 11: settings that put all four facts into the context while the mean prompt
    stays at or under LOOP_TOKEN_TARGET tokens per call."""
    name = "11 settings"
    _require_whole("budget", budget, 300, 2000, step=100)
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)):
        raise TypeError(f"threshold must be a number (a share of the budget), got {threshold!r}")
    if math.isnan(threshold) or not 0.5 <= threshold <= 0.95:
        raise ValueError(f"threshold must be in [0.5, 0.95] (the slider's values), got "
                         f"{threshold!r}")
    _require_whole("recall_limit", recall_limit, 0, 8)
    threshold = round(float(threshold), 4)
    mine = _loop_summary(budget, threshold, recall_limit)
    details = (f"budget {budget}, threshold {threshold}, recall_limit {recall_limit}: "
               f"{mine['facts_in_context']}/4 facts in the context, "
               f"{mine['mean_tokens_per_call']} tokens per call, "
               f"{mine['summarizations']} summarizations",)
    if mine["facts_in_context"] < 4:
        return report(Verdict(name, False, f"{mine['facts_in_context']} of 4 facts reach the "
                               "context: keep more in working memory or recall more", details), show)
    if mine["mean_tokens_per_call"] > LOOP_TOKEN_TARGET:
        return report(Verdict(name, False, f"all 4 facts are there, but {mine['mean_tokens_per_call']}"
                               f" tokens per call > {LOOP_TOKEN_TARGET}: send less", details), show)
    return report(Verdict(name, True, f"all 4 facts in the context at "
                           f"{mine['mean_tokens_per_call']} <= {LOOP_TOKEN_TARGET} tokens per call",
                           details), show)


def check_reply_judge(judge: Any, *, show: bool = False) -> Verdict:
    """Lesson 11, build it yourself: ``judge(reply, finish_reason, messages, cap)`` returns why a
    model's summary reply cannot be trusted ("empty", "cut off", "too long", "off-topic") or
    None. The library's reply contract (``memorykit.classroom.contracts.llm``, the suite the library's
    ``refusal`` and ``OpenAISummarizer`` pass) runs over it, it must agree with the library on
    random replies, and on every summary the real SmolLM2 model wrote in the lesson's recording;
    it must be the student's own code, not a call to ``refusal``."""
    from memorykit.classroom.contracts import run_contracts
    from memorykit.classroom.contracts.llm import REPLY_CONTRACTS, agrees_on_recorded, agrees_with
    from memorykit.classroom.contracts.own_code import own_code
    from memorykit.classroom.lesson11 import library_judge, recorded_replies
    from memorykit.llm.summarizer import refusal

    if isinstance(judge, type) or not callable(judge):
        raise TypeError("judge must be a function (reply, finish_reason, messages, cap) -> "
                        f"reason or None (pass the function itself, not its result), got {judge!r}")
    contracts = (own_code(refusal, library_judge), *REPLY_CONTRACTS,
                 agrees_with(library_judge, "the library's refusal"),
                 agrees_on_recorded(recorded_replies(), "SmolLM2-135M"))
    return report(run_contracts(judge, contracts, exercise="11 reply judge"), show)
