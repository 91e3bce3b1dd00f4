"""A neutral evaluation set: conversations, and questions whose evidence is known.

``EvalConversation`` holds the messages of one conversation (optionally grouped
into sessions) and the ``EvalQuestion``s asked about it. A question names the
ids of the messages that hold its answer (its *evidence*) and the position in
the history at which it is asked (default: after the last message), and optionally the
earlier messages its evidence replaces (``superseded_ids``: a fact that changed). Any memory
is scored on it through the common context interface: does the context it
builds for the question cover the evidence? (``memorykit.evaluation.harness``.)

Sources fill it: LoCoMo (``memorykit.evaluation.locomo``), your own chat logs
(``memorykit.evaluation.chatlog``), or anything with an ``as_eval_conversation()`` method
(the classroom's simulated conversations turn every planted fact into a question).
Taught in ``notebooks/12_parameter_tuning.ipynb``.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import Counter
from statistics import median
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from memorykit._validate import require_int, require_str
from memorykit.messages import Message

__all__ = [
    "EvalConversation",
    "EvalDataset",
    "EvalQuestion",
    "Session",
    "as_dataset",
    "dataset_statistics",
]

_EMPTY: Mapping[str, Any] = MappingProxyType({})


@dataclass(frozen=True)
class EvalQuestion:
    """One question about a conversation, with the messages that answer it."""

    id: str
    """Unique within its conversation."""
    question: str
    """The text a policy receives as its query."""
    answer: str | None
    """The reference answer (None when there is none, e.g. LoCoMo's adversarial questions)."""
    evidence_ids: tuple[str, ...]
    """Ids of the messages that hold the answer; at least one."""
    category: str
    """What kind of question it is (``"single-hop"``, ``"temporal"``, a topic, ...)."""
    position: int | None = None
    """How many messages of the conversation exist when it is asked; None: all of them."""
    metadata: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)
    """Free annotations (raw category number, adversarial answer, ...)."""
    superseded_ids: tuple[str, ...] = ()
    """Ids of earlier messages that stated what the evidence replaces (a deadline before it
    moved, a number before its correction): a context holding one of them and none of the
    evidence would have the reader answer with the old value (the harness's ``stale_only``)."""

    def __post_init__(self) -> None:
        require_str("id", self.id, non_empty=True)
        require_str("question", self.question, non_empty=True)
        if self.answer is not None:
            require_str("answer", self.answer)
        if isinstance(self.evidence_ids, str) or not isinstance(self.evidence_ids, Iterable):
            raise TypeError(f"evidence_ids must be a sequence of message ids, got {self.evidence_ids!r}")
        evidence = tuple(self.evidence_ids)
        if not evidence:
            raise ValueError(f"evidence_ids must name at least one message, got {self.evidence_ids!r}")
        for e in evidence:
            require_str("evidence id", e, non_empty=True)
        if len(set(evidence)) != len(evidence):
            raise ValueError(f"evidence_ids must not repeat an id, got {evidence!r}")
        object.__setattr__(self, "evidence_ids", evidence)
        if isinstance(self.superseded_ids, str) or not isinstance(self.superseded_ids, Iterable):
            raise TypeError(f"superseded_ids must be a sequence of message ids, got "
                            f"{self.superseded_ids!r}")
        superseded = tuple(self.superseded_ids)
        for e in superseded:
            require_str("superseded id", e, non_empty=True)
        if len(set(superseded)) != len(superseded):
            raise ValueError(f"superseded_ids must not repeat an id, got {superseded!r}")
        both = sorted(set(superseded) & set(evidence))
        if both:
            raise ValueError(f"a message cannot be evidence and superseded at once, got {both!r}")
        object.__setattr__(self, "superseded_ids", superseded)
        require_str("category", self.category, non_empty=True)
        if self.position is not None:
            require_int("position", self.position, minimum=0)
        if not isinstance(self.metadata, Mapping):
            raise TypeError(f"metadata must be a mapping, got {self.metadata!r:.80}")
        if type(self.metadata) is not MappingProxyType:
            object.__setattr__(self, "metadata", MappingProxyType(dict(self.metadata)))

    def __reduce__(self) -> tuple[Any, ...]:
        # Read-only mappings do not pickle; process pools and Dask need to send questions.
        return (EvalQuestion, (self.id, self.question, self.answer, self.evidence_ids,
                               self.category, self.position, dict(self.metadata),
                               self.superseded_ids))


@dataclass(frozen=True)
class Session:
    """A stretch of a conversation held at one sitting (LoCoMo's ``session_<n>``)."""

    number: int
    start: int
    """Index of the session's first message in the conversation."""
    stop: int
    """One past the index of its last message."""
    date_time: str = ""
    """The date as the source wrote it ("1:56 pm on 8 May, 2023")."""

    def __post_init__(self) -> None:
        require_int("number", self.number, minimum=0)
        require_int("start", self.start, minimum=0)
        require_int("stop", self.stop, minimum=self.start + 1)


@dataclass(frozen=True)
class EvalConversation:
    """One conversation and the questions asked about it."""

    id: str
    messages: tuple[Message, ...]
    questions: tuple[EvalQuestion, ...]
    sessions: tuple[Session, ...] = ()
    metadata: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)

    def __post_init__(self) -> None:
        require_str("id", self.id, non_empty=True)
        messages = tuple(self.messages)
        for i, m in enumerate(messages):
            if not isinstance(m, Message):
                raise TypeError(f"messages[{i}] must be a Message, got {m!r}")
        index = {m.id: i for i, m in enumerate(messages)}
        if len(index) != len(messages):
            dupes = sorted(k for k, v in Counter(m.id for m in messages).items() if v > 1)
            raise ValueError(f"message ids must be unique, got duplicates {dupes[:5]!r}")
        questions = tuple(self.questions)
        seen: set[str] = set()
        for q in questions:
            if not isinstance(q, EvalQuestion):
                raise TypeError(f"questions must be EvalQuestion, got {q!r}")
            if q.id in seen:
                raise ValueError(f"question ids must be unique, got {q.id!r} twice")
            seen.add(q.id)
            position = len(messages) if q.position is None else q.position
            if position > len(messages):
                raise ValueError(
                    f"question {q.id!r} has position {q.position!r}, past the "
                    f"{len(messages)} messages of conversation {self.id!r}"
                )
            for what, ids in (("evidence", q.evidence_ids), ("superseded", q.superseded_ids)):
                for e in ids:
                    at = index.get(e)
                    if at is None:
                        raise ValueError(f"question {q.id!r} cites {what} {e!r}, which is no message")
                    if at >= position:
                        raise ValueError(
                            f"question {q.id!r} is asked at position {position} but its {what} "
                            f"{e!r} comes later (index {at})"
                        )
        sessions = tuple(self.sessions)
        for s in sessions:
            if not isinstance(s, Session):
                raise TypeError(f"sessions must be Session, got {s!r}")
            if s.stop > len(messages):
                raise ValueError(f"session {s.number} stops at {s.stop}, past {len(messages)} messages")
        object.__setattr__(self, "messages", messages)
        object.__setattr__(self, "questions", questions)
        object.__setattr__(self, "sessions", sessions)
        object.__setattr__(self, "_index", index)
        if not isinstance(self.metadata, Mapping):
            raise TypeError(f"metadata must be a mapping, got {self.metadata!r:.80}")
        if type(self.metadata) is not MappingProxyType:
            object.__setattr__(self, "metadata", MappingProxyType(dict(self.metadata)))

    def __reduce__(self) -> tuple[Any, ...]:
        # Message.metadata is a read-only mapping, which does not pickle: send plain fields.
        return (_rebuild_conversation, (self.id, tuple(_message_state(m) for m in self.messages),
                                        self.questions, self.sessions, dict(self.metadata)))

    def position(self, question: EvalQuestion) -> int:
        """How many messages precede ``question`` (its position, or all of them)."""
        return len(self.messages) if question.position is None else question.position

    def history(self, question: EvalQuestion) -> tuple[Message, ...]:
        """The messages that exist when ``question`` is asked."""
        return self.messages[: self.position(question)]

    def index_of(self, message_id: str) -> int:
        try:
            return self._index[message_id]  # type: ignore[attr-defined]
        except KeyError:
            raise KeyError(f"message_id {message_id!r} is not in conversation {self.id!r}") from None

    @property
    def tokens(self) -> int:
        """Billed tokens of every message (no reply primer)."""
        return sum(m.billed_tokens for m in self.messages)

    def __len__(self) -> int:
        return len(self.messages)


def _message_state(m: Message) -> tuple[Any, ...]:
    return (m.id, m.role, m.content, m.content_tokens, m.billed_tokens, m.importance,
            m.created_at, m.turn, dict(m.metadata), m.tool_calls, m.tool_call_id, m.sources,
            m.summary_depth)


def _rebuild_conversation(cid: str, states: tuple[tuple[Any, ...], ...], questions: Any,
                          sessions: Any, metadata: dict[str, Any]) -> EvalConversation:
    return EvalConversation(cid, tuple(Message(*s) for s in states), questions, sessions, metadata)


@dataclass(frozen=True)
class EvalDataset:
    """Conversations to evaluate on, with a name and, for loaded data, a load report."""

    name: str
    conversations: tuple[EvalConversation, ...]
    report: Any = None
    """What the loader normalized or dropped (``LocomoReport`` for LoCoMo), or None."""

    def __post_init__(self) -> None:
        require_str("name", self.name, non_empty=True)
        conversations = tuple(self.conversations)
        ids: set[str] = set()
        for c in conversations:
            if not isinstance(c, EvalConversation):
                raise TypeError(f"conversations must be EvalConversation, got {c!r}")
            if c.id in ids:
                raise ValueError(f"conversation ids must be unique, got {c.id!r} twice")
            ids.add(c.id)
        object.__setattr__(self, "conversations", conversations)

    def __iter__(self) -> Iterator[EvalConversation]:
        return iter(self.conversations)

    def __len__(self) -> int:
        return len(self.conversations)

    @property
    def n_questions(self) -> int:
        return sum(len(c.questions) for c in self.conversations)

    @property
    def n_messages(self) -> int:
        return sum(len(c.messages) for c in self.conversations)

    def categories(self) -> dict[str, int]:
        """Questions per category, in order of first appearance."""
        counts: dict[str, int] = {}
        for c in self.conversations:
            for q in c.questions:
                counts[q.category] = counts.get(q.category, 0) + 1
        return counts

    def select(self, categories: Iterable[str] | None = None, conversations: Iterable[str] | None = None,
               max_questions: int | None = None) -> EvalDataset:
        """A smaller dataset: only these categories / conversation ids / first questions each."""
        cats = None if categories is None else frozenset(categories)
        convs = None if conversations is None else frozenset(conversations)
        if max_questions is not None:
            require_int("max_questions", max_questions, minimum=1)
        kept = []
        for c in self.conversations:
            if convs is not None and c.id not in convs:
                continue
            qs = [q for q in c.questions if cats is None or q.category in cats]
            if max_questions is not None:
                qs = qs[:max_questions]
            kept.append(EvalConversation(c.id, c.messages, tuple(qs), c.sessions, c.metadata))
        return EvalDataset(self.name, tuple(kept), self.report)


def dataset_statistics(dataset: EvalDataset) -> dict[str, Any]:
    """How long and how far back a dataset is: what makes retrieval hard, beside the question kinds.

    Why: a fixture whose evidence always sits in the latest sessions, or whose sessions hold
    five turns, flatters every memory; these figures say whether a dataset is in the range of
    real multi-session chat (LoCoMo: about 19-35 sessions and 300-700 turns per conversation,
    15-30 turns per session, evidence often many sessions back). ``sessions_back`` counts the
    sessions between an evidence turn's session and the last session before the question (0:
    the same one); conversations without sessions count as one session each.
    ``evidence_vs_other_content_tokens`` compares the median content tokens of the turns some
    question cites with the median of every other turn: when evidence turns are much longer
    than the rest, ranking messages by length alone finds them without reading the question.
    """
    if not isinstance(dataset, EvalDataset):
        raise TypeError(f"dataset must be an EvalDataset, got {dataset!r}")
    sessions, turns, per_session, back = [], [], [], []
    evidence_len: list[int] = []
    other_len: list[int] = []
    for conv in dataset:
        cited = {e for q in conv.questions for e in q.evidence_ids}
        for m in conv.messages:
            (evidence_len if m.id in cited else other_len).append(m.content_tokens)
        spans = [(s.start, s.stop) for s in conv.sessions] or [(0, len(conv.messages))]
        starts = [start for start, _ in spans]
        sessions.append(len(spans))
        turns.append(len(conv.messages))
        per_session += [stop - start for start, stop in spans]
        for q in conv.questions:
            last = bisect_right(starts, max(conv.position(q) - 1, 0)) - 1
            back += [last - (bisect_right(starts, conv.index_of(e)) - 1) for e in q.evidence_ids]

    def spread(values: list[int]) -> str:
        if not values:
            return "none"
        v = sorted(values)
        return f"{v[0]}-{v[-1]} (median {v[len(v) // 2]})"

    far = sum(1 for b in back if b >= 5) / len(back) if back else 0.0
    if evidence_len and other_len:
        ev, ot = median(evidence_len), median(other_len)
        ratio = f"ratio {ev / ot:.3f}" if ot else "ratio undefined"
        lengths = f"median {ev:g} vs {ot:g} ({ratio})"
    else:
        lengths = "none"
    return {"conversations": len(dataset), "sessions_per_conversation": spread(sessions),
            "turns_per_conversation": spread(turns), "turns_per_session": spread(per_session),
            "evidence_sessions_back": spread(back),
            "evidence_5_or_more_sessions_back": round(far, 3),
            "evidence_vs_other_content_tokens": lengths,
            "questions_by_kind": dataset.categories()}


def as_dataset(data: Any, name: str = "dataset") -> EvalDataset:
    """Accept a dataset, one conversation, or a sequence of conversations."""
    if isinstance(data, EvalDataset):
        return data
    if isinstance(data, EvalConversation):
        return EvalDataset(name, (data,))
    if hasattr(data, "as_eval_conversation"):
        return EvalDataset(name, (data.as_eval_conversation(),))
    if isinstance(data, Sequence) and not isinstance(data, (str, bytes)):
        convs = [c.as_eval_conversation() if hasattr(c, "as_eval_conversation") else c
                 for c in data]
        return EvalDataset(name, tuple(convs))
    raise TypeError(
        f"dataset must be an EvalDataset, an EvalConversation or a sequence of them, got {data!r}"
    )
