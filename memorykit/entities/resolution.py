"""Reference resolution: "update that page's title" -> ``page:42``.

``ReferenceResolver`` finds referring expressions in a user turn and resolves
each against working memory, by last access (most recent first):

* "this page", "that entry", "the task", "the same post", "the last ticket":
  the most recent entity of the named type;
* "it", "its", "this one", "that one": the most recent entity of any type;
* "the previous page": the second most recent page;
* "the previous one": the second most recent entity of the type of the most
  recent entity ("open page 5, open page 9, go back to the previous one").

A resolved reference counts as an access (``memory.get``), as it would when the
agent acts on it. When nothing fits, the resolution says so (``key is None``
with a reason such as "no page in working memory") instead of guessing.
Type nouns are a configurable vocabulary; asking the typed API for a type the
vocabulary does not know raises a ValueError naming it.
Taught in ``notebooks/04_entity_memory.ipynb``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from memorykit._validate import require_int, require_str
from memorykit.entities.memory import EntityMemory

DEFAULT_VOCABULARY: Mapping[str, str] = {
    "page": "page", "pages": "page",
    "entry": "entry", "entries": "entry", "post": "entry", "posts": "entry",
    "article": "entry", "articles": "entry",
    "user": "user", "users": "user", "author": "user", "authors": "user",
    "person": "user", "people": "user",
    "task": "task", "tasks": "task", "ticket": "task", "tickets": "task",
}

# Forms a reference can take (the scenario files label references with them too).
FORMS: tuple[str, ...] = ("this-type", "previous-type", "it", "previous-one")


@dataclass(frozen=True, slots=True)
class Reference:
    """A referring expression found in a text."""

    text: str
    span: tuple[int, int]
    """[start, end) character offsets in the text."""
    form: str
    """'this-type', 'previous-type', 'it' or 'previous-one'."""
    entity_type: str | None
    """The named type, or None for 'it' / 'that one' / 'the previous one'."""
    ordinal: int
    """0 for the most recent, 1 for the one before it."""


@dataclass(frozen=True, slots=True)
class Resolution:
    """What a reference resolved to, or why it could not be resolved."""

    reference_text: str
    entity_key: str | None
    """``type:id`` of the antecedent, or None when unresolvable."""
    reason: str
    span: tuple[int, int] = (0, 0)
    form: str = "this-type"
    entity_type: str | None = None

    @property
    def resolved(self) -> bool:
        return self.entity_key is not None


class ReferenceResolver:
    """Finds and resolves references with a vocabulary of type nouns."""

    def __init__(self, vocabulary: Mapping[str, str] | None = None) -> None:
        vocab = dict(DEFAULT_VOCABULARY if vocabulary is None else vocabulary)
        if not vocab:
            raise ValueError("vocabulary must name at least one noun, got {}")
        for noun, entity_type in vocab.items():
            require_str("vocabulary noun", noun, non_empty=True)
            require_str(f"vocabulary type for {noun!r}", entity_type, non_empty=True)
        self.vocabulary = {noun.lower(): t for noun, t in vocab.items()}
        self.types = tuple(dict.fromkeys(self.vocabulary.values()))
        nouns = "|".join(sorted(map(re.escape, self.vocabulary), key=len, reverse=True))
        no_id = r"(?!\s*#?\d)"  # "the page 42" is an explicit mention, not a reference
        self._pattern = re.compile(
            rf"\bthe\s+previous\s+(?P<prev_noun>{nouns})\b{no_id}"
            rf"|\bthe\s+previous\s+one\b"
            rf"|\b(?:this|that|the\s+same|the\s+last|the)\s+(?P<noun>{nouns})\b{no_id}"
            rf"|\b(?:this|that)\s+one\b"
            rf"|\bits?\b",
            re.IGNORECASE,
        )

    # ------------------------------------------------------------- detection
    def type_of(self, noun_or_type: str) -> str:
        """The entity type for a noun ('ticket' -> 'task') or a type name; else ValueError."""
        require_str("entity type", noun_or_type, non_empty=True)
        word = noun_or_type.strip().lower()
        if word in self.vocabulary:
            return self.vocabulary[word]
        if word in self.types:
            return word
        raise ValueError(
            f"unknown entity type {noun_or_type!r}; known types: {', '.join(self.types)} "
            f"(nouns: {', '.join(sorted(self.vocabulary))})"
        )

    def find(self, text: str) -> list[Reference]:
        """Every reference in ``text``, left to right."""
        require_str("text", text)
        out: list[Reference] = []
        for m in self._pattern.finditer(text):
            span = (m.start(), m.end())
            if m.group("prev_noun"):
                out.append(Reference(m.group(0), span, "previous-type",
                                     self.vocabulary[m.group("prev_noun").lower()], 1))
            elif m.group("noun"):
                out.append(Reference(m.group(0), span, "this-type",
                                     self.vocabulary[m.group("noun").lower()], 0))
            elif m.group(0).lower().endswith("previous one"):
                out.append(Reference(m.group(0), span, "previous-one", None, 1))
            else:
                out.append(Reference(m.group(0), span, "it", None, 0))
        return out

    # ------------------------------------------------------------ resolution
    def resolve_reference(self, ref: Reference, memory: EntityMemory, *, turn: int | None = None,
                          access: bool = True) -> Resolution:
        """Resolve one found reference; a success counts as an access unless ``access=False``."""
        key, reason = self._pick(ref, memory)
        if key is not None and access:
            memory.get(key, turn=turn)
        return Resolution(ref.text, key, reason, ref.span, ref.form, ref.entity_type)

    def resolve(self, text: str, memory: EntityMemory, *, turn: int | None = None,
                access: bool = True) -> list[Resolution]:
        """Find every reference in ``text`` and resolve each, in order."""
        return [self.resolve_reference(r, memory, turn=turn, access=access) for r in self.find(text)]

    def resolve_typed(self, entity_type: str | None, memory: EntityMemory, ordinal: int = 0,
                      *, turn: int | None = None, access: bool = True) -> Resolution:
        """Resolve "the <ordinal>-th most recent <type>" (None: any type) directly."""
        require_int("ordinal", ordinal, minimum=0)
        t = None if entity_type is None else self.type_of(entity_type)
        label = (t or "entity") if ordinal == 0 else f"previous {t or 'entity'}"
        form = ("this-type" if ordinal == 0 else "previous-type") if t else "it"
        ref = Reference(label, (0, 0), form, t, ordinal)
        key, reason = self._pick(ref, memory, ordinal)
        if key is not None and access:
            memory.get(key, turn=turn)
        return Resolution(label, key, reason, (0, 0), form, t)

    def _pick(self, ref: Reference, memory: EntityMemory,
              ordinal: int | None = None) -> tuple[str | None, str]:
        ordinal = ref.ordinal if ordinal is None else ordinal
        if ref.form == "previous-one":
            newest = memory.recent(n=1)
            if not newest:
                return None, "working memory is empty"
            entity_type = newest[0].type
        else:
            entity_type = ref.entity_type
        candidates = memory.recent(entity_type, n=ordinal + 1)
        what = entity_type or "entity"
        if len(candidates) <= ordinal:
            if not candidates:
                return None, f"no {what} in working memory"
            return None, f"only {len(candidates)} {what} in working memory; {ref.text!r} needs {ordinal + 1}"
        chosen = candidates[ordinal]
        rank = "most recent" if ordinal == 0 else f"{ordinal + 1}{'nd' if ordinal == 1 else 'th'} most recent"
        return chosen.key, f"{rank} {what} in working memory: {chosen.key} {chosen.label!r}".rstrip()
