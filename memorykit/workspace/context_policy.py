"""The three-column workspace behind the common ``ContextPolicy`` question.

``WorkspaceContextPolicy.build_context(history, query, budget)`` replays the
history through a fresh ``WorkingMemory`` (each message's text is one observed
turn, the clock following the messages' ``created_at``), renders the three
columns (active tasks, notes, salient objects) as one system item, and fills the
rest of the budget with the most recent messages. The system item cites the
messages that mentioned an entity the columns show (its provenance). Tasks and
notes come from ``make_memory`` (they are not inferred from chat text); a graph
supplies the objects and the vocabulary the extractor recognises.

Taught in ``notebooks/08_three_columns.ipynb``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from memorykit._history import memory_on_fresh_clock, newest_that_fit, system_tokens, timed_messages
from memorykit._validate import require_str
from memorykit.clock import StepClock
from memorykit.context import Context, ContextItem, check_request
from memorykit.messages import Message
from memorykit.tokens import ChatFormat, TokenCounter, Tokenizer
from memorykit.workspace.graph import KnowledgeGraph
from memorykit.workspace.memory import WorkingMemory


def _default_memory(clock: StepClock) -> WorkingMemory:
    return WorkingMemory(KnowledgeGraph(), clock=clock)


class WorkspaceContextPolicy:
    """A ``WorkingMemory`` (three columns) as a ``ContextPolicy`` (see the module docstring)."""

    query_independent = True
    """The context ignores the query (columns and recent turns come from the history alone):
    the harness builds it once per question position."""

    def __init__(
        self,
        make_memory: Callable[[StepClock], WorkingMemory] = _default_memory,
        *,
        counter: TokenCounter | None = None,
        chat_format: ChatFormat = ChatFormat(),
        name: str = "three-column-workspace",
    ) -> None:
        if not callable(make_memory):
            raise TypeError(f"make_memory must be callable, got {make_memory!r}")
        if counter is not None and not callable(getattr(counter, "count", None)):
            raise TypeError(f"counter must have a count(text) method, got {counter!r}")
        if not isinstance(chat_format, ChatFormat):
            raise TypeError(f"chat_format must be a ChatFormat, got {chat_format!r}")
        self.make_memory = make_memory
        self.counter: TokenCounter = counter if counter is not None else Tokenizer()
        self.chat_format = chat_format
        self.name = require_str("name", name, non_empty=True)

    def replay(self, history: Sequence[Message]) -> tuple[WorkingMemory, dict[str, list[str]]]:
        """The memory after the history, and for each entity id the messages that mentioned it."""
        clock, memory = memory_on_fresh_clock(self.make_memory, WorkingMemory)
        cited: dict[str, list[str]] = {}
        for _, message in timed_messages(history, clock):
            report = memory.observe(message.content)
            for entity in sorted(report.entities):
                cited.setdefault(entity, []).append(message.id)
        return memory, cited

    def build_context(self, history: Sequence[Message], query: str, budget: int) -> Context:
        check_request(query, budget)
        memory, cited = self.replay(history)
        content = memory.render()
        shown = [o.id for o, _ in memory.objects()]
        sources = tuple(dict.fromkeys(m for oid in shown for m in cited.get(oid, ())))
        tokens = system_tokens(content, self.counter, self.chat_format)
        room = budget - self.chat_format.reply_primer
        if tokens > room:
            note = (f"the budget of {budget} tokens cannot hold the three columns ({tokens} "
                    "tokens): nothing sent")
            return Context((), budget, self.name, self.chat_format, (note,))
        system = ContextItem("system", content, tokens, sources, "workspace")
        recent = newest_that_fit(history, room - tokens)
        return Context((system, *recent), budget, self.name, self.chat_format)

    def __repr__(self) -> str:
        return f"WorkspaceContextPolicy({self.name!r})"


__all__ = ["WorkspaceContextPolicy"]
