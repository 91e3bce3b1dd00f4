"""A seeded CMS editing session with labelled references (D0's setting).

A user works through *projects* (a task, its assignee, and a few pages and
blog entries), opens things explicitly ("Open page 42"), acts on them by
reference ("Update that page's title", "Assign it to @dana", "Who wrote the
previous entry?"), browses lists that bring many unrelated entities into the
conversation, goes back to earlier work, and takes breaks. Every entity mention
is labelled with its key and character span, and every reference with its true
antecedent, so resolution success is measured against ground truth.

How the labels are made: the generator tracks the conversation's own recency
(every mention or reference moves an entity to the front) and picks a
referring expression the way a person would: "it" / "this one" for the entity
just discussed, "that page" for the most recent page, "the previous entry" for
the one before it, and an explicit id when none of those fits. One realistic
trap is kept on purpose: after an answer mentions a side entity ("It was written
by @dana"), the user sometimes says "Publish it" meaning the entry, not Dana.
Those references carry ``heuristic_ok = False``: the most-recent rule gets them
wrong even with unlimited memory, which separates the heuristic's own errors
from a memory policy's.

Times are minutes of simulated time. The generator (``generate_cms_scenario`` in
``data/entities/generate.py``, beside the files it writes) uses ``random.Random(seed)`` only, so
a seed gives the same file on every platform; this module holds the scenario and its loader.
Taught in ``notebooks/04_entity_memory.ipynb``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memorykit.entities.records import Entity

GENERATOR_VERSION = 1
ENTITY_TYPES: tuple[str, ...] = ("page", "entry", "user", "task")


@dataclass(frozen=True, slots=True)
class Mention:
    """An explicit mention of an entity (a tool result would add it to memory)."""

    key: str
    where: str
    """'user' (in the user's text) or 'assistant' (in the reply, from a tool result)."""
    span: tuple[int, int]
    text: str


@dataclass(frozen=True, slots=True)
class LabelledReference:
    """A referring expression in the user's text and what it really refers to."""

    text: str
    span: tuple[int, int]
    antecedent: str
    """The true ``type:id``."""
    form: str
    """'this-type', 'previous-type', 'it' or 'previous-one'."""
    heuristic_ok: bool
    """Would the most-recent rule pick the antecedent with unlimited memory, given that
    every earlier reference was resolved correctly?"""


@dataclass(frozen=True, slots=True)
class ScenarioTurn:
    turn: int
    t_minutes: float
    """Simulated minutes since the session started."""
    action: str
    user: str
    assistant: str
    mentions: tuple[Mention, ...]
    references: tuple[LabelledReference, ...]

    def user_events(self) -> list[Mention | LabelledReference]:
        """Mentions and references in the user's text, in reading order."""
        events: list[Mention | LabelledReference] = [m for m in self.mentions if m.where == "user"]
        events.extend(self.references)
        return sorted(events, key=lambda e: e.span[0])

    def assistant_mentions(self) -> list[Mention]:
        return [m for m in self.mentions if m.where == "assistant"]


@dataclass(frozen=True)
class CMSScenario:
    name: str
    seed: int
    params: dict[str, Any]
    entities: tuple[Entity, ...]
    turns: tuple[ScenarioTurn, ...]
    _index: dict[str, Entity] = field(init=False, repr=False, compare=False)
    _plans: dict[Any, Any] = field(init=False, repr=False, compare=False)
    """Replay plans by resolver vocabulary (``memorykit.classroom.replays.entity_replay``), built once."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "_index", {e.key: e for e in self.entities})
        object.__setattr__(self, "_plans", {})

    def entity(self, key: str) -> Entity:
        try:
            return self._index[key]
        except KeyError:
            raise KeyError(f"key {key!r} is not an entity of scenario {self.name!r}") from None

    def mentioned_keys(self) -> list[str]:
        """Entity keys in order of first mention."""
        seen: dict[str, None] = {}
        for t in self.turns:
            for m in sorted(t.mentions, key=lambda m: (m.where != "user", m.span[0])):
                seen.setdefault(m.key, None)
        return list(seen)

    def references(self) -> Iterator[tuple[int, LabelledReference]]:
        for t in self.turns:
            for r in t.references:
                yield t.turn, r

    def stats(self) -> dict[str, Any]:
        refs = [r for _, r in self.references()]
        forms: dict[str, int] = {}
        for r in refs:
            forms[r.form] = forms.get(r.form, 0) + 1
        return {
            "turns": len(self.turns),
            "entities": len(self.entities),
            "entities_mentioned": len(self.mentioned_keys()),
            "mentions": sum(len(t.mentions) for t in self.turns),
            "references": len(refs),
            "references_heuristic_ok": sum(r.heuristic_ok for r in refs),
            "forms": dict(sorted(forms.items())),
            "minutes": self.turns[-1].t_minutes if self.turns else 0.0,
        }

    # ------------------------------------------------------------------ files
    def to_jsonl(self) -> str:
        def dump(obj: dict[str, Any]) -> str:
            return json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"))

        lines = [dump({"kind": "scenario", "name": self.name, "seed": self.seed,
                       "generator_version": GENERATOR_VERSION, "params": self.params})]
        lines += [dump({"kind": "entity", **e.to_dict()}) for e in self.entities]
        for t in self.turns:
            lines.append(dump({
                "kind": "turn", "turn": t.turn, "t_minutes": t.t_minutes, "action": t.action,
                "user": t.user, "assistant": t.assistant,
                "mentions": [{"key": m.key, "where": m.where, "span": list(m.span), "text": m.text}
                             for m in t.mentions],
                "references": [{"text": r.text, "span": list(r.span), "antecedent": r.antecedent,
                                "form": r.form, "heuristic_ok": r.heuristic_ok}
                               for r in t.references],
            }))
        return "\n".join(lines) + "\n"

    def save(self, path: str | Path) -> Path:
        path = Path(path)
        path.write_text(self.to_jsonl(), encoding="utf-8")
        return path


def load_scenario(path: str | Path) -> CMSScenario:
    """Read a scenario written by ``CMSScenario.save``."""
    header: dict[str, Any] | None = None
    entities: list[Entity] = []
    turns: list[ScenarioTurn] = []
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            row = json.loads(line)
            kind = row.get("kind")
            if kind == "scenario":
                header = row
            elif kind == "entity":
                entities.append(Entity(row["type"], row["id"], row["label"], row["metadata"]))
            elif kind == "turn":
                turns.append(ScenarioTurn(
                    row["turn"], row["t_minutes"], row["action"], row["user"], row["assistant"],
                    tuple(Mention(m["key"], m["where"], tuple(m["span"]), m["text"])
                          for m in row["mentions"]),
                    tuple(LabelledReference(r["text"], tuple(r["span"]), r["antecedent"], r["form"],
                                            r["heuristic_ok"]) for r in row["references"]),
                ))
            else:
                raise ValueError(f"{path}:{n}: unknown row kind {kind!r}")
    if header is None:
        raise ValueError(f"{path} has no scenario header row")
    return CMSScenario(header["name"], header["seed"], header["params"], tuple(entities), tuple(turns))
