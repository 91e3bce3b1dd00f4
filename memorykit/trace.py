"""The trace: every decision a memory made, explained.

Evictions, summarizations, compressions and budget warnings are recorded as
small event records. Notebooks plot them (an eviction timeline is a trace);
tests check them (every evicted message is reported exactly once).
Taught in ``notebooks/02_pruning_strategies.ipynb``.
"""

from __future__ import annotations

from collections import deque
from dataclasses import asdict, dataclass
from typing import Any, Iterator, NamedTuple

from memorykit._validate import require_optional_int


class Victim(NamedTuple):
    """A memory's choice of what to evict, before it is evicted: one shape for every memory
    (conversation buffers return the same four fields as a plain ``VictimTuple``).

    Conversation buffers choose message ids, entity memories ``type:id`` keys; the
    eviction record built from it (``Eviction``, ``EntityEviction``) adds the numbers of
    the moment.
    """

    id: str
    """The message id or entity key chosen."""
    rule: str
    """The rule that chose it: 'fifo', 'importance', 'relevance', ..."""
    reason: str
    """A human sentence with the numbers that decided it."""
    score: float | None = None
    """The victim's score under the rule, if the rule has one."""


VictimTuple = tuple[str, str, str, "float | None"]
"""A ``Victim``'s four fields as a plain tuple, in its order: what conversation buffers return
from ``_choose_victim`` (one per eviction; building the named tuple there costs ~5% of a
buffer's add path). ``_evict`` unpacks either form the same way."""


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
    """The originals this round brought under the new summary. A summary's earlier
    originals are named by the event that made the summary it replaced (in
    ``message_ids``), so the trace grows with the messages, not with the chain;
    ``SummaryBuffer.originals`` resolves a kept summary's whole chain."""
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


def error_label(exc: BaseException) -> str:
    """An error as a trace may keep it: its type and ``kind`` only, never its text.

    An error's text can carry a URL with a key in it, or a user's message; a
    record that outlives the call must not.
    """
    kind = getattr(getattr(exc, "cause", None), "kind", None) or getattr(exc, "kind", None)
    return type(exc).__name__ + (f" ({kind})" if isinstance(kind, str) and kind else "")


class Trace:
    """An append-only record of events with a few views for plotting and checking.

    By default it keeps every event, which is what the notebooks plot. A memory
    that runs for days should bound it: ``Trace(max_events=10_000)`` keeps the
    newest events only (older ones are dropped, and counted in ``dropped``), so
    the trace no longer grows with the conversation. ``counts`` tallies every
    event ever appended by kind, retained or not. Dropping an old event loses
    its explanation, never a message: ``add`` still returns its evictions.
    """

    __slots__ = ("_events", "max_events", "counts")

    def __init__(self, max_events: int | None = None) -> None:
        self.max_events = require_optional_int("max_events", max_events, minimum=1)
        """How many of the newest events are kept; None keeps all."""
        self._events: list[Event] | deque[Event] = (
            [] if max_events is None else deque(maxlen=max_events)
        )
        self.counts: dict[str, int] = {}
        """Events ever appended, by kind (``"eviction"``, ...), dropped ones included."""

    def append(self, event: Event) -> None:
        self._events.append(event)
        counts = self.counts
        counts[event.kind] = counts.get(event.kind, 0) + 1

    @property
    def dropped(self) -> int:
        """Events appended but no longer retained (always 0 without ``max_events``)."""
        return sum(self.counts.values()) - len(self._events)

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
