"""Every conversation-buffer policy, by name, with its settings: the one list the rest reads.

A ``PolicySpec`` names a policy, the class that implements it, how lessons label it, the
rules its evictions carry, and each setting with its default and range. Lesson 02's
explorer and checker, the evaluation toolkit, the buffer benchmark and the contract tests
all read ``POLICIES``, so a new policy joins all of them by one ``register`` call::

    register(PolicySpec("lifo", LIFOBuffer, "newest first", rules=("lifo",)))

``kind`` says where a policy belongs: ``"pruning"`` policies evict by a rule under a token
budget and are compared side by side (lesson 02, the benchmark); ``"window"`` and
``"summary"`` keep a fixed number of messages or summarize; ``"preset"`` is another
policy with other defaults.
Taught in ``notebooks/02_pruning_strategies.ipynb``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from memorykit._validate import require_choice, require_int, require_str
from memorykit.buffers.base import MessageBuffer
from memorykit.buffers.policies import (BufferWindow, FIFOBuffer, HybridBuffer, ImportanceBuffer,
                                        RecencyWeightedBuffer, TokenBuffer)
from memorykit.buffers.summary_buffer import SummaryBuffer

KINDS = ("pruning", "window", "summary", "preset")

BASE_KEYWORDS = ("chat_format", "clock", "pin_system", "trace")
"""Keywords every buffer accepts and passes to ``MessageBuffer`` (a contract test checks)."""


@dataclass(frozen=True)
class PolicyParam:
    """One setting of a policy, as a slider or a sweep sees it."""

    name: str
    """The constructor keyword."""
    default: float
    """The policy's default (the seed's, where the seed gives one)."""
    low: float
    """Smallest value a slider or a sweep offers (the class decides what is valid)."""
    high: float
    """Largest value a slider or a sweep offers."""
    step: float
    """Slider step."""
    label: str
    """What a slider calls it."""


@dataclass(frozen=True)
class PolicySpec:
    """A buffer policy: its name, class, label, the rules it records and its settings."""

    name: str
    """Registry key, also the name in tables and evaluation results."""
    factory: type[MessageBuffer]
    """The class (or any callable taking the budget and keywords) that builds the buffer."""
    label: str
    """How lessons and figures call it."""
    rules: tuple[str, ...]
    """The ``rule`` of every eviction it can record (one figure trace each in lesson 02)."""
    params: tuple[PolicyParam, ...] = ()
    """Its own settings (not the base's keywords)."""
    kind: str = "pruning"
    """One of ``KINDS`` (see the module docstring)."""
    budget_keyword: str | None = "max_tokens"
    """The keyword the token budget goes to; None for a policy without one (a window)."""
    color: str = "#7f7f7f"
    """Its colour in lesson figures."""
    signals: tuple[str, ...] = ()
    """Message fields its rule weighs besides arrival order ("importance"): where the data
    holds one value of each, it falls back to arrival order, and comparisons say so."""

    def __post_init__(self) -> None:
        require_str("name", self.name, non_empty=True)
        require_choice("kind", self.kind, KINDS)
        if not callable(self.factory):
            raise TypeError(f"factory must be callable, got {self.factory!r}")
        if not self.rules:
            raise ValueError(f"rules must name at least one rule, got {self.rules!r}")

    def defaults(self) -> dict[str, float]:
        return {p.name: p.default for p in self.params}

    def param(self, name: str) -> PolicyParam:
        for p in self.params:
            if p.name == name:
                return p
        raise ValueError(f"policy {self.name!r} has no setting {name!r}; its settings: "
                         f"{', '.join(p.name for p in self.params) or 'none'}")

    def build(self, budget: int | None = None, **kw: Any) -> MessageBuffer:
        """A fresh buffer: ``budget`` tokens, settings (defaults for those not given) and any of
        the base's keywords (``trace=``, ``clock=``, ...). Unknown keywords raise ValueError."""
        own = {p.name for p in self.params}
        unknown = set(kw) - own - set(BASE_KEYWORDS)
        if unknown:
            raise ValueError(f"policy {self.name!r} takes no setting "
                             f"{', '.join(sorted(unknown))}; its settings: "
                             f"{', '.join(sorted(own)) or 'none'}")
        # Values are checked by the buffer class itself (the one place that decides what a
        # valid threshold is); low/high are only what sliders and sweeps offer.
        settings = {**self.defaults(), **kw}
        if self.budget_keyword is not None and budget is not None:
            settings[self.budget_keyword] = require_int("budget", budget, minimum=1)
        return self.factory(**settings)


POLICIES: dict[str, PolicySpec] = {}
"""Every registered policy by name, in registration order."""


def register(spec: PolicySpec, *, replace: bool = False) -> PolicySpec:
    """Add ``spec`` to ``POLICIES``; a name already taken is a ValueError unless ``replace``."""
    if not isinstance(spec, PolicySpec):
        raise TypeError(f"spec must be a PolicySpec, got {spec!r}")
    if spec.name in POLICIES and not replace:
        raise ValueError(f"a policy named {spec.name!r} is already registered")
    POLICIES[spec.name] = spec
    return spec


def unregister(name: str) -> PolicySpec:
    return POLICIES.pop(policy(name).name)


def policy(name: str) -> PolicySpec:
    """The spec registered as ``name``; ValueError naming it and the known ones otherwise."""
    spec = POLICIES.get(name) if isinstance(name, str) else None
    if spec is None:
        raise ValueError(f"no buffer policy named {name!r}; registered: {', '.join(POLICIES)}")
    return spec


def policies(kind: str | None = None) -> tuple[PolicySpec, ...]:
    """The registered specs, all or those of one ``kind``, in registration order."""
    if kind is not None:
        require_choice("kind", kind, KINDS)
    return tuple(s for s in POLICIES.values() if kind is None or s.kind == kind)


THRESHOLD = PolicyParam("importance_threshold", 0.5, 0.05, 1.0, 0.05, "hybrid threshold")
DECAY_RATE = PolicyParam("decay_rate", 0.1, 0.0, 1.0, 0.01, "decay rate")
HALF_LIFE = PolicyParam("half_life_minutes", 5.0, 1.0, 120.0, 1.0, "half life (minutes)")

register(PolicySpec("fifo", FIFOBuffer, "FIFO", ("fifo",), color="#1f77b4"))
register(PolicySpec("importance", ImportanceBuffer, "importance", ("importance",),
                    color="#ff7f0e", signals=("importance",)))
register(PolicySpec("hybrid", HybridBuffer, "hybrid",
                    ("hybrid-below-threshold", "hybrid-fifo-fallback"), (THRESHOLD,),
                    color="#2ca02c", signals=("importance",)))
register(PolicySpec("recency", RecencyWeightedBuffer, "recency-weighted", ("recency",),
                    (DECAY_RATE, HALF_LIFE), color="#9467bd", signals=("importance",)))
register(PolicySpec("window", BufferWindow, "last 20 messages", ("window",),
                    (PolicyParam("window_size", 20, 1, 200, 1, "window (messages)"),),
                    kind="window", budget_keyword=None))
register(PolicySpec("summary", SummaryBuffer, "summary buffer",
                    ("summary-fallback-fifo",),
                    (PolicyParam("threshold", 0.8, 0.5, 0.95, 0.05, "threshold"),
                     PolicyParam("target", 0.6, 0.1, 0.9, 0.05, "target"),
                     PolicyParam("min_recent", 3, 0, 10, 1, "min_recent")),
                    kind="summary", budget_keyword="budget"))
register(PolicySpec("token", TokenBuffer, "token buffer (D1)", ("fifo",),
                    (PolicyParam("max_entries", 100, 1, 1000, 1, "max entries"),),
                    kind="preset"))
