"""Lesson 02's exercise checkers: pruning strategies (``notebooks/02_pruning_strategies.ipynb``).

Each returns a ``Verdict`` (printed only with ``show=True``) naming the numbers that decided it,
and refuses an answer of the wrong kind with a ``TypeError`` / ``ValueError`` naming the value.
"""

from __future__ import annotations

from typing import Any

from memorykit._validate import require_str
from memorykit.classroom.data import default_conversation
from memorykit.classroom.verdict import Verdict, report, require_exercise_budget


def check_victim_choice(buffer_class: Any, *, show: bool = False) -> Verdict:
    """Lesson 02, build it yourself: ``buffer_class`` subclasses ``MessageBuffer`` and overrides
    only ``_choose_victim`` to evict the least important evictable message, the oldest among
    equals. The library's buffer contract (``memorykit.classroom.contracts.buffers``, the suite every
    policy of the registry passes) runs over it, and it must choose the same victims as the
    library's ``ImportanceBuffer`` on the same random conversations."""
    from memorykit.buffers.base import MessageBuffer
    from memorykit.buffers.policies import ImportanceBuffer
    from memorykit.buffers.registry import policies
    from memorykit.classroom.contracts import run_contracts
    from memorykit.classroom.contracts.buffers import BUFFER_CONTRACTS, agrees_with
    from memorykit.classroom.contracts.runner import missing_override

    not_overridden = missing_override(buffer_class, MessageBuffer, "_choose_victim",
                                      argument="buffer_class", exercise="02 victim choice")
    if not_overridden is not None:
        return report(not_overridden, show)
    owner = next(c for c in buffer_class.__mro__ if "_choose_victim" in vars(c))
    library = {s.factory.__name__ for s in policies() if isinstance(s.factory, type)}
    used = [owner.__name__] if owner.__module__.startswith("memorykit.") else \
        sorted(library & set(vars(owner)["_choose_victim"].__code__.co_names))
    if used:
        return report(Verdict("02 victim choice", False, f"{buffer_class.__name__} takes its "
                              f"victim from the library's {', '.join(used)}, the choice this "
                              "exercise asks you to write: subclass MessageBuffer and pick the "
                              "least important evictable message yourself"), show)
    contracts = (*BUFFER_CONTRACTS, agrees_with(
        lambda budget, clock: ImportanceBuffer(max_tokens=budget, clock=clock),
        "the library's ImportanceBuffer"))
    return report(run_contracts(
        lambda budget, clock: buffer_class(max_tokens=budget, clock=clock), contracts,
        exercise="02 victim choice"), show)


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
    require_exercise_budget(budget, PRUNING_EXERCISE["budget"])
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
    if lost and policy == "hybrid":
        rules = {run.evicted_at[f.message_id][1] for f in lost}
        if "hybrid-below-threshold" in rules:
            low = min(conv.message(f.message_id).importance for f in lost)
            hint = (f"lower importance_threshold: lost facts have importance as low as "
                    f"{low:.2f}, under {run.params['importance_threshold']:g}, so the "
                    "below-threshold rule evicts them first")
        else:
            t = run.params["importance_threshold"]
            protected = sorted({m.metadata["kind"] for m in conv.messages if m.importance >= t
                                and m.id not in {f.message_id for f in conv.facts}})
            hint = (f"raise importance_threshold: at {t:g} {', '.join(protected)} messages are "
                    "protected like facts, and once they fill the window the FIFO fallback "
                    "evicts the oldest protected message, facts included")
        return report(Verdict(name, False, f"{label} loses {len(lost)} of the {len(wanted)} "
                               f"recent facts; {hint}", tuple(details)), show)
    if lost:
        hint = {
            "fifo": "FIFO evicts by age alone, so a fact goes as soon as it is old enough",
            "importance": "pure importance hoards the oldest important messages and has no "
                          "room left for new facts",
            "recency": "effective importance decays with age; the ratio decay_rate / "
                       "half_life_minutes sets how fast old facts lose to new chatter",
        }.get(policy, f"{registered(policy).label} keeps what its rule keeps; compare its "
                      "eviction timeline with the others'")
        return report(Verdict(name, False, f"{label} loses {len(lost)} of the {len(wanted)} "
                               f"recent facts; {hint}", tuple(details)), show)
    return report(Verdict(name, True, f"{label} keeps all {len(wanted)} facts planted from "
                           f"turn {first} on", tuple(details)), show)
