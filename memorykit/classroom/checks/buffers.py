"""Checkers of lessons 01-03: token budgets, pruning choices, summary-buffer settings.

They replay the default conversation (``memorykit.classroom.data``); taught in
``notebooks/01_tokens_and_budgets.ipynb``, ``02_pruning_strategies.ipynb`` and
``03_summary_buffer.ipynb``.
"""

from __future__ import annotations

from typing import Any

from numbers import Integral

from memorykit._validate import require_int, require_str, require_unit_interval
from memorykit.classroom.data import default_conversation
from memorykit.classroom.checks.verdict import Verdict, report


def _exercise_budget(budget: Any, fixed: int) -> None:
    """The exercise fixes the budget: another one is refused, not graded."""
    if require_int("budget", budget, minimum=1) != fixed:
        raise ValueError(f"the exercise fixes budget={fixed}, got {budget!r}: leave budget out")


def check_victim_choice(buffer_class: Any, *, show: bool = False) -> Verdict:
    """Lesson 02, build it yourself: ``buffer_class`` subclasses ``MessageBuffer`` and overrides
    only ``_choose_victim`` to evict the least important evictable message, the oldest among
    equals. The library's buffer contract (``memorykit.classroom.contracts.buffers``, the suite every
    policy of the registry passes) runs over it, and it must choose the same victims as the
    library's ``ImportanceBuffer`` on the same random conversations."""
    from memorykit.buffers.base import MessageBuffer
    from memorykit.buffers.policies import ImportanceBuffer
    from memorykit.classroom.contracts import run_contracts
    from memorykit.classroom.contracts.buffers import BUFFER_CONTRACTS, agrees_with
    from memorykit.classroom.contracts.runner import missing_override

    not_overridden = missing_override(buffer_class, MessageBuffer, "_choose_victim",
                                      argument="buffer_class", exercise="02 victim choice")
    if not_overridden is not None:
        return report(not_overridden, show)
    contracts = (*BUFFER_CONTRACTS, agrees_with(
        lambda budget, clock: ImportanceBuffer(max_tokens=budget, clock=clock),
        "the library's ImportanceBuffer"))
    return report(run_contracts(
        lambda budget, clock: buffer_class(max_tokens=budget, clock=clock), contracts,
        exercise="02 victim choice"), show)


# -------------------------------------------------------------- lesson 01
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


# -------------------------------------------------------------- lesson 02
PRUNING_EXERCISE = {"budget": 1_500, "recent_from_turn": 401}
"""Lesson 02: at 1,500 tokens, keep every fact planted from turn 401 on."""


def check_pruning_choice(
    policy: Any,
    *,
    budget: int = PRUNING_EXERCISE["budget"],
    show: bool = False,
    **settings: float,
) -> Verdict:
    """Lesson 02: a policy (and its settings, by the registry's names: ``importance_threshold``,
    ``decay_rate``, ``half_life_minutes``...) that, at a 1,500-token budget, still holds every
    fact planted in the last 100 turns of the default conversation at its end.

    An unknown policy, a setting the chosen policy does not have (``decay_rate`` with
    ``"hybrid"``) or an invalid value raises ``ValueError``/``TypeError`` naming it."""
    from memorykit.buffers.registry import policy as registered
    from memorykit.classroom.lesson02 import pruning_policies, run_policy

    name = "02 pruning"
    names = [s.name for s in pruning_policies()]
    if require_str("policy", policy) not in names:
        raise ValueError(f"policy must be one of {', '.join(names)}, got {policy!r}")
    _exercise_budget(budget, PRUNING_EXERCISE["budget"])
    own = [p.name for p in registered(policy).params]
    foreign = sorted(set(settings) - set(own))
    if foreign:
        raise ValueError(f"{', '.join(foreign)} does not apply to the {policy} policy (its "
                         f"settings: {', '.join(own) or 'none'}); leave it out")
    conv = default_conversation()
    run = run_policy(conv, policy, budget=budget, **settings)
    first = PRUNING_EXERCISE["recent_from_turn"]
    wanted = [f for f in conv.facts if f.turn >= first]
    lost = [f for f in wanted if not run.fact_alive[f.id]]
    old_kept = sum(1 for f in conv.facts if f.turn < first and run.fact_alive[f.id])
    label = " ".join([policy] + [f"{k}={v:g}" for k, v in run.params.items() if k != "budget"])
    details = [f"kept {len(wanted) - len(lost)}/{len(wanted)} facts from turn {first} on, "
               f"and {old_kept} older facts"]
    for f in lost[:5]:
        turn, rule = run.evicted_at[f.message_id]
        details.append(f"{f.id} (turn {f.turn}, key {f.key!r}) left at turn {turn} by rule "
                       f"{rule!r}")
    if lost:
        hint = {
            "fifo": "FIFO evicts by age alone, so a fact goes as soon as it is old enough",
            "importance": "pure importance hoards the oldest important messages and has no "
                          "room left for new facts",
            "hybrid": "planted facts have importance 0.8 or more; with a low importance_threshold "
                      "answers are protected too and the FIFO fallback takes facts once "
                      "they fill the window, with one above some facts' importance the "
                      "oldest high-importance facts are protected and hoard the window",
            "recency": "effective importance decays with age; the ratio decay_rate / "
                       "half_life_minutes sets how fast old facts lose to new chatter",
        }.get(policy, f"{registered(policy).label} keeps what its rule keeps; compare its "
                      "eviction timeline with the others'")
        return report(Verdict(name, False, f"{label} loses {len(lost)} of the {len(wanted)} "
                               f"recent facts; {hint}", tuple(details)), show)
    return report(Verdict(name, True, f"{label} keeps all {len(wanted)} facts planted from "
                           f"turn {first} on", tuple(details)), show)


# -------------------------------------------------------------- lesson 03
SUMMARY_EXERCISE = {"budget": 2_000, "max_summarizations": 60, "fact": "f0026"}
"""Lesson 03: at most 60 summarization rounds, and fact f0026 (a flight number planted at turn
252) still known at the end. (f0025, the first choice, is lost under every setting at
budget 2,000: its key "14D" never out-scores newer sentences, so that exercise was impossible.)"""


def check_summary_settings(
    threshold: Any,
    target: Any,
    min_recent: Any,
    *,
    budget: int = SUMMARY_EXERCISE["budget"],
    show: bool = False,
) -> Verdict:
    """Lesson 03: summary-buffer settings (budget 2,000) with at most 60 summarization rounds
    over the default conversation whose final window still knows fact f0026's key. Invalid
    settings (a target above the threshold, a bool, NaN) raise ``ValueError``/``TypeError``."""
    from memorykit.classroom.lesson03 import run_summary_buffer

    name = "03 summary"
    _exercise_budget(budget, SUMMARY_EXERCISE["budget"])
    run = run_summary_buffer(default_conversation(), budget=budget, threshold=threshold,
                             target=target, min_recent=min_recent)
    cap = SUMMARY_EXERCISE["max_summarizations"]
    fact_id = SUMMARY_EXERCISE["fact"]
    fact = next(f for f in default_conversation().facts if f.id == fact_id)
    alive = run.fact_alive[fact_id]
    n = run.n_summarizations
    details = (
        f"{n} summarization rounds (at most {cap}), deepest summary depth {run.max_depth}",
        f"{fact_id} ({fact.key!r}, planted at turn {fact.turn}) "
        f"{'survives' if alive else 'is lost'}; {run.facts_alive} of "
        f"{len(run.fact_alive)} facts survive overall",
    )
    label = f"threshold={threshold:g} target={target:g} min_recent={min_recent}"
    problems = []
    if n > cap:
        problems.append(f"{n} rounds is more than {cap}: the gap between threshold and target "
                        "sets how much each round frees, so a wider gap means fewer rounds")
    if not alive:
        problems.append(f"fact {fact_id} ({fact.key!r}) was squeezed out of the summaries: "
                        "each round re-summarizes the last summary under a fixed cap, so a "
                        "fact must keep out-scoring newer sentences to survive")
    if problems:
        return report(Verdict(name, False, f"{label}: " + "; ".join(problems), details), show)
    return report(Verdict(name, True, f"{label}: {n} rounds and {fact_id} survives", details),
                   show)


# ---------------------------------------- lesson 03: attention window, context switching
ATTENTION_EXERCISE = {"max_window_tokens": 500, "min_facts": 40}
"""Lesson 03: an attention window of at most 500 tokens that finds at least 40 of the 50
planted facts when asked each fact's question."""


def check_attention_window(window_tokens: Any, neighbours: Any, *, show: bool = False) -> Verdict:
    """Lesson 03: ``AttentionWindow`` settings (at most 500 tokens) whose selection holds the
    fact's message for at least 40 of the 50 planted facts' questions."""
    from memorykit.classroom.lesson03_focus import attention_hits, recency_hits

    name = "03 attention"
    p = ATTENTION_EXERCISE
    conv = default_conversation()
    require_int("window_tokens", window_tokens, minimum=1)
    require_int("neighbours", neighbours, minimum=0)
    found, tokens = attention_hits(conv, window_tokens, neighbours)
    label = f"window_tokens={window_tokens} neighbours={neighbours}"
    details = (f"{found}/{len(conv.facts)} fact messages selected, {tokens:.0f} tokens used on "
               "average (the system prompt is always included first)",
               f"the newest messages that fit the same {window_tokens} tokens hold "
               f"{recency_hits(conv, window_tokens)} facts")
    if window_tokens > p["max_window_tokens"]:
        return report(Verdict(name, False, f"{label}: the exercise allows at most "
                               f"{p['max_window_tokens']} tokens", details), show)
    if found < p["min_facts"]:
        hint = ("each neighbour is paid for from the same budget, so fewer hits fit"
                if neighbours else "a smaller window stops at the first hit that does not fit")
        return report(Verdict(name, False, f"{label} finds {found} facts, fewer than "
                               f"{p['min_facts']}: {hint}", details), show)
    return report(Verdict(name, True, f"{label} finds {found} facts in at most "
                           f"{window_tokens} tokens", details), show)


CONTEXT_EXERCISE = {"after": 20, "step": 0.01}
"""Lesson 03: the smallest ``boost_to`` (to 0.01) under which "main" still holds the message
it was left at 20 messages past the return from the interruption."""


def check_context_boost(boost_to: Any, *, show: bool = False) -> Verdict:
    """Lesson 03: the smallest ``boost_to`` for ``ContextManager`` (to within 0.01) under which
    the message "main" was left at survives 20 messages after returning from the interruption."""
    from memorykit.classroom.lesson03_focus import boost_survival

    name = "03 context"
    after, step = CONTEXT_EXERCISE["after"], CONTEXT_EXERCISE["step"]
    column = f"after {after}"
    boost_to = require_unit_interval("boost_to", boost_to)
    lower = max(0.0, boost_to - step)
    rows = boost_survival(default_conversation(), (boost_to, lower), (after,))
    kept, lower_kept = (row[column] == "kept" for row in rows)
    details = (f"boost_to={boost_to:g}: {rows[0][column]} {after} messages after the return",
               f"boost_to={lower:g}: {rows[1][column]}")
    if not kept:
        return report(Verdict(name, False, f"boost_to={boost_to:g} is too low: the left-off "
                               f"message is evicted within {after} messages of the return; its "
                               "effective importance, boost times the recency weight, fell "
                               "below the newer messages'", details), show)
    if lower_kept and boost_to > 0:
        return report(Verdict(name, False, f"boost_to={boost_to:g} keeps it, but so does "
                               f"{lower:g}: look for the smallest", details), show)
    return report(Verdict(name, True, f"boost_to={boost_to:g} is the smallest boost (to "
                           f"{step:g}) that keeps the left-off message {after} messages after "
                           "the return", details), show)


# ------------------------------------------------- lesson 03: build a summarizer yourself
def check_summarizer(summarizer_class: Any, *, show: bool = False) -> Verdict:
    """Lesson 03, build it yourself: ``summarizer_class()`` is a ``Summarizer`` that keeps the
    sentences holding a number (the facts), newest first while they fit, in conversation order
    and labelled by role. The library's summary contracts (``memorykit.classroom.contracts.summary``,
    the suite ``ExtractiveSummarizer`` passes: the cap, determinism, and a ``SummaryBuffer``
    using it loses nothing) run over it, plus a check that it keeps facts and only facts."""
    from memorykit.classroom.contracts import run_contracts
    from memorykit.classroom.contracts.summary import FACTS_FIRST_CONTRACTS, SUMMARIZER_CONTRACTS

    if not isinstance(summarizer_class, type):
        raise TypeError("summarizer_class must be a class (pass the class itself, not an "
                        f"instance), got {summarizer_class!r}")
    summarizer = summarizer_class()
    if not callable(getattr(summarizer, "summarize", None)):
        raise TypeError(f"{summarizer_class.__name__} must define summarize(messages, max_tokens)")
    return report(run_contracts(summarizer, (*SUMMARIZER_CONTRACTS, *FACTS_FIRST_CONTRACTS),
                                exercise="03 summarizer"), show)
