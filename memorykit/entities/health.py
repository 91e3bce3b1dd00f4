"""Health metrics for working memory, with D0's targets and alert levels.

| metric | target | alert |
|---|---|---|
| fill rate (entities / max_size) | 50-80% | > 95% |
| eviction rate (evictions / adds) | < 10% | > 30% |
| resolution success | > 90% | < 75% |
| mean access latency | < 1 ms | > 5 ms |

A value inside the target is 'ok', beyond the alert level 'alert', and in
between (or below the fill target: memory too large for the session) 'warn'.
The seed does not define the eviction rate's denominator; here it is
evictions per ``add`` (every time a tool returns an entity), TTL expiries not
counted. Latency is whatever the caller measured (``measure_access_latency``
times real ``get`` calls). Taught in ``notebooks/04_entity_memory.ipynb``.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from memorykit._validate import require_int, require_non_negative, require_unit_interval
from memorykit.entities.memory import EntityMemory


@dataclass(frozen=True)
class HealthThresholds:
    """Targets and alert levels (D0's 'Monitor memory utilization' table)."""

    fill_target: tuple[float, float] = (0.5, 0.8)
    """Healthy fill rate range."""
    fill_alert: float = 0.95
    """Fill rate above this is an alert (memory saturated)."""
    eviction_target: float = 0.10
    """Eviction rate below this is healthy."""
    eviction_alert: float = 0.30
    """Eviction rate above this is an alert (memory too small: churn)."""
    resolution_target: float = 0.90
    """Resolution success above this is healthy."""
    resolution_alert: float = 0.75
    """Resolution success below this is an alert."""
    latency_target_ms: float = 1.0
    """Mean access latency below this is healthy."""
    latency_alert_ms: float = 5.0
    """Mean access latency above this is an alert."""

    def __post_init__(self) -> None:
        # a NaN threshold compares False both ways: every status would silently read 'warn'
        fill = self.fill_target
        if not isinstance(fill, tuple) or len(fill) != 2:
            raise TypeError(f"fill_target must be a (low, high) tuple, got {fill!r}")
        low = require_unit_interval("fill_target[0]", fill[0])
        if low > require_unit_interval("fill_target[1]", fill[1]):
            raise ValueError(f"fill_target must be (low, high) with low <= high, got {fill!r}")
        for name in ("fill_alert", "eviction_target", "eviction_alert", "resolution_target",
                     "resolution_alert"):
            require_unit_interval(name, getattr(self, name))
        require_non_negative("latency_target_ms", self.latency_target_ms)
        require_non_negative("latency_alert_ms", self.latency_alert_ms)


@dataclass(frozen=True, slots=True)
class HealthMetric:
    name: str
    value: float | None
    target: str
    alert: str
    status: str
    """'ok', 'warn', 'alert' or 'n/a' when not measured."""


def _status_high_bad(value: float, target: float, alert: float) -> str:
    return "ok" if value < target else ("alert" if value > alert else "warn")


def _status_low_bad(value: float, target: float, alert: float) -> str:
    return "ok" if value > target else ("alert" if value < alert else "warn")


def health_report(
    memory: EntityMemory,
    *,
    resolution_success: float | None = None,
    access_latency_ms: float | None = None,
    thresholds: HealthThresholds = HealthThresholds(),
) -> list[HealthMetric]:
    """The four metrics with their status. Unmeasured metrics are reported as 'n/a'."""
    t = thresholds
    stats = memory.stats()
    fill = stats["fill_rate"]
    low, high = t.fill_target
    fill_status = "ok" if low <= fill <= high else ("alert" if fill > t.fill_alert else "warn")
    out = [HealthMetric("fill rate", fill, f"{low:.0%}-{high:.0%}", f">{t.fill_alert:.0%}", fill_status)]
    rate = stats["eviction_rate"]
    out.append(HealthMetric("eviction rate", rate, f"<{t.eviction_target:.0%}", f">{t.eviction_alert:.0%}",
                            _status_high_bad(rate, t.eviction_target, t.eviction_alert)))
    # the two optional metrics: "n/a" when not measured, else checked and rated
    for label, arg, value, target, alert, check, status in (
            ("resolution success", "resolution_success", resolution_success,
             f">{t.resolution_target:.0%}", f"<{t.resolution_alert:.0%}", require_unit_interval,
             lambda v: _status_low_bad(v, t.resolution_target, t.resolution_alert)),
            ("access latency ms", "access_latency_ms", access_latency_ms,
             f"<{t.latency_target_ms:g}", f">{t.latency_alert_ms:g}", require_non_negative,
             lambda v: _status_high_bad(v, t.latency_target_ms, t.latency_alert_ms))):
        if value is not None:
            check(arg, value)
        out.append(HealthMetric(label, value, target, alert,
                                "n/a" if value is None else status(value)))
    return out


def measure_access_latency(memory: EntityMemory, keys: Sequence[str], repeats: int = 1) -> list[float]:
    """Real wall-clock milliseconds of each ``memory.get`` (these count as accesses)."""
    # every lookup is timed and kept: past a million per key it is a typo that never ends
    require_int("repeats", repeats, minimum=1, maximum=1_000_000)
    out = []
    clock = time.perf_counter
    get = memory.get
    for _ in range(repeats):
        for key in keys:
            t0 = clock()
            get(key)
            out.append((clock() - t0) * 1e3)
    return out
