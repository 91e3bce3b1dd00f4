"""Prose for simulated conversations: the word tables and the writer that strings them together.

Every topic (a trip, a software bug, a budget, a recipe, a job application) has a label,
vocabulary for prose, tools the assistant may call and fact templates; ``Writer`` draws
sentences from them through ``rng.random()`` only, so a seed gives the same text on every
Python version. Prose never contains a digit: the digits belong to the planted facts' keys
(``memorykit.classroom.scenarios.facts``), so a key occurs in exactly one message.
Used by ``memorykit.classroom.scenarios.conversation``; not taught by a notebook.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Sequence
from typing import Any

# ----------------------------------------------------------------- vocabulary
# Each topic: a label, vocabulary for prose (no digits anywhere: keys own the
# digits), tools the assistant may call, and fact templates. A fact template is
# (sentence, question, key recipe); slots in braces are filled from SLOTS or
# by the key recipe ({key}).

NAMES = (
    "Maya", "Jonas", "Priya", "Tomas", "Aiko", "Lena", "Omar", "Sofia", "Kwame", "Elif",
    "Nina", "Rafael", "Ingrid", "Mateo", "Chen", "Hannah", "Ravi", "Zoe", "Lukas", "Amara",
    "Felix", "Yara", "Daniel", "Mei", "Oskar", "Leila", "Bruno", "Sanna", "Idris", "Clara",
)
SLOTS: dict[str, tuple[str, ...]] = {
    "name": NAMES,
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

TOPIC_TABLES: dict[str, dict[str, Any]] = {
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

TOPICS: tuple[str, ...] = tuple(TOPIC_TABLES)
"""Topic names: ``metadata["topic"]`` of every non-system message is one of these."""

FILLERS = (
    "Honestly", "To be fair", "In practice", "As far as I can tell", "For what it is worth",
    "On the other hand", "In short", "Either way", "At this point", "If I remember right",
)
ADVERBS = ("quickly", "carefully", "first", "later", "today", "again", "this week", "soon")
PREPS = ("with", "before", "after", "around", "without", "next to", "instead of", "for")
_QUESTIONS = (
    "How should I {v} the {n}?", "Can we {v} the {a} {n} before the {n}?",
    "What do you think about the {a} {n}?", "Is it better to {v} the {n} or the {n}?",
    "Would it make sense to {v} the {n} {adv}?", "Do I need to {v} the {n} {prep} the {n}?")
_STATEMENTS = (
    "{filler}, the {a} {n} matters more than the {n}.",
    "If the {n} is {a}, we could {v} the {n} {prep} the {n}.",
    "I would {v} the {n} first and then {v} the {a} {n}.",
    "That means the {n} will be {a}, which keeps the {n} {a}.",
    "One option is to {v} the {n}; another is to {v} the {n} {adv}.",
    "The {n} and the {n} are both {a} right now.", "You could also {v} the {a} {n} {adv}.",
    "I was thinking about the {n} and whether it is too {a}.",
    "Keep in mind that the {n} may need a {a} {n} as well.")

CLOSERS: dict[int, tuple[str, ...]] = {
    1: ("Agreed.", "Right.", "Done.", "Okay.", "Sure."),
    2: ("Sounds good.", "Makes sense.", "Good point.", "Fair enough.", "Worth checking."),
    3: ("That should work.", "Worth a try.", "Let me know.", "Happy to help."),
    4: ("Hope that helps you.", "That is my take.", "We can adjust later.", "Tell me what changes."),
    5: ("Tell me if that works.", "We can revisit it later.", "Let me know your thoughts.",
        "That keeps things simple enough."),
}
SHORT_QUESTIONS = ("What about the {noun}?", "Any news on the {noun}?", "And the {noun}?")

SYSTEM_PROMPT = (
    "You are a helpful personal assistant. Answer clearly and briefly, remember what the "
    "user tells you about their plans, and ask before making bookings, payments or any "
    "other change that cannot be undone."
)
GREETINGS = (
    "Hi there, hope you are well today.", "Good morning, I am back with more questions.",
    "Hello, thanks for helping me with this.", "Hey, I have a few more things to sort out.",
)
THANKS = (
    "Thanks, that helps a lot.", "Great, thank you so much for that.",
    "Perfect, that is exactly what I needed.", "Ok, sounds good to me.",
    "Nice, I will go with that then.", "Cool, that makes sense now.",
)
REPLIES = (
    "You are welcome, happy to help.", "Glad that helps, just let me know what is next.",
    "Any time, I am here if you need more.", "Great, ping me when you want to continue.",
)
ACKS = (
    "Got it, I will keep that in mind.", "Noted, I will remember that for later.",
    "Thanks, I have written that down.", "Understood, that is good to know.",
)


# ---------------------------------------------------------------- generator


class Writer:
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
        # each {slot} is drawn left to right, so a template draws as the f-string it replaced
        pools = {"n": topic["nouns"], "v": topic["verbs"], "a": topic["adjectives"],
                 "adv": ADVERBS, "prep": PREPS, "filler": FILLERS}
        forms = _QUESTIONS if question else _STATEMENTS
        form = forms[min(int(self.r() * len(forms)), len(forms) - 1)]
        return re.sub(r"\{(\w+)\}", lambda m: self.pick(pools[m.group(1)]), form)

    def closer(self, n_words: int) -> list[str]:
        """Short stock sentences adding up to exactly ``n_words`` words."""
        out: list[str] = []
        while n_words > 0:
            k = min(n_words, 5)
            out.extend(self.pick(CLOSERS[k]).split())
            n_words -= k
        return out

    def prose(self, topic: dict[str, Any], n_words: int, question: bool = False) -> str:
        """Whole sentences adding up to exactly ``n_words`` words, ending with a question if asked."""
        tail: list[str] = []
        if question:
            tail = self.sentence(topic, question=True).split()
            if len(tail) > n_words:
                tail = self.pick(SHORT_QUESTIONS).format(noun=self.pick(topic["nouns"])).split()
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


def check_words(words: Any, name: str = "words") -> tuple[int, int]:
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


def assistant_words(w: Writer, low: int, high: int) -> int:
    # Skewed toward short answers: median 60 words, long tail up to ``high``.
    return w.lognormal_int(60.0, 0.9, low, high)


def user_words(w: Writer, low: int, high: int) -> int:
    return w.lognormal_int(14.0, 0.6, low, max(low, min(high, 120)))


def padded(w: Writer, topic: dict[str, Any], text: str, low: int, high: int) -> str:
    """Stock phrases fitted into [low, high] words: padded with prose or cut short."""
    n = len(text.split())
    if n < low:
        return f"{text} {w.prose(topic, low - n)}"
    if n > high:
        return " ".join(text.split()[:high]).rstrip(".,;?!") + "."
    return text


def with_prefix(
    w: Writer, topic: dict[str, Any], prefix: str, n_words: int, question: bool = False
) -> str:
    """``n_words`` words of prose opening with ``prefix`` when there is room for it."""
    k = len(prefix.split())
    if prefix and n_words > k + 2:
        return f"{prefix} {w.prose(topic, n_words - k, question=question)}"
    return w.prose(topic, n_words, question=question)
