"""A write-quality audit: what a long-term store holds that it should not.

An audit of one real memory store found almost all of its entries were junk (mem0#4573): the
same fact written again and again, "ok" and "thanks!" kept forever, an old address beside the
new one. ``audit_store`` reads what a store *holds* (not what the conversation said) and counts
five kinds of finding, each with a few examples:

* **exact duplicate**: an entry whose text equals an earlier entry's, ignoring case and spacing;
* **near duplicate**: an entry whose word-bigram shingles overlap an earlier entry's with a
  Jaccard similarity of at least ``AuditSettings.near_threshold`` (not exact, and not a pair
  the update detector links: a changed value is a contradiction, not a copy);
* **transient chatter**: an entry of at most ``chatter_max_words`` words, every one a
  function word or a word of courtesy (greetings, thanks, acknowledgements, agreement:
  ``PHATIC_WORDS`` and their regular inflections, a closed class of English, not a list drawn
  from any data set). "Thanks, Anna!" is not chatter under this rule (a name is content);
  "cancel it" is not either;
* **contradiction left standing**: a pair of stored messages the update detector
  (``memorykit.facts.detect.find_updates`` by default) links, the earlier one kept with no
  mark that it was superseded (its payload has neither ``superseded_by`` nor ``valid_until``);
* **superseded ranked first**: a query (given, or the key of each detected update) for which
  the first entry of a changed fact among the top ``recall_limit`` the store's recall returns
  (with a similarity above 0: a query that shares nothing with a fact does not ask about it) is
  a superseded one, unmarked: a reader taking the first answer takes the old value as current.
  A marked one is not counted: recall shows it as superseded, before the current statement.

Each entry is counted once per kind (against its first match), kinds may overlap ("ok" stored
twice is a duplicate and chatter). ``audit_settings_grid`` fills a ``MemoryService`` with one
conversation under each ``storage_scope`` and ``update_policy`` and audits each: how the
settings change the counts.

Taught in ``notebooks/13_changing_facts.ipynb``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from memorykit._text import STOPWORDS, words
from memorykit._validate import require_between, require_bool, require_int, require_str
from memorykit.embeddings import Embedder, LexicalHashingEmbedder
from memorykit.facts.statement import Update
from memorykit.longterm.semantic import SemanticMemory
from memorykit.longterm.service import (STORAGE_SCOPES, UPDATE_POLICY_NAMES, LongTermSettings,
                                        MemoryService)
from memorykit.messages import ROLES, Message

__all__ = ["FINDING_KINDS", "PHATIC_WORDS", "AuditSettings", "Finding", "StoreAudit",
           "StoredEntry", "audit_settings_grid", "audit_store", "is_chatter"]

FINDING_KINDS = ("exact duplicate", "near duplicate", "transient chatter",
                 "contradiction left standing", "superseded ranked first")

PHATIC_WORDS = frozenset(
    """
    hi hello hey hiya morning afternoon evening night bye goodbye cya later soon see talk
    thanks thank thx ty cheers much lot appreciate appreciated welcome np problem worries
    ok okay k kk alright right sure yes yeah yep yup no nope nah fine good great cool nice
    perfect awesome wonderful excellent lovely sounds noted understood gotcha got roger agreed
    deal done glad happy help let know anything else oh ah hmm wow lol haha sorry
    """.split()
)
"""Words of courtesy and acknowledgement (greetings, thanks, agreement, sign-offs): with the
function words of ``memorykit._text.STOPWORDS`` they make up messages that carry no fact."""


MAX_CHATTER_WORDS = 100
"""The longest entry any setting may call chatter: past that it is a speech, not a "thanks"."""


@dataclass(frozen=True)
class AuditSettings:
    """The audit's rules, one number each."""

    near_threshold: float = 0.6
    """Two entries are near duplicates when the Jaccard similarity of their word-bigram sets is
    at least this (in (0, 1]; 1 only for the same bigrams in any order)."""
    chatter_max_words: int = 6
    """An entry longer than this many words is never chatter, whatever its words (at most
    ``MAX_CHATTER_WORDS``: chatter is short by definition)."""
    recall_limit: int | None = None
    """How many recalled entries a reader sees (None: the store's own ``recall_limit``, or 5
    for a plain list of entries)."""
    examples: int = 3
    """Examples shown per kind in ``StoreAudit.rows`` (at most 100: a row a reader can read;
    ``StoreAudit.findings`` holds them all)."""

    def __post_init__(self) -> None:
        require_between("near_threshold", self.near_threshold, 1e-9, 1.0)
        require_int("chatter_max_words", self.chatter_max_words, minimum=1,
                    maximum=MAX_CHATTER_WORDS)
        if self.recall_limit is not None:
            require_int("recall_limit", self.recall_limit, minimum=1)
        require_int("examples", self.examples, minimum=0, maximum=100)


@dataclass(frozen=True)
class StoredEntry:
    """One entry a store holds: a stored unit (a message, or one sentence of it)."""

    id: str
    text: str
    created_at: float
    """When its message was said (seconds, as ``Message.created_at``)."""
    message_id: str = ""
    """The message it comes from ("": the entry is a whole message, ``id``)."""
    role: str = "user"
    superseded: bool = False
    """The store marks it superseded (a later statement replaced it)."""

    def __post_init__(self) -> None:
        require_str("id", self.id, non_empty=True)
        require_str("text", self.text)
        at = self.created_at
        if type(at) is bool or not isinstance(at, (int, float)) or not math.isfinite(at):
            raise ValueError(f"created_at of entry {self.id!r} must be a finite number of "
                             f"seconds, got {at!r}")
        require_str("message_id", self.message_id)
        require_bool("superseded", self.superseded)
        if self.role not in ROLES:
            raise ValueError(f"role of entry {self.id!r} must be one of {ROLES}, got {self.role!r}")
        if not self.message_id:
            object.__setattr__(self, "message_id", self.id)


@dataclass(frozen=True)
class Finding:
    """One thing the store should not hold (or should not rank so)."""

    kind: str
    """One of ``FINDING_KINDS``."""
    ids: tuple[str, ...]
    """The entries or messages involved: (entry, the earlier one it repeats), (entry,),
    (superseded message, the one that replaced it)."""
    detail: str
    """What a reader needs to see it: the texts, the similarity, the query."""


@dataclass(frozen=True)
class StoreAudit:
    """Counts and examples of what a store holds that it should not."""

    entries: int
    """Entries (stored units) audited."""
    messages: int
    """Distinct messages they come from."""
    updates: int
    """Updates the detector found between stored messages."""
    queries: tuple[str, ...]
    """The queries the ranking check asked."""
    findings: tuple[Finding, ...]
    settings: AuditSettings

    def count(self, kind: str) -> int:
        if kind not in FINDING_KINDS:
            raise ValueError(f"kind must be one of {FINDING_KINDS}, got {kind!r}")
        return sum(f.kind == kind for f in self.findings)

    def counts(self) -> dict[str, int]:
        """Every kind's count, in ``FINDING_KINDS`` order."""
        return {k: self.count(k) for k in FINDING_KINDS}

    def rows(self) -> list[dict[str, Any]]:
        """One plain dict per kind: its count, what it counts out of, and a few examples."""
        out_of = {"exact duplicate": (self.entries, "entries"),
                  "near duplicate": (self.entries, "entries"),
                  "transient chatter": (self.entries, "entries"),
                  "contradiction left standing": (self.updates, "updates"),
                  "superseded ranked first": (len(self.queries), "queries")}
        rows = []
        for kind in FINDING_KINDS:
            # distinct examples: "'ok'" ten times shows one thing
            details = dict.fromkeys(f.detail for f in self.findings if f.kind == kind)
            examples = list(details)[:self.settings.examples]
            total, unit = out_of[kind]
            rows.append({"finding": kind, "count": self.count(kind),
                         "out of": f"{total} {unit}", "examples": " | ".join(examples)})
        return rows


Detector = Callable[[Sequence[Message]], Sequence[Update]]


def is_chatter(text: str, max_words: int = 6) -> bool:
    """Is ``text`` transient chatter: at most ``max_words`` words, each a function word or a
    courtesy (``PHATIC_WORDS``)?"""
    require_str("text", text)
    require_int("max_words", max_words, minimum=1, maximum=MAX_CHATTER_WORDS)
    ws = [w.lower() for w in words(text)]
    # a digit or a name is never a function word or a courtesy: either makes it a fact
    return len(ws) <= max_words and all(w in STOPWORDS or _courtesy(w) for w in ws)


def _courtesy(word: str) -> bool:
    """A word of ``PHATIC_WORDS`` or a regular inflection of one ("helps", "helped")."""
    return word in PHATIC_WORDS or any(
        word.endswith(end) and word[:-len(end)] in PHATIC_WORDS for end in ("s", "ed", "ing"))


def _shingles(text: str) -> frozenset[str]:
    ws = [w.lower() for w in words(text)]
    if len(ws) < 2:
        return frozenset(ws)
    return frozenset(f"{a} {b}" for a, b in zip(ws, ws[1:]))


def _norm(text: str) -> str:
    return " ".join(text.casefold().split())


def _short(text: str, width: int = 70) -> str:
    """``text`` quoted, cut to ``width`` characters for an example."""
    return repr(text if len(text) <= width else text[:width - 3].rstrip() + "...")


Ranker = Callable[[str, int], list[str]]
"""``rank(query, limit)``: the message ids of the store's recall for ``query``, best first."""


def _entries_of(store: Any, session_id: str | None) -> tuple[list[StoredEntry], Ranker, int]:
    """The entries a store holds, a ``rank(query, limit) -> message ids`` of its recall, and its
    recall limit."""
    if isinstance(store, MemoryService):
        if session_id is None:
            raise ValueError("session_id is needed to audit a MemoryService (its store is shared "
                             "by sessions)")
        session = store.sessions.get(require_str("session_id", session_id, non_empty=True))
        if session is None:
            raise ValueError(f"session_id {session_id!r} is not a session of this MemoryService "
                             f"(sessions: {sorted(store.sessions)})")
        store.apply_updates(session_id)  # what any read of the session does first
        semantic, where = session.semantic, {"session_id": session_id}
        limit, threshold = store.settings.recall_limit, store.settings.min_score
    elif isinstance(store, SemanticMemory):
        if session_id is not None:
            raise ValueError(f"session_id is only for a MemoryService, got {session_id!r}")
        semantic, where, limit = store, None, store.settings.recall_limit
        threshold = store.settings.threshold
    else:
        if session_id is not None:
            raise ValueError(f"session_id is only for a MemoryService, got {session_id!r}")
        return _plain_entries(store)
    entries: list[StoredEntry] = []
    units: dict[str, int] = {}
    for p in semantic.store.payloads(where):  # type: ignore[attr-defined]
        mid = str(p["message_id"])
        units[mid] = units.get(mid, -1) + 1  # the unit's number within its message, as stored
        # the marks a dating update policy leaves on a superseded entry's payload
        marked = bool(p.get("superseded_by")) or p.get("valid_until") is not None
        entries.append(StoredEntry(f"{mid}#{units[mid]}", str(p["text"]), float(p["created_at"]),
                                   mid, str(p["role"]), marked))

    def rank(query: str, n: int) -> list[str]:
        hits = semantic.recall(query, limit=n, threshold=threshold, where=where)
        return [h.message_id for h in hits if h.score > 0]
    return entries, rank, limit


def _plain_entries(store: Any) -> tuple[list[StoredEntry], Ranker, int]:
    if isinstance(store, (str, bytes, Mapping)) or not isinstance(store, Sequence):
        raise TypeError(f"store must be a MemoryService, a SemanticMemory or a list of "
                        f"(id, text, created_at) entries, got {store!r}")
    entries: list[StoredEntry] = []
    for i, e in enumerate(store):
        if isinstance(e, StoredEntry):
            entries.append(e)
        elif isinstance(e, tuple) and len(e) == 3:
            entries.append(StoredEntry(*e))
        else:
            raise TypeError(f"store[{i}] must be a StoredEntry or an (id, text, created_at) tuple, "
                            f"got {e!r}")
    seen: set[str] = set()
    for e in entries:
        if e.id in seen:
            raise ValueError(f"entry id {e.id!r} appears twice in store")
        seen.add(e.id)
    embedder: Embedder = LexicalHashingEmbedder()
    matrix = embedder.embed([e.text for e in entries]) if entries else np.zeros((0, 1))

    def rank(query: str, n: int) -> list[str]:
        if not entries:
            return []
        scores = matrix @ embedder.embed([query])[0]
        order = sorted(range(len(entries)), key=lambda i: -scores[i])  # stable: ties oldest first
        return [entries[i].message_id for i in order[:n] if scores[i] > 0]
    return entries, rank, 5


def _detect(detector: Any, messages: list[Message]) -> list[Update]:
    if detector is None:
        from memorykit.facts.detect import find_updates
        found = find_updates(messages)
    elif callable(getattr(detector, "find", None)):
        found = detector.find(messages)
    elif callable(detector):
        found = detector(messages)
    else:
        raise TypeError(f"detector must be a callable (messages -> updates) or have a find "
                        f"method, got {detector!r}")
    updates = list(found)
    for u in updates:
        if not isinstance(u, Update):
            raise TypeError(f"detector must return Update records, got {u!r}")
    return updates


def _messages(entries: list[StoredEntry]) -> list[Message]:
    """The stored messages, their units joined, in the order they were said."""
    texts: dict[str, list[str]] = {}
    first: dict[str, StoredEntry] = {}
    for e in entries:
        texts.setdefault(e.message_id, []).append(e.text)
        first.setdefault(e.message_id, e)
    out = []
    for mid, e in sorted(first.items(), key=lambda kv: kv[1].created_at):  # stable: store order on ties
        # the store keeps no call id: a stored tool result gets a stand-in one
        out.append(Message(mid, e.role, " ".join(texts[mid]), 0, 0,  # type: ignore[arg-type]
                           created_at=float(e.created_at),
                           tool_call_id="stored" if e.role == "tool" else None))
    return out


def _duplicates(entries: list[StoredEntry], linked: set[frozenset[str]],
                threshold: float) -> list[Finding]:
    """Exact and near duplicates: each entry against the earlier ones (an inverted index of
    shingles finds the candidates, so this is not a comparison of every pair)."""
    findings: list[Finding] = []
    first_of: dict[str, StoredEntry] = {}
    index: dict[str, list[int]] = {}
    sets = [_shingles(e.text) for e in entries]
    for i, e in enumerate(entries):
        key = _norm(e.text)
        if key and key in first_of:
            findings.append(Finding("exact duplicate", (e.id, first_of[key].id),
                                    f"{_short(e.text)} again"))
        else:
            first_of.setdefault(key, e)
            shared: dict[int, int] = {}
            for s in sets[i]:
                for j in index.get(s, ()):
                    shared[j] = shared.get(j, 0) + 1
            best, best_j = 0.0, -1
            for j, n in shared.items():
                jaccard = n / (len(sets[i]) + len(sets[j]) - n)
                same_fact = frozenset((e.message_id, entries[j].message_id)) in linked
                if jaccard > best and not same_fact and _norm(entries[j].text) != key:
                    best, best_j = jaccard, j
            if best_j >= 0 and best >= threshold:
                o = entries[best_j]
                findings.append(Finding("near duplicate", (e.id, o.id),
                                        f"{_apart(e.text, o.text)} (Jaccard {best:.2f})"))
        for s in sets[i]:
            index.setdefault(s, []).append(i)
    return findings


def _apart(a: str, b: str) -> str:
    """Two near-identical texts shown from shortly before where they differ."""
    same = next((k for k, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    cut = a.find(" ", same - 30) + 1 if same > 30 else 0  # from a word a little before
    lead = "..." if cut else ""
    return f"{_short(lead + a[cut:])} ~ {_short(lead + b[cut:])}"


def _ranked_first(updates: list[Update], queries: tuple[str, ...], rank: Ranker, limit: int,
                  marked: set[str], text: Mapping[str, str]) -> list[Finding]:
    """Queries whose first recalled entry of a changed fact is superseded and unmarked."""
    replaced_by = {u.old: u.new for u in updates}
    changed = set(replaced_by) | set(replaced_by.values())
    findings = []
    for q in queries:
        top = next((mid for mid in rank(q, limit) if mid in changed), None)
        if top in replaced_by and top not in marked:
            findings.append(Finding("superseded ranked first", (top, replaced_by[top]),
                                    f"{q!r} -> {_short(text[top])} first"))
    return findings


def audit_store(
    store: MemoryService | SemanticMemory | Sequence[StoredEntry | tuple[str, str, float]],
    session_id: str | None = None,
    *,
    queries: Sequence[str] | None = None,
    detector: Detector | Any | None = None,
    settings: AuditSettings | None = None,
) -> StoreAudit:
    """Audit what ``store`` holds (for a ``MemoryService``, what ``session_id``'s entries are).

    ``queries`` are asked of the store's recall for the ranking check (None: the key of each
    detected update, once). ``detector`` finds updates among the stored messages: a callable
    ``messages -> list[Update]`` or an object with ``find(messages)`` (None:
    ``memorykit.facts.detect.find_updates``). A plain list is ranked by the offline lexical
    embedder. Audit a session while nothing writes to it: the audit reads the store several
    times (its entries, then one recall per query).
    """
    settings = AuditSettings() if settings is None else settings
    if not isinstance(settings, AuditSettings):
        raise TypeError(f"settings must be AuditSettings, got {settings!r}")
    if queries is not None:
        if isinstance(queries, str) or not isinstance(queries, Sequence):
            raise TypeError(f"queries must be a list of str, got {queries!r}")
        for q in queries:
            require_str("queries[]", q, non_empty=True)
    entries, rank, store_limit = _entries_of(store, session_id)
    messages = _messages(entries)
    text = {m.id: m.content for m in messages}
    # a detector may link a message to a copy of itself: that is a duplicate, not a change
    updates = [u for u in _detect(detector, messages) if u.old in text and u.new in text
               and _norm(text[u.old]) != _norm(text[u.new])]
    marked = {e.message_id for e in entries if e.superseded}
    findings = _duplicates(entries, {frozenset((u.old, u.new)) for u in updates},
                           settings.near_threshold)
    findings += [Finding("transient chatter", (e.id,), _short(e.text)) for e in entries
                 if is_chatter(e.text, settings.chatter_max_words)]
    findings += [Finding("contradiction left standing", (u.old, u.new),
                         f"{_short(text[u.old])} kept beside {_short(text[u.new])} ({u.cue})")
                 for u in updates if u.old not in marked]
    asked = tuple(queries) if queries is not None else tuple(dict.fromkeys(u.key for u in updates))
    findings += _ranked_first(updates, asked, rank, settings.recall_limit or store_limit, marked,
                              text)
    return StoreAudit(len(entries), len(messages), len(updates), asked, tuple(findings), settings)


def audit_settings_grid(
    messages: Sequence[Message],
    storage_scopes: Sequence[str] = STORAGE_SCOPES,
    update_policies: Sequence[str] = UPDATE_POLICY_NAMES,
    *,
    service: Callable[[LongTermSettings], MemoryService] | None = None,
    queries: Sequence[str] | None = None,
    detector: Detector | Any | None = None,
    settings: AuditSettings | None = None,
) -> list[dict[str, Any]]:
    """Store ``messages`` in a fresh ``MemoryService`` under each storage scope and update
    policy and audit each: one plain dict row per setting (its entries, then every kind's count).

    ``update_policies``: values of ``LongTermSettings.update_policy`` (default every one).
    ``service`` builds the service from its settings (default ``MemoryService(settings=...,
    detector=detector)``: the store acts on the updates the audit looks for).
    """
    if isinstance(messages, (str, bytes)) or not isinstance(messages, Sequence) or not messages:
        raise ValueError(f"messages must be a non-empty list of Message, got {messages!r}")
    for i, m in enumerate(messages):
        if type(m) is not Message:
            raise TypeError(f"messages[{i}] must be a Message, got {m!r}")
    for name, values in (("storage_scopes", storage_scopes), ("update_policies", update_policies)):
        if isinstance(values, str) or not isinstance(values, Sequence) or not values:
            raise ValueError(f"{name} must be a non-empty list, got {values!r}")
    if service is not None and not callable(service):
        raise TypeError(f"service must be a callable (settings -> MemoryService), got {service!r}")
    make = service if service is not None else (
        lambda s: MemoryService(settings=s, detector=detector))
    rows = []
    for scope in storage_scopes:
        for policy in update_policies:
            svc = make(LongTermSettings(storage_scope=scope, update_policy=policy))
            if not isinstance(svc, MemoryService):
                raise TypeError(f"service(settings) must return a MemoryService, got {svc!r}")
            for m in messages:
                svc.add("audit", m)
            svc.flush("audit", reason="audit: every message written")
            audit = audit_store(svc, "audit", queries=queries, detector=detector,
                                settings=settings)
            rows.append({"storage_scope": scope, "update_policy": policy,
                         "entries": audit.entries, **audit.counts()})
    return rows
