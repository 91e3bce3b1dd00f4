"""Planted facts: checkable sentences in a simulated conversation, and who still holds them.

A *planted fact* is a sentence with a unique checkable key ("The locker code at the ski lodge
is 4721.", key ``"4721"``) and a question that probes it; ``make_key`` draws a fresh key from a
recipe (every recipe yields digits, which prose never contains), ``fact_survival`` tells which
facts a memory still holds.
Taught in ``notebooks/02_pruning_strategies.ipynb`` and ``notebooks/03_summary_buffer.ipynb``.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from memorykit.messages import Message
from memorykit.classroom.scenarios.prose import SLOTS

# --------------------------------------------------------------------- facts


@dataclass(frozen=True, slots=True)
class PlantedFact:
    """A checkable fact planted in one message of a simulated conversation."""

    id: str
    """``f0001``, ``f0002``, ... in planting order."""
    text: str
    """The sentence as it appears in the message."""
    key: str
    """The exact substring that proves the fact is still known ("4721", "UA 917")."""
    turn: int
    message_id: str
    topic: str
    question: str
    """A question whose answer is ``key`` ("What is the locker code at the gym?")."""

    def to_record(self) -> dict[str, Any]:
        return {
            "type": "fact", "id": self.id, "text": self.text, "key": self.key,
            "turn": self.turn, "message_id": self.message_id, "topic": self.topic,
            "question": self.question,
        }

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> PlantedFact:
        return cls(
            record["id"], record["text"], record["key"], record["turn"],
            record["message_id"], record["topic"], record["question"],
        )


def fact_survival(facts: Iterable[PlantedFact], messages: Iterable[Message]) -> dict[str, bool]:
    """For each fact id: does its key appear in the content of a kept message?

    ``messages`` is whatever a memory still holds (a buffer's window, a context),
    summaries included: a summary that quotes "4721" keeps the locker code alive.
    """
    blob = "\x00".join(m.content for m in messages)
    return {f.id: f.key in blob for f in facts}


def make_key(rng: random.Random, recipe: str) -> str:
    """A fresh checkable key; every recipe yields digits, which prose never contains."""
    def n(lo: int, hi: int) -> int:
        return lo + int(rng.random() * (hi - lo + 1))

    def letters(k: int, alphabet: str = "ABCDEFGHJKLMNPQRSTUVWXYZ") -> str:
        return "".join(alphabet[int(rng.random() * len(alphabet))] for _ in range(k))

    if recipe == "d4":
        return str(n(1000, 9999))
    if recipe == "d5":
        return str(n(10000, 99999))
    if recipe == "flight":
        airline = SLOTS["airline"][int(rng.random() * len(SLOTS["airline"]))]
        return f"{airline} {n(100, 9999)}"
    if recipe == "conf":
        return f"{letters(2)}-{n(10000, 99999)}"
    if recipe == "platform":
        return f"{n(1, 24)}{letters(1, 'ABCD')}"
    if recipe == "ticket":
        project = SLOTS["project"][int(rng.random() * len(SLOTS["project"]))]
        return f"{project}-{n(100, 9999)}"
    if recipe == "release":
        return f"v{n(1, 9)}.{n(0, 40)}.{n(0, 19)}"
    if recipe == "hex":
        while True:
            h = "".join("0123456789abcdef"[int(rng.random() * 16)] for _ in range(7))
            if any(c.isdigit() for c in h) and any(c.isalpha() for c in h):
                return h
    if recipe == "dollars_k":
        return f"${n(1, 4)},{n(0, 999):03d}"
    if recipe == "dollars":
        return f"${n(60, 990)}"
    if recipe == "cents":
        return f"${n(12, 480)}.{n(0, 99):02d}"
    if recipe == "acct":
        return f"{n(1000, 9999)}"
    if recipe == "degrees":
        return f"{n(140, 260)} degrees"
    if recipe == "grams":
        return f"{n(30, 900)} grams"
    if recipe == "minutes":
        return f"{n(5, 180)} minutes"
    if recipe == "clock":
        return f"{n(8, 17)}:{(n(0, 11) * 5):02d}"
    if recipe == "req":
        return f"{letters(3)}-{n(1000, 99999)}"
    if recipe == "salary":
        return f"${n(45, 210)},{n(0, 9) * 100:03d}"
    # D3's fact bank (memorykit.classroom.scenarios.probes)
    if recipe == "order":
        return f"ORD-{n(10000, 99999)}"
    if recipe == "falcon":  # D3's example code, Blue_Falcon_99
        return f"Blue_Falcon_{n(10, 99)}"
    if recipe == "serial":
        return f"SN-{letters(3)}{n(100, 999)}"
    if recipe == "house":
        return f"{n(11, 289)}"
    if recipe == "phone":
        return f"+44 7700 {n(900000, 999999)}"
    if recipe == "case":
        return f"CASE-{n(1000, 9999)}"
    raise ValueError(f"unknown key recipe {recipe!r}")  # pragma: no cover - internal tables
