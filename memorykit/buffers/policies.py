"""Pruning policies: which message leaves when the buffer is over budget.

Each policy overrides only the choice of victim (and keeps an index so the
choice costs O(log n), not a scan of the window):

* ``FIFOBuffer``: the oldest non-system message.
* ``TokenBuffer``: FIFO with D1's defaults (8,000 tokens, 100 entries).
* ``BufferWindow``: the last ``window_size`` messages, no token budget.
* ``ImportanceBuffer``: the lowest importance (oldest first among equals).
* ``HybridBuffer``: the oldest message under ``importance_threshold``; FIFO if none.
* ``RecencyWeightedBuffer``: the lowest effective importance,
  ``importance * exp(-decay_rate * age_minutes / half_life_minutes)``.

Taught in ``notebooks/02_pruning_strategies.ipynb``.
"""

from __future__ import annotations

import heapq
import math
from heapq import heappop, heappush
from collections.abc import Sequence
from operator import attrgetter
from typing import Any

import numpy as np

from memorykit._validate import (require_fraction, require_int, require_non_negative,
                                 require_positive, require_real_array)
from memorykit.buffers.base import MessageBuffer
from memorykit.messages import Message
from memorykit.trace import VictimTuple


class FIFOBuffer(MessageBuffer):
    """Evicts the oldest non-system message first."""

    rule = "fifo"


class TokenBuffer(FIFOBuffer):
    """D1's basic buffer: FIFO under 8,000 tokens and 100 entries.

    Unlike the seed's sketch, system messages are pinned here too: a buffer that
    evicts its own instructions is a bug, not a policy.
    """

    def __init__(self, max_tokens: int | None = 8000, max_entries: int | None = 100, **kw: Any):
        super().__init__(max_tokens, max_entries, **kw)


class BufferWindow(FIFOBuffer):
    """Keeps the last ``window_size`` messages (D4's buffer_window), no LLM.

    System messages count toward the window but are never evicted.
    """

    rule = "window"

    def __init__(self, window_size: int = 20, **kw: Any) -> None:
        self.window_size = require_int("window_size", window_size, minimum=1)
        super().__init__(max_tokens=None, max_entries=window_size, **kw)

    def _choose_victim(self, now: float) -> VictimTuple | None:
        for mid in self._messages:
            if self._evictable(mid):
                return (mid, "window", f"outside the last {self.window_size} messages", None)
        return None


class _HeapPolicy(MessageBuffer):
    """A policy whose victim is the minimum of a time-invariant key.

    Entries are (key, arrival, message); an entry is stale once its message is
    no longer the record kept under that id, and stale entries are dropped when
    they surface (lazy deletion), so removal and updates cost O(log n).
    """

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self._heap: list[tuple[float, int, str, Message]] = []
        self._arrival = 0
        # Skip the _indexed call on every add when the policy indexes every message.
        self._indexes_all = type(self)._indexed is _HeapPolicy._indexed

    def _key(self, message: Message) -> float:
        raise NotImplementedError

    def _push(self, message: Message) -> None:
        self._arrival += 1
        heappush(self._heap, (self._key(message), self._arrival, message.id, message))

    def _indexed(self, message: Message) -> bool:
        """Whether an unpinned ``message`` can ever be this policy's victim (all, by default)."""
        return True

    def _on_add(self, message: Message) -> None:
        # _indexed and _push, inlined: this runs for every message added.
        if not self.is_pinned(message) and (self._indexes_all or self._indexed(message)):
            self._arrival += 1
            heappush(self._heap, (self._key(message), self._arrival, message.id, message))

    def _on_update(self, old: Message, new: Message) -> None:
        if not self.is_pinned(new) and self._indexed(new):
            self._push(new)

    def _on_clear(self) -> None:
        self._heap.clear()

    def _pop_min(self) -> tuple[float, str, Message] | None:
        """The lowest-key evictable message; protected ones are set aside and pushed back."""
        heap, kept, evictable = self._heap, self._messages, self._evictable
        skipped = None
        found = None
        while heap:
            key, arrival, mid, message = heap[0]
            if kept.get(mid) is not message:
                heappop(heap)
                continue
            if not evictable(mid):
                if skipped is None:
                    skipped = [heappop(heap)]
                else:
                    skipped.append(heappop(heap))
                continue
            found = (key, mid, message)
            break
        if skipped is not None:
            for entry in skipped:
                heappush(heap, entry)
        return found

    def _compact(self) -> None:
        """Rebuild the heap when stale entries dominate it (keeps memory O(window))."""
        if len(self._heap) > 64 and len(self._heap) > 4 * len(self._messages):
            kept = self._messages
            self._heap = [e for e in self._heap if kept.get(e[2]) is e[3]]
            heapq.heapify(self._heap)

    def _on_remove(self, message: Message) -> None:
        # The compaction test inlined: it runs after every removal.
        heap = self._heap
        if len(heap) > 64 and len(heap) > 4 * len(self._messages):
            self._compact()


class ImportanceBuffer(_HeapPolicy):
    """Evicts the lowest-importance non-system message; the oldest among equals."""

    rule = "importance"

    # The key is the importance itself: a C-level getter, called once per message added.
    _key = attrgetter("importance")

    def _choose_victim(self, now: float) -> VictimTuple | None:
        found = self._pop_min()
        if found is None:
            return None
        importance, mid, _ = found
        return (mid, "importance", f"lowest importance {importance:.2f}; {self._limit_text()}",
                importance)


class HybridBuffer(_HeapPolicy):
    """Evicts the oldest message under ``importance_threshold``; FIFO when none is.

    Only low-importance messages are indexed, keyed by arrival, so finding the oldest
    of them costs O(log n) instead of a scan.
    """

    rule = "hybrid"

    def __init__(
        self,
        max_tokens: int | None = 8000,
        max_entries: int | None = None,
        *,
        importance_threshold: float = 0.5,
        **kw: Any,
    ) -> None:
        self.importance_threshold = require_fraction("importance_threshold", importance_threshold)
        super().__init__(max_tokens, max_entries, **kw)
        self._added_at: dict[str, int] = {}

    def _indexed(self, message: Message) -> bool:
        return message.importance < self.importance_threshold

    def _key(self, message: Message) -> float:
        # Age is arrival order, kept when a message's importance is changed later.
        return float(self._added_at[message.id])

    def _on_add(self, message: Message) -> None:
        # _HeapPolicy._on_add with the key and the test inlined (runs for every message added)
        seq = self._added_at[message.id] = self.added_count
        if message.importance < self.importance_threshold and not self.is_pinned(message):
            self._arrival += 1
            heappush(self._heap, (seq, self._arrival, message.id, message))

    def _on_remove(self, message: Message) -> None:
        del self._added_at[message.id]
        heap = self._heap  # _HeapPolicy's compaction test, inlined: runs after every removal
        if len(heap) > 64 and len(heap) > 4 * len(self._messages):
            self._compact()

    def _on_clear(self) -> None:
        self._added_at.clear()
        super()._on_clear()

    def _choose_victim(self, now: float) -> VictimTuple | None:
        found = self._pop_min()
        if found is not None:
            _, mid, message = found
            return (mid, "hybrid-below-threshold",
                    f"oldest message with importance {message.importance:.2f} < "
                    f"threshold {self.importance_threshold:.2f}; {self._limit_text()}",
                    message.importance)
        kept = self._messages
        for mid in kept:
            if self._evictable(mid):
                return (mid, "hybrid-fifo-fallback",
                        f"no message under threshold {self.importance_threshold:.2f}, so "
                        f"the oldest goes; {self._limit_text()}", kept[mid].importance)
        return None


def recency_weight(
    age_minutes: float | np.ndarray, decay_rate: float = 0.1, half_life_minutes: float = 5.0
) -> float | np.ndarray:
    """D1's weight: ``exp(-decay_rate * age_minutes / half_life_minutes)``.

    Despite its name, ``half_life_minutes`` is not where the weight halves: that
    happens at ``half_life_minutes * ln 2 / decay_rate`` (34.7 minutes at the
    defaults). memorykit keeps the seed's parameter names and formula. Ages must be
    finite and >= 0 (a negative age would weigh more than a fresh message).
    """
    decay_rate = require_non_negative("decay_rate", decay_rate)
    half_life_minutes = require_positive("half_life_minutes", half_life_minutes)
    ages = _ages("age_minutes", age_minutes)
    return np.exp(-decay_rate * ages / half_life_minutes)


def _ages(name: str, values: Any) -> np.ndarray:
    """``values`` as a float array of finite ages >= 0 (bools and text are refused, not cast)."""
    if isinstance(values, (int, float)) and not isinstance(values, bool):  # one message: hot
        return np.asarray(require_non_negative(name, values), dtype=float)
    return require_real_array(name, values, minimum=0)


def true_half_life_minutes(decay_rate: float = 0.1, half_life_minutes: float = 5.0) -> float:
    """The age at which the seed's recency weight is 0.5 (``inf`` when decay_rate is 0: the
    weight never falls)."""
    decay_rate = require_non_negative("decay_rate", decay_rate)
    half_life_minutes = require_positive("half_life_minutes", half_life_minutes)
    return math.inf if decay_rate == 0 else half_life_minutes * math.log(2) / decay_rate


def overtake_minutes(old_importance: float, new_importance: float, decay_rate: float = 0.1,
                     half_life_minutes: float = 5.0) -> float:
    """Age (minutes) at which a message of ``old_importance`` falls to ``new_importance``.

    After that age a fresh message of ``new_importance`` outranks it, so the recency policy
    evicts the old one first. ``inf`` when decay_rate is 0; 0 when the old one is not more
    important to begin with.
    """
    require_positive("old_importance", old_importance)
    require_positive("new_importance", new_importance)
    require_non_negative("decay_rate", decay_rate)
    require_positive("half_life_minutes", half_life_minutes)
    if old_importance <= new_importance:
        return 0.0
    if decay_rate == 0:
        return math.inf
    return half_life_minutes * math.log(old_importance / new_importance) / decay_rate


class RecencyWeightedBuffer(_HeapPolicy):
    """Evicts the lowest effective importance, ``importance * recency_weight(age)``.

    The ranking by effective importance never changes as time passes, because
    every weight shrinks by the same factor: log(effective) = log(importance) +
    k * created_at - k * now with k = decay_rate / (60 * half_life_minutes). So
    the heap is keyed on the time-free part and stays valid forever. Scores
    reported in the trace are evaluated at the clock's now.
    """

    rule = "recency"

    def __init__(
        self,
        max_tokens: int | None = 8000,
        max_entries: int | None = None,
        *,
        decay_rate: float = 0.1,
        half_life_minutes: float = 5.0,
        **kw: Any,
    ) -> None:
        self.decay_rate = require_non_negative("decay_rate", decay_rate)
        self.half_life_minutes = require_positive("half_life_minutes", half_life_minutes)
        self._k = self.decay_rate / (60.0 * self.half_life_minutes)
        # the constant parts of every eviction's reason, formatted once (half its cost)
        self._weight_text = (f"exp(-{self.decay_rate:g} x ", f" min / {self.half_life_minutes:g}); ")
        super().__init__(max_tokens, max_entries, **kw)

    def _key(self, message: Message) -> float:
        if message.importance <= 0.0:
            return -math.inf
        return math.log(message.importance) + self._k * message.created_at

    def effective_importance(self, message: Message, now: float) -> float:
        age_minutes = max(0.0, now - message.created_at) / 60.0
        return message.importance * math.exp(
            -self.decay_rate * age_minutes / self.half_life_minutes
        )

    def effective_importances(self, now: float) -> np.ndarray:
        """Effective importance of every kept message at ``now``, oldest first (vectorized)."""
        kept = list(self._messages.values())
        importance = np.fromiter((m.importance for m in kept), float, len(kept))
        created = np.fromiter((m.created_at for m in kept), float, len(kept))
        age = np.maximum(0.0, now - created) / 60.0
        return importance * recency_weight(age, self.decay_rate, self.half_life_minutes)

    def weighted_context(self, now: float | None = None) -> list[Message]:
        """The window ordered by effective importance, highest first (ties keep arrival order)."""
        if now is None:
            now = self.clock.now() if self.clock is not None else self._latest_time()
        kept = list(self._messages.values())
        scores = self.effective_importances(now)
        order = np.argsort(-scores, kind="stable")
        return [kept[i] for i in order]

    def _latest_time(self) -> float:
        return max((m.created_at for m in self._messages.values()), default=0.0)

    def _choose_victim(self, now: float) -> VictimTuple | None:
        found = self._pop_min()
        if found is None:
            return None
        _, mid, message = found
        age = max(0.0, now - message.created_at) / 60.0
        score = message.importance * math.exp(-self.decay_rate * age / self.half_life_minutes)
        head, tail = self._weight_text
        return (mid, "recency", f"lowest effective importance {score:.3f} = "
                f"{message.importance:.2f} x {head}{age:.1f}{tail}{self._limit_text()}", score)


def effective_importance_curves(
    importances: Sequence[float],
    created_minutes: Sequence[float],
    times_minutes: Sequence[float],
    decay_rate: float = 0.1,
    half_life_minutes: float = 5.0,
) -> np.ndarray:
    """Effective importance of each message (rows) at each time (columns).

    Before a message exists its value is NaN, so plots show nothing there.
    """
    require_non_negative("decay_rate", decay_rate)
    require_positive("half_life_minutes", half_life_minutes)
    imp = np.asarray(importances, float)[:, None]
    created = np.asarray(created_minutes, float)[:, None]
    times = np.asarray(times_minutes, float)[None, :]
    age = times - created
    out = imp * np.exp(-decay_rate * np.maximum(age, 0.0) / half_life_minutes)
    out[age < 0] = np.nan
    return out
