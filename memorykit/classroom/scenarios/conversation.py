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
that probes it (``memorykit.classroom.scenarios.facts``); ``fact_survival`` tells which facts a memory
still holds. The prose comes from ``memorykit.classroom.scenarios.prose``.

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
import os
import random
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from memorykit._validate import require_int, require_real, require_unit_interval
from memorykit.clock import StepClock
from memorykit.evaluation.dataset import EvalConversation, EvalQuestion
from memorykit.messages import Message, MessageFactory, ToolCall
from memorykit.classroom.scenarios.facts import PlantedFact, fact_survival, make_key
from memorykit.classroom.scenarios.prose import (ACKS, GREETINGS, REPLIES, SLOTS, SYSTEM_PROMPT, THANKS,
                                       TOPIC_TABLES, TOPICS, Writer, assistant_words, check_words, padded,
                                       user_words, with_prefix)
from memorykit.tokens import TokenCounter, Tokenizer

MAX_TURNS = 1_000_000
"""The most turns (or messages) one call of a seeded generator makes: a million turns
already take minutes and gigabytes; a larger count is a typo (10**30 would never end)."""

__all__ = [
    "MAX_TURNS",
    "FORMAT",
    "KINDS",
    "SIMULATOR_VERSION",
    "SimulatedConversation",
    "load_conversation",
    "random_messages",
    "save_conversation",
    "simulate_conversation",
]

SIMULATOR_VERSION = 2
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

    def as_eval_conversation(self) -> Any:
        """This conversation as an evaluation set's conversation (``from_simulated``): what
        ``memorykit.evaluation.as_dataset`` calls, so the harness scores it like any other."""
        return from_simulated(self)

    def to_jsonl(self) -> str:
        """The file format of ``data/conversations``: one sorted-key JSON object per line."""
        return "".join(
            json.dumps(r, sort_keys=True, ensure_ascii=False, separators=(",", ":")) + "\n"
            for r in self.to_records()
        )


def from_simulated(
    conversation: SimulatedConversation,
    *,
    id: str | None = None,
    delay: int | None = None,
) -> EvalConversation:
    """Every planted fact becomes a question whose evidence is the message that planted it.

    The category is the fact's topic and the answer its key. ``delay=None`` asks
    every question at the end of the conversation; ``delay=k`` asks it ``k``
    messages after the fact's message (capped at the end), so a memory is tested
    on what it still holds shortly after hearing something.
    """
    if not isinstance(conversation, SimulatedConversation):
        raise TypeError(f"conversation must be a SimulatedConversation, got {conversation!r}")
    if delay is not None:
        require_int("delay", delay, minimum=0)
    cid = f"sim-{conversation.seed}-{len(conversation.messages)}" if id is None else id
    index = {m.id: i for i, m in enumerate(conversation.messages)}
    n = len(conversation.messages)
    questions = []
    for fact in conversation.facts:
        position = None if delay is None else min(n, index[fact.message_id] + 1 + delay)
        questions.append(EvalQuestion(
            fact.id, fact.question, fact.key, (fact.message_id,), fact.topic, position,
            {"fact_text": fact.text, "turn": fact.turn},
        ))
    meta = {"source": "memorykit.classroom.scenarios.conversation", "seed": conversation.seed,
            "params": dict(conversation.params)}
    return EvalConversation(cid, tuple(conversation.messages), tuple(questions), (), meta)


def _message_record(m: Message) -> dict[str, Any]:
    record: dict[str, Any] = {
        "type": "message", "id": m.id, "role": m.role, "content": m.content,
        "content_tokens": m.content_tokens, "billed_tokens": m.billed_tokens,
        "importance": m.importance, "created_at": m.created_at, "turn": m.turn,
        "metadata": {k: list(v) if isinstance(v, tuple) else v for k, v in m.metadata.items()},
    }
    # Defaults are left out to keep the files small.
    if m.tool_calls:
        record["tool_calls"] = [{"id": c.id, "name": c.name, "arguments": c.arguments}
                                for c in m.tool_calls]
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
        tuple(ToolCall(c["id"], c["name"], c["arguments"]) for c in r.get("tool_calls", ())),
        r.get("tool_call_id"), tuple(r.get("sources", ())),
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
    (assistant message calling one of the topic's tools with the user's question as its
    ``query`` argument, ``ToolCall("call_N", tool, '{"query": ...}')``, the ``tool`` result, then
    the answer). One fact is planted in every block of ``fact_every`` turns
    (0: none), in a user message (kind ``fact``) or an assistant one (``decision``).
    ``words`` bounds assistant prose (median 60 words, lognormal); user prose is
    shorter (median 14 words, at most 120). A planted fact's sentence is added on
    top of its message's prose. ``system_prompt`` may be True (a stock prompt),
    False, or the prompt's text. Same arguments, same conversation.
    """
    n_turns = require_int("n_turns", n_turns, minimum=1, maximum=MAX_TURNS)
    seed = require_int("seed", seed, minimum=0)
    if not isinstance(system_prompt, (bool, str)):
        raise TypeError(f"system_prompt must be a bool or a str, got {system_prompt!r}")
    tool_call_rate = require_unit_interval("tool_call_rate", tool_call_rate)
    fact_every = require_int("fact_every", fact_every, minimum=0)
    low, high = check_words(words)
    topic_switch_rate = require_unit_interval("topic_switch_rate", topic_switch_rate)
    long_break_rate = require_unit_interval("long_break_rate", long_break_rate)
    if topics is None:
        topic_names: tuple[str, ...] = TOPICS
    else:
        if isinstance(topics, str) or not isinstance(topics, Sequence) or not topics:
            raise ValueError(f"topics must be a non-empty sequence of topic names, got {topics!r}")
        for t in topics:
            if t not in TOPIC_TABLES:
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
    w = Writer(rng)
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
        templates = TOPIC_TABLES[topic_name]["facts"]
        for attempt in range(200):
            sentence_t, question_t, recipe = w.pick(templates)
            slots = {k: w.pick(v) for k, v in SLOTS.items() if "{" + k + "}" in sentence_t}
            key = make_key(rng, recipe)
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
        text = SYSTEM_PROMPT if system_prompt is True else system_prompt
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
        topic = TOPIC_TABLES[topic_name]

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
            stock = GREETINGS if turn == 1 else THANKS
            text = padded(w, topic, w.pick(stock), low, min(high, 120))
        else:
            n = user_words(w, low, high)
            prefix = f"Different subject: {topic['label']}." if switched else ""
            text = with_prefix(w, topic, prefix, n, question=kind == "question")
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
                importance("tool"), tool_calls=(ToolCall(call_id, tool, json.dumps({"query": text})),))
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
            stock = ACKS if kind == "fact" else REPLIES
            text = padded(w, topic, w.pick(stock), low, high)
        else:
            prefix = "Let us settle this." if a_kind == "decision" else ""
            text = with_prefix(w, topic, prefix, assistant_words(w, low, high))
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
    n = require_int("n", n, minimum=0, maximum=MAX_TURNS)
    seed = require_int("seed", seed, minimum=0)
    low, high = check_words(words)
    return _random_messages(n, seed, low, high)


def _random_messages(n: int, seed: int, low: int, high: int) -> Iterator[str]:
    w = Writer(random.Random(seed))
    topic = TOPIC_TABLES[w.pick(TOPICS)]
    for i in range(n):
        if w.r() < 0.1:
            topic = TOPIC_TABLES[w.pick(TOPICS)]
        if i % 2 == 0:
            yield w.prose(topic, user_words(w, low, high), question=True)
        else:
            yield w.prose(topic, assistant_words(w, low, high))
