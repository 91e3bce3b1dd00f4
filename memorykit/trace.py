"""The trace: every decision a memory made, explained.

Evictions, summarizations, compressions and budget warnings are recorded as
small event records. Notebooks plot them (an eviction timeline is a trace);
tests check them (every evicted message is reported exactly once).
Taught in ``notebooks/02_pruning_strategies.ipynb``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Iterator


@dataclass(frozen=True, slots=True)
class Eviction:
    """Messages removed from a memory, and why."""

    message_ids: tuple[str, ...]
    """Everything removed together: a message, or a tool call with its results."""
    rule: str
    """Which rule chose the victim: 'fifo', 'importance', 'hybrid-below-threshold', ..."""
    reason: str
    """A human sentence with the numbers that decided it."""
    score: float | None
    """The victim's score under the rule (importance, effective importance...), if any."""
    tokens_before: int
    tokens_after: int
    budget: int | None
    at: float
    """Clock time of the decision."""
    turn: int
    """Turn of the message whose arrival triggered the eviction."""

    kind = "eviction"


@dataclass(frozen=True, slots=True)
class Summarization:
    """Messages replaced by a summary (which may itself summarize summaries)."""

    message_ids: tuple[str, ...]
    """The messages (originals or earlier summaries) taken out of the window."""
    summary_id: str
    covered_ids: tuple[str, ...]
    """The original messages the new summary stands for."""
    depth: int
    rule: str
    reason: str
    tokens_before: int
    tokens_after: int
    budget: int | None
    at: float
    turn: int

    kind = "summarization"


@dataclass(frozen=True, slots=True)
class OverBudget:
    """The budget cannot be met: only protected messages remain."""

    tokens: int
    budget: int
    protected_ids: tuple[str, ...]
    reason: str
    at: float
    turn: int

    kind = "over_budget"


Event = Eviction | Summarization | OverBudget


class Trace:
    """An append-only list of events with a few views for plotting and checking."""

    __slots__ = ("_events",)

    def __init__(self) -> None:
        self._events: list[Event] = []

    def append(self, event: Event) -> None:
        self._events.append(event)

    def __iter__(self) -> Iterator[Event]:
        return iter(self._events)

    def __len__(self) -> int:
        return len(self._events)

    def __getitem__(self, i: int) -> Event:
        return self._events[i]

    def evictions(self) -> list[Eviction]:
        return [e for e in self._events if isinstance(e, Eviction)]

    def summarizations(self) -> list[Summarization]:
        return [e for e in self._events if isinstance(e, Summarization)]

    def evicted_ids(self) -> list[str]:
        return [i for e in self._events if isinstance(e, Eviction) for i in e.message_ids]

    def summarized_ids(self) -> list[str]:
        """Messages taken out by summarization (originals and summaries alike)."""
        return [i for e in self._events if isinstance(e, Summarization) for i in e.message_ids]

    def records(self) -> list[dict[str, Any]]:
        """One flat dict per event (with its ``kind``), ready for a table or a plot."""
        return [{"kind": e.kind, **asdict(e)} for e in self._events]
