"""Critics: read a conversation, find the agent's mistakes, state rules (architecture D).

Reflection memory keeps *lessons*, not facts: a critic reads the history and
returns ``Rule``s, each citing the messages it was drawn from
(``source_message_ids``), so every rule injected into a later prompt can be
traced back to the exchange that taught it.

* ``ScriptedCritic`` is **not a language model**: it detects scripted mistakes
  with patterns. When a user message that follows an assistant message reads
  like a correction ("no, I said X", "that's wrong, ...", "actually, I meant
  ..."), it yields a rule citing both messages. Deterministic and offline;
  it finds only the mistakes its patterns describe.
* ``OpenAICritic`` asks a chat model to find mistakes and answer in JSON
  (``{"rules": [{"text": ..., "source_message_ids": [...]}]}``). The reply is
  parsed tolerantly (code fences and prose around the JSON are ignored) but
  checked strictly: invalid JSON, a wrong shape, an empty rule, or a cited id
  that is not in the history raises ``CritiqueFailed`` -- a rule with invented
  provenance is worse than no rule.

Taught in ``notebooks/11_llm_in_the_loop.ipynb``.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from memorykit._validate import require_int, require_real, require_str
from memorykit.clock import Clock
from memorykit.llm.chat import ChatModel, resolve_chat_model
from memorykit.llm.client import LLMError, describe_error
from memorykit.llm.summarizer import render_transcript
from memorykit.messages import Message, check_history


@dataclass(frozen=True, slots=True)
class Rule:
    """A lesson learned from the conversation, with its provenance."""

    id: str
    """Stable: derived from the text and the sources (same rule, same id)."""
    text: str
    source_message_ids: tuple[str, ...]
    """The messages the rule was drawn from (the mistake and its correction)."""
    created_at: float
    """Seconds on the memory's clock."""

    def __post_init__(self) -> None:
        require_str("id", self.id, non_empty=True)
        require_str("text", self.text, non_empty=True)
        if not isinstance(self.source_message_ids, tuple) or not all(
            isinstance(s, str) and s for s in self.source_message_ids
        ):
            raise TypeError(
                f"source_message_ids must be a tuple of ids, got {self.source_message_ids!r}"
            )
        require_real("created_at", self.created_at)


def rule_id(text: str, sources: Sequence[str]) -> str:
    digest = hashlib.blake2b(
        (" ".join(text.split()) + "\x00" + "\x00".join(sources)).encode(), digest_size=6
    ).hexdigest()
    return f"rule-{digest}"


def make_rule(text: str, sources: Sequence[str], created_at: float) -> Rule:
    text = " ".join(text.split())
    created_at = require_real("created_at", created_at)
    return Rule(rule_id(text, sources), text, tuple(sources), created_at)


@runtime_checkable
class Critic(Protocol):
    """Anything that turns a history into rules with provenance."""

    name: str

    def critique(self, history: Sequence[Message]) -> list[Rule]: ...


class CritiqueFailed(LLMError):
    """The critic's reply could not be turned into rules; ``reply`` is the raw text (if any)."""

    def __init__(
        self, message: str, *, reply: str | None = None, cause: BaseException | None = None
    ) -> None:
        super().__init__(message, cause=cause)
        self.reply = reply


def _timestamp(clock: Clock | None, history: Sequence[Message]) -> float:
    if clock is not None:
        return float(clock.now())
    return max((m.created_at for m in history), default=0.0)


# --------------------------------------------------------------------- scripted

DEFAULT_CORRECTION_PATTERNS: tuple[str, ...] = (
    r"^\W*no\b[,.!]?\s+(?:i|we)\s+(?:said|meant|asked(?:\s+for)?|wanted)\s+(?P<said>.+)",
    r"^\W*actually\b[,.!]?\s+(?:i|we)\s+(?:said|meant|asked(?:\s+for)?|wanted)\s+(?P<said>.+)",
    r"^\W*(?:that'?s|that is|this is)\s+(?:wrong|not right|incorrect|not correct|not what i "
    r"(?:said|asked(?: for)?))\b[,.!:;-]*\s*(?P<said>.*)",
    r"^\W*(?:you(?:'ve| have)?\s+got\s+it\s+wrong|wrong)\b[,.!:;-]*\s*(?P<said>.*)",
)
"""Regexes (case-insensitive) for a user correcting the assistant; ``said`` captures the fix."""


class ScriptedCritic:
    """A pattern-based critic: **not a language model**; deterministic and offline.

    For each user message matching one of ``patterns`` whose previous
    non-system message is from the assistant, it returns one rule citing the
    assistant message and the correction, in conversation order. The rule
    text quotes both (cut to ``quote_chars``), e.g.::

        Check replies against what the user said: the assistant wrote "Your
        flight is on Tuesday." and the user corrected it: "no, I said Thursday".

    ``created_at`` comes from ``clock`` if given, else the latest message's time.
    """

    is_scripted = True

    def __init__(
        self,
        patterns: Sequence[str] = DEFAULT_CORRECTION_PATTERNS,
        *,
        clock: Clock | None = None,
        quote_chars: int = 120,
    ) -> None:
        if isinstance(patterns, str):
            raise TypeError(f"patterns must be a list of regexes, not one str: got {patterns!r}")
        self.patterns = [re.compile(require_str("patterns[]", p), re.IGNORECASE) for p in patterns]
        if not self.patterns:
            raise ValueError("patterns must not be empty")
        self.clock = clock
        self.quote_chars = require_int("quote_chars", quote_chars, minimum=10)
        self.name = "scripted-critic (correction patterns, not an LLM)"

    def _quote(self, text: str) -> str:
        text = " ".join(text.split())
        return text if len(text) <= self.quote_chars else text[: self.quote_chars - 3] + "..."

    def is_correction(self, text: str) -> bool:
        return any(p.search(text.strip()) for p in self.patterns)

    def critique(self, history: Sequence[Message]) -> list[Rule]:
        history = check_history(history)
        created = _timestamp(self.clock, history)
        rules: list[Rule] = []
        seen: set[str] = set()
        previous: Message | None = None
        for m in history:
            if m.role == "user" and previous is not None and previous.role == "assistant":
                if self.is_correction(m.content):
                    text = (
                        "Check replies against what the user said: the assistant wrote "
                        f"\"{self._quote(previous.content)}\" and the user corrected it: "
                        f"\"{self._quote(m.content)}\"."
                    )
                    rule = make_rule(text, (previous.id, m.id), created)
                    if rule.id not in seen:
                        seen.add(rule.id)
                        rules.append(rule)
            if m.role != "system" or m.is_summary:
                previous = m
        return rules

    def __repr__(self) -> str:
        return f"ScriptedCritic({len(self.patterns)} patterns)"


# ------------------------------------------------------------------------- LLM

DEFAULT_CRITIC_PROMPT = (
    "You are a critical observer of an AI assistant. Read the conversation below; every "
    "line starts with a message id in square brackets. Find the assistant's mistakes: "
    "wrong facts, ignored instructions, forgotten details, moments the user corrected it "
    "or was frustrated. For each mistake state one short, general rule that would prevent "
    "it in future, and cite the ids of the messages that show the mistake and how it was "
    "noticed. Answer with JSON only, exactly in this shape:\n"
    '{"rules": [{"text": "<the rule>", "source_message_ids": ["<id>", "..."]}]}\n'
    'If the assistant made no mistake, answer {"rules": []}.'
)

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)


def _extract_json(reply: str) -> Any:
    """The JSON value in a reply: the whole text, a fenced block, or the first {...}/[...]."""
    candidates = [reply.strip()]
    candidates += [m.group(1).strip() for m in _FENCE.finditer(reply)]
    decoder = json.JSONDecoder()
    for text in candidates:
        try:
            return json.loads(text)
        except ValueError:
            pass
    for i, ch in enumerate(reply):
        if ch in "{[":
            try:
                value, _ = decoder.raw_decode(reply, i)
            except ValueError:
                continue
            if isinstance(value, (dict, list)):
                return value
    raise ValueError("no JSON object found in the reply")


def parse_rules(
    reply: str, history: Sequence[Message], created_at: float, *, critic: str = "critic"
) -> list[Rule]:
    """Rules from a JSON reply; raises ``CritiqueFailed`` naming what is wrong with it."""

    def fail(problem: str, cause: BaseException | None = None) -> CritiqueFailed:
        return CritiqueFailed(f"{critic}: malformed critique: {problem}", reply=reply, cause=cause)

    require_real("created_at", created_at)  # the caller's mistake, named before the reply's
    try:
        value = _extract_json(reply)
    except ValueError as exc:
        raise fail(f"{exc} (reply starts {reply[:80]!r})", exc) from exc
    items = value.get("rules") if isinstance(value, dict) else value
    if not isinstance(items, list):
        raise fail(f'expected {{"rules": [...]}} or a list, got {type(value).__name__}')
    known = {m.id for m in history}
    rules: list[Rule] = []
    seen: set[str] = set()
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise fail(f"rules[{i}] must be an object, got {item!r}")
        text = item.get("text")
        if not isinstance(text, str) or not text.strip():
            raise fail(f"rules[{i}].text must be a non-empty string, got {text!r}")
        sources = item.get("source_message_ids")
        if not isinstance(sources, list) or not sources or not all(
            isinstance(s, str) for s in sources
        ):
            raise fail(f"rules[{i}].source_message_ids must be a non-empty list of ids, "
                       f"got {sources!r}")
        unknown = [s for s in sources if s not in known]
        if unknown:
            raise fail(f"rules[{i}] cites ids not in the history: {unknown}")
        ordered = tuple(dict.fromkeys(sources))
        rule = make_rule(text, ordered, created_at)
        if rule.id not in seen:
            seen.add(rule.id)
            rules.append(rule)
    return rules


class OpenAICritic:
    """A critic that asks a chat model for rules in JSON (an LLM when the model is real).

    Give it a ``chat_model`` or a ``client`` and ``model``. Failures of the
    model and malformed replies both raise ``CritiqueFailed``; the history is
    never modified. ``created_at`` of the rules comes from ``clock``, else the
    latest message's time.
    """

    def __init__(
        self,
        chat_model: ChatModel | None = None,
        *,
        client: Any = None,
        model: str | None = None,
        prompt: str = DEFAULT_CRITIC_PROMPT,
        max_tokens: int = 600,
        clock: Clock | None = None,
    ) -> None:
        chat_model = resolve_chat_model(chat_model, client, model)
        self.chat_model = chat_model
        self.prompt = require_str("prompt", prompt, non_empty=True)
        self.max_tokens = require_int("max_tokens", max_tokens, minimum=1)
        self.clock = clock
        self.name = f"llm-critic({getattr(chat_model, 'name', type(chat_model).__name__)})"

    @property
    def is_llm(self) -> bool:
        return not getattr(self.chat_model, "is_scripted", False)

    def request(self, history: Sequence[Message]) -> list[dict[str, str]]:
        return [
            {"role": "system", "content": self.prompt},
            {"role": "user", "content": "Conversation:\n\n" + render_transcript(history)},
        ]

    def critique(self, history: Sequence[Message]) -> list[Rule]:
        history = check_history(history)
        if not history:
            return []
        try:
            reply = self.chat_model.complete(self.request(history), max_tokens=self.max_tokens)
        except Exception as exc:
            raise CritiqueFailed(
                f"{self.name}: the chat model failed: {describe_error(exc)}", cause=exc
            ) from exc
        if not isinstance(reply, str) or not reply.strip():
            raise CritiqueFailed(f"{self.name}: the chat model returned an empty reply",
                                 reply=reply if isinstance(reply, str) else None)
        return parse_rules(reply, history, _timestamp(self.clock, history), critic=self.name)

    def __repr__(self) -> str:
        return f"OpenAICritic({self.chat_model!r})"


__all__ = [
    "DEFAULT_CORRECTION_PATTERNS",
    "DEFAULT_CRITIC_PROMPT",
    "Critic",
    "CritiqueFailed",
    "OpenAICritic",
    "Rule",
    "ScriptedCritic",
    "make_rule",
    "parse_rules",
    "rule_id",
]
