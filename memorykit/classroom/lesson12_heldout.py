"""Lesson 12's held-out figures, read from the lesson's sweeps (``TuningSweeps.tuned``, the
``tune.TuneResult`` ``precompute`` builds from the sweeps' per-question outcomes: nothing is
evaluated again).

* ``heldout_notes``, ``heldout_table``: each policy picked on the tuning conversations and
  scored on held-out ones, with a bootstrap interval over conversations.
* ``fold_rows``: how a policy's held-out recall is made, split by split.
* ``conversation_sums``: what a bootstrap over conversations resamples.
* ``paired_rows``: paired comparisons; ``front_rows``: the Pareto front with intervals.
Taught in ``notebooks/12_parameter_tuning.ipynb``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from memorykit.classroom.lesson12_checks import EXERCISE_BUDGET
from memorykit.classroom.lesson12_sweeps import TuningSweeps
from memorykit.evaluation.harness import HarnessSettings
from memorykit.evaluation.toolkit import TUNABLE
from memorykit.evaluation.tune import TuneResult


def _tuned(sweeps: TuningSweeps) -> TuneResult:
    if not isinstance(sweeps, TuningSweeps) or sweeps.tuned is None:
        raise TypeError(f"sweeps must be precompute(data)'s TuningSweeps, got {sweeps!r:.80}")
    return sweeps.tuned


def _budget(sweeps: TuningSweeps, budget: int) -> int:
    if budget not in sweeps.budgets:
        raise ValueError(f"budget must be one of {sweeps.budgets}, got {budget!r}")
    return budget


def _r(x: float | None) -> float | None:
    return None if x is None else round(x, 3)


def _ci(ci: tuple[float, float] | None) -> str:
    return "-" if ci is None else f"{ci[0]:.3f}-{ci[1]:.3f}"


def heldout_notes(sweeps: TuningSweeps) -> list[str]:
    """How the conversations were split, what the interval is, and the tokens' unit
    (``TuneResult.notes``, without the coincidences ``comparison_notes`` prints)."""
    return _tuned(sweeps).notes()[:3]


def heldout_table(sweeps: TuningSweeps, budget: int = EXERCISE_BUDGET) -> list[dict[str, Any]]:
    """Every policy at ``budget``: its configuration picked on the tuning conversations, its
    recall there (``recall_where_picked``, optimistic), and on the held-out ones with the
    95% bootstrap interval over conversations, best held-out recall first."""
    t = _tuned(sweeps)
    return [{"policy": r["policy"], "picked_configuration": r["configuration"],
             "recall_where_picked": _r(r["tuning_recall"]),
             "held_out_recall": _r(r["recall"]), "held_out_95%_interval": _ci(r["recall_ci"]),
             f"{t.units}_tokens": None if r["tokens"] is None else int(round(r["tokens"])),
             "over_budget": _r(r["over_budget"]),
             "answer_recall": _r(r["answer_recall"])}
            for r in t.best().where(budget=_budget(sweeps, budget))]


def fold_rows(sweeps: TuningSweeps, policy: str, budget: int = EXERCISE_BUDGET
              ) -> list[dict[str, Any]]:
    """How ``policy``'s held-out recall at ``budget`` is made: per split, the conversations
    picked on, the configuration picked there (highest recall, then fewest tokens, then the
    first, as ``tune`` picks) with its recall there, and its recall on the held-out ones."""
    t = _tuned(sweeps)
    _budget(sweeps, budget)
    if policy not in t.policies:
        raise ValueError(f"policy must be one of {list(t.policies)}, got {policy!r}")
    ids = [c.id for c in t.dataset]
    conv = np.array([n for n, c in enumerate(t.dataset) for _ in c.questions])
    rows = [n for n, c in enumerate(t.configurations)
            if c["policy"] == policy and c["budget"] == budget]
    out = []
    for split in t.splits or ():
        tuning, test = (np.isin(conv, [ids.index(c) for c in part])
                        for part in (split.tuning, split.test))
        figures = [t.figures(t.outcomes[n], tuning) for n in rows]
        best = max(range(len(rows)), key=lambda n: (  # as tune ranks: no question is -1
            -1.0 if figures[n]["recall"] is None else figures[n]["recall"],
            -(figures[n]["tokens"] or 0.0), -n))
        out.append({"policy": policy, "picked_on": ", ".join(split.tuning),
                    "picked_configuration": t.configurations[rows[best]]["configuration"],
                    "recall_where_picked": _r(figures[best]["recall"]),
                    "scored_on": ", ".join(split.test),
                    "recall_there": _r(t.figures(t.outcomes[rows[best]], test)["recall"])})
    return out


def conversation_sums(sweeps: TuningSweeps, policy: str, budget: int = EXERCISE_BUDGET,
                      configuration: str = "defaults") -> tuple[np.ndarray, np.ndarray]:
    """One configuration's recall summed over each conversation's questions (adversarial ones
    aside, as recall leaves them out) and how many there are: what a bootstrap over
    conversations resamples. ``configuration``: the label ``heldout_table`` prints, or
    "defaults" for the policy's default setting."""
    t = _tuned(sweeps)
    _budget(sweeps, budget)
    if configuration == "defaults" and policy in TUNABLE:
        k = TUNABLE[policy]
        configuration = ", ".join(f"{n}={v}" for n, v in zip(k.names, k.defaults))
    found = [n for n, c in enumerate(t.configurations) if c["policy"] == policy
             and c["budget"] == budget and c["configuration"] == configuration]
    if not found:
        raise ValueError(f"no configuration {configuration!r} of policy {policy!r} was swept "
                         f"(policies: {list(t.policies)})")
    separate = HarnessSettings().separate
    conv = [n for n, c in enumerate(t.dataset) for q in c.questions if q.category not in separate]
    main = np.array([q.category not in separate for c in t.dataset for q in c.questions])
    recall = t.outcomes[found[0]][main, 0]
    n = len(t.dataset)
    return (np.bincount(conv, weights=recall, minlength=n),
            np.bincount(conv, minlength=n).astype(float))


def paired_rows(sweeps: TuningSweeps, budget: int = EXERCISE_BUDGET) -> list[dict[str, Any]]:
    """The best held-out policy at ``budget`` against the next three, question by question:
    the difference of held-out recall and its paired bootstrap interval over conversations."""
    t = _tuned(sweeps)
    return [{"policy": r["policy"], "minus": r["other"], "questions": r["questions"],
             "difference": _r(r["difference"]),
             "95%_interval": _ci(r["difference_ci"]),
             "tells_them_apart": r["distinguishable"]}
            for r in t.comparisons().where(budget=_budget(sweeps, budget))]


def front_rows(sweeps: TuningSweeps) -> list[dict[str, Any]]:
    """The Pareto front on the conversations configurations are picked on (``split``), as
    printable rows: recall with its 95% interval over conversations, and whether it overlaps
    the next cheaper point's (the extra tokens buy no difference these conversations show).
    Configurations landing on one point are one row (``same_point`` counts them)."""
    return [{"configuration": f"{p['policy']}({p['configuration']})"
             if p["configuration"] != "defaults" else p["policy"],
             "budget": p["budget"], "split": p["split"],
             f"{sweeps.units}_tokens": int(round(p["tokens"])), "recall": _r(p["recall"]),
             "95%_interval": _ci(p["recall_ci"]),
             "overlaps_cheaper": "-" if p["overlaps_cheaper"] is None else p["overlaps_cheaper"],
             "same_point": p["same_point"]}
            for p in _tuned(sweeps).pareto_front()]
