"""Lesson 03's exercise checkers: the summary buffer, the attention window and a
summarizer of the student's own (``notebooks/03_summary_buffer.ipynb``).

Deterministic: they replay the default conversation (``memorykit.classroom.data``) through the
lesson's own computations (``lesson03``, ``lesson03_focus``), or run contracts on random
conversations from a fixed seed; never a live model. Each returns a ``Verdict`` (the notebook
shows it as the cell's result; ``show=True`` prints it too, for scripts) that names the numbers
that decided it, so a wrong answer tells the student what to change; an answer of the wrong kind
is refused with a ``TypeError`` / ``ValueError`` naming the value.

* ``check_summary_settings``: threshold, target and min_recent for at most 60 rounds with one
  planted fact kept (``SUMMARY_EXERCISE``).
* ``check_attention_window``: the smallest attention window (to 10 tokens) that finds 40 of the
  50 facts by their questions (``ATTENTION_EXERCISE``).
* ``check_summarizer``: the student's ``FactsFirstSummarizer`` under the library's summary
  contracts, plus the facts-first ones.
"""

from __future__ import annotations

from typing import Any

from memorykit._validate import require_int
from memorykit.classroom.data import default_conversation
from memorykit.classroom.verdict import Verdict, report, require_exercise_budget


# ------------------------------------------------------------- summary buffer
SUMMARY_EXERCISE = {"budget": 2_000, "max_summarizations": 60, "fact": "f0048"}
"""Lesson 03: at most 60 summarization rounds, and fact f0048 ("37 minutes", planted at turn
479) still known at the end. (f0025, the first choice, is lost under every setting at
budget 2,000: its key "14D" never out-scores newer sentences, so that exercise was impossible.
f0026, the second, survived at two rows of the lesson's own settings table and at the sliders'
widest corner (0.95, 0.1, 0): copying either passed. f0048 survives at 8 of the 1,870 slider
settings, none of them a row of the table or a corner of the sliders.)"""


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
    require_exercise_budget(budget, SUMMARY_EXERCISE["budget"])
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


# ------------------------------------------------- attention window, named contexts
ATTENTION_EXERCISE = {"min_facts": 40, "step": 10}
"""Lesson 03: the smallest attention window (to 10 tokens) that finds at least 40 of the 50
planted facts when asked each fact's question. (It asked for any window of at most 500 tokens
before, and (500, 0), a row of the lesson's table and the explorer's default, was an answer.)"""


def check_attention_window(window_tokens: Any, neighbours: Any, *, show: bool = False) -> Verdict:
    """Lesson 03: the smallest ``AttentionWindow`` (to 10 tokens) whose selection holds the
    fact's message for at least 40 of the 50 planted facts' questions: 10 tokens less finds
    fewer, with these neighbours and with none (neighbours are paid from the same tokens)."""
    from memorykit.classroom.lesson03_focus import attention_hits, recency_hits

    name = "03 attention"
    p = ATTENTION_EXERCISE
    conv = default_conversation()
    require_int("window_tokens", window_tokens, minimum=1)
    require_int("neighbours", neighbours, minimum=0)
    found, tokens = attention_hits(conv, window_tokens, neighbours)
    label = f"window_tokens={window_tokens} neighbours={neighbours}"
    details = [f"{found}/{len(conv.facts)} fact messages selected, {tokens:.0f} tokens used on "
               "average (the system prompt is always included first)",
               f"the newest messages that fit the same {window_tokens} tokens hold "
               f"{recency_hits(conv, window_tokens)} facts"]
    if found < p["min_facts"]:
        hint = ("each neighbour is paid for from the same budget, so fewer hits fit"
                if neighbours else "a smaller window stops at the first hit that does not fit")
        return report(Verdict(name, False, f"{label} finds {found} facts, fewer than "
                               f"{p['min_facts']}: {hint}", tuple(details)), show)
    smaller = window_tokens - p["step"]
    for n in sorted({neighbours, 0}):
        less = attention_hits(conv, smaller, n)[0] if smaller >= 1 else 0
        details.append(f"window_tokens={smaller} neighbours={n} finds {less}")
        if less >= p["min_facts"]:
            return report(Verdict(name, False, f"{label} finds {found} facts, but "
                                   f"window_tokens={smaller} neighbours={n} finds {less}: look for "
                                   f"the smallest window (to {p['step']} tokens)", tuple(details)),
                          show)
    return report(Verdict(name, True, f"{label} is the smallest window (to {p['step']} tokens) "
                           f"that finds {p['min_facts']} facts: it finds {found}", tuple(details)),
                  show)


# ---------------------------------------------------------- a summarizer of your own
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
