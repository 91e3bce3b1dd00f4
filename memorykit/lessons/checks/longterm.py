"""Checkers of lesson 11: the memory service in the loop (lessons 09-10's are in
``memorykit.lessons.checks.recall``).

Taught in ``notebooks/11_llm_in_the_loop.ipynb``; its checkers replay the offline components,
never a live model.
"""

from __future__ import annotations

from typing import Any

from memorykit.lessons.checks.verdict import Verdict, report

# -------------------------------------------------------------- lesson 11
# Checkers of notebooks/11_llm_in_the_loop.ipynb. They replay the lesson's scenario with the
# offline components (memorykit.lessons.llm_app), never a live model.
LOOP_TOKEN_TARGET = 650
"""Lesson 11, exercise 2: mean prompt tokens per probe the settings must stay within."""


def _is_whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _loop_summary(budget: int, threshold: float, recall_limit: int) -> dict[str, Any]:
    from memorykit.lessons.llm_app import DEFAULTS, _offline_loop

    return _offline_loop(budget, float(threshold), recall_limit, DEFAULTS["distractor_turns"],
                         DEFAULTS["seed"]).summary()


def check_recall_limit(recall_limit: Any, *, show: bool = False) -> Verdict:
    """Lesson 11: the smallest recall_limit that puts all four planted facts into the context
    (working-memory budget 600, summary threshold 0.8, the lesson's 30 distractor turns)."""
    name = "11 recall_limit"
    if not _is_whole(recall_limit) or not 0 <= recall_limit <= 20:
        return report(Verdict(name, False, f"recall_limit must be a whole number in [0, 20], got "
                               f"{recall_limit!r}"), show)
    mine = _loop_summary(600, 0.8, recall_limit)
    details = (f"recall_limit {recall_limit}: {mine['facts_in_context']}/4 facts in the context, "
               f"{mine['mean_tokens_per_call']} tokens per call on average",)
    if mine["facts_in_context"] < 4:
        return report(Verdict(name, False, f"only {mine['facts_in_context']} of 4 facts reach the "
                               "context: the summaries lost the others, recall more", details), show)
    if recall_limit > 0 and _loop_summary(600, 0.8, recall_limit - 1)["facts_in_context"] == 4:
        return report(Verdict(name, False, f"{recall_limit - 1} is enough too: every recalled "
                               "entry costs tokens on every call, find the smallest", details), show)
    return report(Verdict(name, True, f"recall_limit {recall_limit} is the smallest that puts all "
                           "4 facts into the context", details), show)


def check_loop_settings(budget: Any, threshold: Any, recall_limit: Any, *,
                        show: bool = False) -> Verdict:
    """Lesson 11: settings that put all four facts into the context while the mean prompt
    stays at or under LOOP_TOKEN_TARGET tokens per call."""
    name = "11 settings"
    if not _is_whole(budget) or not 300 <= budget <= 2000 or budget % 100:
        return report(Verdict(name, False, f"budget must be a multiple of 100 in [300, 2000] "
                               f"(the slider's values), got {budget!r}"), show)
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not (
            0.5 <= threshold <= 0.95):
        return report(Verdict(name, False, f"threshold must be a number in [0.5, 0.95], got "
                               f"{threshold!r}"), show)
    if not _is_whole(recall_limit) or not 0 <= recall_limit <= 8:
        return report(Verdict(name, False, f"recall_limit must be a whole number in [0, 8], got "
                               f"{recall_limit!r}"), show)
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
