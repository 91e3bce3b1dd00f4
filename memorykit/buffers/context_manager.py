"""Named contexts: one buffer per topic or task, with a stack to come back (D1).

An agent that handles several tasks keeps each in its own buffer. ``switch``
moves to another context (creating it if needed) and remembers where it came
from; ``return_to_previous`` goes back. Leaving a context boosts the importance
of its last message to at least 0.9, so "where we left off" survives pruning
while the agent is away. ``merge`` folds one context into another at 0.7 times
the importance (merged material is background, not the focus), enforcing the
target's limits; the target's trace records any eviction.

Taught in ``notebooks/03_summary_buffer.ipynb``, section "Context switching: one window per
task" (switch, stack, return, merge on the default conversation), and its Exercise 4.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from memorykit._validate import require_int, require_str
from memorykit.buffers.base import MessageBuffer
from memorykit.buffers.policies import RecencyWeightedBuffer
from memorykit.clock import Clock
from memorykit.messages import Message, check_importance
from memorykit.trace import Eviction

BufferFactory = Callable[[int], MessageBuffer]


@dataclass(frozen=True)
class RecencyFactory:
    """The default ``buffer_factory``: a ``RecencyWeightedBuffer`` of ``n`` tokens on ``clock``
    (a class, not a closure, so a manager pickles and saves as a state)."""

    clock: Clock | None = None

    def __call__(self, n: int) -> MessageBuffer:
        return RecencyWeightedBuffer(max_tokens=n, clock=self.clock)


class ContextManager:
    """Named context buffers, an active one, and a stack of the ones left.

    ``buffer_factory(max_tokens_per_context)`` builds each context's buffer;
    the default is ``RecencyWeightedBuffer`` with that budget (and ``clock``).
    The manager starts with one context named ``initial`` ("main") active;
    pass ``initial=None`` to start with none (then ``add`` needs a ``switch``).
    """

    def __init__(
        self,
        max_tokens_per_context: int = 4000,
        buffer_factory: BufferFactory | None = None,
        *,
        clock: Clock | None = None,
        initial: str | None = "main",
        boost_to: float = 0.9,
        merge_factor: float = 0.7,
    ) -> None:
        self.max_tokens_per_context = require_int(
            "max_tokens_per_context", max_tokens_per_context, minimum=1
        )
        if buffer_factory is None:
            buffer_factory = RecencyFactory(clock)
        elif not callable(buffer_factory):
            raise TypeError(f"buffer_factory must be callable, got {buffer_factory!r}")
        self.buffer_factory = buffer_factory
        self.boost_to = check_importance(boost_to, "boost_to")
        self.merge_factor = check_importance(merge_factor, "merge_factor")
        self.contexts: dict[str, MessageBuffer] = {}
        self.active_context: str | None = None
        self.stack: list[str] = []
        if initial is not None:
            self.switch(initial)

    # ----------------------------------------------------------------- reading
    @property
    def active(self) -> MessageBuffer | None:
        """The active context's buffer, or None."""
        return self.contexts.get(self.active_context) if self.active_context else None

    def __getitem__(self, name: str) -> MessageBuffer:
        if name not in self.contexts:
            raise KeyError(f"no context named {name!r}; have {sorted(self.contexts)}")
        return self.contexts[name]

    def __contains__(self, name: object) -> bool:
        return name in self.contexts

    def stats(self) -> dict[str, Any]:
        """D1's memory stats for the active context, plus totals over all contexts."""
        buf = self.active
        tokens = buf.tokens if buf is not None else 0
        limit = buf.max_tokens if buf is not None else self.max_tokens_per_context
        return {
            "entries": len(buf) if buf is not None else 0,
            "tokens": tokens,
            "max_tokens": limit,
            "utilization": tokens / limit if limit else None,
            "active_context": self.active_context,
            "context_count": len(self.contexts),
            "stack": list(self.stack),
            "total_entries": sum(len(b) for b in self.contexts.values()),
            "total_tokens": sum(b.tokens for b in self.contexts.values()),
        }

    # ----------------------------------------------------------------- writing
    def create(self, name: str) -> MessageBuffer:
        require_str("name", name, non_empty=True)
        if name in self.contexts:
            raise ValueError(f"name {name!r} is already a context")
        buffer = self.buffer_factory(self.max_tokens_per_context)
        if not isinstance(buffer, MessageBuffer):
            raise TypeError(f"buffer_factory must return a MessageBuffer, got {buffer!r}")
        self.contexts[name] = buffer
        return buffer

    def switch(self, name: str) -> MessageBuffer:
        """Make ``name`` active (creating it if missing); the context left goes on the stack.

        Its last message's importance is raised to at least ``boost_to`` (0.9).
        Switching to the active context changes nothing.
        """
        require_str("name", name, non_empty=True)
        if name == self.active_context:
            return self.contexts[name]
        if name not in self.contexts:
            self.create(name)
        if self.active_context is not None:
            self._boost_last(self.contexts[self.active_context])
            self.stack.append(self.active_context)
        self.active_context = name
        return self.contexts[name]

    def return_to_previous(self) -> str | None:
        """Pop the stack and make that context active; None (and no change) if empty.

        As in the seed, the context being left is not boosted on the way back.
        """
        while self.stack:
            previous = self.stack.pop()
            if previous in self.contexts:
                self.active_context = previous
                return previous
        return None

    def add(self, message: Message) -> list[Eviction]:
        """Add to the active context; returns that buffer's evictions."""
        buf = self.active
        if buf is None:
            raise RuntimeError("no active context: call switch(name) first")
        return buf.add(message)

    def merge(self, source: str, target: str) -> list[Eviction]:
        """Move ``source``'s messages into ``target`` at ``merge_factor`` x importance.

        Messages are added in order through ``target.add``, so the target's
        limits hold and its trace records every eviction; then ``source`` is
        deleted (and dropped from the stack; if it was active, ``target`` is).
        Returns the evictions.
        """
        require_str("source", source, non_empty=True)
        require_str("target", target, non_empty=True)
        if source not in self.contexts:
            raise ValueError(f"source must name a context, got {source!r}")
        if target not in self.contexts:
            raise ValueError(f"target must name a context, got {target!r}")
        if source == target:
            raise ValueError(f"cannot merge a context into itself: source == target == {source!r}")
        src, dst = self.contexts[source], self.contexts[target]
        clash = [m.id for m in src if m.id in dst]
        if clash:
            raise ValueError(f"source {source!r} and target {target!r} share message ids {clash}")
        events: list[Eviction] = []
        for m in src.messages():
            events.extend(dst.add(m.with_importance(m.importance * self.merge_factor)))
        del self.contexts[source]
        self.stack = [n for n in self.stack if n != source]
        if self.active_context == source:
            self.active_context = target
        # Consecutive duplicates can appear once source is gone from between them, and
        # returning to the context already active would be a step that goes nowhere.
        self.stack = [n for i, n in enumerate(self.stack) if i == 0 or self.stack[i - 1] != n]
        while self.stack and self.stack[-1] == self.active_context:
            self.stack.pop()
        return events

    def _boost_last(self, buffer: MessageBuffer) -> None:
        if len(buffer):
            last = buffer.messages()[-1]
            if last.importance < self.boost_to:
                buffer.set_importance(last.id, self.boost_to)

    def __repr__(self) -> str:
        return (
            f"ContextManager(active={self.active_context!r}, contexts={sorted(self.contexts)}, "
            f"stack={self.stack})"
        )


__all__ = ["ContextManager"]
