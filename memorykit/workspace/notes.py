"""Column 2: notes, an acknowledged queue with time-to-live and escalation.

A note is something the agent has acknowledged but is not working on: "review
the Cheyenne variance report later". D2 gives notes three behaviours:

* a TTL by urgency: urgent 2-4 h, normal 24-48 h, low 7 days. ``NoteSettings``
  defaults to the midpoints (3 h, 36 h, 168 h); a note may carry its own TTL.
* escalation: effective priority = min(1, priority * factor), where factor is
  2.0 when under 5% of the TTL remains, 1.5 when under 20%, else 1.0. Both
  comparisons are strict, as in the seed's code: at exactly 20% remaining the
  factor is still 1.0, at exactly 5% it is 1.5. The fraction is computed as
  remaining time / TTL so round numbers stay exact at the boundaries.
* expiry: a high-priority note (base priority >= ``high_priority_cutoff``,
  0.5 by default; the seed gives no number) is escalated to the user with a
  question; a low-priority one is archived silently.
* proactive surfacing: a note surfaces when its effective priority is above
  ``surfacing_threshold`` (strictly, 0.9) or when it shares an entity with the
  current context. The seed is silent on repeats; here a surfaced note stays
  quiet for ``surface_cooldown_hours`` (4 h) so one reminder is not repeated
  every turn.

``effective_priority`` is vectorized over notes x times for notebooks and
sliders. ``NoteQueue.tick`` applies the same band rule note by note (it must,
to record each escalation) and keeps the values it computed: surfacing and
ranking at that instant reuse them, and a later tick before any note's next
band, expiry or creation has nothing to recompute. A test holds the two equal,
band boundaries included.
Taught in ``notebooks/06_notes_ttl.ipynb``.
"""

from __future__ import annotations

import math
import sys
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from memorykit._validate import require_choice, require_fraction, require_int, require_non_negative
from memorykit._validate import require_positive, require_real, require_str, require_unit_interval
from memorykit.trace import Trace
from memorykit.workspace.events import NoteEscalation, NoteExpiry, NoteSurfacing

URGENCIES = ("urgent", "normal", "low")
NOTE_SOURCES = ("user", "system", "inferred")
HOUR = 3600.0


def _default_ttl_hours() -> dict[str, float]:
    return {"urgent": 3.0, "normal": 36.0, "low": 168.0}


@dataclass(frozen=True)
class NoteSettings:
    """TTL, escalation, expiry and surfacing rules of the Notes column."""

    ttl_hours: Mapping[str, float] = field(default_factory=_default_ttl_hours)
    """TTL by urgency, in hours. Midpoints of D2's ranges: urgent 2-4, normal 24-48, low 7 days."""
    warn_fraction: float = 0.2
    """Escalate by ``warn_multiplier`` when strictly less than this share of the TTL remains."""
    warn_multiplier: float = 1.5
    """Escalation factor in the warning band."""
    critical_fraction: float = 0.05
    """Escalate by ``critical_multiplier`` when strictly less than this share remains."""
    critical_multiplier: float = 2.0
    """Escalation factor in the critical band."""
    surfacing_threshold: float = 0.9
    """Surface a note when its effective priority is strictly above this."""
    high_priority_cutoff: float = 0.5
    """On expiry, a note with base priority >= this is escalated to the user; below it, archived."""
    surface_cooldown_hours: float = 4.0
    """A surfaced note is not surfaced again for this long (the seed does not say)."""
    min_shared_entities: int = 1
    """Entities a note must share with the context to surface by overlap (seed: any overlap, 1)."""
    archive_limit: int = 10_000
    """Notes ``NoteQueue.archived`` keeps, the newest (a queue that runs for months stays
    bounded; the trace still records every expiry)."""

    def __post_init__(self) -> None:
        if not isinstance(self.ttl_hours, Mapping):
            raise TypeError(f"ttl_hours must be a mapping of urgency to hours, got {self.ttl_hours!r}")
        missing = [u for u in URGENCIES if u not in self.ttl_hours]
        if missing:
            raise ValueError(f"ttl_hours must give every urgency {URGENCIES}, missing {missing}")
        for urgency, hours in self.ttl_hours.items():
            require_choice("ttl_hours urgency", urgency, URGENCIES)
            require_positive(f"ttl_hours[{urgency!r}]", hours)
        object.__setattr__(self, "ttl_hours", dict(self.ttl_hours))
        require_fraction("warn_fraction", self.warn_fraction)
        require_fraction("critical_fraction", self.critical_fraction)
        if self.critical_fraction >= self.warn_fraction:
            raise ValueError(
                f"critical_fraction must be < warn_fraction, got {self.critical_fraction} >= {self.warn_fraction}"
            )
        for name in ("warn_multiplier", "critical_multiplier"):
            if require_real(name, getattr(self, name)) < 1:
                raise ValueError(f"{name} must be >= 1 (escalation never lowers priority), got {getattr(self, name)!r}")
        if self.critical_multiplier < self.warn_multiplier:
            raise ValueError(
                f"critical_multiplier must be >= warn_multiplier, got {self.critical_multiplier} < {self.warn_multiplier}"
            )
        require_unit_interval("surfacing_threshold", self.surfacing_threshold)
        require_unit_interval("high_priority_cutoff", self.high_priority_cutoff)
        require_non_negative("surface_cooldown_hours", self.surface_cooldown_hours)
        require_int("min_shared_entities", self.min_shared_entities, minimum=1)
        require_int("archive_limit", self.archive_limit, minimum=1, maximum=sys.maxsize)

    def ttl_seconds(self, urgency: str) -> float:
        return float(self.ttl_hours[require_choice("urgency", urgency, URGENCIES)]) * HOUR


def escalation_factor(remaining_fraction, settings: NoteSettings = NoteSettings()) -> np.ndarray:
    """1.0, ``warn_multiplier`` or ``critical_multiplier`` for each remaining share of TTL (strict <)."""
    r = np.asarray(remaining_fraction, dtype=float)
    return np.where(
        r < settings.critical_fraction,
        settings.critical_multiplier,
        np.where(r < settings.warn_fraction, settings.warn_multiplier, 1.0),
    )


def remaining_fraction(created, ttl, now) -> np.ndarray:
    """Share of the TTL still left: (created + ttl - now) / ttl, broadcast like numpy."""
    created = np.asarray(created, dtype=float)
    ttl = np.asarray(ttl, dtype=float)
    return (created + ttl - np.asarray(now, dtype=float)) / ttl


def effective_priority(priority, created, ttl, now, settings: NoteSettings = NoteSettings()) -> np.ndarray:
    """min(1, priority * escalation) for notes x times, in one numpy pass.

    ``priority``, ``created`` and ``ttl`` (seconds) describe N notes; ``now`` is
    one time or an array of T times. With an array ``now`` the result is (N, T)
    (or (T,) for a scalar note). Cells where the note does not exist yet
    (now < created) or has expired (now >= created + ttl) are NaN, so a
    heatmap shows each note's lifetime.
    """
    p = np.asarray(priority, dtype=float)
    c = np.asarray(created, dtype=float)
    ttl = np.asarray(ttl, dtype=float)
    if np.any((p < 0) | (p > 1)):
        raise ValueError(f"priority must be in [0, 1], got {p[(p < 0) | (p > 1)].ravel()[:3].tolist()}")
    if np.any(ttl <= 0):
        raise ValueError(f"ttl must be > 0 seconds, got {ttl[ttl <= 0].ravel()[:3].tolist()}")
    t = np.asarray(now, dtype=float)
    if t.ndim == 1 and p.ndim == 1:
        p, c, ttl, t = p[:, None], c[:, None], ttl[:, None], t[None, :]
    r = remaining_fraction(c, ttl, t)
    value = np.minimum(1.0, p * escalation_factor(r, settings))
    alive = (t >= c) & (r > 0)
    return np.where(alive, value, np.nan)


@dataclass(slots=True)
class Note:
    """An acknowledged item waiting for attention."""

    id: str
    content: str
    """Natural language; entities are found in it by the extractor."""
    created_at: float
    ttl: float
    """Time to live, seconds."""
    priority: float
    """Base priority in [0, 1], before escalation."""
    urgency: str = "normal"
    source: str = "user"
    """'user' (the user asked), 'system' (a demoted or deferred task) or 'inferred'."""
    context: dict[str, Any] = field(default_factory=dict)
    """Entity ids (as keys) relevant when the note was taken, as in the seed."""
    task: Any = None
    """The ``Task`` this note holds, when a task was demoted or not admitted."""

    def __post_init__(self) -> None:
        require_str("id", self.id, non_empty=True)
        require_str("content", self.content, non_empty=True)
        self.created_at = require_real("created_at", self.created_at)
        self.ttl = require_positive("ttl", self.ttl)
        self.priority = require_unit_interval("priority", self.priority)
        require_choice("urgency", self.urgency, URGENCIES)
        require_choice("source", self.source, NOTE_SOURCES)
        if not isinstance(self.context, dict):
            raise TypeError(f"context must be a dict, got {self.context!r}")

    @property
    def expires_at(self) -> float:
        return self.created_at + self.ttl

    def remaining_fraction(self, now: float) -> float:
        return (self.created_at + self.ttl - now) / self.ttl


def _duration(seconds: float) -> str:
    seconds = max(0.0, seconds)
    if seconds >= 2 * 86400:
        return f"{seconds / 86400:.1f} days"
    if seconds >= 2 * HOUR:
        return f"{seconds / HOUR:.1f} h"
    return f"{seconds / 60:.0f} min"


@dataclass(slots=True)
class _Ticked:
    """A ``NoteQueue``'s last tick: the effective priority of each live note at ``at``."""

    at: float
    effective: dict[str, float]
    changes: dict[str, float]
    """When each note's value next changes (a band starts, it expires or it is made)."""
    due: float
    """No note changes its value before this time (a band starts, it expires or it is made)."""
    top: float
    """The highest effective priority at the tick (notes resolved since can only lower it;
    notes not yet made do not count)."""
    settings: NoteSettings
    """The settings the values were computed under (the queue's may be replaced)."""


def _rank_key(note: Note, effective: float) -> tuple[float, float, str]:
    """Highest effective priority first, then the earlier deadline; a NaN (expired, not yet
    ticked) ranks last."""
    return (-effective if effective == effective else 1.0, note.expires_at, note.id)


def expiry_question(note: Note) -> str:
    """What the agent asks the user when a high-priority note runs out of time."""
    who = "You asked me to keep in mind" if note.source == "user" else "I had noted"
    return f'{who}: "{note.content}". Its time window has run out. Should I prioritize this now, or drop it?'


class NoteQueue:
    """The live notes, with escalation, expiry and surfacing as explained events.

    Methods take ``now`` explicitly; ``WorkingMemory`` reads its clock once per
    operation and passes the same instant to every column.
    """

    def __init__(self, settings: NoteSettings = NoteSettings(), trace: Trace | None = None) -> None:
        if not isinstance(settings, NoteSettings):
            raise TypeError(f"settings must be NoteSettings, got {settings!r}")
        self.settings = settings
        self.trace = trace if trace is not None else Trace()
        self._notes: dict[str, Note] = {}
        self._entities: dict[str, frozenset[str]] = {}
        self._band: dict[str, int] = {}
        self._last_surfaced: dict[str, float] = {}
        # What the last tick computed, while no note has been added since: surfacing and
        # ranking right after a tick (every observed turn) reuse it, and a tick before the
        # next band boundary, expiry or creation of any note has nothing to recompute.
        self._ticked: _Ticked | None = None
        self.archived: deque[Note] = deque(maxlen=settings.archive_limit)
        """Notes that expired silently or were escalated, and notes resolved by the user (the
        newest ``settings.archive_limit``)."""

    # ----------------------------------------------------------------- reading
    def __len__(self) -> int:
        return len(self._notes)

    def __contains__(self, note_id: object) -> bool:
        return note_id in self._notes

    def __iter__(self):
        return iter(self._notes.values())

    def get(self, note_id: str) -> Note:
        try:
            return self._notes[note_id]
        except KeyError:
            raise KeyError(f"note_id {note_id!r} is not a live note") from None

    def entities(self, note_id: str) -> frozenset[str]:
        self.get(note_id)
        return self._entities[note_id]

    def all_entities(self) -> frozenset[str]:
        return frozenset().union(*self._entities.values()) if self._entities else frozenset()

    def effective_priorities(self, now: float) -> dict[str, float]:
        """Effective priority of every live note at ``now`` (expired ones are NaN until ``tick``)."""
        if not self._notes:
            return {}
        if self._fresh(now):
            return dict(self._ticked.effective)
        notes = list(self._notes.values())
        values = effective_priority(
            [n.priority for n in notes], [n.created_at for n in notes], [n.ttl for n in notes], now, self.settings
        )
        return {n.id: float(v) for n, v in zip(notes, np.atleast_1d(values))}

    def ranked(self, now: float) -> list[tuple[Note, float]]:
        """Live notes by effective priority (highest first; then the earlier deadline)."""
        eff = self.effective_priorities(now)
        notes = sorted(self._notes.values(), key=lambda n: _rank_key(n, eff[n.id]))
        return [(n, eff[n.id]) for n in notes]

    # ----------------------------------------------------------------- writing
    def add(self, note: Note, entities: Iterable[str] = ()) -> Note:
        """Queue a note; ``entities`` are what the extractor found in it (context keys are added)."""
        if not isinstance(note, Note):
            raise TypeError(f"note must be a Note, got {note!r}")
        if note.id in self._notes:
            raise ValueError(f"note id {note.id!r} is already in the queue")
        self._notes[note.id] = note
        self._entities[note.id] = frozenset(entities) | frozenset(note.context)
        self._band[note.id] = 0
        self._ticked = None
        return note

    def resolve(self, note_id: str) -> Note:
        """The user (or the agent) dealt with the note: it leaves the queue, no event."""
        note = self._pop(note_id)
        self.archived.append(note)
        return note

    def take(self, note_id: str) -> Note:
        """Remove a note without archiving it (its task is being promoted)."""
        return self._pop(note_id)

    def _fresh(self, now: float) -> bool:
        """Whether the last tick's values are the values at ``now``."""
        last = self._ticked
        return last is not None and last.at == now and last.settings is self.settings

    def _pop(self, note_id: str) -> Note:
        note = self.get(note_id)
        del self._notes[note_id], self._entities[note_id], self._band[note_id]
        self._last_surfaced.pop(note_id, None)
        if self._ticked is not None:
            self._ticked.effective.pop(note_id, None)
            self._ticked.changes.pop(note_id, None)
        return note

    def tick(self, now: float) -> list[NoteEscalation | NoteExpiry]:
        """Expire notes whose TTL ran out and record every escalation band crossed since last time."""
        return self._tick(require_real("now", now))

    def observe(
        self, context_entities: Iterable[str], now: float, turn: int = -1
    ) -> tuple[list[NoteEscalation | NoteExpiry], list[NoteSurfacing]]:
        """One conversation turn's work on the notes: ``tick``, then ``surface`` at the same instant."""
        return self._observe(frozenset(context_entities), require_real("now", now), turn)

    def _observe(self, context: frozenset[str], now: float, turn: int
                 ) -> tuple[list[NoteEscalation | NoteExpiry], list[NoteSurfacing]]:
        """``observe`` for a caller whose ``now`` is already a finite number (a memory's clock)."""
        return self._tick(now), self._surface(context, now, turn)

    def _tick(self, now: float) -> list[NoteEscalation | NoteExpiry]:
        s = self.settings
        last = self._ticked
        # Since a tick at an earlier time under these settings, with no note added since, only
        # the notes whose value changes by now (next band, expiry, creation) need a look.
        since = last if last is not None and last.settings is s and last.at <= now else None
        if since is not None and now < since.due:
            since.at = now  # nothing has changed: the values stand, nothing to record
            return []
        factors = (1.0, s.warn_multiplier, s.critical_multiplier)
        starts = (1.0 - s.warn_fraction, 1.0 - s.critical_fraction, 1.0)  # of the TTL, per band
        events: list[NoteEscalation | NoteExpiry] = []
        effective = since.effective if since is not None else {}
        changes = since.changes if since is not None else {}
        due = math.inf
        for note in list(self._notes.values()):
            if since is not None and changes[note.id] > now:
                due = min(due, changes[note.id])
                continue
            r = note.remaining_fraction(now)
            if r <= 0:
                self._pop(note.id)
                self.archived.append(note)
                if note.priority >= s.high_priority_cutoff:
                    event = NoteExpiry(
                        note.id, "escalated_to_user", note.priority, expiry_question(note),
                        f"TTL of {_duration(note.ttl)} ran out and base priority {note.priority:.2f} >= "
                        f"high_priority_cutoff {s.high_priority_cutoff:.2f}: ask the user",
                        now,
                    )
                else:
                    event = NoteExpiry(
                        note.id, "archived", note.priority, None,
                        f"TTL of {_duration(note.ttl)} ran out and base priority {note.priority:.2f} < "
                        f"high_priority_cutoff {s.high_priority_cutoff:.2f}: archived silently",
                        now,
                    )
                events.append(event)
                continue
            # The band rule of ``escalation_factor`` (strict <), one note at a time.
            band = 2 if r < s.critical_fraction else 1 if r < s.warn_fraction else 0
            factor = factors[band]
            eff = min(1.0, note.priority * factor)
            effective[note.id] = eff if now >= note.created_at else float("nan")
            # When this note's value next changes: it comes into being, or the next band (or
            # expiry) starts; a hair early, so rounding can only make a tick look, never skip.
            change = note.created_at if now < note.created_at else note.created_at + note.ttl * starts[band]
            changes[note.id] = change - 1e-9 * (abs(note.created_at) + note.ttl)
            due = min(due, changes[note.id])
            if band > self._band[note.id]:
                self._band[note.id] = band
                limit = s.critical_fraction if band == 2 else s.warn_fraction
                events.append(
                    NoteEscalation(
                        note.id, factor, r, eff,
                        f"{r:.1%} of the TTL left (< {limit:.0%}): priority {note.priority:.2f} x {factor:g} "
                        f"= {eff:.2f}" + (" (capped at 1)" if note.priority * factor > 1 else ""),
                        now,
                    )
                )
        for e in events:
            self.trace.append(e)
        top = max((v for v in effective.values() if v == v), default=-math.inf)  # NaN: not yet made
        self._ticked = _Ticked(now, effective, changes, due, top, s)
        return events

    def surface(self, context_entities: Iterable[str], now: float, turn: int = -1) -> list[NoteSurfacing]:
        """Notes worth bringing up now: effective priority above the threshold, or shared entities."""
        return self._surface(frozenset(context_entities), require_real("now", now), turn)

    def _surface(self, context: frozenset[str], now: float, turn: int) -> list[NoteSurfacing]:
        s = self.settings
        if not context and self._fresh(now) and not self._ticked.top > s.surfacing_threshold:
            return []  # nothing to share entities with, and no note is above the threshold
        cooldown = s.surface_cooldown_hours * HOUR
        effective = self.effective_priorities(now)
        due: list[tuple[Note, float, tuple[str, ...], bool]] = []
        for note in self._notes.values():
            eff = effective[note.id]
            if eff != eff:
                continue  # NaN: expired but not yet ticked (tick() decides its fate), or not yet made
            last = self._last_surfaced.get(note.id)
            if last is not None and now - last < cooldown:
                continue
            shared = tuple(sorted(self._entities[note.id] & context)) if context else ()
            if len(shared) < s.min_shared_entities:
                shared = ()
            urgent = eff > s.surfacing_threshold
            if urgent or shared:
                due.append((note, eff, shared, urgent))
        due.sort(key=lambda d: _rank_key(d[0], d[1]))  # brought up in ``ranked`` order
        events: list[NoteSurfacing] = []
        for note, eff, shared, urgent in due:
            trigger = "priority+overlap" if urgent and shared else "priority" if urgent else "overlap"
            parts = []
            if urgent:
                parts.append(f"effective priority {eff:.2f} > {s.surfacing_threshold:.2f}")
            if shared:
                parts.append(f"shares {', '.join(shared)} with the current context")
            if shared:
                message = f'Earlier you mentioned: "{note.content}". Would you like me to pull that up now?'
            else:
                left = _duration(note.expires_at - now)
                message = f'Reminder: "{note.content}" runs out in {left}. Should I take it up now?'
            self._last_surfaced[note.id] = now
            events.append(NoteSurfacing(note.id, trigger, eff, shared, turn, message, "; ".join(parts), now))
        for e in events:
            self.trace.append(e)
        return events
