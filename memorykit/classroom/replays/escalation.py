"""One note's escalation over its whole life, and which notes can ever surface on priority.

``band_facts(priority, ttl_hours, settings)`` says when the warning and critical steps
start, what they do to the note's effective priority, when it first passes the surfacing
threshold (and so how long before expiry a reminder can come), and what expiry does with
it. ``escalation_curves`` samples the effective priority of one note per urgency from
creation to expiry, with the steps drawn vertical (at the hours ``life_hours`` gives, where
lesson 06 also evaluates a student's rule). Both evaluate the library's own
``effective_priority``, so what they show cannot drift from what a ``NoteQueue`` does.
``priority_surfacers`` counts the notes of a run whose escalation can pass the threshold.
Taught in ``notebooks/06_notes_ttl.ipynb``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from memorykit._validate import require_int, require_positive, require_unit_interval
from memorykit.workspace.notes import HOUR, URGENCIES, NoteSettings, effective_priority

POINTS = 481
"""Samples per curve (the steps are drawn at their exact times as well)."""


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
    ttl_hours = require_positive("ttl_hours", ttl_hours)
    s = settings
    warn_at = (1 - s.warn_fraction) * ttl_hours
    crit_at = (1 - s.critical_fraction) * ttl_hours
    # Exactly at the boundary the factor does not change yet (strict <): sample just after it.
    eps = 1e-9 * ttl_hours
    at = np.array([0.0, warn_at + eps, crit_at + eps]) * HOUR
    v0, v1, v2 = effective_priority([p], [0.0], [ttl_hours * HOUR], at, s)[0]
    starts = ((0.0, v0), (warn_at, v1), (crit_at, v2))
    surf = next((t for t, v in starts if v > s.surfacing_threshold), None)
    top = next((t for t, v in starts if v >= 1.0), None)
    return BandFacts(urgency, float(ttl_hours), p, warn_at, crit_at, float(v1), float(v2), surf, top,
                     "escalated_to_user" if p >= s.high_priority_cutoff else "archived")


def life_hours(facts: BandFacts, points: int = POINTS) -> np.ndarray:
    """The hours at which a note's curve is sampled, creation to (just before) expiry: an even
    grid plus each step's time just before and just after it, so the steps are drawn vertical."""
    require_int("points", points, minimum=2)
    grid = np.linspace(0.0, facts.ttl_hours, points)[:-1]
    steps = np.array([facts.warn_at, facts.warn_at * (1 + 1e-9),
                      facts.critical_at, facts.critical_at * (1 + 1e-9)])
    return np.sort(np.concatenate([grid, steps]))


@dataclass(frozen=True)
class EscalationCurves:
    """Effective priority over the life of one note per urgency, and the facts of each."""

    settings: NoteSettings
    base_priority: float
    hours: dict[str, np.ndarray]
    """Hours since the note was made, per urgency (the step times included twice)."""
    values: dict[str, np.ndarray]
    """Effective priority at those hours."""
    facts: dict[str, BandFacts]


def escalation_curves(base_priority: float = 0.6, settings: NoteSettings = NoteSettings(),
                      points: int = POINTS) -> EscalationCurves:
    """Effective priority from creation to expiry of one note per urgency (TTLs from ``settings``)."""
    require_int("points", points, minimum=2)
    hours, values, facts = {}, {}, {}
    for u in URGENCIES:
        ttl_h = float(settings.ttl_hours[u])
        f = band_facts(base_priority, ttl_h, settings, u)
        h = life_hours(f, points)
        hours[u] = h
        values[u] = effective_priority([base_priority], [0.0], [ttl_h * HOUR], h * HOUR, settings)[0]
        facts[u] = f
    return EscalationCurves(settings, float(base_priority), hours, values, facts)


def priority_surfacers(table: Mapping[str, np.ndarray], settings: NoteSettings) -> dict[str, int]:
    """Notes (of a run's ``note_table``) whose effective priority ever passes the surfacing threshold.

    Every note that lives to its end goes through both bands, so this is a
    property of its base priority: max(p, p x warn, p x critical), capped at 1.
    """
    p = np.asarray(table["priority"], dtype=float)
    s = settings
    # Each note's value midway through the warning band and inside the critical band (notes
    # made at 0 with a TTL of 1, looked at with those shares of it left), in one evaluation.
    left = np.array([(s.warn_fraction + s.critical_fraction) / 2, s.critical_fraction / 2])
    warn, peak = effective_priority(p, np.zeros_like(p), np.ones_like(p), 1.0 - left, s).T
    in_warn = warn > s.surfacing_threshold
    return {
        "notes": int(p.size),
        "can_surface_on_priority": int((peak > settings.surfacing_threshold).sum()),
        "already_in_warning_band": int(in_warn.sum()),
        "escalated_to_user_at_expiry": int((p >= settings.high_priority_cutoff).sum()),
    }
