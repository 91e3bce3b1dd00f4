"""Lesson 04's "which clock?" section: one session, one entity memory, three time bases.

A user opens page 42, keeps working on a blog entry, takes a 15-minute break,
then comes back and asks to update "that page". The same script runs three
times, once per time basis (``memorykit.clock``), on an ``EntityMemory`` with
D0's 5-minute TTL, and the table says how long page 42 has been idle and
whether it is still remembered at every turn:

* wall: the times a ``WallClock`` would read during this session. A compared
  notebook cannot wait 15 minutes, so the recorded minutes are replayed through a
  ``StepClock`` set to each turn's time: the numbers a live agent would see.
* simulated: the library's default clocks (a ``StepClock`` at 0 in the factory and in
  the memory), left alone: nothing ages.
* per turn: a ``TurnClock`` shared by the ``MessageFactory`` that writes the user
  messages and the memory, 60 s a turn whatever the user's pauses.

Taught in ``notebooks/04_entity_memory.ipynb``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from memorykit._validate import require_positive
from memorykit.clock import Clock, StepClock, TurnClock
from memorykit.entities import Entity, EntityMemory
from memorykit.entities.memory import SEED_TTL_MINUTES
from memorykit.messages import MessageFactory

SESSION: tuple[tuple[float, str], ...] = (
    (0.0, "Show me page 42."),
    (1.0, "Open the draft blog entry."),
    (1.0, "Fix the typo in its second paragraph."),
    (1.0, "Publish it."),
    (15.0, "I'm back from a break. Show the blog entry again."),
    (1.0, "Add a closing line to it."),
    (1.0, "Now update that page's title."),
)
"""(minutes since the previous user turn, what the user says). Page 42 is mentioned once, at
turn 1; the blog entry at every turn from 2 on."""

PAGE = Entity("page", "42", "Pricing")
ENTRY = Entity("entry", "7", "Spring launch")


def _basis_run(clock: Clock | None, times: Sequence[float], advance: Callable[[float], None],
               ttl_minutes: float) -> list[tuple[float, float | None]]:
    """(now in minutes, page 42's idle minutes or None once forgotten) after each user turn.
    ``clock=None`` runs the factory and the memory on their own default clocks."""
    factory = MessageFactory(clock=clock)
    memory = EntityMemory(ttl_minutes=ttl_minutes, clock=clock)
    clock = memory.clock
    out: list[tuple[float, float | None]] = []
    for at, (_, text) in zip(times, SESSION):
        advance(at)
        message = factory.user(text)  # on a TurnClock this is what moves time
        memory.add(PAGE if message.turn == 1 else ENTRY, turn=message.turn)
        memory.expire()
        now = clock.now()
        held = memory.accounting(PAGE.key)
        out.append((now / 60.0, None if held is None else (now - held[0]) / 60.0))
    return out


def time_bases_table(ttl_minutes: float = SEED_TTL_MINUTES,
                     seconds_per_turn: float = 60.0) -> list[dict[str, Any]]:
    """One row per user turn of ``SESSION``: for each basis, the clock in minutes and page 42's
    idle minutes (or "forgotten" once the TTL removed it)."""
    require_positive("ttl_minutes", ttl_minutes)
    times, t = [], 0.0
    for gap, _ in SESSION:
        t += gap * 60.0
        times.append(t)
    wall = StepClock()
    runs: dict[str, list[tuple[float, float | None]]] = {
        "wall": _basis_run(wall, times, wall.set, ttl_minutes),
        "simulated": _basis_run(None, times, lambda _: None, ttl_minutes),
        "per turn": _basis_run(TurnClock(seconds_per_turn), times, lambda _: None, ttl_minutes),
    }
    rows = []
    for i, (_, text) in enumerate(SESSION):
        row: dict[str, Any] = {"turn": i + 1}
        for basis, run in runs.items():
            now, idle = run[i]
            row[f"{basis} (min)"] = f"{now:g}"
            row[f"{basis}: page idle"] = "forgotten" if idle is None else f"{idle:g}"
        rows.append(row)
    return rows


__all__ = ["SESSION", "time_bases_table"]
