"""Lesson 12's browser for the misses: why a retrieval policy's context left evidence out.

``policy_misses(dataset, policy, budget)`` runs ``memorykit.evaluation.explain.explain_misses``
for a ranking policy of the lesson (``MISS_POLICIES``, at its defaults) over every question
whose context missed evidence, worst first, memoized. ``MissExplorer`` (a policy dropdown, a
budget slider, a slider over the misses) draws, for the selected miss, every message's score in
the order the policy ranks them (log rank), the messages its context took, the missed evidence
and the cutoff where the budget ran out; under it the question, each missed evidence message
with the reason, and what filled the budget above it. ``reason_counts`` sorts every missed
evidence message by where the ranking put it.
Taught in ``notebooks/12_parameter_tuning.ipynb``.
"""

from __future__ import annotations

import html
import sys
from dataclasses import dataclass
from typing import Any

import numpy as np

from memorykit.classroom.explorer import LessonExplorer, _go, _widgets
from memorykit.classroom.figure import legend_below
from memorykit.classroom.lesson12_sweeps import TuningSweeps
from memorykit.classroom.memo import memo
from memorykit.evaluation.dataset import EvalDataset
from memorykit.evaluation.explain import Miss, explain_misses
from memorykit.evaluation.toolkit import fixed_policy

MISS_POLICIES: tuple[str, ...] = ("hybrid-retrieval", "bm25")
"""The lesson's policies that rank messages (``ranking(prepared, position, query)``): the
browser draws their ranking; the others keep messages by age, not by a score."""


def _policy(name: str) -> Any:
    if name not in MISS_POLICIES:
        raise ValueError(f"policy must be one of {', '.join(MISS_POLICIES)}, got {name!r}")
    return fixed_policy(name)


@memo(maxsize=16)
def policy_misses(dataset: EvalDataset, policy: str, budget: int) -> tuple[Miss, ...]:
    """Every question of ``dataset`` whose context under ``policy`` (its defaults) at
    ``budget`` missed evidence, worst first (``explain_misses``)."""
    if not isinstance(dataset, EvalDataset):
        raise TypeError(f"dataset must be an EvalDataset, got {dataset!r:.80}")
    return tuple(explain_misses(_policy(policy), dataset, budget, worst=sys.maxsize))


@memo(maxsize=8)
def _state(dataset: EvalDataset, policy: str, conversation: str) -> Any:
    conv = next(c for c in dataset if c.id == conversation)
    return _policy(policy).prepare(conv), conv


def reason_counts(misses: tuple[Miss, ...]) -> dict[str, int]:
    """Every missed evidence message of ``misses`` by where the policy's ranking put it."""
    counts = {"ranked below the cutoff": 0, "ranked above the cutoff, did not fit": 0,
              "not ranked at all": 0, "context over budget": 0}
    for m in misses:
        for e in m.missed:
            key = ("context over budget" if m.tokens > m.budget else
                   "not ranked at all" if e.rank is None or m.cutoff is None else
                   "ranked below the cutoff" if e.rank > m.cutoff.rank else
                   "ranked above the cutoff, did not fit")
            counts[key] += 1
    return counts


@dataclass(frozen=True)
class MissView:
    policy: str
    budget: int
    n: int
    """How many questions missed evidence."""
    index: int
    """The selected miss, 1-based."""
    miss: Miss | None
    scores: np.ndarray
    """Every ranked message's score, in ranked order."""
    taken: np.ndarray
    """Ranks (1-based) of the messages the context took."""
    reasons: dict[str, int]


class MissExplorer(LessonExplorer):
    """One missed question at a time: the policy's ranking, the cutoff, the missed evidence."""

    title = "Why the evidence was left out"

    def __init__(self, sweeps: TuningSweeps, policy: str = "hybrid-retrieval",
                 budget: int = 1000) -> None:
        if not isinstance(sweeps, TuningSweeps) or sweeps.dataset is None:
            raise TypeError(f"sweeps must be precompute(data)'s TuningSweeps, got {sweeps!r:.80}")
        _policy(policy)
        if budget not in sweeps.budgets:
            raise ValueError(f"budget must be one of {sweeps.budgets}, got {budget!r}")
        self.sweeps = sweeps
        self.details = _widgets().HTML()
        super().__init__(policy=policy, budget=budget, miss=1)

    def _make_sliders(self, params: dict[str, Any]) -> dict[str, Any]:
        w = _widgets()
        style = {"description_width": "initial"}
        n = max(1, len(policy_misses(self.sweeps.dataset, params["policy"], params["budget"])))
        return {"policy": w.Dropdown(options=list(MISS_POLICIES), value=params["policy"],
                                     description="policy", style=style),
                "budget": w.SelectionSlider(options=list(self.sweeps.budgets),
                                            value=params["budget"], description="budget (tokens)",
                                            continuous_update=False, style=style,
                                            layout=w.Layout(width="420px")),
                "miss": w.IntSlider(value=params["miss"], min=1, max=n, description="miss (worst first)",
                                    continuous_update=False, style=style,
                                    layout=w.Layout(width="420px"))}

    def _merge(self, params: dict[str, Any]) -> dict[str, Any]:
        """A new policy or budget starts at its worst miss; the miss number is checked."""
        merged = {**self.params, **params}
        _policy(merged["policy"])
        if merged["budget"] not in self.sweeps.budgets:
            raise ValueError(f"budget must be one of {self.sweeps.budgets}, got {merged['budget']!r}")
        if self.params and "miss" not in params and (
                merged["policy"], merged["budget"]) != (self.params["policy"], self.params["budget"]):
            merged["miss"] = 1
        n = len(policy_misses(self.sweeps.dataset, merged["policy"], merged["budget"]))
        if not (isinstance(merged["miss"], int) and 1 <= merged["miss"] <= max(1, n)):
            raise ValueError(f"miss must be a number from 1 to {n} (the questions that missed "
                             f"evidence), got {merged['miss']!r}")
        return merged

    def _sync_sliders(self, params: dict[str, Any]) -> None:
        n = max(1, len(policy_misses(self.sweeps.dataset, params["policy"], params["budget"])))
        s = self.sliders["miss"]
        if s.max != n:
            if s.value > n:
                s.value = 1
            s.max = n
        super()._sync_sliders(params)

    def _make_figure(self) -> Any:
        fig = _go().Figure()
        fig.add_scatter(x=[], y=[], mode="lines", name="every message, in ranked order",
                        line=dict(color="#999999", width=1.5), hoverinfo="skip")
        fig.add_scatter(x=[], y=[], mode="markers", name="in the context",
                        marker=dict(color="#1f77b4", size=6),
                        hovertemplate="rank %{x}: score %{y:.3f}<extra>in the context</extra>")
        fig.add_scatter(x=[], y=[], mode="lines", name="cutoff: where the budget ran out",
                        line=dict(color="black", dash="dash"), hoverinfo="skip")
        fig.add_scatter(x=[], y=[], mode="markers", name="missed evidence", text=[],
                        marker=dict(symbol="star", color="red", size=16,
                                    line=dict(color="darkred", width=1)),
                        hovertemplate="%{text}<br>rank %{x}: score %{y:.3f}<extra></extra>")
        # dtick 1: ticks at 1, 10, 100 only; a log axis padded below rank 1 otherwise labels
        # 0.7, 0.8, 0.9 as "7 8 9" left of "1", which reads as ranks
        fig.update_xaxes(type="log", dtick=1, title="rank under the policy (log scale)")
        fig.update_yaxes(title="score")
        fig.update_layout(height=430, margin=dict(l=60, r=10, t=60, b=40), title=self.title,
                          legend=legend_below(font=dict(size=11)))
        return fig

    def _compute(self, **p: Any) -> MissView:
        misses = policy_misses(self.sweeps.dataset, p["policy"], p["budget"])
        reasons = reason_counts(misses)
        if not misses:
            return MissView(p["policy"], p["budget"], 0, 0, None, np.zeros(0), np.zeros(0, int),
                            reasons)
        m = misses[p["miss"] - 1]
        state, conv = _state(self.sweeps.dataset, p["policy"], m.conversation_id)
        q = next(q for q in conv.questions if q.id == m.question_id)
        pos = conv.position(q)
        order, score = state.policy.ranking(state.prepared, pos, q.question)
        order = np.asarray(order)
        ctx = state.build_context(pos, q.question, p["budget"])
        cited = {s for item in ctx.items for s in item.sources}
        taken = np.array([r + 1 for r, i in enumerate(order.tolist())
                          if conv.messages[i].id in cited], dtype=int)
        return MissView(p["policy"], p["budget"], len(misses), p["miss"], m,
                        np.asarray(score, dtype=float)[order], taken, reasons)

    def _draw(self, v: MissView) -> None:
        ranks = np.arange(1, len(v.scores) + 1)
        line = self.trace("every message, in ranked order")
        line.x, line.y = ranks, np.round(v.scores, 4)
        took = self.trace("in the context")
        took.x, took.y = v.taken, np.round(v.scores[v.taken - 1], 4) if len(v.taken) else []
        cut = self.trace("cutoff: where the budget ran out")
        c = v.miss.cutoff if v.miss else None
        low, high = (float(v.scores.min()), float(v.scores.max())) if len(v.scores) else (0, 1)
        cut.x, cut.y = ([c.rank, c.rank], [round(low, 4), round(high, 4)]) if c else ([], [])
        missed = [e for e in v.miss.missed if e.rank is not None] if v.miss else []
        star = self.trace("missed evidence")
        star.x, star.y = [e.rank for e in missed], [round(e.score, 4) for e in missed]
        star.text = [e.message_id for e in missed]
        self.details.value = _details(v)

    def extra_widgets(self) -> list[Any]:
        return [self.details]

    def summary(self) -> dict[str, Any]:
        """The selected miss in rounded numbers, and the reasons over every miss."""
        v: MissView = self.result
        out: dict[str, Any] = {"data": self.sweeps.description,
                               "policy": f"{v.policy} (defaults) at {v.budget} tokens",
                               "questions_missing_evidence": v.n}
        out |= {f"missed evidence {k}": n for k, n in v.reasons.items()}
        if v.miss is None:
            return out
        m = v.miss
        out |= {"selected": f"{v.index} of {v.n}: {m.conversation_id} / {m.question_id} "
                            f"({m.category}), recall {m.recall:.2f}",
                "question": m.question,
                "context_tokens": m.tokens}
        for e in m.missed:
            where = "not ranked" if e.rank is None else f"rank {e.rank}, score {e.score:.3f}"
            out[f"missed {e.message_id}"] = f"{where}, {e.tokens} tokens, {e.back} back"
        if m.cutoff:
            out["cutoff"] = (f"rank {m.cutoff.rank}, score {m.cutoff.score:.3f}, after "
                             f"{m.cutoff.tokens} tokens")
        if m.above:
            out["above_the_first_missed"] = f"{m.above.count} messages, {m.above.tokens} tokens"
        return out

    def readout_numbers(self) -> dict[str, Any]:
        return {k: v for k, v in self.summary().items() if k not in ("data", "question")}


def _details(v: MissView) -> str:
    """The selected miss as text: the question, each missed evidence message and why, and what
    filled the budget above the first."""
    if v.miss is None:
        return "<p>No question missed any evidence at this budget.</p>"
    m, e = v.miss, html.escape
    rows = [f"<p><b>Q ({e(m.category)}):</b> {e(m.question)}</p>"]
    for ev in m.missed:
        rows.append(f"<p><span style='color:#c00'><b>missed {e(ev.message_id)}</b></span> "
                    f"&ldquo;{e(ev.text)}&rdquo;<br><i>why:</i> {e(ev.reason)}</p>")
    if m.above and m.above.top:
        rows.append(f"<p><b>Above it in the context</b> ({m.above.count} messages, "
                    f"{m.above.tokens} tokens), the best three:</p><ul>" + "".join(
                        f"<li>{e(mid)} (score {s:.3f}): &ldquo;{e(text)}&rdquo;</li>"
                        for mid, s, _, text in m.above.top) + "</ul>")
    return ("<div class='memorykit-misses' style='font-size:13px;line-height:1.4;"
            "margin:4px 8px;overflow-wrap:anywhere'>" + "".join(rows) + "</div>")
