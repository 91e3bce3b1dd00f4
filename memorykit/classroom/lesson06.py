"""Lesson 06: notes with a time-to-live: escalation, expiry, proactive surfacing.

* The escalation of one note over its life (``band_facts``, ``escalation_curves``,
  ``priority_surfacers``) is ``memorykit.classroom.replays.escalation``.
* ``surfacing_report(min_shared_entities)``: the labelled 30-day workflow
  replayed through ``WorkingMemory`` (``scenario_run``, memoized) under those surfacing
  rules, read by ``surfacing_anatomy``: precision and recall, surfacings by
  trigger, why the false positives were false, expiry outcomes.
* ``tradeoff_table``: precision and recall for several ``min_shared_entities``.
* ``surfacers(warn_multiplier, critical_multiplier)``: how many of the month's notes can
  ever pass the surfacing threshold on priority alone (memoized).
* ``run_yours(escalated_priority, base_priority, urgency, ...)``: a student's
  ``escalated_priority(priority, remaining, settings)`` evaluated over one note's life at
  the hours the library's curve is drawn (memoized).

Explorer: ``EscalationExplorer`` (sliders for the three TTLs, base priority,
the warning / critical fractions and multipliers; one step curve per urgency
with the two escalation steps and the surfacing threshold drawn);
``yours=escalated_priority`` draws the student's rule as a dotted black curve over each.
Taught in ``notebooks/06_notes_ttl.ipynb``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from memorykit.classroom.explorer import Implementation, LessonExplorer, Setting, _go, yours_name
from memorykit.classroom.figure import legend_below
from memorykit.classroom.memo import memo
from memorykit.classroom.verdict import require_number
from memorykit.classroom.replays.escalation import (
    EscalationCurves,
    band_facts,
    escalation_curves,
    life_hours,
    priority_surfacers,
)
from memorykit.classroom.scenarios.workflow import (
    WorkflowRun,
    default_workflow,
    run_workflow,
    surfacing_anatomy,
)
from memorykit.workspace import NoteSettings
from memorykit.workspace.notes import HOUR, URGENCIES, remaining_fraction

__all__ = ["EscalationExplorer", "scenario_run", "surfacing_report", "tradeoff_table"]


# ---------------------------------------------------------------- scenario
def scenario_run(min_shared_entities: int = 1, surfacing_threshold: float = 0.9) -> WorkflowRun:
    """The default workflow replayed with the seed's settings but these surfacing rules (memoized)."""
    # checked before the memo: a bad value is named, not hashed (a list) or cached (a bool)
    notes = NoteSettings(min_shared_entities=min_shared_entities, surfacing_threshold=surfacing_threshold)
    return _scenario_run(notes.min_shared_entities, notes.surfacing_threshold)


@memo(maxsize=16)
def _scenario_run(min_shared_entities: int, surfacing_threshold: float) -> WorkflowRun:
    notes = NoteSettings(min_shared_entities=min_shared_entities, surfacing_threshold=surfacing_threshold)
    return run_workflow(default_workflow(), notes=notes, count_tokens=False)


def surfacing_report(min_shared_entities: int = 1, surfacing_threshold: float = 0.9) -> dict[str, Any]:
    """Precision, recall and the anatomy of surfacing on the labelled scenario (rounded)."""
    return surfacing_anatomy(scenario_run(min_shared_entities, surfacing_threshold), default_workflow())


def tradeoff_table(values: tuple[int, ...] = (1, 2, 3)) -> list[dict[str, Any]]:
    """Precision and recall of surfacing for each ``min_shared_entities``."""
    out = []
    for k in values:
        r = surfacing_report(k)
        out.append({key: r[key] for key in ("min_shared_entities", "surfacings", "relevant", "precision",
                                            "recall", "false_positives")})
    return out


@memo(maxsize=256)
def surfacers(warn_multiplier: float = 1.5, critical_multiplier: float = 2.0) -> dict[str, int]:
    """``priority_surfacers`` of the month's notes under these multipliers (the count depends
    on them alone: every note that lives to its end goes through both bands)."""
    settings = NoteSettings(warn_multiplier=warn_multiplier, critical_multiplier=critical_multiplier)
    return priority_surfacers(scenario_run().note_table, settings)


# ------------------------------------------------------- the student's rule
YOURS = Implementation("a function escalated_priority(priority, remaining, settings)",
                       parameters=("priority", "remaining", "settings"))
"""What lesson 06's exercise 3 asks for, as the explorer takes it (``yours=``)."""


@memo(maxsize=512)
def run_yours(escalated_priority: Any, base_priority: float, urgency: str,
              settings_items: tuple[tuple[str, Any], ...]) -> np.ndarray:
    """A student's ``escalated_priority`` over the life of one note of ``urgency`` (its TTL and
    the escalation from ``settings_items``, ``NoteSettings`` fields as sorted pairs), at the hours
    ``escalation_curves`` samples: one call per moment, with the share of the TTL left then."""
    escalated_priority = YOURS.check("escalated_priority", escalated_priority)
    settings = NoteSettings(**{k: (dict(v) if k == "ttl_hours" else v) for k, v in settings_items})
    ttl_h = float(settings.ttl_hours[urgency])
    hours = life_hours(band_facts(base_priority, ttl_h, settings, urgency))
    left = remaining_fraction(0.0, ttl_h * HOUR, hours * HOUR)
    out = np.empty(left.size)
    for i, r in enumerate(left):
        out[i] = require_number(f"{escalated_priority.__name__}({base_priority}, {float(r):.4f}, "
                                "settings)", escalated_priority(base_priority, float(r), settings),
                                "a finite number")
    return out


def _items(settings: NoteSettings) -> tuple[tuple[str, Any], ...]:
    """The explorer's settings as hashable pairs (``run_yours``' memo key)."""
    return (("critical_fraction", settings.critical_fraction),
            ("critical_multiplier", settings.critical_multiplier),
            ("ttl_hours", tuple(sorted(settings.ttl_hours.items()))),
            ("warn_fraction", settings.warn_fraction), ("warn_multiplier", settings.warn_multiplier))


# ---------------------------------------------------------------- explorer
_COLORS = {"urgent": "#d62728", "normal": "#1f77b4", "low": "#2ca02c"}
BANDS = ("base_priority", "warn_fraction", "warn_multiplier", "critical_fraction",
         "critical_multiplier")
"""The sliders every urgency's curve depends on (besides its own TTL)."""


def _guide(kind: str, urgency: str) -> str:
    """Name of a trace repeated in every urgency's panel ('steps', 'yours: ...'): the first
    panel's is named plainly (it is the one the legend shows)."""
    return kind if urgency == URGENCIES[0] else f"{kind} ({urgency})"


@dataclass(frozen=True)
class EscalationView:
    """What the explorer draws: the library's curves, the month's count, the student's curves."""

    curves: EscalationCurves
    surfacers: dict[str, int]
    yours: dict[str, dict[str, np.ndarray]]
    """Per student implementation, per urgency: its values at ``curves.hours[urgency]``."""


class EscalationExplorer(LessonExplorer):
    """One effective-priority curve per urgency; sliders for TTLs, priority and escalation."""

    title = "Effective priority over a note's life"
    implementation = YOURS
    settings = (
        Setting("base_priority", "base priority", 0.6, 0.05, 1.0, 0.01),
        Setting("urgent_ttl_h", "urgent TTL (h)", 3.0, 1.0, 6.0, 0.25),
        Setting("normal_ttl_h", "normal TTL (h)", 36.0, 12.0, 72.0, 1.0),
        Setting("low_ttl_h", "low TTL (h)", 168.0, 48.0, 336.0, 12.0),
        Setting("warn_fraction", "warn below (share of TTL left)", 0.2, 0.02, 0.6, 0.01),
        Setting("warn_multiplier", "warn multiplier", 1.5, 1.0, 3.0, 0.05),
        Setting("critical_fraction", "critical below (share left)", 0.05, 0.01, 0.5, 0.01),
        Setting("critical_multiplier", "critical multiplier", 2.0, 1.0, 4.0, 0.05),
    )

    def _make_figure(self) -> Any:
        from plotly.subplots import make_subplots

        fig = make_subplots(rows=1, cols=3, subplot_titles=URGENCIES, shared_yaxes=True,
                            horizontal_spacing=0.04)
        for col, u in enumerate(URGENCIES, start=1):
            fig.add_scatter(name=u, x=[0], y=[0], mode="lines", line=dict(color=_COLORS[u], width=3),
                            row=1, col=col, hovertemplate="%{x:.2f} h: %{y:.3f}<extra>" + u + "</extra>")
        for col, u in enumerate(URGENCIES, start=1):
            fig.add_scatter(name=_guide("steps", u), x=[], y=[], mode="lines", showlegend=col == 1,
                            line=dict(color="gray", dash="dot", width=1), row=1, col=col, hoverinfo="skip")
        for col, u in enumerate(URGENCIES, start=1):
            fig.add_scatter(name=_guide("surfacing threshold", u), x=[], y=[], mode="lines",
                            showlegend=col == 1, line=dict(color="black", dash="dash", width=1),
                            row=1, col=col, hoverinfo="skip")
        for name in self.yours:  # the student's rule: a dotted black curve over each library curve
            for col, u in enumerate(URGENCIES, start=1):
                fig.add_scatter(name=_guide(yours_name(name), u), x=[], y=[], mode="lines",
                                legendgroup=yours_name(name), showlegend=col == 1,
                                line=dict(color="black", dash="dot", width=3), row=1, col=col,
                                hovertemplate="%{x:.2f} h: %{y:.3f}<extra>yours</extra>")
        fig.update_yaxes(range=[0, 1.08], row=1, col=1, title="effective priority")
        fig.update_xaxes(title="hours since noted")
        fig.update_layout(height=380, margin=dict(l=60, r=20, t=70, b=50), title=self.title,
                          legend=legend_below())
        return fig

    def _settings(self, p: dict[str, Any]) -> NoteSettings:
        return NoteSettings(
            ttl_hours={"urgent": p["urgent_ttl_h"], "normal": p["normal_ttl_h"], "low": p["low_ttl_h"]},
            warn_fraction=p["warn_fraction"], warn_multiplier=p["warn_multiplier"],
            critical_fraction=min(p["critical_fraction"], round(p["warn_fraction"] - 0.01, 4)),
            critical_multiplier=max(p["critical_multiplier"], p["warn_multiplier"]),
        )

    def _compute(self, **p: Any) -> EscalationView:
        # Slider pairs that would break NoteSettings' rules (critical share below the warning
        # share, critical multiplier at least the warning one) are clamped; summary() says so.
        s = self._settings(p)
        curves = escalation_curves(p["base_priority"], s)
        yours = {name: {u: run_yours(fn, p["base_priority"], u, _items(s)) for u in URGENCIES}
                 for name, fn in self.yours.items()}
        return EscalationView(curves, surfacers(s.warn_multiplier, s.critical_multiplier), yours)

    def _draw(self, view: EscalationView) -> None:
        c = view.curves
        thr = c.settings.surfacing_threshold
        if view.yours:  # a student's rule may leave [0, 1]: the axis shows where it goes
            top = max(float(np.nanmax(v[u])) for v in view.yours.values() for u in URGENCIES)
            self.fig.update_yaxes(range=[0, max(1.08, 1.04 * top)], row=1, col=1)
        for u in URGENCIES:
            if not self.moved(f"{u}_ttl_h", *BANDS):
                continue  # another urgency's TTL moved: this panel stays as it is
            line = self.trace(u)
            line.x = c.hours[u]
            line.y = c.values[u]
            for name, values in view.yours.items():
                mine = self.trace(_guide(yours_name(name), u))
                mine.x = c.hours[u]
                mine.y = values[u]
            f = c.facts[u]
            if self.moved(f"{u}_ttl_h", "warn_fraction", "critical_fraction"):
                steps = self.trace(_guide("steps", u))
                steps.x = [f.warn_at, f.warn_at, None, f.critical_at, f.critical_at]
                steps.y = [0, 1.05, None, 0, 1.05]
            if self.moved(f"{u}_ttl_h"):
                threshold = self.trace(_guide("surfacing threshold", u))
                threshold.x = [0, f.ttl_hours]
                threshold.y = [thr, thr]

    def summary(self) -> dict[str, Any]:
        view: EscalationView = self.result
        c = view.curves
        s = c.settings
        out: dict[str, Any] = {
            "base_priority": round(c.base_priority, 2),
            "warn": f"x{s.warn_multiplier:g} below {s.warn_fraction:.0%} of TTL left",
            "critical": f"x{s.critical_multiplier:g} below {s.critical_fraction:.0%} of TTL left",
        }
        if (s.critical_fraction != self.params["critical_fraction"]
                or s.critical_multiplier != self.params["critical_multiplier"]):
            out["clamped"] = "critical settings adjusted to stay below / above the warning ones"
        for u in URGENCIES:
            f = c.facts[u]
            lead = f.surfacing_lead
            out[f"{u}_steps_at_h"] = f"{f.warn_at:.2f} -> {f.warn_value:.3f}, {f.critical_at:.2f} -> {f.critical_value:.3f}"
            out[f"{u}_surfaces_on_priority"] = ("no" if lead is None else
                                                 f"yes, {lead:.2f} h before expiry")
        out["expiry_outcome"] = ("escalated to the user" if c.base_priority >= s.high_priority_cutoff
                                 else "archived silently")
        ps = view.surfacers
        out["scenario_notes_that_can_surface_on_priority"] = f"{ps['can_surface_on_priority']}/{ps['notes']}"
        for name, values in view.yours.items():
            out[yours_name(name)] = _agreement(c, values)
        return out


def _agreement(c: EscalationCurves, values: dict[str, np.ndarray]) -> str:
    """Where a student's curves agree with the library's, in words (rounded)."""
    total, gaps, worst, where = 0, 0, 0.0, ""
    for u in URGENCIES:
        diff = np.abs(values[u] - c.values[u])
        bad = ~np.isclose(values[u], c.values[u], rtol=0, atol=1e-9)
        total += diff.size
        gaps += int(bad.sum())
        if bad.any() and float(diff.max()) > worst:
            i = int(np.argmax(diff))
            worst, where = float(diff.max()), f"{u} at {c.hours[u][i]:.2f} h"
    if not gaps:
        return f"agrees with the library at all {total} moments"
    return f"differs at {gaps} of {total} moments (largest gap {worst:.3f}, {where})"
