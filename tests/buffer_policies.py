"""The buffer policies the contract suite runs over, built with small budgets.

Each entry builds a fresh buffer from (max_tokens, clock). A new policy joins
the contract by being listed here.
"""

from __future__ import annotations

from collections.abc import Callable

from memorykit.buffers import (
    BufferWindow,
    FIFOBuffer,
    HybridBuffer,
    ImportanceBuffer,
    MessageBuffer,
    RecencyWeightedBuffer,
    SummaryBuffer,
    TokenBuffer,
)
from memorykit.clock import StepClock

BufferMaker = Callable[[int, StepClock], MessageBuffer]

POLICIES: dict[str, BufferMaker] = {
    "fifo": lambda budget, clock: FIFOBuffer(max_tokens=budget),
    "token": lambda budget, clock: TokenBuffer(max_tokens=budget, max_entries=12),
    "window": lambda budget, clock: BufferWindow(window_size=max(1, budget // 60)),
    "importance": lambda budget, clock: ImportanceBuffer(max_tokens=budget),
    "hybrid": lambda budget, clock: HybridBuffer(max_tokens=budget, importance_threshold=0.5),
    "recency": lambda budget, clock: RecencyWeightedBuffer(
        max_tokens=budget, decay_rate=0.1, half_life_minutes=5, clock=clock
    ),
    "summary": lambda budget, clock: SummaryBuffer(budget, threshold=0.8, target=0.6, min_recent=2),
}
