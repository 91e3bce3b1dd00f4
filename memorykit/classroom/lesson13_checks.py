"""Lesson 13's exercise checker (``notebooks/13_changing_facts.ipynb``): the update rule a
student writes, ``UpdatePolicy.choose_current``, run against the library's update-policy
contract (``memorykit.classroom.contracts.facts``) and the exercise's own rule.

It returns a ``Verdict`` (printed only with ``show=True``) naming the statements that decided
it, and refuses an answer of the wrong kind with a ``TypeError`` naming the value.
"""

from __future__ import annotations

from typing import Any

from memorykit.classroom.verdict import Verdict, report

FIRM = 0.5
"""Lesson 13: a statement at least this strong is firm; a weaker one is tentative ("I think it
might have moved") and never overrules a firm one."""


def check_update_rule(policy_class: Any, *, show: bool = False) -> Verdict:
    """Lesson 13, build it yourself: ``policy_class`` subclasses ``UpdatePolicy``
    (``memorykit.facts.timeline``) and overrides ``choose_current(statements)``: the current
    statement of one fact is the latest firm one (strength >= ``FIRM``); a tentative one never
    overrules a firm one, and when none is firm the latest is current. The library's
    update-policy contract runs over it (the suite ``LatestWins``, ``KeepBothDated`` and
    ``KeepStrongest`` pass: never lose the current value, never serve a superseded one, leave
    the input as it was, lose nothing in a ``FactTimeline``), then the exercise's rule, and bad
    input (no statements, a non-Statement, two keys) must be refused naming the value."""
    from memorykit.classroom.contracts import run_contracts
    from memorykit.classroom.contracts.facts import REFUSES_BAD_INPUT, UPDATE_POLICY_CONTRACTS
    from memorykit.classroom.contracts.facts import firm_rule
    from memorykit.classroom.contracts.runner import missing_override
    from memorykit.facts.timeline import UpdatePolicy

    name = "13 update rule"
    not_overridden = missing_override(policy_class, UpdatePolicy, "choose_current",
                                      argument="policy_class", exercise=name)
    if not_overridden is not None:
        return report(not_overridden, show)
    owner = next(c for c in policy_class.__mro__ if "choose_current" in vars(c))
    if owner.__module__.startswith("memorykit."):
        whose = "is" if owner is policy_class else "takes its rule from"
        return report(Verdict(name, False, f"{policy_class.__name__} {whose} the library's "
                              f"{owner.__name__}, whose rule is not this exercise's: subclass "
                              "UpdatePolicy and write choose_current yourself"), show)
    never_lost, never_stale, unchanged, in_a_timeline = UPDATE_POLICY_CONTRACTS
    contracts = (never_lost, never_stale, firm_rule(FIRM), unchanged, REFUSES_BAD_INPUT,
                 in_a_timeline)
    return report(run_contracts(policy_class, contracts, exercise=name), show)
