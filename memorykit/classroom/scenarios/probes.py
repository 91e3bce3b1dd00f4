"""D3's scenarios: facts injected, distractor turns, probe questions; a booking mistake.

**Recall** (``probe_conversation``). A user states ``n_facts`` facts at the start of a
conversation (D3's "turn 0": each fact in its own user message, acknowledged by
the assistant without repeating it), then ``N`` distractor turns follow (a seeded
``simulate_conversation`` with no planted facts: its prose contains no digits, and
every fact key contains one, so a key occurs in exactly one message), then each fact's
question is asked. The conversation with N distractors is a prefix of the one with
more (distractors are seeded turn by turn), so one long conversation holds every
checkpoint.

**Adaptability** (``adaptability_scenario``, D3's binary metric). A booking
assistant books a table without asking; the user complains ("You should have asked me
to confirm before booking"); ``N`` distractor turns pass; the user asks for a second
booking. An actor that adapted asks for confirmation instead of booking
(``asks_for_confirmation`` judges the reply). Offline the actor is ``booking_actor()``,
a ``ScriptedChatModel`` (**not a language model**) that asks for confirmation only when
a rule mentioning confirmation is in its system prompt, and the critic is
``booking_critic()``, a ``ScriptedCritic`` (patterns, **not a language model**) that
turns the complaint into a rule citing the booking message and the complaint. So
offline, a reflecting memory adapts and the others repeat the mistake *by
construction*: the scenario checks the plumbing (the rule is learned from the right
messages, survives N turns and reaches the prompt), not a model's judgement.

The measurement over these scenarios is ``memorykit.classroom.replays.recall_benchmark``.
Taught in ``notebooks/10_architectures.ipynb``.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from memorykit._validate import require_int, require_positive
from memorykit.clock import StepClock
from memorykit.llm.chat import ChatModel, ScriptedChatModel, ScriptRule
from memorykit.llm.critic import DEFAULT_CORRECTION_PATTERNS, ScriptedCritic
from memorykit.longterm.reflection import RULE_PREFIX
from memorykit.messages import Message, MessageFactory
from memorykit.classroom.scenarios.conversation import MAX_TURNS, simulate_conversation
from memorykit.classroom.scenarios.facts import PlantedFact, make_key
from memorykit.classroom.scenarios.prose import check_words
from memorykit.tokens import TokenCounter

SYSTEM_PROMPT = (
    "You are a customer support assistant for an online shop. Answer briefly and use what "
    "the customer told you earlier in the conversation."
)
BOOKING_SYSTEM_PROMPT = "You are a booking assistant. Handle the user's bookings."

# (fact sentence, question, key recipe of ``facts.make_key``). Questions are phrased as a user would ask them,
# not copied from the fact: some share most words with the fact, some paraphrase it.
FACT_BANK: tuple[tuple[str, str, str], ...] = (
    ("My order number is {key}.", "What is my order number?", "order"),
    ("The refund code you gave me is {key}.", "What was the refund code?", "falcon"),
    ("My PIN for the support line is {key}.", "What is my support line PIN?", "d4"),
    ("The replacement laptop has serial number {key}.",
     "What is the serial number of the replacement laptop?", "serial"),
    ("Please send the parcel to number {key} Harbour Street.",
     "Which house number should the parcel go to?", "house"),
    ("My callback phone number is {key}.", "Which number should you call me back on?", "phone"),
    ("The warranty claim was filed under case {key}.",
     "Under which case was the warranty claim filed?", "case"),
    ("I was charged {key} twice on my last invoice.",
     "How much was I charged twice?", "cents"),
)


SEED_003_FACT_BANK: tuple[tuple[str, str, str], ...] = (
    ("The code is {key}.", "What is the code?", "falcon"),
    ("The keys are in locker {key}.", "Where are keys?", "platform"),
    ("My order number is {key}.", "What is my order number?", "order"),
    ("My PIN is {key}.", "What is my PIN?", "d4"),
    ("My callback number is {key}.", "What is my callback number?", "phone"),
    ("The serial number is {key}.", "What is the serial number?", "serial"),
    ("The case number is {key}.", "What is the case number?", "case"),
    ("The refund amount is {key}.", "What is the refund amount?", "cents"),
    ("The ticket is {key}.", "What is the ticket?", "ticket"),
    ("The confirmation number is {key}.", "What is the confirmation number?", "conf"),
)
"""Facts and probes phrased the way D3 phrases them: the fact says "The code is
Blue_Falcon_99" and the probe asks "What is the code?" (or, verbatim, "Where are keys?"),
naming the thing by the fact's own noun, not paraphrasing it (``FACT_BANK`` paraphrases
some)."""


@dataclass(frozen=True)
class ProbeConversation:
    """Facts at the start, distractors, and the facts to probe."""

    messages: list[Message]
    facts: list[PlantedFact]
    distractor_turns: int
    seed: int


def _distractors(
    n_turns: int, seed: int, factory: MessageFactory, start_time: float, turn_offset: int,
    words: tuple[int, int] = (5, 400),
) -> list[Message]:
    """``n_turns`` seeded turns without facts, renumbered into ``factory``'s id sequence."""
    if n_turns == 0:
        return []
    conv = simulate_conversation(
        n_turns, seed=seed, system_prompt=False, fact_every=0, start_time=start_time,
        counter=factory.counter, words=words,
    )
    return [replace(m, id=factory.new_id(), turn=m.turn + turn_offset) for m in conv.messages]


def probe_conversation(
    distractor_turns: int,
    *,
    n_facts: int = 4,
    seed: int = 0,
    counter: TokenCounter | None = None,
    bank: Sequence[tuple[str, str, str]] = FACT_BANK,
    seconds_per_message: float | None = None,
    distractor_words: tuple[int, int] = (5, 400),
) -> ProbeConversation:
    """Inject ``n_facts`` facts (one user message each), then ``distractor_turns`` noise turns.

    ``bank`` holds (sentence with ``{key}``, question, key recipe) triples:
    ``FACT_BANK`` (default) or ``SEED_003_FACT_BANK`` (the seed's phrasing).
    ``seconds_per_message`` re-times the conversation at script speed, every
    message that many seconds after the previous one (D3's script ran its
    turns back to back); None keeps the simulated pace, whose distractors span
    hours (which the episodic score's time decay feels). ``distractor_words`` bounds
    the assistant's distractor prose (``simulate_conversation``'s ``words``): short turns
    keep a small local model's prompts short.
    """
    require_int("distractor_turns", distractor_turns, minimum=0, maximum=MAX_TURNS)
    require_int("n_facts", n_facts, minimum=1, maximum=MAX_TURNS)
    require_int("seed", seed, minimum=0)
    if seconds_per_message is not None:
        require_positive("seconds_per_message", seconds_per_message)
    check_words(distractor_words, "distractor_words")
    if isinstance(bank, str) or not isinstance(bank, Sequence) or not bank:
        raise ValueError(f"bank must be a non-empty sequence of (sentence, question, recipe), "
                         f"got {bank!r}")
    if n_facts > len(bank):
        raise ValueError(f"n_facts must be <= {len(bank)}, got {n_facts}")
    rng = random.Random(seed)
    bank = list(bank)
    rng.shuffle(bank)
    clock = StepClock(0.0)
    factory = MessageFactory(counter, clock=clock)
    messages = [factory.system(SYSTEM_PROMPT)]
    facts: list[PlantedFact] = []
    for k, (sentence_t, question, recipe) in enumerate(bank[:n_facts]):
        clock.advance(20)
        for _attempt in range(1000):  # no key may occur inside another fact
            key = make_key(rng, recipe)
            sentence = sentence_t.format(key=key)
            if not any(key in f.text or f.key in sentence for f in facts):
                break
        fact_id = f"f{k + 1:04d}"
        user = factory.user(sentence, importance=0.9,
                            metadata={"kind": "fact", "facts": (fact_id,), "topic": "support"})
        clock.advance(3)
        ack = factory.assistant("Noted, I will keep that in mind.", importance=0.3,
                                metadata={"kind": "chitchat", "topic": "support"})
        messages += [user, ack]
        facts.append(PlantedFact(fact_id, sentence, key, user.turn, user.id, "support", question))
    messages += _distractors(distractor_turns, seed, factory, clock.now() + 60, factory.turn,
                             distractor_words)
    if seconds_per_message is not None:
        messages = [replace(m, created_at=k * seconds_per_message) for k, m in enumerate(messages)]
    for m in messages:
        for f in facts:
            if f.key in m.content and m.id != f.message_id:  # pragma: no cover - guarded by design
                raise RuntimeError(f"key {f.key!r} also occurs in {m.id}")
    return ProbeConversation(messages, facts, distractor_turns, seed)


# ------------------------------------------------------------------ adaptability

_BOOK = re.compile(r"\bbook(?:\s+me)?\s+(?P<what>.+?)[.!?]*$", re.IGNORECASE | re.DOTALL)
_CONFIRM_RULE = re.compile(r"confirm", re.IGNORECASE)


def _actor_reply(messages: Sequence[Mapping[str, Any]]) -> str:
    last = next((m["content"] for m in reversed(messages) if m["role"] == "user"), "")
    found = _BOOK.search(last)
    what = found.group("what").strip() if found else "that"
    rules = [
        m["content"] for m in messages
        if m["role"] == "system" and m["content"].startswith(RULE_PREFIX)
    ]
    if any(_CONFIRM_RULE.search(r) for r in rules):
        return f"Before I book {what}: shall I go ahead? Please confirm."
    return f"Done: I booked {what}."


def booking_actor() -> ScriptedChatModel:
    """The offline actor: a ``ScriptedChatModel``, **not a language model**.

    It answers "book ..." requests. It asks for confirmation only when its
    system prompt holds a rule (a system message starting with
    ``RULE_PREFIX``) that mentions confirming; otherwise it books at once. It
    follows a rule by keyword, not by understanding it.
    """
    return ScriptedChatModel(
        rules=[ScriptRule(r"\bbook\b", _actor_reply)],
        default="(scripted booking actor: it only handles booking requests)",
        label="booking-actor",
    )


COMPLAINT_PATTERNS: tuple[str, ...] = DEFAULT_CORRECTION_PATTERNS + (
    r"^\W*you\s+should(?:\s+have|'ve)\s+(?P<said>.+)",
    r"^\W*you\s+(?:forgot|didn't|did not|never)\s+(?P<said>.+)",
)
"""The scripted critic's patterns: corrections plus complaints about what the assistant did."""


def booking_critic() -> ScriptedCritic:
    """The offline critic: a ``ScriptedCritic`` (**not a language model**) that also reads complaints."""
    return ScriptedCritic(COMPLAINT_PATTERNS)


_ASKS = re.compile(
    r"\b(confirm|shall i|should i|would you like me|do you want me|go ahead|is that (?:ok|right))\b",
    re.IGNORECASE,
)
_BOOKED = re.compile(r"\b(?:i(?:'ve| have)?\s+(?:booked|reserved)|done:)", re.IGNORECASE)


def asks_for_confirmation(reply: str) -> bool:
    """A heuristic judge: the reply asks before acting and does not claim it already booked."""
    return bool(_ASKS.search(reply)) and not _BOOKED.search(reply)


@dataclass(frozen=True)
class AdaptabilityScenario:
    """A booking mistake, the complaint, N distractor turns, and the second request."""

    messages: list[Message]
    second_request: str
    mistake_ids: tuple[str, ...]
    """The booking without confirmation and the complaint: what a rule should cite."""


def adaptability_scenario(
    distractor_turns: int,
    *,
    seed: int = 0,
    actor: ChatModel | None = None,
    counter: TokenCounter | None = None,
) -> AdaptabilityScenario:
    """The history up to the second booking request; the first reply comes from ``actor``.

    ``actor`` defaults to ``booking_actor()``, which (with no rule yet) books
    without asking: the scripted behavioural mistake.
    """
    require_int("distractor_turns", distractor_turns, minimum=0, maximum=MAX_TURNS)
    require_int("seed", seed, minimum=0)
    actor = actor if actor is not None else booking_actor()
    clock = StepClock(0.0)
    factory = MessageFactory(counter, clock=clock)
    system = factory.system(BOOKING_SYSTEM_PROMPT)
    clock.advance(15)
    ask = factory.user("Please book a table for two at Lumen on Friday at 19:00.")
    clock.advance(4)
    booked = factory.assistant(actor.complete([system.to_openai(), ask.to_openai()]))
    clock.advance(30)
    complaint = factory.user(
        "You should have asked me to confirm before booking. Please always check with me first."
    )
    clock.advance(4)
    sorry = factory.assistant("Sorry about that, I understand.")
    messages = [system, ask, booked, complaint, sorry]
    messages += _distractors(distractor_turns, seed + 1, factory, clock.now() + 60, factory.turn)
    return AdaptabilityScenario(
        messages, "Please book a train to Oslo on Monday at 08:15.", (booked.id, complaint.id)
    )


__all__ = [
    "BOOKING_SYSTEM_PROMPT",
    "COMPLAINT_PATTERNS",
    "FACT_BANK",
    "SEED_003_FACT_BANK",
    "SYSTEM_PROMPT",
    "AdaptabilityScenario",
    "ProbeConversation",
    "adaptability_scenario",
    "asks_for_confirmation",
    "booking_actor",
    "booking_critic",
    "probe_conversation",
]
