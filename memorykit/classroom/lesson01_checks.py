"""Lesson 01's exercise checkers: billed tokens and a memory budget
(``notebooks/01_tokens_and_budgets.ipynb``).

Deterministic: they replay the default conversation (``memorykit.classroom.data``) or random
requests from a fixed seed, never a live model. Each returns a ``Verdict`` (the notebook shows
it as the cell's result; ``show=True`` prints it too, for scripts) that names the numbers that
decided it, so a wrong answer tells the student what to change; an answer of the wrong kind is
refused with a ``TypeError`` / ``ValueError`` naming the value.

* ``check_billed_tokens``: the student's ``billed_tokens(messages, counter)`` under the
  library's billing contract, and against ``memorykit.tokens.count_chat_tokens`` (which it
  must not call).
* ``check_budget``: the smallest memory budget that holds the first 30 turns of the default
  conversation, in an 8K window (``BUDGET_EXERCISE``); a budget that merely fits, such as the
  characters / 4 estimate the lesson shows passing by luck in the old version, does not pass.
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
    from memorykit.classroom.lesson01 import chat_breakdown

    library = {"count_chat_tokens": count_chat_tokens, "chat_breakdown": chat_breakdown}
    code = getattr(billed_tokens, "__code__", None)  # names it calls, directly or by an alias
    names = set(code.co_names) if code else set()
    used = [n for n, f in library.items() if billed_tokens is f or n in names
            or any(billed_tokens.__globals__.get(name) is f for name in names)]
    if used:
        return report(Verdict("01 billed tokens", False, f"billed_tokens calls the library's "
                              f"{' and '.join(used)}, the count this exercise asks you to write: "
                              "add up content, framing, names, tool calls and the primer "
                              "yourself"), show)
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


def check_budget(budget: Any, *, show: bool = False) -> Verdict:
    """Lesson 01: the smallest memory budget (billed tokens) that holds the first 30 turns of
    the default conversation, which must fit an 8,192-token window beside a 500-token system
    prompt, 1,000 tokens of tools, 500 of user input and a 1,024-token response reserve.

    A wrong answer is told which way to go and why (content tokens only, characters / 4, the
    reply primer, too much for the window), never the answer itself."""
    from memorykit.classroom.lesson01 import recent_turns_that_fit, turn_tokens

    name = "01 budget"
    if isinstance(budget, bool) or not isinstance(budget, Integral):
        raise TypeError(f"budget must be an int number of tokens, got {budget!r}")
    if budget < 0:
        raise ValueError(f"budget must be a number of tokens >= 0, got {budget!r}")
    budget, p = int(budget), BUDGET_EXERCISE
    turns = [m for m in default_conversation().messages if 1 <= m.turn <= p["n_turns"]]
    need = turn_tokens(turns, p["n_turns"])
    others = p["system_prompt"] + p["tools"] + p["user_input"]
    room = p["context_window"] - p["response_reserve"] - others
    if budget == sum(m.content_tokens for m in turns):
        why = "that is their content tokens alone: each message also bills its framing"
    elif budget == round(sum(len(m.content) for m in turns) / 4):
        ratio = sum(len(m.content) for m in turns) / sum(m.content_tokens for m in turns)
        why = (f"that is characters / 4, an estimate: these turns average {ratio:.1f} characters "
               f"per token, so dividing by 4 {'over' if ratio > 4 else 'under'}shoots; count "
               "exact billed tokens")
    elif budget == need + 3:
        why = ("that counts the 3-token reply primer, which the request pays once whatever "
               "memory holds: memory holds the turns' own billed tokens")
    else:
        why = "a budget is counted in the billed tokens of the messages it must hold"
    details = (f"room for memory: {p['context_window']:,} window - {p['response_reserve']:,} "
               f"reserve - {others:,} other prompt parts = {room:,}",)
    if budget > room:
        return report(Verdict(
            name, False, f"{budget:,} tokens leave the reply only "
            f"{p['context_window'] - others - budget:,} of the {p['response_reserve']:,} "
            f"reserved: the request would overflow the window by {budget - room:,}", details), show)
    if budget < need:
        held = recent_turns_that_fit(turns, budget)
        return report(Verdict(
            name, False, f"{budget:,} tokens hold only the latest {held} of the {p['n_turns']} "
            f"turns: raise it; {why}", details), show)
    if budget > need:
        return report(Verdict(
            name, False, f"{budget:,} tokens hold all {p['n_turns']} turns, but it is not the "
            f"smallest budget that does: lower it (every spare token is paid on every request); "
            f"{why}", details), show)
    return report(Verdict(
        name, True, f"{budget:,} tokens: exactly what the first {p['n_turns']} turns bill "
        f"(contents, framing and tool calls), with {room - budget:,} tokens to spare inside the "
        "8K window", details), show)
