"""Entity working memory behind the common context interface.

``EntityContextPolicy.build_context(history, query, budget)`` replays the
history's messages into a fresh entity memory on a ``StepClock`` set to each
message's ``created_at``:

* entity mentions come from ``message.metadata["entities"]`` when present (keys
  ``"type:id"`` or ``Entity`` objects), else from a pluggable extractor
  (default ``IdMentionExtractor``: "page 42", "entry #7", "task T-334" with the
  resolver's vocabulary of type nouns, and "@dana" for users);
* references in a user message ("that page", "it") are then resolved against the
  memory, which counts as an access, as it would in the agent loop.

The context it sends is the memory-aware system prompt (the top-k entities;
the item's ``sources`` are the ids of every message that mentioned or referred
to one of them, and ``Context.notes`` lists them entity by entity) followed by
the most recent messages that fit the rest of the budget, oldest first. When the
prompt alone does not fit, fewer entities are shown; if even the bare prompt
does not fit, the context says so in its notes.
Taught in ``notebooks/04_entity_memory.ipynb``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import islice
from typing import Any

from memorykit._history import memory_on_fresh_clock, newest_that_fit, system_tokens, timed_messages
from memorykit._validate import require_choice, require_int, require_str
from memorykit.clock import StepClock
from memorykit.context import Context, ContextItem, check_request
from memorykit.entities.memory import EntityMemory, RelevanceMemory
from memorykit.entities.prompt import DEFAULT_PREAMBLE, render_system_prompt
from memorykit.entities.records import Entity, parse_key
from memorykit.entities.resolution import ReferenceResolver
from memorykit.messages import Message
from memorykit.tokens import ChatFormat, TokenCounter, Tokenizer

Extractor = Callable[[str], Iterable[str]]


class IdMentionExtractor:
    """Explicit mentions in text: a type noun followed by an id containing a digit
    ("page 42", "the entry #7", "ticket T-334"), and "@handle" for users."""

    def __init__(self, vocabulary: Mapping[str, str] | None = None, user_type: str | None = "user") -> None:
        resolver = ReferenceResolver(vocabulary)
        self.vocabulary = resolver.vocabulary
        self.user_type = user_type
        nouns = "|".join(sorted(map(re.escape, self.vocabulary), key=len, reverse=True))
        self._ids = re.compile(rf"\b(?P<noun>{nouns})\s+#?(?P<id>[A-Za-z]*-?\d[\w-]*)", re.IGNORECASE)
        self._handles = re.compile(r"(?<![\w@])@(?P<id>[A-Za-z][\w.-]*\w|[A-Za-z])")

    def __call__(self, text: str) -> list[str]:
        require_str("text", text)
        found: list[tuple[int, str]] = [
            (m.start(), f"{self.vocabulary[m.group('noun').lower()]}:{m.group('id')}")
            for m in self._ids.finditer(text)
        ]
        if self.user_type:
            found += [(m.start(), f"{self.user_type}:{m.group('id')}") for m in self._handles.finditer(text)]
        return [key for _, key in sorted(found)]


def _default_memory(clock: StepClock) -> EntityMemory:
    return RelevanceMemory(20, clock=clock)


class EntityContextPolicy:
    """An entity memory as a ``ContextPolicy`` (see the module docstring)."""

    query_independent = True
    """The context ignores the query: the harness asks once per question position."""

    def __init__(
        self,
        make_memory: Callable[[StepClock], EntityMemory] = _default_memory,
        *,
        top_k: int = 5,
        by: str = "recency",
        extractor: Extractor | None = None,
        resolver: ReferenceResolver | None = None,
        counter: TokenCounter | None = None,
        chat_format: ChatFormat = ChatFormat(),
        preamble: str = DEFAULT_PREAMBLE,
        name: str = "entity-memory",
    ) -> None:
        if not callable(make_memory):
            raise TypeError(f"make_memory must be callable, got {make_memory!r}")
        if extractor is not None and not callable(extractor):
            raise TypeError(f"extractor must be callable (text -> keys), got {extractor!r}")
        if resolver is not None and not isinstance(resolver, ReferenceResolver):
            raise TypeError(f"resolver must be a ReferenceResolver, got {resolver!r}")
        if counter is not None and not callable(getattr(counter, "count", None)):
            raise TypeError(f"counter must have a count(text) method, got {counter!r}")
        if not isinstance(chat_format, ChatFormat):
            raise TypeError(f"chat_format must be a ChatFormat, got {chat_format!r}")
        self.make_memory = make_memory
        self.top_k = require_int("top_k", top_k, minimum=0)
        self.by = require_choice("by", by, ("recency", "score"))
        self.resolver = resolver or ReferenceResolver()
        self.extractor: Extractor = extractor or IdMentionExtractor(self.resolver.vocabulary)
        self.counter: TokenCounter = counter if counter is not None else Tokenizer()
        self.chat_format = chat_format
        self.preamble = require_str("preamble", preamble)
        self.name = require_str("name", name, non_empty=True)

    # ------------------------------------------------------------- replay
    def _mentions(self, message: Message, index: int) -> list[Entity]:
        raw = message.metadata.get("entities")
        if raw is None:
            keys: Iterable[Any] = self.extractor(message.content)
        elif isinstance(raw, (str, bytes)) or not isinstance(raw, Iterable):
            raise TypeError(f"history[{index}].metadata['entities'] must be a list of 'type:id' keys "
                            f"or Entity objects, got {raw!r}")
        else:
            keys = raw
        out = []
        for key in keys:
            if isinstance(key, Entity):
                out.append(key)
            elif isinstance(key, str):
                try:
                    entity_type, entity_id = parse_key(key)
                except (TypeError, ValueError) as exc:
                    raise ValueError(f"history[{index}] (message {message.id!r}) names entity "
                                     f"{key!r}: {exc}") from None
                out.append(Entity(entity_type, entity_id))
            else:
                raise TypeError(f"history[{index}] (message {message.id!r}) names entity {key!r}: "
                                "expected a 'type:id' string or an Entity")
        return out

    def replay(self, history: Sequence[Message]) -> tuple[EntityMemory, dict[str, list[str]]]:
        """The memory after the history, and for each entity the ids of the messages that
        mentioned it or referred to it (in history order)."""
        run = _Replay(self, history)
        run.advance(len(run.history))
        return run.memory, run.cited_ids()

    def _step(self, memory: EntityMemory, cited: dict[str, list[str]], i: int, message: Message) -> None:
        memory.turn = message.turn
        for entity in self._mentions(message, i):
            memory.add(entity)
            cited.setdefault(entity.key, []).append(message.id)
        if message.role == "user":  # the user refers; answers only name things
            for resolution in self.resolver.resolve(message.content, memory):
                if resolution.entity_key is not None:
                    cited.setdefault(resolution.entity_key, []).append(message.id)

    def prepare(self, conversation: Any) -> _PreparedEntities:
        """One replay per conversation: questions asked later only advance it (the harness asks
        positions in order), instead of replaying the whole history for each question."""
        messages = getattr(conversation, "messages", None)
        if messages is None:
            raise TypeError(f"conversation must be an EvalConversation, got {conversation!r}")
        return _PreparedEntities(self, messages)

    # ------------------------------------------------------------ context
    def _system_item(self, memory: EntityMemory, k: int,
                     cited: Mapping[str, list[str]]) -> tuple[ContextItem, list[str]]:
        content = render_system_prompt(memory, k, by=self.by, preamble=self.preamble)
        shown = [e.key for e in memory.top(k, by=self.by)]
        sources = list(dict.fromkeys(mid for key in shown for mid in cited.get(key, ())))
        tokens = system_tokens(content, self.counter, self.chat_format)
        return ContextItem("system", content, tokens, tuple(sources), "entity"), shown

    def build_context(self, history: Sequence[Message], query: str, budget: int) -> Context:
        check_request(query, budget)
        memory, cited = self.replay(history)
        return self._context(memory, cited, history, budget)

    def _context(self, memory: EntityMemory, cited: Mapping[str, list[str]],
                 history: Sequence[Message], budget: int) -> Context:
        room = budget - self.chat_format.reply_primer
        notes: list[str] = []
        system = None
        shown: list[str] = []
        for k in range(self.top_k, -1, -1):
            item, keys = self._system_item(memory, k, cited)
            if item.tokens <= room:
                system, shown = item, keys
                if k < self.top_k:
                    notes.append(f"only {k} of top_k={self.top_k} entities fit the budget of {budget}")
                break
        if system is None:
            bare = self._system_item(memory, 0, cited)[0]
            notes.append(f"the budget of {budget} tokens cannot hold the entity system prompt "
                         f"({bare.tokens} tokens without entities): nothing sent")
            return Context((), budget, self.name, self.chat_format, tuple(notes))
        recent = newest_that_fit(history, room - system.tokens)
        for key in shown:
            notes.append(f"{key} cited from {', '.join(cited.get(key, ())) or 'no message'}")
        return Context((system, *recent), budget, self.name, self.chat_format, tuple(notes))

    def __repr__(self) -> str:
        return f"EntityContextPolicy({self.name!r}, top_k={self.top_k}, by={self.by!r})"


class _Replay:
    """A replay that can be advanced: the memory and citations after the first ``done`` messages."""

    def __init__(self, policy: EntityContextPolicy, history: Sequence[Message]) -> None:
        self.policy = policy
        clock, self.memory = memory_on_fresh_clock(policy.make_memory, EntityMemory)
        self._steps = timed_messages(history, clock)  # checks the whole history first
        self.history = history
        self.cited: dict[str, list[str]] = {}
        self.done = 0

    def advance(self, position: int) -> None:
        for i, message in islice(self._steps, position - self.done):
            self.policy._step(self.memory, self.cited, i, message)
        self.done = position

    def cited_ids(self) -> dict[str, list[str]]:
        return {k: list(dict.fromkeys(v)) for k, v in self.cited.items()}


class _PreparedEntities:
    """One conversation's replay, advanced to each question's position in turn."""

    def __init__(self, policy: EntityContextPolicy, messages: Sequence[Message]) -> None:
        self.policy = policy
        self.messages = tuple(messages)
        self.run = _Replay(policy, self.messages)

    def build_context(self, position: int, query: str, budget: int) -> Context:
        check_request(query, budget)
        if not 0 <= position <= len(self.messages):
            raise ValueError(f"position must be in [0, {len(self.messages)}], got {position!r}")
        if position < self.run.done:  # asked out of order: start again
            self.run = _Replay(self.policy, self.messages)
        self.run.advance(position)
        return self.policy._context(self.run.memory, self.run.cited_ids(),
                                    self.messages[:position], budget)
