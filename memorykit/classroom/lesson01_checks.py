"""Lesson 01's exercise checkers: billed tokens and a memory budget
(``notebooks/01_tokens_and_budgets.ipynb``).

Deterministic: they replay the default conversation (``memorykit.classroom.data``) or random
requests from a fixed seed, never a live model. Each returns a ``Verdict`` (the notebook shows
it as the cell's result; ``show=True`` prints it too, for scripts) that names the numbers that
decided it, so a wrong answer tells the student what to change; an answer of the wrong kind is
refused with a ``TypeError`` / ``ValueError`` naming the value.

* ``check_billed_tokens``: the student's ``billed_tokens(messages, counter)`` under the
  library's billing contract, and against ``memorykit.tokens.count_chat_tokens``.
* ``check_budget``: a memory budget that holds the first 30 turns of the default conversation
  in an 8K window (``BUDGET_EXERCISE``; ``budget_bounds`` is the range that solves it).
"""

from __future__ import annotations

from numbers import Integral
from typing import Any

from memorykit.classroom.data import default_conversation
from memorykit.classroom.verdict import Verdict, report


def check_billed_tokens(billed_tokens: Any, *, show: bool = False) -> Verdict:
    """Lesson 01, build it yourself: ``billed_tokens(messages, counter)`` returns the prompt
    tokens an OpenAI-style request bills (content, per-message framing and role, names, tool
    calls, the reply primer). The library's billing contract (``memorykit.classroom.contracts.tokens``,
    the suite ``memorykit.tokens.count_chat_tokens`` passes) runs over it, and it must count
    what ``count_chat_tokens`` counts on random requests in both encodings."""
    from memorykit.classroom.contracts import run_contracts
    from memorykit.classroom.contracts.tokens import TOKEN_CONTRACTS, agrees_with_counter
    from memorykit.tokens import count_chat_tokens

    if isinstance(billed_tokens, type) or not callable(billed_tokens):
        raise TypeError("billed_tokens must be a function (messages, counter) -> int (pass the "
                        f"function itself, not its result), got {billed_tokens!r}")
    contracts = (*TOKEN_CONTRACTS,
                 agrees_with_counter(count_chat_tokens, "the library's count_chat_tokens"))
    return report(run_contracts(billed_tokens, contracts, exercise="01 billed tokens"), show)


BUDGET_EXERCISE = {
    "n_turns": 30,
    "context_window": 8_192,
    "response_reserve": 1_024,
    "system_prompt": 500,
    "tools": 1_000,
    "user_input": 500,
}
"""Lesson 01's scenario: the first 30 turns of the default conversation in an 8K window."""


def budget_bounds(**overrides: int) -> tuple[int, int]:
    """(smallest, largest) memory budget that solves lesson 01's exercise."""
    from memorykit.classroom.lesson01 import turn_tokens

    p = {**BUDGET_EXERCISE, **overrides}
    need = turn_tokens(default_conversation().messages, p["n_turns"])
    room = (p["context_window"] - p["response_reserve"] - p["system_prompt"] - p["tools"]
            - p["user_input"])
    return need, room


def check_budget(budget: Any, *, show: bool = False) -> Verdict:
    """Lesson 01: a memory budget (tokens) that holds the first 30 turns of the default
    conversation and still fits an 8,192-token window beside a 500-token system prompt,
    1,000 tokens of tools, 500 of user input and a 1,024-token response reserve."""
    name = "01 budget"
    if isinstance(budget, bool) or not isinstance(budget, Integral):
        raise TypeError(f"budget must be an int number of tokens, got {budget!r}")
    if budget < 0:
        raise ValueError(f"budget must be a number of tokens >= 0, got {budget!r}")
    budget = int(budget)
    need, room = budget_bounds()
    p = BUDGET_EXERCISE
    others = p["system_prompt"] + p["tools"] + p["user_input"]
    details = (
        f"the first {p['n_turns']} turns bill {need:,} tokens (contents + 4 framing tokens "
        "per message + each tool call's name and arguments)",
        f"room for memory: {p['context_window']:,} window - {p['response_reserve']:,} reserve - "
        f"{others:,} other prompt parts = {room:,}",
    )
    if budget < need:
        return report(Verdict(
            name, False,
            f"{budget:,} tokens cannot hold the {p['n_turns']} turns: they bill {need:,} "
            f"({need - budget:,} more); did you count content tokens only, or characters / 4?",
            details), show)
    if budget > room:
        return report(Verdict(
            name, False,
            f"{budget:,} tokens leave the reply only {p['context_window'] - others - budget:,} "
            f"of the {p['response_reserve']:,} reserved: the request would overflow the window "
            f"by {budget - room:,}", details), show)
    return report(Verdict(
        name, True, f"{budget:,} tokens hold all {p['n_turns']} turns ({need:,}) and leave "
        f"{room - budget:,} tokens of slack inside the 8K window", details), show)
