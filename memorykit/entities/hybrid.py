"""D0 pattern 3: entities plus a running summary, for long sessions.

``EntitySummaryMemory`` pairs an ``EntityMemory`` with any conversation
``MessageBuffer`` (normally ``memorykit.buffers.SummaryBuffer``, which
compresses old messages into summaries by itself). Every ``summarize_every``
turns (10, the seed's "after 10+ turns, summarize and compress") entities not
touched during those turns are cleared from working memory, each as an
``EntityEviction`` with rule 'summarized', and a one-line note about them is
kept in a running entity summary, so the prompt still says what was worked on
earlier ("Earlier: page 42 "Pricing" (7 accesses), ...") without holding the
references. The note is deterministic and bounded (the newest ``max_notes``
entities, with a count of older ones); no model call is made.
Taught in ``notebooks/04_entity_memory.ipynb``.
"""

from __future__ import annotations

from typing import Any

from memorykit._validate import require_int
from memorykit.buffers.base import MessageBuffer
from memorykit.entities.memory import EntityMemory
from memorykit.entities.prompt import render_system_prompt
from memorykit.entities.records import Entity, EntityEviction
from memorykit.messages import Message


class EntitySummaryMemory:
    """Entities (recent references) + a conversation buffer + a running entity summary."""

    def __init__(self, entities: EntityMemory, conversation: MessageBuffer, *,
                 summarize_every: int = 10, max_notes: int = 12) -> None:
        if not isinstance(entities, EntityMemory):
            raise TypeError(f"entities must be an EntityMemory, got {entities!r}")
        if not isinstance(conversation, MessageBuffer):
            raise TypeError(f"conversation must be a MessageBuffer, got {conversation!r}")
        self.entities = entities
        self.conversation = conversation
        self.summarize_every = require_int("summarize_every", summarize_every, minimum=1)
        self.max_notes = require_int("max_notes", max_notes, minimum=1)
        self._notes: list[tuple[Entity, int]] = []
        self._older = 0
        self._last_round = 0

    def add_entity(self, entity: Entity, *, turn: int | None = None) -> list[EntityEviction]:
        return self.entities.add(entity, turn=turn)

    def add_message(self, message: Message) -> list[Any]:
        return self.conversation.add(message)

    def end_turn(self, turn: int) -> list[EntityEviction]:
        """Close a turn; every ``summarize_every`` turns, fold stale entities into the summary."""
        require_int("turn", turn, minimum=0)
        if turn - self._last_round < self.summarize_every:
            return []
        cutoff = turn - self.summarize_every
        self._last_round = turn
        events = []
        for state in self.entities.states():
            if state.last_turn <= cutoff:
                events.append(self.entities.remove(
                    state.key, rule="summarized",
                    reason=f"not referenced since turn {state.last_turn} (summary round at turn "
                           f"{turn}, every {self.summarize_every} turns); kept as a note"))
                self._notes.append((state.entity, state.access_count))
        overflow = len(self._notes) - self.max_notes
        if overflow > 0:
            self._older += overflow
            del self._notes[:overflow]
        return events

    @property
    def last_round(self) -> int:
        """The turn of the latest summary round (0 before the first): a caller sees that
        ``end_turn`` ran a round even when the round found nothing stale to fold."""
        return self._last_round

    @property
    def notes(self) -> tuple[tuple[Entity, int], ...]:
        """The notes the summary holds, oldest first: (entity, its access count when folded)."""
        return tuple(self._notes)

    @property
    def older_notes(self) -> int:
        """Entities folded earlier whose notes were dropped past ``max_notes`` (only counted)."""
        return self._older

    @property
    def entity_summary(self) -> str:
        if not self._notes:
            return ""
        parts = [f'{e.type} {e.id} "{e.label}" ({n} access{"" if n == 1 else "es"})'
                 for e, n in reversed(self._notes)]
        text = "Earlier the user worked on: " + ", ".join(parts)
        if self._older:
            text += f", and {self._older} older entities"
        return text + "."

    def system_prompt(self, top_k: int = 5) -> str:
        return render_system_prompt(self.entities, top_k, summary=self.entity_summary or None)

    def to_openai(self, top_k: int = 5) -> list[dict[str, Any]]:
        """The request: memory-aware system prompt, then the conversation window."""
        return [{"role": "system", "content": self.system_prompt(top_k)}, *self.conversation.to_openai()]
