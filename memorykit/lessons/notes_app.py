"""Lesson 06: notes with a time-to-live: escalation, expiry, proactive surfacing.

Pure computation (tested, benchmarked):

* ``escalation_curves(base_priority, settings)``: effective priority over the
  whole life of one note of each urgency (urgent, normal, low), computed with
  the library's vectorized ``effective_priority``, and ``band_facts``: when each
  escalation step starts, the peak, when the note first passes the surfacing
  threshold and how long before expiry that is, and what expiry does to it.
* ``priority_surfacers(table, settings)``: how many of the scenario's notes
  can ever pass the surfacing threshold on priority alone under ``settings``.
* ``surfacing_report(min_shared_entities)``: the labelled 30-day workflow
  replayed through ``WorkingMemory`` (``run_workflow``): surfacing precision
  and recall, surfacings by trigger, why the false positives were false,
  how many surfacings fell in the very turn the note was dictated, and expiry
  outcomes. Memoized (a replay takes ~0.2 s).

Explorer: ``EscalationExplorer`` (sliders for the three TTLs, base priority,
the warning / critical fractions and multipliers; one step curve per urgency
with the two escalation steps and the surfacing threshold drawn).
Taught in ``notebooks/06_notes_ttl.ipynb``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from memorykit._validate import require_unit_interval
from memorykit.lessons._app import LessonExplorer, _go, float_slider
from memorykit.lessons._figure import legend_below
from memorykit.lessons.tasks_app import default_workflow
from memorykit.scenarios.workflow import WorkflowRun, run_workflow
from memorykit.workspace import NoteExpiry, NoteSettings, effective_priority
from memorykit.workspace.notes import HOUR, URGENCIES

POINTS = 481
"""Samples per curve (the steps are drawn at their exact times as well)."""


# ------------------------------------------------------------------ curves
@dataclass(frozen=True)
class BandFacts:
    """What escalation does to one note over its life (times in hours since it was made)."""

    urgency: str
    ttl_hours: float
    base_priority: float
    warn_at: float
    """Hours after creation when the warning step starts (strictly under warn_fraction left)."""
    critical_at: float
    warn_value: float
    critical_value: float
    first_surfacing_at: float | None
    """First moment its effective priority is above the surfacing threshold (None: never)."""
    first_max_at: float | None
    """First moment it reaches 1.0 (None: never)."""
    expiry: str
    """'escalated_to_user' (base priority >= high_priority_cutoff) or 'archived'."""

    @property
    def surfacing_lead(self) -> float | None:
        """Hours between first passing the threshold and expiry."""
        return None if self.first_surfacing_at is None else self.ttl_hours - self.first_surfacing_at

    def row(self) -> dict[str, Any]:
        lead = self.surfacing_lead
        return {
            "urgency": self.urgency, "ttl_h": round(self.ttl_hours, 2),
            "warn_at_h": round(self.warn_at, 2), "critical_at_h": round(self.critical_at, 2),
            "warn_value": round(self.warn_value, 3), "critical_value": round(self.critical_value, 3),
            "surfaces_on_priority": self.first_surfacing_at is not None,
            "lead_before_expiry_h": None if lead is None else round(lead, 2),
            "reaches_1": self.first_max_at is not None,
            "expiry": self.expiry,
        }


def band_facts(base_priority: float, ttl_hours: float, settings: NoteSettings = NoteSettings(),
               urgency: str = "custom") -> BandFacts:
    """When the two escalation steps start and what they do to a note of this priority and TTL."""
    p = require_unit_interval("base_priority", base_priority)
    s = settings
    warn_at = (1 - s.warn_fraction) * ttl_hours
    crit_at = (1 - s.critical_fraction) * ttl_hours
    # Exactly at the boundary the factor does not change yet (strict <): sample just after it,
    # with the library's own function so these facts cannot drift from the memory's behaviour.
    eps = 1e-9 * ttl_hours
    ttl = ttl_hours * HOUR
    at = np.array([0.0, warn_at + eps, crit_at + eps]) * HOUR
    v0, v1, v2 = effective_priority([p], [0.0], [ttl], at, s)[0]
    starts = ((0.0, v0), (warn_at, v1), (crit_at, v2))
    surf = next((t for t, v in starts if v > s.surfacing_threshold), None)
    top = next((t for t, v in starts if v >= 1.0), None)
    return BandFacts(urgency, float(ttl_hours), p, warn_at, crit_at, float(v1), float(v2), surf, top,
                     "escalated_to_user" if p >= s.high_priority_cutoff else "archived")


@dataclass(frozen=True)
class EscalationCurves:
    settings: NoteSettings
    base_priority: float
    hours: dict[str, np.ndarray]
    values: dict[str, np.ndarray]
    facts: dict[str, BandFacts]


def escalation_curves(base_priority: float = 0.6, settings: NoteSettings = NoteSettings(),
                      points: int = POINTS) -> EscalationCurves:
    """Effective priority from creation to expiry of one note per urgency (TTLs from ``settings``)."""
    hours, values, facts = {}, {}, {}
    for u in URGENCIES:
        ttl_h = float(settings.ttl_hours[u])
        f = band_facts(base_priority, ttl_h, settings, u)
        grid = np.linspace(0.0, ttl_h, points)[:-1]
        # the exact step times (just before and just after) so the steps are vertical
        steps = np.array([f.warn_at, f.warn_at * (1 + 1e-9), f.critical_at, f.critical_at * (1 + 1e-9)])
        h = np.sort(np.concatenate([grid, steps]))
        hours[u] = h
        values[u] = effective_priority([base_priority], [0.0], [ttl_h * HOUR], h * HOUR, settings)[0]
        facts[u] = f
    return EscalationCurves(settings, float(base_priority), hours, values, facts)


def priority_surfacers(table: dict[str, np.ndarray], settings: NoteSettings) -> dict[str, int]:
    """Notes (of a run's ``note_table``) whose effective priority ever passes the surfacing threshold.

    Every note that lives to its end goes through both bands, so this is a
    property of its base priority: max(p, p x warn, p x critical), capped at 1.
    """
    p = np.asarray(table["priority"], dtype=float)
    peak = np.minimum(1.0, p * settings.critical_multiplier)
    in_warn = np.minimum(1.0, p * settings.warn_multiplier) > settings.surfacing_threshold
    return {
        "notes": int(p.size),
        "can_surface_on_priority": int((peak > settings.surfacing_threshold).sum()),
        "already_in_warning_band": int(in_warn.sum()),
        "escalated_to_user_at_expiry": int((p >= settings.high_priority_cutoff).sum()),
    }


# ---------------------------------------------------------------- scenario
@lru_cache(maxsize=16)
def scenario_run(min_shared_entities: int = 1, surfacing_threshold: float = 0.9) -> WorkflowRun:
    """The default workflow replayed with the seed's settings but these surfacing rules (memoized)."""
    notes = NoteSettings(min_shared_entities=min_shared_entities, surfacing_threshold=surfacing_threshold)
    return run_workflow(default_workflow(), notes=notes, count_tokens=False, counter=_NoCounting())


class _NoCounting:
    """A stand-in token counter: with ``count_tokens=False`` nothing is counted, and this
    spares loading a BPE file."""

    encoding = "none"

    def count(self, text: str) -> int:  # pragma: no cover - never called
        raise AssertionError("count_tokens=False: nothing should be counted")


def _turn_of_creation(run: WorkflowRun) -> dict[str, int]:
    """Note id -> the turn number (1-based) of the first turn at or after its creation."""
    created = run.note_table["created"]
    idx = np.searchsorted(run.times, created, side="left")
    return {nid: int(i) + 1 for nid, i in zip(run.note_table["id"], idx)}


def surfacing_report(min_shared_entities: int = 1, surfacing_threshold: float = 0.9) -> dict[str, Any]:
    """Precision, recall and the anatomy of surfacing on the labelled scenario (rounded)."""
    run = scenario_run(min_shared_entities, surfacing_threshold)
    scenario = default_workflow()
    notes = {e["id"]: e for e in scenario.events if e["type"] == "note"}
    turn_matter = {k + 1: t["matter"] for k, t in enumerate(scenario.turns())}
    born = _turn_of_creation(run)
    s = run.surfacings
    fp = [x for x in s if not x["relevant"]]
    # Task notes (made by the memory) are always wanted; user notes carry the latent label.
    stale = [x for x in fp if x["note_id"] in notes and not notes[x["note_id"]]["still_wanted"]]
    stale_same = sum(1 for x in stale if turn_matter[x["turn"]] == notes[x["note_id"]]["matter"])
    same_turn = [x for x in s if born.get(x["note_id"]) == x["turn"]]
    later = [x for x in s if born.get(x["note_id"]) != x["turn"]]
    expiries = Counter(e.outcome for e in run.memory.trace if isinstance(e, NoteExpiry))
    rel_later = sum(x["relevant"] for x in later)
    # Notes whose escalated priority can pass the threshold, and whether any turn falls inside
    # the window where it does (surfacing is checked only at turns).
    settings = run.memory.notes.settings
    tab = run.note_table
    windows = [band_facts(p, ttl / HOUR, settings) for p, ttl in zip(tab["priority"], tab["ttl"])]
    can = [(c, ttl, w) for c, ttl, w in zip(tab["created"], tab["ttl"], windows)
           if w.first_surfacing_at is not None]
    no_turn = sum(1 for c, ttl, w in can
                  if not np.any((run.times > c + w.first_surfacing_at * HOUR) & (run.times < c + ttl)))
    return {
        "min_shared_entities": min_shared_entities,
        "surfacings": len(s),
        "relevant": sum(x["relevant"] for x in s),
        "precision": round(run.precision, 3),
        "recall": round(run.recall, 3),
        "by_trigger": {t: f"{sum(x['relevant'] for x in s if x['trigger'] == t)}/"
                          f"{sum(x['trigger'] == t for x in s)}" for t in sorted({x["trigger"] for x in s})},
        "false_positives": len(fp),
        "fp_stale_note_its_own_matter": stale_same,
        "fp_stale_note_other_matter": len(stale) - stale_same,
        "fp_wanted_note_other_matter": len(fp) - len(stale),
        "surfaced_in_the_turn_it_was_dictated": len(same_turn),
        "precision_excluding_that_turn": round(rel_later / len(later), 3) if later else None,
        "notes_held": int(run.note_table["id"].size),
        "notes_whose_escalation_passes_threshold": len(can),
        "of_which_no_turn_inside_that_window": no_turn,
        "expired_escalated_to_user": expiries.get("escalated_to_user", 0),
        "expired_archived": expiries.get("archived", 0),
    }


def tradeoff_table(values: tuple[int, ...] = (1, 2, 3)) -> list[dict[str, Any]]:
    """Precision and recall of surfacing for each ``min_shared_entities``."""
    out = []
    for k in values:
        r = surfacing_report(k)
        out.append({key: r[key] for key in ("min_shared_entities", "surfacings", "relevant", "precision",
                                            "recall", "false_positives")})
    return out


def print_rows(rows: list[dict[str, Any]]) -> None:
    """A list of flat dicts as a fixed-width table."""
    keys = list(rows[0])
    widths = [max(len(k), *(len(str(r[k])) for r in rows)) for k in keys]
    print("  ".join(k.rjust(w) for k, w in zip(keys, widths)))
    for r in rows:
        print("  ".join(str(r[k]).rjust(w) for k, w in zip(keys, widths)))


# ---------------------------------------------------------------- explorer
_COLORS = {"urgent": "#d62728", "normal": "#1f77b4", "low": "#2ca02c"}


class EscalationExplorer(LessonExplorer):
    """One effective-priority curve per urgency; sliders for TTLs, priority and escalation."""

    title = "Effective priority over a note's life"

    def __init__(self, base_priority: float = 0.6, urgent_ttl_h: float = 3.0, normal_ttl_h: float = 36.0,
                 low_ttl_h: float = 168.0, warn_fraction: float = 0.2, warn_multiplier: float = 1.5,
                 critical_fraction: float = 0.05, critical_multiplier: float = 2.0) -> None:
        self.table = scenario_run().note_table
        super().__init__(base_priority=base_priority, urgent_ttl_h=urgent_ttl_h, normal_ttl_h=normal_ttl_h,
                         low_ttl_h=low_ttl_h, warn_fraction=warn_fraction, warn_multiplier=warn_multiplier,
                         critical_fraction=critical_fraction, critical_multiplier=critical_multiplier)

    def _make_sliders(self, params: dict[str, Any]) -> dict[str, Any]:
        return {
            "base_priority": float_slider("base priority", params["base_priority"], 0.05, 1.0, 0.01),
            "urgent_ttl_h": float_slider("urgent TTL (h)", params["urgent_ttl_h"], 1.0, 6.0, 0.25),
            "normal_ttl_h": float_slider("normal TTL (h)", params["normal_ttl_h"], 12.0, 72.0, 1.0, ".0f"),
            "low_ttl_h": float_slider("low TTL (h)", params["low_ttl_h"], 48.0, 336.0, 12.0, ".0f"),
            "warn_fraction": float_slider("warn below (share of TTL left)", params["warn_fraction"],
                                          0.02, 0.6, 0.01),
            "warn_multiplier": float_slider("warn multiplier", params["warn_multiplier"], 1.0, 3.0, 0.05),
            "critical_fraction": float_slider("critical below (share left)", params["critical_fraction"],
                                              0.01, 0.5, 0.01),
            "critical_multiplier": float_slider("critical multiplier", params["critical_multiplier"],
                                                1.0, 4.0, 0.05),
        }

    def _make_figure(self) -> Any:
        from plotly.subplots import make_subplots

        go = _go()
        fig = go.FigureWidget(make_subplots(rows=1, cols=3, subplot_titles=URGENCIES, shared_yaxes=True,
                                            horizontal_spacing=0.04))
        for col, u in enumerate(URGENCIES, start=1):
            fig.add_scatter(name=u, x=[0], y=[0], mode="lines", line=dict(color=_COLORS[u], width=3),
                            row=1, col=col, hovertemplate="%{x:.2f} h: %{y:.3f}<extra>" + u + "</extra>")
        for col in range(1, 4):
            fig.add_scatter(name="steps", x=[], y=[], mode="lines", showlegend=col == 1,
                            line=dict(color="gray", dash="dot", width=1), row=1, col=col, hoverinfo="skip")
        for col in range(1, 4):
            fig.add_scatter(name="surfacing threshold", x=[], y=[], mode="lines", showlegend=col == 1,
                            line=dict(color="black", dash="dash", width=1), row=1, col=col, hoverinfo="skip")
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
        for k, u in enumerate(URGENCIES):
            line = self.fig.data[k]
            line.x = c.hours[u]
            line.y = c.values[u]
            f = c.facts[u]
            self.fig.data[3 + k].x = [f.warn_at, f.warn_at, None, f.critical_at, f.critical_at]
            self.fig.data[3 + k].y = [0, 1.05, None, 0, 1.05]
            self.fig.data[6 + k].x = [0, f.ttl_hours]
            self.fig.data[6 + k].y = [thr, thr]

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
        ps = priority_surfacers(self.table, s)
        out["scenario_notes_that_can_surface_on_priority"] = f"{ps['can_surface_on_priority']}/{ps['notes']}"
        return out
