"""Entity extraction: which known things a piece of text talks about.

Relevance (is this note about what the user is doing now?) and salience
(was this object mentioned in the last five turns?) both reduce to sets of
entity ids. Anything with ``extract(text) -> frozenset[str]`` will do; the
default ``VocabularyExtractor`` is deterministic and offline: it matches the
names and aliases of objects the knowledge graph knows (whole words,
case-sensitive, longest name first so "Acme Supplies" wins over "Acme") and a
few id-shaped patterns such as invoice numbers ``INV-1042``.

It misses what it was not told (a lowercase "cheyenne", "the Wyoming site")
and cannot tell two matters about the same vendor apart: both failure modes
show up in the surfacing precision and recall the simulation measures.
Taught in ``notebooks/06_notes_ttl.ipynb`` (surfacing) and
``notebooks/07_objects_salience.ipynb`` (mentions).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Protocol, runtime_checkable

from memorykit._validate import require_str

INVOICE_PATTERN = r"\bINV-\d{3,6}\b"
"""Invoice numbers such as INV-1042; the matched text is its own entity id."""


@runtime_checkable
class EntityExtractor(Protocol):
    """Anything that maps a text to the set of entity ids it mentions."""

    def extract(self, text: str) -> frozenset[str]: ...


class VocabularyExtractor:
    """Whole-word matches of known surface forms, plus id-shaped regex patterns.

    ``vocabulary`` maps a surface form ("Acme Supplies", "Acme") to an entity
    id ("vendor:acme"). ``patterns`` are regular expressions whose matched text
    is itself the id (invoice numbers). Matching is case-sensitive on purpose:
    capitalised names are what a cheap extractor can trust.
    """

    def __init__(
        self, vocabulary: Mapping[str, str], patterns: Iterable[str] = (INVOICE_PATTERN,)
    ) -> None:
        if not isinstance(vocabulary, Mapping):
            raise TypeError(f"vocabulary must be a mapping of surface form to id, got {vocabulary!r}")
        for surface, entity_id in vocabulary.items():
            require_str("vocabulary surface form", surface, non_empty=True)
            require_str(f"vocabulary id for {surface!r}", entity_id, non_empty=True)
        self.vocabulary = dict(vocabulary)
        self.patterns = tuple(require_str("pattern", p, non_empty=True) for p in patterns)
        # One alternation, longest surface form first, so a regex engine that
        # takes the first matching branch picks the longest name.
        forms = sorted(self.vocabulary, key=lambda s: (-len(s), s))
        self._names = (
            re.compile(r"(?<!\w)(?:" + "|".join(re.escape(f) for f in forms) + r")(?!\w)")
            if forms
            else None
        )
        self._patterns = [re.compile(p) for p in self.patterns]

    @classmethod
    def from_graph(cls, graph, patterns: Iterable[str] = (INVOICE_PATTERN,)) -> VocabularyExtractor:
        """Every object's name and aliases, mapped to its id."""
        vocabulary: dict[str, str] = {}
        for obj in graph.objects():
            for form in (obj.name, *obj.aliases):
                vocabulary[form] = obj.id
        return cls(vocabulary, patterns)

    def extract(self, text: str) -> frozenset[str]:
        require_str("text", text)
        found: set[str] = set()
        if self._names is not None:
            found.update(self.vocabulary[m.group(0)] for m in self._names.finditer(text))
        for pattern in self._patterns:
            found.update(m.group(0) for m in pattern.finditer(text))
        return frozenset(found)

    def __repr__(self) -> str:
        return f"VocabularyExtractor({len(self.vocabulary)} surface forms, {len(self.patterns)} patterns)"


class FixedExtractor:
    """A test double: returns exactly the entities it was given for each text (else none)."""

    def __init__(self, table: Mapping[str, Iterable[str]]) -> None:
        self.table = {text: frozenset(ids) for text, ids in table.items()}

    def extract(self, text: str) -> frozenset[str]:
        return self.table.get(require_str("text", text), frozenset())
