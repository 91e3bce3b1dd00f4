"""Validity intervals and update policies: what a memory keeps when a fact changes.

A ``FactTimeline`` holds, for every fact ``key``, the ``Version``s of it that are still kept:
each is one ``Statement`` with its validity interval, valid from its statement until the
statement that replaced it (``valid_until``, ``superseded_by``; None while it is current).

Which statement is current is one decision, made by an ``UpdatePolicy``. As in the buffers
(``memorykit/buffers/base.py``), the base class owns the accounting and a policy overrides
ONE method, ``choose_current(statements)``: given the statements of one key in the order
stated, return the one that is current. The base checks the answer, dates the intervals,
drops what the policy does not keep and returns what it removed, with the reason:

* ``LatestWins``: the latest statement is current; superseded ones are dropped.
* ``KeepBothDated``: the latest is current; superseded ones stay, with their interval, so
  recall can show "[superseded ...]" beside the current one.
* ``KeepStrongest``: the strongest (``Statement.strength``) is current, ties to the latest;
  the others are dropped (a weak "maybe it moved" does not replace a firm statement).

Decisions the issue leaves open, made here:

* A **cancellation** is a statement with value ``""`` ("the order is cancelled"). It is
  recorded like any statement, so it supersedes the old value; when it is current the fact no
  longer holds and ``current(key)`` returns None (``versions(key)`` still shows it).
* Statements **may arrive out of order** (a late sync): the order stated is ``at``, ties broken
  by the order recorded. A late statement older than the current one is kept or dropped by
  the policy like any other; its interval ends where the next statement of the key begins.
  The same message may state several keys, but not the same key twice (``ValueError``).
* A statement a policy never makes current (a weak one under ``KeepStrongest``) has an empty
  interval when it is the newest: ``valid_until == valid_from``, superseded by the current one.
* Bad input changes nothing: a non-``Statement``, a repeated message, or a policy answer that
  is not one of the statements it was given raises before the timeline is touched.
* ``recently_updated(now, within)`` is D2's "recently updated beliefs (changed in the last 7
  days)": keys whose current statement changed at a time ``t`` with ``now - within <= t <= now``
  (inclusive, as ``memorykit.workspace.objects``). A first statement is not a change; a
  restatement that a policy prefers is (the current statement changed).

Taught in ``notebooks/13_changing_facts.ipynb``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timezone

from memorykit._validate import require_non_negative, require_real, require_str
from memorykit.facts.statement import Statement

__all__ = ["UPDATE_POLICIES", "FactTimeline", "KeepBothDated", "KeepStrongest", "LatestWins",
           "UpdatePolicy", "Version", "superseded_marker", "update_policy"]

WEEK_SECONDS = 7 * 86_400.0
"""D2's window for "recently updated beliefs"."""


@dataclass(frozen=True)
class Version:
    """One statement of a fact and the interval in which it was the current one."""

    statement: Statement
    valid_from: float
    """When it started to hold: its statement's ``at``."""
    valid_until: float | None = None
    """When a later statement replaced it (None: it is current)."""
    superseded_by: str | None = None
    """The message id of the statement that replaced it (None: it is current)."""
    reason: str = ""
    """Why it stopped being current, for a reader ("" while current)."""

    @property
    def is_current(self) -> bool:
        return self.valid_until is None

    @property
    def cancelled(self) -> bool:
        """Is this the statement that the fact no longer holds (value "")?"""
        return self.statement.value == ""


def superseded_marker(version: Version) -> str:
    """The marker a context puts before a superseded statement's text (spec: "Marking
    convention"), dated in UTC: ``"[superseded on 3 May 2024 14:05 by a later message] "``."""
    if version.valid_until is None:
        raise ValueError(f"version of {version.statement.message_id!r} is current: nothing to mark")
    when = datetime.fromtimestamp(version.valid_until, tz=timezone.utc)
    return f"[superseded on {when.day} {when:%B %Y %H:%M} by a later message] "


class UpdatePolicy:
    """The accounting every update policy shares; subclasses override ``choose_current`` only.

    ``keeps_superseded``: keep statements that are no longer current (with their interval),
    or drop them (returned by ``FactTimeline.record`` as removed, with the reason).
    """

    name = "update-policy"
    keeps_superseded = False

    def choose_current(self, statements: Sequence[Statement]) -> Statement:
        """The current statement among ``statements`` (one key, in the order stated, never
        empty). Must return one of them and leave the sequence as it is."""
        raise NotImplementedError(f"{type(self).__name__} must override choose_current")

    def apply(self, versions: Sequence[Version], statement: Statement
              ) -> tuple[tuple[Version, ...], tuple[Version, ...]]:
        """Add ``statement`` to one key's ``versions`` (in the order stated): returns the
        versions kept (in the order stated) and those removed, each dated and explained.

        Raises (and changes nothing) when the policy's choice is not one of the statements.
        """
        # Order stated: by time, ties by arrival (a stable sort keeps the arrival order).
        held = sorted([*versions, Version(statement, statement.at)],
                      key=lambda v: v.statement.at)
        statements = tuple(v.statement for v in held)
        chosen = self.choose_current(statements)
        index = next((i for i, s in enumerate(statements) if s is chosen), None)
        if index is None:
            raise ValueError(f"{type(self).__name__}.choose_current must return one of the "
                             f"statements it was given, got {chosen!r}")
        current = statements[index]
        previous = next((v for v in versions if v.is_current), None)
        dated: list[Version] = []
        for i, v in enumerate(held):
            if i == index:
                dated.append(replace(v, valid_until=None, superseded_by=None, reason=""))
            elif v.is_current:  # it was current (or just arrived): date the end of its interval
                dated.append(self._ended(v, held, i, current, previous))
            else:
                dated.append(v)  # ended before: its interval stays as it was
        if self.keeps_superseded:
            return tuple(dated), ()
        return (dated[index],), tuple(v for i, v in enumerate(dated) if i != index)

    def _ended(self, v: Version, held: list[Version], i: int, current: Statement,
               previous: Version | None) -> Version:
        """``v`` is no longer (or never was) current: when it ended and what replaced it."""
        if previous is not None and v is previous:  # the change: current replaces it from now
            end, by, why = max(v.statement.at, current.at), current, "replaced by"
        elif i + 1 < len(held):  # arrived late: it held until the next statement of the key
            nxt = held[i + 1].statement
            end, by, why = nxt.at, nxt, "arrived late; replaced by"
        else:  # the newest, not chosen: it never held
            end, by, why = v.statement.at, current, "never current; the policy keeps"
        old, new = v.statement.value or "(cancelled)", by.value or "(cancelled)"
        return replace(v, valid_until=end, superseded_by=by.message_id,
                       reason=f"{self.name}: {old!r} of {v.statement.message_id} {why} {new!r} "
                              f"of {by.message_id} (valid until {end:g})")

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class LatestWins(UpdatePolicy):
    """The latest statement is current; superseded ones are dropped (Mem0's UPDATE)."""

    name = "latest-wins"
    keeps_superseded = False

    def choose_current(self, statements: Sequence[Statement]) -> Statement:
        return statements[-1]


class KeepBothDated(LatestWins):
    """The latest statement is current; superseded ones stay with their interval (Graphiti's
    invalid_at): recall can show the old value, marked and dated."""

    name = "keep-both-dated"
    keeps_superseded = True


class KeepStrongest(UpdatePolicy):
    """The strongest statement is current, ties to the latest; the others are dropped."""

    name = "keep-strongest"
    keeps_superseded = False

    def choose_current(self, statements: Sequence[Statement]) -> Statement:
        best = statements[0]
        for s in statements[1:]:
            if s.strength >= best.strength:  # >=: a tie goes to the later statement
                best = s
        return best


UPDATE_POLICIES: dict[str, type[UpdatePolicy]] = {
    cls.name: cls for cls in (LatestWins, KeepBothDated, KeepStrongest)}
"""The library's update policies by name (what a settings field or a slider names)."""


def update_policy(policy: str | UpdatePolicy) -> UpdatePolicy:
    """An ``UpdatePolicy`` from a name of ``UPDATE_POLICIES`` (or one given as is)."""
    if isinstance(policy, UpdatePolicy):
        return policy
    if not isinstance(policy, str) or policy not in UPDATE_POLICIES:
        raise ValueError(f"update policy must be one of {sorted(UPDATE_POLICIES)} or an "
                         f"UpdatePolicy, got {policy!r}")
    return UPDATE_POLICIES[policy]()


class FactTimeline:
    """Every fact's kept versions under one update policy (``LatestWins`` by default)."""

    def __init__(self, policy: str | UpdatePolicy = "latest-wins") -> None:
        self.policy = update_policy(policy)
        self._versions: dict[str, tuple[Version, ...]] = {}
        self._changed_at: dict[str, float] = {}  # when each key's current statement last changed
        self._seen: set[tuple[str, str]] = set()  # (key, message id) recorded

    def record(self, statement: Statement) -> list[Version]:
        """Add a statement of a fact; returns the versions the policy removed (empty when it
        keeps them), each with ``valid_until``, ``superseded_by`` and ``reason``."""
        if not isinstance(statement, Statement):
            raise TypeError(f"statement must be a Statement, got {statement!r}")
        key = statement.key
        if (key, statement.message_id) in self._seen:
            raise ValueError(f"message {statement.message_id!r} already stated key {key!r}")
        old = self._versions.get(key, ())
        before = next((v.statement for v in old if v.is_current), None)
        kept, removed = self.policy.apply(old, statement)  # raises before anything changes
        self._versions[key] = kept
        self._seen.add((key, statement.message_id))
        after = next(v.statement for v in kept if v.is_current)
        if before is not None and after is not before:
            self._changed_at[key] = max(before.at, after.at)
        return list(removed)

    def current(self, key: str) -> Version | None:
        """The current version of ``key``; None when it was never stated or is cancelled."""
        require_str("key", key, non_empty=True)
        v = next((v for v in self._versions.get(key, ()) if v.is_current), None)
        return None if v is None or v.cancelled else v

    def versions(self, key: str) -> tuple[Version, ...]:
        """Every kept version of ``key`` in the order stated (superseded ones dated)."""
        require_str("key", key, non_empty=True)
        return self._versions.get(key, ())

    def forget(self, key: str) -> tuple[Version, ...]:
        """Drop every version of ``key`` (its holder forgot the fact); returns them."""
        require_str("key", key, non_empty=True)
        gone = self._versions.pop(key, ())
        self._changed_at.pop(key, None)
        self._seen = {(k, m) for k, m in self._seen if k != key}
        return gone

    def stated(self, key: str, message_id: str) -> bool:
        """Was a statement of ``key`` by ``message_id`` recorded (kept or removed since)?"""
        return (key, message_id) in self._seen

    def keys(self) -> tuple[str, ...]:
        """Keys with a kept version, in the order first stated."""
        return tuple(self._versions)

    def changed_at(self, key: str) -> float | None:
        """When the current statement of ``key`` last changed (None: never)."""
        require_str("key", key, non_empty=True)
        return self._changed_at.get(key)

    def recently_updated(self, now: float, within: float = WEEK_SECONDS) -> list[str]:
        """Keys whose current statement changed in ``[now - within, now]``, latest change first
        (D2's "recently updated beliefs (changed in the last 7 days)", inclusive)."""
        now = require_real("now", now)
        within = require_non_negative("within", within)
        hits = [(t, k) for k, t in self._changed_at.items() if now - within <= t <= now]
        return [k for _, k in sorted(hits, key=lambda h: -h[0])]

    def __len__(self) -> int:
        return sum(len(v) for v in self._versions.values())

    def __repr__(self) -> str:
        return (f"FactTimeline(policy={self.policy.name!r}, keys={len(self._versions)}, "
                f"versions={len(self)})")
