"""Compact provenance: the original message ids a long-lived summary stands for.

A summary buffer that runs for a million messages ends with one summary
standing for almost all of them. Listing them in a tuple would cost ~64 bytes
an id and, rebuilt every round, quadratic time. ``IdRuns`` keeps them as runs
of consecutive counters instead: ids made by a ``MessageFactory``
(``m000002, m000003, ...``) collapse into one run, so the record stays a few
hundred bytes however long the conversation. Ids with no counter, or that skip
(an evicted message leaves a gap), start a new run: never worse than one entry
per id, never quadratic. Not taught by a notebook: lesson 03 reads the
resolved ids through ``SummaryBuffer.originals``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

_DIGITS = frozenset("0123456789")
_MAX_COUNTER_DIGITS = 18
"""Longer digit tails are kept as literal ids (their int would be a bignum per id)."""


def _split(message_id: str) -> tuple[str, str]:
    """``message_id`` as (prefix, trailing ASCII digits); digits may be empty."""
    cut = len(message_id)
    while cut and message_id[cut - 1] in _DIGITS:
        cut -= 1
    return message_id[:cut], message_id[cut:]


class IdRuns:
    """An ordered list of message ids stored as runs ``prefix + counter`` (append-only).

    Iterating gives the ids back exactly, in the order they were added. Each
    run is ``[prefix, width, first, last]`` (ids ``prefix + str(n).zfill(width)``
    for ``n`` in ``first..last``), or ``[id, -1, 0, 0]`` for an id with no
    counter.
    """

    __slots__ = ("_runs", "_count")

    def __init__(self, ids: Iterable[str] = ()) -> None:
        self._runs: list[list[str | int]] = []
        self._count = 0
        self.extend(ids)

    def append(self, message_id: str) -> None:
        prefix, digits = _split(message_id)
        self._count += 1
        if not digits or len(digits) > _MAX_COUNTER_DIGITS:
            self._runs.append([message_id, -1, 0, 0])
            return
        n = int(digits)
        if self._runs:
            last = self._runs[-1]
            # the same zero-padding too: "m099" -> "m100" stays one run, "m9" -> "m010" does not
            if (last[0] == prefix and last[1] != -1 and n == last[3] + 1  # type: ignore[operator]
                    and str(n).zfill(last[1]) == digits):  # type: ignore[arg-type]
                last[3] = n
                return
        self._runs.append([prefix, len(digits), n, n])

    def extend(self, ids: Iterable[str]) -> None:
        if isinstance(ids, IdRuns):
            ids = list(ids)  # extending by itself must not iterate while growing
        for message_id in ids:
            self.append(message_id)

    @property
    def runs(self) -> int:
        """Stored runs: what the record costs (a few for factory ids, one per id at worst)."""
        return len(self._runs)

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[str]:
        for prefix, width, first, last in self._runs:
            if width == -1:
                yield prefix  # type: ignore[misc]
                continue
            for n in range(first, last + 1):  # type: ignore[operator]
                yield prefix + str(n).zfill(width)  # type: ignore[operator, arg-type]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, IdRuns):
            return NotImplemented
        return self._count == other._count and self._runs == other._runs

    def __repr__(self) -> str:
        return f"IdRuns(ids={self._count}, runs={len(self._runs)})"


__all__ = ["IdRuns"]
