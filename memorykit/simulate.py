"""Seeded conversations to feed memories: realistic lengths, simulated time, planted facts.

A memory policy is judged by what it forgets, so experiments need conversations
whose important content is known in advance. ``simulate_conversation`` writes
one: alternating user and assistant turns about a handful of everyday topics
(a trip, a software bug, a budget, a recipe, a job application) that switch now
and then, with an optional system prompt, occasional tool calls (the assistant
message issuing ``call_N`` is always followed directly by the ``tool`` result),
and simulated time on a ``StepClock`` (10 s to 5 min of user thinking per turn,
a few seconds of assistant latency, occasional breaks of half an hour to hours).

Every message carries an importance in [0, 1] derived from what kind of message
it is (greetings and acknowledgements low, planted facts and decisions high,
with noise) and ``metadata`` with its ``topic``, ``kind`` and the ids of the
``facts`` it contains. A *planted fact* is a sentence with a unique checkable
key ("The locker code at the ski lodge is 4721.", key ``"4721"``) and a question
that probes it; ``fact_survival`` tells which facts a memory still holds.

Determinism: everything is drawn from one ``random.Random(seed)`` and only
through its ``random()`` method, whose sequence Python guarantees across
versions, so the files in ``data/conversations`` regenerate byte for byte.
Non-fact text contains no digits and every key contains one, so a key occurs
in exactly one message of a simulated conversation.

Taught in ``notebooks/02_pruning_strategies.ipynb`` (which policy keeps the
facts) and ``notebooks/03_summary_buffer.ipynb`` (do the facts survive
summarization).
"""

from __future__ import annotations

import json
import math
import os
import random
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from memorykit._validate import require_int, require_real, require_unit_interval
from memorykit.clock import StepClock
from memorykit.messages import Message, MessageFactory
from memorykit.tokens import TokenCounter, Tokenizer

__all__ = [
    "FORMAT",
    "KINDS",
    "SIMULATOR_VERSION",
    "TOPICS",
    "PlantedFact",
    "SimulatedConversation",
    "fact_survival",
    "load_conversation",
    "random_messages",
    "save_conversation",
    "simulate_conversation",
]

SIMULATOR_VERSION = 1
"""Bump whenever the same arguments would produce different output."""
FORMAT = "memorykit.conversation"
"""The ``format`` field of a conversation file's header line."""

KINDS: tuple[str, ...] = ("system", "chitchat", "question", "answer", "fact", "decision", "tool")
"""Values of ``metadata["kind"]``."""

# (low, high) of the uniform base importance per kind; noise is added on top.
_IMPORTANCE: dict[str, tuple[float, float]] = {
    "chitchat": (0.05, 0.25),
    "question": (0.35, 0.6),
    "answer": (0.4, 0.65),
    "tool": (0.4, 0.65),
    "decision": (0.7, 0.9),
    "fact": (0.8, 1.0),
}
_NOISE = 0.05

# ----------------------------------------------------------------- vocabulary
# Each topic: a label, vocabulary for prose (no digits anywhere: keys own the
# digits), tools the assistant may call, and fact templates. A fact template is
# (sentence, question, key recipe); slots in braces are filled from _SLOTS or
# by the key recipe ({key}).

_NAMES = (
    "Maya", "Jonas", "Priya", "Tomas", "Aiko", "Lena", "Omar", "Sofia", "Kwame", "Elif",
    "Nina", "Rafael", "Ingrid", "Mateo", "Chen", "Hannah", "Ravi", "Zoe", "Lukas", "Amara",
    "Felix", "Yara", "Daniel", "Mei", "Oskar", "Leila", "Bruno", "Sanna", "Idris", "Clara",
)
_SLOTS: dict[str, tuple[str, ...]] = {
    "name": _NAMES,
    "place": (
        "the ski lodge", "the central station", "the airport", "the harbour", "the museum",
        "the gym", "the hostel", "the conference centre", "the ferry terminal", "the library",
    ),
    "city": (
        "Lisbon", "Oslo", "Kyoto", "Lima", "Nairobi", "Vienna", "Hanoi", "Quebec", "Porto", "Seville",
    ),
    "component": (
        "checkout", "login", "search", "upload", "billing", "export", "sync", "notification",
        "payment", "profile",
    ),
    "project": ("PAY", "AUTH", "CORE", "WEB", "API", "OPS", "DATA", "MOB"),
    "category": (
        "groceries", "transport", "eating out", "utilities", "childcare", "subscriptions",
        "clothing", "gifts", "travel", "insurance",
    ),
    "dish": (
        "lemon tart", "focaccia", "lasagne", "banana bread", "shakshuka", "curry", "risotto",
        "apple crumble", "sourdough", "chili",
    ),
    "ingredient": (
        "flour", "butter", "sugar", "rice", "chickpeas", "tomatoes", "cheese", "spinach",
        "oats", "almonds",
    ),
    "company": (
        "Northwind", "Globex", "Initech", "Umbrella Labs", "Acme Robotics", "Hooli", "Vandelay",
        "Stark Logistics", "Wayne Foods", "Cyberdyne",
    ),
    "weekday": ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday"),
    "airline": ("UA", "LH", "BA", "AF", "KL", "DL", "SQ", "TP", "AC", "QF"),
}

_TOPICS: dict[str, dict[str, Any]] = {
    "trip": {
        "label": "the trip",
        "nouns": (
            "flight", "hotel", "itinerary", "train", "booking", "suitcase", "passport", "museum",
            "beach", "hostel", "rental car", "airport", "visa", "ferry", "day trip", "budget",
            "guidebook", "neighbourhood", "restaurant", "layover", "check-in", "connection",
        ),
        "verbs": (
            "book", "compare", "cancel", "pack", "reserve", "check", "plan", "move", "confirm",
            "visit", "skip", "extend", "swap", "shorten",
        ),
        "adjectives": (
            "cheaper", "earlier", "direct", "refundable", "quiet", "central", "crowded", "scenic",
            "late", "flexible", "overnight", "sunny",
        ),
        "tools": ("search_flights", "hotel_availability", "weather_forecast"),
        "facts": (
            ("{name}'s flight to {city} is {key}.", "What is {name}'s flight number to {city}?", "flight"),
            ("The locker code at {place} is {key}.", "What is the locker code at {place}?", "d4"),
            ("The hotel confirmation for {name} in {city} is {key}.",
             "What is the hotel confirmation for {name} in {city}?", "conf"),
            ("{name}'s train to {city} leaves from platform {key}.",
             "Which platform does {name}'s train to {city} leave from?", "platform"),
        ),
    },
    "bug": {
        "label": "the bug",
        "nouns": (
            "stack trace", "test", "deploy", "database", "cache", "request", "timeout", "log",
            "endpoint", "config", "migration", "branch", "pull request", "null pointer", "queue",
            "worker", "dashboard", "retry", "dependency", "regression", "feature flag", "index",
        ),
        "verbs": (
            "reproduce", "bisect", "revert", "patch", "log", "profile", "restart", "review",
            "deploy", "isolate", "mock", "refactor", "trace", "pin",
        ),
        "adjectives": (
            "flaky", "intermittent", "slow", "stale", "broken", "noisy", "silent", "racy",
            "legacy", "async", "missing", "duplicated",
        ),
        "tools": ("run_tests", "search_logs", "git_blame"),
        "facts": (
            ("The {component} crash is tracked as ticket {key}.",
             "Which ticket tracks the {component} crash?", "ticket"),
            ("The {component} regression first shipped in release {key}.",
             "In which release did the {component} regression first ship?", "release"),
            ("{name} reproduced the {component} bug on build {key}.",
             "On which build did {name} reproduce the {component} bug?", "d5"),
            ("The bad commit in the {component} service is {key}.",
             "What is the bad commit in the {component} service?", "hex"),
        ),
    },
    "budget": {
        "label": "the budget",
        "nouns": (
            "rent", "savings", "groceries", "spreadsheet", "subscription", "salary", "bill",
            "credit card", "loan", "emergency fund", "category", "receipt", "transfer", "account",
            "expense", "bonus", "mortgage", "pension", "allowance", "insurance", "invoice", "tax",
        ),
        "verbs": (
            "cut", "track", "save", "transfer", "cap", "split", "cancel", "review", "pay",
            "round up", "estimate", "reduce", "consolidate", "automate",
        ),
        "adjectives": (
            "monthly", "fixed", "variable", "annual", "shared", "hidden", "recurring", "optional",
            "tight", "realistic", "generous", "overdue",
        ),
        "tools": ("read_spreadsheet", "bank_transactions"),
        "facts": (
            ("{name}'s monthly rent is {key}.", "What is {name}'s monthly rent?", "dollars_k"),
            ("The {category} budget is capped at {key} a month.",
             "What is the monthly cap for {category}?", "dollars"),
            ("{name} still owes {key} for {category}.", "How much does {name} owe for {category}?",
             "cents"),
            ("The emergency fund sits in the account ending {key}.",
             "Which account does the emergency fund sit in?", "acct"),
        ),
    },
    "recipe": {
        "label": "the recipe",
        "nouns": (
            "oven", "dough", "sauce", "pan", "flour", "butter", "garlic", "onion", "stock",
            "oven tray", "lid", "whisk", "batter", "crust", "filling", "spice", "herbs", "lemon",
            "yoghurt", "broth", "glaze", "starter",
        ),
        "verbs": (
            "bake", "stir", "simmer", "chop", "knead", "whisk", "season", "roast", "fold",
            "marinate", "rest", "reduce", "taste", "prove",
        ),
        "adjectives": (
            "crispy", "golden", "thick", "fresh", "spicy", "smooth", "sticky", "fluffy", "salty",
            "tangy", "rich", "light",
        ),
        "tools": ("recipe_lookup", "unit_converter"),
        "facts": (
            ("{name}'s {dish} bakes at {key}.", "At what temperature does {name}'s {dish} bake?",
             "degrees"),
            ("The {dish} needs {key} of {ingredient}.",
             "How much {ingredient} does the {dish} need?", "grams"),
            ("The {dish} for {name}'s party has to rest for {key}.",
             "How long does the {dish} for {name}'s party rest?", "minutes"),
        ),
    },
    "job": {
        "label": "the job application",
        "nouns": (
            "resume", "cover letter", "interview", "recruiter", "portfolio", "reference",
            "offer", "salary", "deadline", "hiring manager", "application", "role", "team",
            "take-home task", "contract", "notice period", "benefits", "start date", "LinkedIn",
            "follow-up email", "case study", "onboarding",
        ),
        "verbs": (
            "rewrite", "submit", "prepare", "negotiate", "follow up on", "tailor", "shorten",
            "practise", "ask about", "decline", "accept", "update", "highlight", "research",
        ),
        "adjectives": (
            "senior", "remote", "hybrid", "competitive", "concise", "formal", "technical",
            "friendly", "final", "first-round", "strong", "vague",
        ),
        "tools": ("search_jobs", "calendar_lookup"),
        "facts": (
            ("The interview with {company} is on {weekday} at {key}.",
             "At what time is the interview with {company} on {weekday}?", "clock"),
            ("The job reference at {company} is {key}.",
             "What is the job reference at {company}?", "req"),
            ("{name}'s offer from {company} is {key} a year.",
             "How much is {name}'s offer from {company}?", "salary"),
            ("The recruiter at {company} is on extension {key}.",
             "What extension is the recruiter at {company} on?", "d4"),
        ),
    },
}

TOPICS: tuple[str, ...] = tuple(_TOPICS)
"""Topic names: ``metadata["topic"]`` of every non-system message is one of these."""

_FILLERS = (
    "Honestly", "To be fair", "In practice", "As far as I can tell", "For what it is worth",
    "On the other hand", "In short", "Either way", "At this point", "If I remember right",
)
_ADVERBS = ("quickly", "carefully", "first", "later", "today", "again", "this week", "soon")
_PREPS = ("with", "before", "after", "around", "without", "next to", "instead of", "for")

_CLOSERS: dict[int, tuple[str, ...]] = {
    1: ("Agreed.", "Right.", "Done.", "Okay.", "Sure."),
    2: ("Sounds good.", "Makes sense.", "Good point.", "Fair enough.", "Worth checking."),
    3: ("That should work.", "Worth a try.", "Let me know.", "Happy to help."),
    4: ("Hope that helps you.", "That is my take.", "We can adjust later.", "Tell me what changes."),
    5: ("Tell me if that works.", "We can revisit it later.", "Let me know your thoughts.",
        "That keeps things simple enough."),
}
_SHORT_QUESTIONS = ("What about the {noun}?", "Any news on the {noun}?", "And the {noun}?")

_SYSTEM_PROMPT = (
    "You are a helpful personal assistant. Answer clearly and briefly, remember what the "
    "user tells you about their plans, and ask before making bookings, payments or any "
    "other change that cannot be undone."
)
_GREETINGS = (
    "Hi there, hope you are well today.", "Good morning, I am back with more questions.",
    "Hello, thanks for helping me with this.", "Hey, I have a few more things to sort out.",
)
_THANKS = (
    "Thanks, that helps a lot.", "Great, thank you so much for that.",
    "Perfect, that is exactly what I needed.", "Ok, sounds good to me.",
    "Nice, I will go with that then.", "Cool, that makes sense now.",
)
_REPLIES = (
    "You are welcome, happy to help.", "Glad that helps, just let me know what is next.",
    "Any time, I am here if you need more.", "Great, ping me when you want to continue.",
)
_ACKS = (
    "Got it, I will keep that in mind.", "Noted, I will remember that for later.",
    "Thanks, I have written that down.", "Understood, that is good to know.",
)

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


def _key(rng: random.Random, recipe: str) -> str:
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
        airline = _SLOTS["airline"][int(rng.random() * len(_SLOTS["airline"]))]
        return f"{airline} {n(100, 9999)}"
    if recipe == "conf":
        return f"{letters(2)}-{n(10000, 99999)}"
    if recipe == "platform":
        return f"{n(1, 24)}{letters(1, 'ABCD')}"
    if recipe == "ticket":
        project = _SLOTS["project"][int(rng.random() * len(_SLOTS["project"]))]
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
    raise ValueError(f"unknown key recipe {recipe!r}")  # pragma: no cover - internal tables


# ------------------------------------------------------------- conversation


@dataclass
class SimulatedConversation:
    """A simulated conversation: its messages, the facts planted in them, and how it was made."""

    messages: list[Message]
    facts: list[PlantedFact]
    seed: int
    params: dict[str, Any] = field(default_factory=dict)
    """The arguments ``simulate_conversation`` was called with (JSON-serialisable)."""
    encoding: str = "cl100k_base"
    """The encoding the token counts were made with."""
    version: int = SIMULATOR_VERSION

    def __len__(self) -> int:
        return len(self.messages)

    def __iter__(self) -> Iterator[Message]:
        return iter(self.messages)

    @property
    def n_turns(self) -> int:
        return max((m.turn for m in self.messages), default=0)

    @property
    def content_tokens(self) -> int:
        return sum(m.content_tokens for m in self.messages)

    @property
    def billed_tokens(self) -> int:
        """Billed tokens of every message, without the reply primer."""
        return sum(m.billed_tokens for m in self.messages)

    def message(self, message_id: str) -> Message:
        for m in self.messages:
            if m.id == message_id:
                return m
        raise KeyError(f"message_id {message_id!r} is not in the conversation")

    def fact_survival(self, kept: Iterable[Message]) -> dict[str, bool]:
        return fact_survival(self.facts, kept)

    # ------------------------------------------------------------ records
    def header(self) -> dict[str, Any]:
        return {
            "type": "header", "format": FORMAT, "version": self.version, "seed": self.seed,
            "params": dict(self.params), "encoding": self.encoding,
            "n_messages": len(self.messages), "n_facts": len(self.facts),
            "n_turns": self.n_turns, "content_tokens": self.content_tokens,
            "billed_tokens": self.billed_tokens,
        }

    def to_records(self) -> list[dict[str, Any]]:
        """JSON-serialisable dicts: one header, then every message, then every fact."""
        return (
            [self.header()]
            + [_message_record(m) for m in self.messages]
            + [f.to_record() for f in self.facts]
        )

    @classmethod
    def from_records(cls, records: Iterable[Mapping[str, Any]]) -> SimulatedConversation:
        """Rebuild from ``to_records`` output; messages keep their stored token counts."""
        header: Mapping[str, Any] | None = None
        messages: list[Message] = []
        facts: list[PlantedFact] = []
        for i, record in enumerate(records):
            kind = record.get("type") if isinstance(record, Mapping) else None
            if kind == "header":
                if header is not None:
                    raise ValueError(f"records has a second header at position {i}")
                header = record
            elif kind == "message":
                messages.append(_message_from_record(record))
            elif kind == "fact":
                facts.append(PlantedFact.from_record(record))
            else:
                raise ValueError(f"records[{i}] must have type header/message/fact, got {record!r}")
        if header is None:
            raise ValueError("records has no header record")
        if header.get("format") != FORMAT:
            raise ValueError(f"header format must be {FORMAT!r}, got {header.get('format')!r}")
        for name, expected, actual in (
            ("n_messages", header.get("n_messages"), len(messages)),
            ("n_facts", header.get("n_facts"), len(facts)),
        ):
            if expected is not None and expected != actual:
                raise ValueError(f"header says {name}={expected}, records hold {actual}")
        return cls(
            messages, facts, header["seed"], dict(header.get("params", {})),
            header.get("encoding", "cl100k_base"), header.get("version", SIMULATOR_VERSION),
        )

    def to_jsonl(self) -> str:
        """The file format of ``data/conversations``: one sorted-key JSON object per line."""
        return "".join(
            json.dumps(r, sort_keys=True, ensure_ascii=False, separators=(",", ":")) + "\n"
            for r in self.to_records()
        )


def _message_record(m: Message) -> dict[str, Any]:
    record: dict[str, Any] = {
        "type": "message", "id": m.id, "role": m.role, "content": m.content,
        "content_tokens": m.content_tokens, "billed_tokens": m.billed_tokens,
        "importance": m.importance, "created_at": m.created_at, "turn": m.turn,
        "metadata": {k: list(v) if isinstance(v, tuple) else v for k, v in m.metadata.items()},
    }
    # Defaults are left out to keep the files small.
    if m.tool_calls:
        record["tool_calls"] = list(m.tool_calls)
    if m.tool_call_id is not None:
        record["tool_call_id"] = m.tool_call_id
    if m.sources:
        record["sources"] = list(m.sources)
    if m.summary_depth:
        record["summary_depth"] = m.summary_depth
    return record


def _message_from_record(r: Mapping[str, Any]) -> Message:
    # Lists come back as tuples, as the simulator writes them (metadata["facts"]).
    metadata = {k: tuple(v) if isinstance(v, list) else v for k, v in r.get("metadata", {}).items()}
    return Message(
        r["id"], r["role"], r["content"], r["content_tokens"], r["billed_tokens"],
        float(r["importance"]), float(r["created_at"]), r["turn"], metadata,
        tuple(r.get("tool_calls", ())), r.get("tool_call_id"), tuple(r.get("sources", ())),
        r.get("summary_depth", 0),
    )


def save_conversation(conversation: SimulatedConversation, path: str | os.PathLike[str]) -> None:
    """Write ``conversation.to_jsonl()`` as UTF-8 with ``\\n`` line endings."""
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        fh.write(conversation.to_jsonl())


def load_conversation(path: str | os.PathLike[str]) -> SimulatedConversation:
    """Read a conversation file (``data/conversations/*.jsonl``) back without re-simulating."""
    records = []
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}:{lineno} is not valid JSON: {exc}") from None
    return SimulatedConversation.from_records(records)


# ---------------------------------------------------------------- generator


class _Writer:
    """Prose from a topic's vocabulary; all draws go through ``rng.random()``."""

    def __init__(self, rng: random.Random) -> None:
        self.r = rng.random

    def pick(self, seq: Sequence[Any]) -> Any:
        return seq[int(self.r() * len(seq))]

    def uniform(self, lo: float, hi: float) -> float:
        return lo + (hi - lo) * self.r()

    def lognormal_int(self, median: float, sigma: float, lo: int, hi: int) -> int:
        # Box-Muller from two uniforms; 1 - u keeps log() away from 0.
        z = math.sqrt(-2.0 * math.log(1.0 - self.r())) * math.cos(2.0 * math.pi * self.r())
        return min(hi, max(lo, int(round(median * math.exp(sigma * z)))))

    def sentence(self, topic: dict[str, Any], question: bool = False) -> str:
        p = self.pick
        n, v, a = topic["nouns"], topic["verbs"], topic["adjectives"]
        if question:
            form = int(self.r() * 6)
            if form == 0:
                return f"How should I {p(v)} the {p(n)}?"
            if form == 1:
                return f"Can we {p(v)} the {p(a)} {p(n)} before the {p(n)}?"
            if form == 2:
                return f"What do you think about the {p(a)} {p(n)}?"
            if form == 3:
                return f"Is it better to {p(v)} the {p(n)} or the {p(n)}?"
            if form == 4:
                return f"Would it make sense to {p(v)} the {p(n)} {p(_ADVERBS)}?"
            return f"Do I need to {p(v)} the {p(n)} {p(_PREPS)} the {p(n)}?"
        form = int(self.r() * 9)
        if form == 0:
            return f"{p(_FILLERS)}, the {p(a)} {p(n)} matters more than the {p(n)}."
        if form == 1:
            return f"If the {p(n)} is {p(a)}, we could {p(v)} the {p(n)} {p(_PREPS)} the {p(n)}."
        if form == 2:
            return f"I would {p(v)} the {p(n)} first and then {p(v)} the {p(a)} {p(n)}."
        if form == 3:
            return f"That means the {p(n)} will be {p(a)}, which keeps the {p(n)} {p(a)}."
        if form == 4:
            return f"One option is to {p(v)} the {p(n)}; another is to {p(v)} the {p(n)} {p(_ADVERBS)}."
        if form == 5:
            return f"The {p(n)} and the {p(n)} are both {p(a)} right now."
        if form == 6:
            return f"You could also {p(v)} the {p(a)} {p(n)} {p(_ADVERBS)}."
        if form == 7:
            return f"I was thinking about the {p(n)} and whether it is too {p(a)}."
        return f"Keep in mind that the {p(n)} may need a {p(a)} {p(n)} as well."

    def closer(self, n_words: int) -> list[str]:
        """Short stock sentences adding up to exactly ``n_words`` words."""
        out: list[str] = []
        while n_words > 0:
            k = min(n_words, 5)
            out.extend(self.pick(_CLOSERS[k]).split())
            n_words -= k
        return out

    def prose(self, topic: dict[str, Any], n_words: int, question: bool = False) -> str:
        """Whole sentences adding up to exactly ``n_words`` words, ending with a question if asked."""
        tail: list[str] = []
        if question:
            tail = self.sentence(topic, question=True).split()
            if len(tail) > n_words:
                tail = self.pick(_SHORT_QUESTIONS).format(noun=self.pick(topic["nouns"])).split()
            if len(tail) > n_words:
                tail = tail[len(tail) - n_words:]
        words: list[str] = []
        breaks: list[int] = []  # word positions where a new paragraph starts
        target = n_words - len(tail)
        since_break = 0
        misses = 0
        while len(words) < target:
            room = target - len(words)
            s = self.sentence(topic).split()
            if len(s) > room:
                misses += 1
                if room > 5 and misses < 4:
                    continue
                s = self.closer(room)
            if since_break >= 60 and self.r() < 0.3:
                breaks.append(len(words))
                since_break = 0
            words.extend(s)
            since_break += len(s)
        words.extend(tail)
        if not breaks:
            return " ".join(words)
        bounds = [0, *breaks, len(words)]
        return "\n\n".join(" ".join(words[a:b]) for a, b in zip(bounds, bounds[1:]))

    def insert(self, prose: str, sentence: str) -> str:
        """Put ``sentence`` at a sentence boundary of ``prose`` (or after it)."""
        if not prose:
            return sentence
        cuts = [i + 2 for i in range(len(prose) - 1) if prose[i] in ".?" and prose[i + 1] == " "]
        cuts.append(len(prose) + 1)
        at = cuts[int(self.r() * len(cuts))]
        if at > len(prose):
            return f"{prose} {sentence}"
        return f"{prose[:at]}{sentence} {prose[at:]}"


def _check_words(words: Any, name: str = "words") -> tuple[int, int]:
    if not isinstance(words, (tuple, list)) or len(words) != 2:
        raise TypeError(f"{name} must be a (low, high) pair of ints, got {words!r}")
    low, high = words
    for v in (low, high):
        if isinstance(v, bool) or not isinstance(v, int):
            raise TypeError(f"{name} must be a (low, high) pair of ints, got {words!r}")
    if low < 1:
        raise ValueError(f"{name} low must be >= 1, got {words!r}")
    if low > high:
        raise ValueError(f"{name} low must be <= high, got {words!r}")
    return low, high


def _assistant_words(w: _Writer, low: int, high: int) -> int:
    # Skewed toward short answers: median 60 words, long tail up to ``high``.
    return w.lognormal_int(60.0, 0.9, low, high)


def _user_words(w: _Writer, low: int, high: int) -> int:
    return w.lognormal_int(14.0, 0.6, low, max(low, min(high, 120)))


def _padded(w: _Writer, topic: dict[str, Any], text: str, low: int, high: int) -> str:
    """Stock phrases fitted into [low, high] words: padded with prose or cut short."""
    n = len(text.split())
    if n < low:
        return f"{text} {w.prose(topic, low - n)}"
    if n > high:
        return " ".join(text.split()[:high]).rstrip(".,;?!") + "."
    return text


def _with_prefix(
    w: _Writer, topic: dict[str, Any], prefix: str, n_words: int, question: bool = False
) -> str:
    """``n_words`` words of prose opening with ``prefix`` when there is room for it."""
    k = len(prefix.split())
    if prefix and n_words > k + 2:
        return f"{prefix} {w.prose(topic, n_words - k, question=question)}"
    return w.prose(topic, n_words, question=question)


def simulate_conversation(
    n_turns: int = 200,
    *,
    seed: int = 0,
    system_prompt: bool | str = True,
    tool_call_rate: float = 0.05,
    fact_every: int = 10,
    words: tuple[int, int] = (5, 400),
    topic_switch_rate: float = 0.1,
    long_break_rate: float = 0.03,
    topics: Sequence[str] | None = None,
    counter: TokenCounter | None = None,
    start_time: float = 0.0,
) -> SimulatedConversation:
    """Simulate ``n_turns`` user turns, each answered by the assistant.

    A turn is a user message and the assistant's reply; with probability
    ``tool_call_rate`` a question is answered through a tool call first
    (assistant message with ``tool_calls=("call_N",)``, the ``tool`` result, then
    the answer). One fact is planted in every block of ``fact_every`` turns
    (0: none), in a user message (kind ``fact``) or an assistant one (``decision``).
    ``words`` bounds assistant prose (median 60 words, lognormal); user prose is
    shorter (median 14 words, at most 120). A planted fact's sentence is added on
    top of its message's prose. ``system_prompt`` may be True (a stock prompt),
    False, or the prompt's text. Same arguments, same conversation.
    """
    n_turns = require_int("n_turns", n_turns, minimum=1)
    seed = require_int("seed", seed, minimum=0)
    if not isinstance(system_prompt, (bool, str)):
        raise TypeError(f"system_prompt must be a bool or a str, got {system_prompt!r}")
    tool_call_rate = require_unit_interval("tool_call_rate", tool_call_rate)
    fact_every = require_int("fact_every", fact_every, minimum=0)
    low, high = _check_words(words)
    topic_switch_rate = require_unit_interval("topic_switch_rate", topic_switch_rate)
    long_break_rate = require_unit_interval("long_break_rate", long_break_rate)
    if topics is None:
        topic_names: tuple[str, ...] = TOPICS
    else:
        if isinstance(topics, str) or not isinstance(topics, Sequence) or not topics:
            raise ValueError(f"topics must be a non-empty sequence of topic names, got {topics!r}")
        for t in topics:
            if t not in _TOPICS:
                raise ValueError(
                    f"topics must be drawn from {', '.join(TOPICS)}, got {t!r} in {topics!r}"
                )
        topic_names = tuple(topics)
    if counter is None:
        counter = Tokenizer("cl100k_base")
    elif not callable(getattr(counter, "count", None)) or not isinstance(
        getattr(counter, "encoding", None), str
    ):
        raise TypeError(f"counter must be a TokenCounter (encoding, count), got {counter!r}")
    start_time = require_real("start_time", start_time)

    rng = random.Random(seed)
    w = _Writer(rng)
    r = rng.random
    clock = StepClock(start_time)
    factory = MessageFactory(counter, clock=clock)
    messages: list[Message] = []
    facts: list[PlantedFact] = []
    keys: list[str] = []
    fact_texts: list[str] = []  # contents of earlier fact messages (the only ones with digits)
    questions: set[str] = set()
    elapsed = 0  # whole seconds since start_time: sums stay exact

    def tick(seconds: int) -> None:
        nonlocal elapsed
        elapsed += seconds
        clock.set(round(start_time + elapsed, 3))

    def importance(kind: str) -> float:
        lo, hi = _IMPORTANCE[kind]
        value = w.uniform(lo, hi) + w.uniform(-_NOISE, _NOISE)
        # Planted facts stay at or above their floor: they are the high-importance test.
        floor = lo if kind == "fact" else 0.0
        return round(min(1.0, max(floor, value)), 3)

    def add(role: str, content: str, kind: str, topic: str | None, imp: float,
            fact_ids: tuple[str, ...] = (), **kw: Any) -> Message:
        meta = {"topic": topic, "kind": kind, "facts": fact_ids}
        m = factory.message(role, content, importance=imp, metadata=meta, **kw)
        messages.append(m)
        return m

    def new_fact(topic_name: str) -> tuple[str, str, str]:
        """(sentence, key, question), with a key found nowhere else and a fresh question."""
        templates = _TOPICS[topic_name]["facts"]
        for attempt in range(200):
            sentence_t, question_t, recipe = w.pick(templates)
            slots = {k: w.pick(v) for k, v in _SLOTS.items() if "{" + k + "}" in sentence_t}
            key = _key(rng, recipe)
            question = question_t.format(**slots)
            if question in questions and attempt < 100:
                continue
            sentence = sentence_t.format(key=key, **slots)
            sentence = sentence[0].upper() + sentence[1:]
            # Prose has no digits and every key has one, so a key can only occur
            # inside a fact sentence (or a custom system prompt): check just those.
            if any(k in sentence for k in keys) or any(key in t for t in fact_texts):
                continue
            questions.add(question)
            return sentence, key, question
        raise RuntimeError("could not find a unique fact key")  # pragma: no cover

    if system_prompt is not False:
        text = _SYSTEM_PROMPT if system_prompt is True else system_prompt
        add("system", text, "system", None, 1.0)
        fact_texts.append(text)

    # The turn inside each block of ``fact_every`` turns that receives a fact.
    plant_at: set[int] = set()
    if fact_every:
        for block_start in range(1, n_turns + 1, fact_every):
            block_end = min(n_turns, block_start + fact_every - 1)
            plant_at.add(block_start + int(r() * (block_end - block_start + 1)))

    topic_name = w.pick(topic_names)
    call_counter = 0
    for turn in range(1, n_turns + 1):
        # ---- time passes while the user thinks (or takes a break)
        if r() < long_break_rate and turn > 1:
            tick(int(1800 * 16.0 ** r()))  # 30 min to 8 h, log-uniform
        else:
            tick(int(10 * 30.0 ** r()))  # 10 s to 5 min, log-uniform
        switched = turn > 1 and len(topic_names) > 1 and r() < topic_switch_rate
        if switched:
            topic_name = w.pick([t for t in topic_names if t != topic_name])
        topic = _TOPICS[topic_name]

        planted: tuple[str, str, str] | None = None
        fact_in_user = False
        if turn in plant_at:
            planted = new_fact(topic_name)
            fact_in_user = r() < 0.7

        # ---- the user speaks
        if planted and fact_in_user:
            kind = "fact"
        elif (turn == 1 and r() < 0.7) or (turn > 1 and r() < 0.12):
            kind = "chitchat"
        else:
            kind = "question"
        if kind == "chitchat":
            stock = _GREETINGS if turn == 1 else _THANKS
            text = _padded(w, topic, w.pick(stock), low, min(high, 120))
        else:
            n = _user_words(w, low, high)
            prefix = f"Different subject: {topic['label']}." if switched else ""
            text = _with_prefix(w, topic, prefix, n, question=kind == "question")
        fact_ids: tuple[str, ...] = ()
        if kind == "fact":
            assert planted is not None
            text = w.insert(text, planted[0])
            fact_ids = (f"f{len(facts) + 1:04d}",)
        user = add("user", text, kind, topic_name, importance(kind), fact_ids)
        if fact_ids:
            assert planted is not None
            facts.append(PlantedFact(fact_ids[0], planted[0], planted[1], user.turn,
                                     user.id, topic_name, planted[2]))
            fact_texts.append(text)
            keys.append(planted[1])

        # ---- the assistant answers, maybe through a tool
        tick(2 + int(r() * 20))
        if kind == "question" and r() < tool_call_rate:
            call_counter += 1
            call_id = f"call_{call_counter}"
            tool = w.pick(topic["tools"])
            add("assistant", f"Let me check that with {tool}.", "tool", topic_name,
                importance("tool"), tool_calls=(call_id,))
            tick(1 + int(r() * 6))
            results = [" ".join(w.prose(topic, w.lognormal_int(8, 0.5, 3, 30)).split())
                       for _ in range(1 + int(r() * 3))]
            payload = json.dumps({"tool": tool, "status": "ok", "results": results})
            add("tool", payload, "tool", topic_name, importance("tool"), tool_call_id=call_id)
            tick(2 + int(r() * 15))
        if planted and not fact_in_user:
            a_kind = "decision"
        elif kind == "chitchat":
            a_kind = "chitchat"
        elif kind == "fact":
            a_kind = "chitchat"
        elif r() < 0.08:
            a_kind = "decision"
        else:
            a_kind = "answer"
        fact_ids = ()
        if a_kind == "chitchat":
            stock = _ACKS if kind == "fact" else _REPLIES
            text = _padded(w, topic, w.pick(stock), low, high)
        else:
            prefix = "Let us settle this." if a_kind == "decision" else ""
            text = _with_prefix(w, topic, prefix, _assistant_words(w, low, high))
            if a_kind == "decision":
                if planted:
                    text = w.insert(text, planted[0])
                    fact_ids = (f"f{len(facts) + 1:04d}",)
        imp = importance("fact" if fact_ids else a_kind)
        reply = add("assistant", text, a_kind, topic_name, imp, fact_ids)
        if fact_ids:
            assert planted is not None
            facts.append(PlantedFact(fact_ids[0], planted[0], planted[1], reply.turn,
                                     reply.id, topic_name, planted[2]))
            fact_texts.append(text)
            keys.append(planted[1])

    params = {
        "n_turns": n_turns, "system_prompt": system_prompt, "tool_call_rate": tool_call_rate,
        "fact_every": fact_every, "words": [low, high], "topic_switch_rate": topic_switch_rate,
        "long_break_rate": long_break_rate, "topics": list(topic_names),
        "start_time": start_time,
    }
    return SimulatedConversation(messages, facts, seed, params, counter.encoding)


def random_messages(
    n: int, seed: int = 0, words: tuple[int, int] = (5, 400)
) -> Iterator[str]:
    """``n`` message texts with realistic lengths, for benchmarks; no tokens, no metadata.

    Even positions are user-length (median 14 words), odd positions assistant-length
    (median 60 words, lognormal, clipped to ``words``); topics change every few texts.
    """
    n = require_int("n", n, minimum=0)
    seed = require_int("seed", seed, minimum=0)
    low, high = _check_words(words)
    return _random_messages(n, seed, low, high)


def _random_messages(n: int, seed: int, low: int, high: int) -> Iterator[str]:
    w = _Writer(random.Random(seed))
    topic = _TOPICS[w.pick(TOPICS)]
    for i in range(n):
        if w.r() < 0.1:
            topic = _TOPICS[w.pick(TOPICS)]
        if i % 2 == 0:
            yield w.prose(topic, _user_words(w, low, high), question=True)
        else:
            yield w.prose(topic, _assistant_words(w, low, high))
