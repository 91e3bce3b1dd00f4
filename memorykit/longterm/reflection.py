"""Reflection memory (D3, architecture D): lessons learned from mistakes, injected as rules.

Two agents share one conversation. The **actor** answers the user. The
**critic** reads the history, finds the actor's mistakes and states rules
("Always ask for confirmation before booking"); the rules are kept here and
injected into the actor's system prompt on every later request. Facts help an
agent know things; rules change what it *does*.

The critic is any ``memorykit.llm.Critic`` (``critique(history) ->
list[Rule]``): ``ScriptedCritic`` offline (patterns, **not a language model**)
or ``OpenAICritic`` with a real model. Every ``Rule`` cites the messages it was
drawn from (``source_message_ids``), so a rule in a prompt can be traced back
to the exchange that taught it; a rule citing a message that is not in the
history is refused (``ValueError``): a lesson with invented provenance is
worse than none.

Cost: each reflection makes the critic read ``critic_window`` messages. With
an LLM critic that is a second model call, D3's "2x token cost during
reflection cycles"; ``critic_input_tokens`` adds up what the critic read (an
offline scripted critic is billed nothing, but the number says what an LLM
critic would have been sent).

Taught in ``notebooks/10_architectures.ipynb``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from memorykit._validate import require_int, require_optional_int, require_str
from memorykit.llm.critic import Critic, Rule
from memorykit.llm.summarizer import render_transcript
from memorykit.longterm.events import RuleLearned
from memorykit.messages import Message
from memorykit.tokens import TokenCounter, Tokenizer
from memorykit.trace import Trace

RULE_PREFIX = "Rule learned from an earlier mistake: "
"""How an injected rule starts, so a reader (or a scripted actor) can tell rules apart."""


@dataclass(frozen=True)
class ReflectionSettings:
    """Every parameter of reflection memory."""

    reflect_every: int = 1
    """Run the critic once at least this many new messages arrived since it last ran."""
    critic_window: int | None = None
    """The critic reads the last this-many messages (None: the whole history)."""
    max_rules: int = 10
    """At most this many rules are injected (the most recently learned)."""
    rule_prefix: str = RULE_PREFIX
    """Text that opens every injected rule."""

    def __post_init__(self) -> None:
        require_int("reflect_every", self.reflect_every, minimum=1)
        require_optional_int("critic_window", self.critic_window, minimum=1)
        require_int("max_rules", self.max_rules, minimum=0)
        require_str("rule_prefix", self.rule_prefix)


class ReflectionMemory:
    """The rules a critic has drawn from a history, with the trace of how they came."""

    def __init__(
        self,
        critic: Critic,
        settings: ReflectionSettings | None = None,
        *,
        counter: TokenCounter | None = None,
    ) -> None:
        if not callable(getattr(critic, "critique", None)):
            raise TypeError(f"critic must have a critique(history) method, got {critic!r}")
        self.critic = critic
        self.settings = settings if settings is not None else ReflectionSettings()
        if not isinstance(self.settings, ReflectionSettings):
            raise TypeError(f"settings must be ReflectionSettings, got {settings!r}")
        self.counter: TokenCounter = counter if counter is not None else Tokenizer()
        self.rules: dict[str, Rule] = {}
        self.trace = Trace()
        self.reflections = 0
        self.critic_input_tokens = 0
        self._reflected_upto = 0

    def reset(self) -> None:
        self.rules.clear()
        self.trace = Trace()
        self.reflections = 0
        self.critic_input_tokens = 0
        self._reflected_upto = 0

    def due(self, history_length: int) -> bool:
        """Have ``reflect_every`` messages arrived since the critic last ran?"""
        return history_length - self._reflected_upto >= self.settings.reflect_every

    def reflect(self, history: Sequence[Message], now: float) -> list[Rule]:
        """Run the critic on (the window of) ``history``; returns the rules that are new."""
        window = list(history)
        if self.settings.critic_window is not None:
            window = window[-self.settings.critic_window:]
        self._reflected_upto = len(history)
        if not window:
            return []
        self.reflections += 1
        self.critic_input_tokens += self.counter.count(render_transcript(window))
        found = self.critic.critique(window)
        known = {m.id for m in history}
        new: list[Rule] = []
        for rule in found:
            if not isinstance(rule, Rule):
                raise TypeError(f"critic returned {rule!r}, expected Rule records")
            unknown = [s for s in rule.source_message_ids if s not in known]
            if unknown:
                raise ValueError(
                    f"rule {rule.id!r} cites message ids not in the history: {unknown!r}"
                )
            if rule.id in self.rules:
                continue
            self.rules[rule.id] = rule
            new.append(rule)
            self.trace.append(
                RuleLearned(rule.id, rule.text, rule.source_message_ids,
                            getattr(self.critic, "name", type(self.critic).__name__), now)
            )
        return new

    def active(self) -> list[Rule]:
        """The rules to inject: the ``max_rules`` most recently learned, in learning order."""
        rules = list(self.rules.values())
        n = self.settings.max_rules
        return rules[-n:] if n else []

    def render(self, rule: Rule) -> str:
        return self.settings.rule_prefix + rule.text

    def __repr__(self) -> str:
        return f"ReflectionMemory(rules={len(self.rules)}, critic={getattr(self.critic, 'name', '?')!r})"


__all__ = ["RULE_PREFIX", "ReflectionMemory", "ReflectionSettings"]
