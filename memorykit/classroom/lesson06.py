"""Lesson 06: notes with a time-to-live: escalation, expiry, proactive surfacing.

* The escalation of one note over its life (``band_facts``, ``escalation_curves``,
  ``priority_surfacers``) is ``memorykit.classroom.replays.escalation``.
* ``surfacing_report(min_shared_entities)``: the labelled 30-day workflow
  replayed through ``WorkingMemory`` (``run_workflow``) under those surfacing
  rules, read by ``surfacing_anatomy``: precision and recall, surfacings by
  trigger, why the false positives were false, expiry outcomes. Memoized.
* ``tradeoff_table``: precision and recall for several ``min_shared_entities``.

Explorer: ``EscalationExplorer`` (sliders for the three TTLs, base priority,
the warning / critical fractions and multipliers; one step curve per urgency
with the two escalation steps and the surfacing threshold drawn).
Taught in ``notebooks/06_notes_ttl.ipynb``.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from memorykit.classroom.explorer import LessonExplorer, Setting, _go
from memorykit.classroom.figure import legend_below
from memorykit.classroom.scenarios.workflow import WorkflowRun, default_workflow, run_workflow, surfacing_anatomy
from memorykit.workspace import NoteSettings
from memorykit.classroom.replays.escalation import EscalationCurves, escalation_curves, priority_surfacers
from memorykit.workspace.notes import URGENCIES

__all__ = ["EscalationExplorer", "scenario_run", "surfacing_report", "tradeoff_table"]


# ---------------------------------------------------------------- scenario
def scenario_run(min_shared_entities: int = 1, surfacing_threshold: float = 0.9) -> WorkflowRun:
    """The default workflow replayed with the seed's settings but these surfacing rules (memoized)."""
    # checked before the memo: a bad value is named, not hashed (a list) or cached (a bool)
    notes = NoteSettings(min_shared_entities=min_shared_entities, surfacing_threshold=surfacing_threshold)
    return _scenario_run(notes.min_shared_entities, notes.surfacing_threshold)


@lru_cache(maxsize=16)
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


# ---------------------------------------------------------------- explorer
_COLORS = {"urgent": "#d62728", "normal": "#1f77b4", "low": "#2ca02c"}


def _guide(kind: str, urgency: str) -> str:
    """Name of a guide line ('steps', 'surfacing threshold') in an urgency's panel: the
    first panel's is named plainly (it is the one the legend shows)."""
    return kind if urgency == URGENCIES[0] else f"{kind} ({urgency})"


class EscalationExplorer(LessonExplorer):
    """One effective-priority curve per urgency; sliders for TTLs, priority and escalation."""

    title = "Effective priority over a note's life"
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

    def __init__(self, **params: Any) -> None:
        self.table = scenario_run().note_table
        # The scenario's count depends on the multipliers alone (not on TTLs or shares): it is
        # recounted only when one of them moves.
        self._surfacers: tuple[tuple[float, float], dict[str, int]] | None = None
        super().__init__(**params)

    def _make_figure(self) -> Any:
        from plotly.subplots import make_subplots

        go = _go()
        fig = go.FigureWidget(make_subplots(rows=1, cols=3, subplot_titles=URGENCIES, shared_yaxes=True,
                                            horizontal_spacing=0.04))
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

    def _compute(self, **p: Any) -> EscalationCurves:
        # Slider pairs that would break NoteSettings' rules (critical share below the warning
        # share, critical multiplier at least the warning one) are clamped; summary() says so.
        return escalation_curves(p["base_priority"], self._settings(p))

    def _draw(self, c: EscalationCurves) -> None:
        thr = c.settings.surfacing_threshold
        for u in URGENCIES:
            line = self.trace(u)
            line.x = c.hours[u]
            line.y = c.values[u]
            f = c.facts[u]
            steps = self.trace(_guide("steps", u))
            steps.x = [f.warn_at, f.warn_at, None, f.critical_at, f.critical_at]
            steps.y = [0, 1.05, None, 0, 1.05]
            threshold = self.trace(_guide("surfacing threshold", u))
            threshold.x = [0, f.ttl_hours]
            threshold.y = [thr, thr]

    def summary(self) -> dict[str, Any]:
        c: EscalationCurves = self.result
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
        key = (s.warn_multiplier, s.critical_multiplier)
        if self._surfacers is None or self._surfacers[0] != key:
            self._surfacers = (key, priority_surfacers(self.table, s))
        ps = self._surfacers[1]
        out["scenario_notes_that_can_surface_on_priority"] = f"{ps['can_surface_on_priority']}/{ps['notes']}"
        return out
