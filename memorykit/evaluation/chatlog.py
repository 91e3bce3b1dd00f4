"""Bring your own conversations: OpenAI-format chat logs (and questions about them) as a dataset.

An agent's logs are usually the chat API's ``messages`` arrays. ``load_chat_logs(path,
questions)`` reads them into an ``EvalDataset`` the harness, sweeps and ``python -m memorykit
tune`` score like any other:

* **conversations**: a ``.jsonl`` file holds one conversation per line; a ``.json`` file holds
  one conversation or a list of them. A conversation is a ``messages`` array, or an object
  ``{"id": ..., "messages": [...]}`` (the fine-tuning file's shape; other keys are kept as
  metadata). Its id defaults to its 1-based place in the file (``"1"``, ``"2"``, ...).
  Messages are read as ``MessageFactory.from_openai`` reads a live agent's (``developer`` is
  read as ``system``; ``content`` null beside tool calls, or a list of parts whose text parts
  are joined, other parts' types listed in ``metadata["omitted_parts"]``; ``tool_calls`` as
  ``{"id", "type": "function", "function": {"name", "arguments"}}``; other fields such as
  ``name`` kept in metadata); a message's ``id`` defaults to its 0-based index (``"0"``, ...).
  The order is checked with ``memorykit.messages.validate_wire`` (every call answered,
  no orphan result; a system message may come anywhere: a log is not a request).
* **questions** (optional; same two file shapes, one object per question):
  ``{"conversation", "question", "evidence", "answer", "id", "category", "position"}``.
  ``evidence`` lists message ids (str) or 0-based indices (int); ``answer`` is a str or a list of
  str. A question needs evidence, an answer, or both: with an answer alone its evidence is
  every message before the question that contains an answer (case-insensitive, whole words),
  so recall then counts the share of those mentions the context keeps. ``position`` (messages
  in the history when it is asked) defaults to all of them. ``superseded`` (optional, ids or
  indices like ``evidence``; ``[]``: none) names earlier statements the evidence replaces (the deadline
  before it moved, the number before its correction); each comes before the last evidence
  message, and none is evidence too. The harness then reports ``stale_only`` and ``both``.

Every problem raises ``ChatLogError`` naming the file, the line (``.jsonl``) or item (``.json``)
and the field: ``chats.jsonl:3: messages[4].tool_calls[0].function.name: ...``; that includes
bytes that are not UTF-8, nesting too deep for Python's JSON reader, a number past Python's
4,300-digit limit, an empty ``.json``, a directory, a FIFO or a device (refused before a byte
is read). Only a missing file is ``FileNotFoundError``. Everything is read locally; nothing is
sent anywhere.

Memory: a ``.jsonl`` file is read and decoded one line at a time, so reading adds nothing to
the conversations it builds (every message is held: the policies replay them). A ``.json`` file
is one document that Python reads whole, so one over 64 MiB is refused with advice to write
``.jsonl``. (``bench/tune_log.py``: a 200 MB log peaks at the dataset it builds, BENCHMARKS.md.)
Taught in ``notebooks/12_parameter_tuning.ipynb``.
"""

from __future__ import annotations

import io
import json
import os
import re
import stat
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, BinaryIO

from memorykit._validate import require_bool, require_str
from memorykit.evaluation.dataset import EvalConversation, EvalDataset, EvalQuestion
from memorykit.messages import Message, MessageFactory, OpenAIMessageError, validate_wire

__all__ = ["ChatLogError", "load_chat_logs", "parse_chat_logs"]

_QUESTION_KEYS = frozenset({"conversation", "question", "evidence", "answer", "id", "category",
                            "position", "metadata", "superseded"})


class ChatLogError(ValueError):
    """A conversations or questions file that cannot be read: where, which field, and why."""

    def __init__(self, source: str, where: str, field: str, problem: str) -> None:
        self.source = source
        """The file (or the name given to ``parse_chat_logs``)."""
        self.where = where
        """``line N`` of a JSONL file, ``item N`` of a JSON list, or empty for a whole file."""
        self.field = field
        """The field at fault, as a path (``messages[4].tool_calls[0].id``), or empty."""
        location = source + (f":{where}" if where else "")
        super().__init__(f"{location}: {field + ': ' if field else ''}{problem}")


_JSON_MAX_BYTES = 64 * 2**20
"""A ``.json`` file is one document, read whole (Python's json cannot stream one); past this
size it is refused with advice to write ``.jsonl``, which is read one line at a time."""


class _Records:
    """The JSON records of one file, each with the place an error should name.

    ``items`` yields them one at a time: a JSONL file is decoded line by line as it is read,
    so a large log never sits in memory as text or as decoded JSON (only as the messages built
    from it)."""

    def __init__(self, source: str, lines: Iterable[bytes | str] | None = None,
                 text: str | bytes | None = None) -> None:
        self.source = source
        self._lines = lines
        self._text = text

    @property
    def items(self) -> Iterator[tuple[str, Any]]:
        if self._lines is not None:
            for lineno, line in enumerate(self._lines, 1):
                where = f"line {lineno}"
                text = self._utf8(line, where) if isinstance(line, bytes) else line
                if lineno == 1:
                    text = text.removeprefix("\ufeff")
                if text.strip():
                    yield where, self._decode(text, where)
            return
        raw = self._text if self._text is not None else ""
        text = self._utf8(raw, "") if isinstance(raw, bytes) else raw
        text = text.removeprefix("\ufeff")
        if not text.strip():
            raise self.error("", "", "is empty: it holds no JSON document")
        data = self._decode(text, "")
        self._text = raw = text = None  # type: ignore[assignment]  # keep only the records
        if isinstance(data, list) and not (data and _looks_like_message(data[0])):
            yield from ((f"item {i}", item) for i, item in enumerate(data))
        else:
            yield "", data  # one conversation (or one question) for the whole file

    def _utf8(self, raw: bytes, where: str) -> str:
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            newline = b"\n"
            at = where or f"line {raw.count(newline, 0, exc.start) + 1}"
            column = exc.start - raw.rfind(newline, 0, exc.start)
            raise self.error(at, "", f"is not UTF-8 text (byte 0x{raw[exc.start]:02x} at column "
                             f"{column})") from None

    def _decode(self, text: str, where: str) -> Any:
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            at = where or f"line {exc.lineno}"
            raise ChatLogError(self.source, at, "", f"not valid JSON ({exc.msg}, column "
                               f"{exc.colno})") from None
        except RecursionError:
            raise self.error(where, "", "not readable: arrays or objects nested too deeply "
                             "(about 1,000 levels)") from None
        except ValueError as exc:  # Python's cap on digits in an int: a 5,000-digit number
            raise self.error(where, "", f"not readable: a number of more than "
                             f"{sys.get_int_max_str_digits():,} digits ({exc})") from None

    def error(self, where: str, field: str, problem: str) -> ChatLogError:
        return ChatLogError(self.source, where, field, problem)


def _looks_like_message(item: Any) -> bool:
    return isinstance(item, Mapping) and "role" in item


def _read(path: str | os.PathLike[str]) -> tuple[_Records, BinaryIO]:
    """The records of ``path`` and the open file (the caller closes it after reading them).

    Only a regular file is read: a directory, a FIFO (which would block forever) or a device
    is refused by name before a byte is read."""
    p = Path(path)
    source = str(p)
    suffix = p.suffix.lower()
    try:  # non-blocking, so opening a FIFO returns at once and fstat can refuse it
        fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        raise FileNotFoundError(f"no such file: {p}") from None
    except OSError as exc:
        raise ChatLogError(source, "", "", f"cannot be opened ({exc.strerror})") from None
    info = os.fstat(fd)
    problem = ("is a directory, not a file" if stat.S_ISDIR(info.st_mode) else
               "is not a regular file (a FIFO, socket or device)"
               if not stat.S_ISREG(info.st_mode) else
               f"expected a .json or .jsonl file, got {suffix!r}"
               if suffix not in (".json", ".jsonl") else
               f"is {info.st_size:,} bytes; a .json file is read whole and may hold at most "
               f"{_JSON_MAX_BYTES:,}: write one conversation (or question) per line as .jsonl, "
               f"which is read line by line" if suffix == ".json" and
               info.st_size > _JSON_MAX_BYTES else "")
    if problem:
        os.close(fd)
        raise ChatLogError(source, "", "", problem)
    file = os.fdopen(fd, "rb")
    try:
        if suffix == ".jsonl":
            return _Records(source, lines=file), file
        return _Records(source, text=file.read()), file
    except OSError as exc:
        file.close()
        raise ChatLogError(source, "", "", f"cannot be read ({exc.strerror})") from None


# ---------------------------------------------------------------- conversations
def _messages(records: _Records, where: str, raw: Any, factory: MessageFactory) -> list[Message]:
    if not isinstance(raw, list) or not raw:
        raise records.error(where, "messages", f"must be a non-empty list of messages, got "
                            f"{raw!r:.80}")
    out: list[Message] = []
    seen: set[str] = set()
    for i, m in enumerate(raw):
        at = f"messages[{i}]"
        if not isinstance(m, Mapping):
            raise records.error(where, at, f"must be an object, got {m!r:.80}")
        mid = m.get("id", str(i))
        if not isinstance(mid, str) or not mid:
            raise records.error(where, f"{at}.id", f"must be a non-empty str, got {mid!r}")
        if mid in seen:
            raise records.error(where, f"{at}.id", f"repeats message id {mid!r}")
        seen.add(mid)
        try:  # the same reading as a live agent's messages (images and audio carry no text
            # a memory could match: their part types are listed in metadata)
            out.append(factory.from_openai(m, id=mid, omit_non_text=True))
        except OpenAIMessageError as exc:
            raise records.error(where, f"{at}.{exc.field}", exc.problem) from None
        except (TypeError, ValueError) as exc:
            raise records.error(where, at, str(exc)) from None
    try:
        validate_wire([x.to_openai() for x in out], system_first=False)
    except ValueError as exc:
        raise records.error(where, "messages", str(exc)) from None
    return out


def _conversations(records: _Records) -> list[tuple[str, str, list[Message], dict[str, Any]]]:
    out = []
    ids: dict[str, str] = {}
    for n, (where, item) in enumerate(records.items, 1):
        meta: dict[str, Any] = {}
        if isinstance(item, Mapping):
            cid = item.get("id", str(n))
            raw = item.get("messages")
            meta = {k: v for k, v in item.items() if k not in ("id", "messages")}
        elif isinstance(item, list):
            cid, raw = str(n), item
        else:
            raise records.error(where, "", f"must be a messages array or an object with messages, "
                                f"got {item!r:.80}")
        if not isinstance(cid, str) or not cid.strip():
            raise records.error(where, "id", f"must be a non-empty str, got {cid!r}")
        if cid in ids:
            raise records.error(where, "id", f"repeats conversation id {cid!r} (first at "
                                f"{ids[cid] or 'the top'})")
        ids[cid] = where
        try:
            out.append((cid, where, _messages(records, where, raw, MessageFactory()), meta))
        except RecursionError:
            raise records.error(where, "", "nests arrays or objects too deeply") from None
    if not out:
        raise records.error("", "", "holds no conversation")
    return out


# -------------------------------------------------------------------- questions
_WORDS = re.compile(r"\w+")


def _mentions(answer: str, messages: Sequence[Message]) -> list[str]:
    """Ids of the messages whose text holds ``answer`` as whole words, case-insensitively."""
    words = _WORDS.findall(answer.lower())
    if not words:
        return []
    pattern = re.compile(r"(?<!\w)" + r"\W+".join(map(re.escape, words)) + r"(?!\w)")
    return [m.id for m in messages if pattern.search(m.content.lower())]


def _question(records: _Records, where: str, n: int, item: Any,
              conversations: Mapping[str, list[Message]]) -> tuple[str, EvalQuestion]:
    if not isinstance(item, Mapping):
        raise records.error(where, "", f"must be a question object, got {item!r:.80}")
    unknown = sorted(set(item) - _QUESTION_KEYS)
    if unknown:
        raise records.error(where, unknown[0], f"is not a question field (fields: "
                            f"{', '.join(sorted(_QUESTION_KEYS))})")
    cid = item.get("conversation")
    if not isinstance(cid, str) or cid not in conversations:
        raise records.error(where, "conversation", f"names no conversation: got {cid!r}, ids are "
                            f"{', '.join(list(conversations)[:8])}")
    messages = conversations[cid]  # type: ignore[index]
    text = item.get("question")
    if not isinstance(text, str) or not text.strip():
        raise records.error(where, "question", f"must be a non-empty str, got {text!r:.80}")
    position = item.get("position", len(messages))
    if isinstance(position, bool) or not isinstance(position, int) or \
            not 0 <= position <= len(messages):
        raise records.error(where, "position", f"must be an int in [0, {len(messages)}] (messages "
                            f"of conversation {cid!r}), got {position!r}")
    answers = item.get("answer")
    if isinstance(answers, str):
        answers = [answers]
    if answers is not None and (not isinstance(answers, list) or not answers or not all(
            isinstance(a, str) and _WORDS.search(a) for a in answers)):
        raise records.error(where, "answer", f"must be a str or a list of str with a word in "
                            f"each, got {item.get('answer')!r:.80}")
    evidence = _evidence(records, where, item.get("evidence"), messages, position, cid)
    raw_superseded = item.get("superseded")
    superseded = () if raw_superseded == [] else _evidence(  # [] says "nothing replaced"
        records, where, raw_superseded, messages, position, cid, "superseded") or ()
    if evidence is None:
        if answers is None:
            raise records.error(where, "evidence", "a question needs evidence (message ids or "
                                "indices), an answer, or both")
        found = dict.fromkeys(e for a in answers for e in _mentions(a, messages[:position]))
        if not found:
            raise records.error(where, "answer", f"{answers[0]!r} occurs in no message of "
                                f"conversation {cid!r} before position {position}")
        evidence = tuple(found)
    _check_superseded(records, where, superseded, evidence, messages)
    qid = item.get("id", f"q{n}")
    category = item.get("category", "question")
    for name, value in (("id", qid), ("category", category)):
        if not isinstance(value, str) or not value.strip():
            raise records.error(where, name, f"must be a non-empty str, got {value!r}")
    raw_meta = item.get("metadata")
    if raw_meta is not None and not isinstance(raw_meta, Mapping):
        raise records.error(where, "metadata", f"must be an object, got {raw_meta!r:.80}")
    meta = dict(raw_meta or {})
    meta["evidence_from"] = "answer" if item.get("evidence") is None else "evidence"
    answer = None if answers is None else " | ".join(answers)
    try:
        return cid, EvalQuestion(qid, text, answer, evidence, category, position, meta,  # type: ignore[arg-type]
                                 superseded)
    except (TypeError, ValueError) as exc:  # what the checks above missed, still named
        raise records.error(where, "", str(exc)) from None


def _evidence(records: _Records, where: str, raw: Any, messages: Sequence[Message],
              position: int, cid: str, field: str = "evidence") -> tuple[str, ...] | None:
    """The message ids ``raw`` names (ids or 0-based indices) under ``field``, all before
    ``position``; None when the field is absent."""
    if raw is None:
        return None
    if isinstance(raw, (str, int)) and not isinstance(raw, bool):
        raw = [raw]
    if not isinstance(raw, list) or not raw:
        raise records.error(where, field, f"must be a non-empty list of message ids or "
                            f"indices, got {raw!r:.80}")
    index = {m.id: i for i, m in enumerate(messages)}
    out: list[str] = []
    for k, e in enumerate(raw):
        at = f"{field}[{k}]"
        if isinstance(e, int) and not isinstance(e, bool):
            if not 0 <= e < len(messages):
                raise records.error(where, at, f"index {e} is outside conversation {cid!r} "
                                    f"(0..{len(messages) - 1})")
            e = messages[e].id
        elif not isinstance(e, str) or e not in index:
            raise records.error(where, at, f"names no message of conversation {cid!r}: {e!r}")
        if index[e] >= position:
            raise records.error(where, at, f"message {e!r} (index {index[e]}) comes at or after "
                                f"the question's position {position}")
        if e in out:
            raise records.error(where, at, f"repeats message {e!r}")
        out.append(e)
    return tuple(out)


def _check_superseded(records: _Records, where: str, superseded: Sequence[str],
                      evidence: Sequence[str], messages: Sequence[Message]) -> None:
    """A superseded statement is not evidence, and comes before what replaces it."""
    index = {m.id: i for i, m in enumerate(messages)}
    last = max(index[e] for e in evidence)
    for k, s in enumerate(superseded):
        if s in evidence:
            raise records.error(where, f"superseded[{k}]", f"message {s!r} is evidence too: a "
                                f"statement cannot be current and replaced at once")
        if index[s] > last:
            raise records.error(where, f"superseded[{k}]", f"message {s!r} (index {index[s]}) "
                                f"comes after every evidence message (last at {last}): what the "
                                f"evidence replaces is said before it")


# ------------------------------------------------------------------------- API
def _dataset(name: str, chats: _Records, questions: _Records | None) -> EvalDataset:
    convs = _conversations(chats)
    by_id = {cid: msgs for cid, _, msgs, _ in convs}
    asked: dict[str, list[EvalQuestion]] = {cid: [] for cid in by_id}
    if questions is not None:
        seen: dict[tuple[str, str], str] = {}
        for n, (where, item) in enumerate(questions.items, 1):
            try:
                cid, q = _question(questions, where, n, item, by_id)
            except RecursionError:
                raise questions.error(where, "", "nests arrays or objects too deeply") from None
            if (cid, q.id) in seen:
                raise questions.error(where, "id", f"repeats question id {q.id!r} of conversation "
                                      f"{cid!r} (first at {seen[cid, q.id]})")
            seen[cid, q.id] = where
            asked[cid].append(q)
    made = []
    for cid, where, msgs, meta in convs:
        try:
            made.append(EvalConversation(cid, tuple(msgs), tuple(asked[cid]), (), meta))
        except (TypeError, ValueError) as exc:
            raise chats.error(where, "", str(exc)) from None
    return EvalDataset(name, tuple(made))


def load_chat_logs(path: str | os.PathLike[str],
                   questions: str | os.PathLike[str] | None = None) -> EvalDataset:
    """Conversations from an OpenAI-format ``.json``/``.jsonl`` file, with optional questions.

    The dataset is named after the conversations file. Without ``questions`` every
    conversation has no question: there is nothing to score yet (``python -m memorykit tune``
    refuses such a run and says why).
    """
    chats, chats_file = _read(path)
    with chats_file:  # both files are opened (and so checked) before either is read
        if questions is None:
            return _dataset(Path(path).name, chats, None)
        asked, questions_file = _read(questions)
        with questions_file:
            return _dataset(Path(path).name, chats, asked)


def parse_chat_logs(conversations: str, questions: str | None = None, *, jsonl: bool = True,
                    name: str = "chat logs") -> EvalDataset:
    """``load_chat_logs`` on text already in memory (``jsonl``: one record per line)."""
    require_bool("jsonl", jsonl)
    require_str("name", name, non_empty=True)
    require_str("conversations", conversations)
    if questions is not None:
        require_str("questions", questions)
    def records(source: str, text: str) -> _Records:
        return _Records(source, lines=io.StringIO(text)) if jsonl else _Records(source, text=text)

    chats = records(name, conversations)
    q = None if questions is None else records(f"{name} (questions)", questions)
    return _dataset(name, chats, q)
