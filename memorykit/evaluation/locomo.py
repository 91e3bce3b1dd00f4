"""LoCoMo: long real-style conversations with evidence-labelled questions, read from a local copy.

LoCoMo (Maharana et al., ACL 2024; github.com/snap-research/locomo, file
``data/locomo10.json``) holds 10 long two-person conversations (272 sessions,
5,882 turns) and 1,986 questions, each citing the dialogue turns that answer
it. It is licensed CC BY-NC 4.0, so memorykit neither ships nor bundles it:
``download_locomo(dest)`` fetches it when *you* ask, and verifies its sha256;
``load_locomo(path)`` reads a local copy into an ``EvalDataset``.

How the schema becomes messages:

* ``speaker_a``'s turns are ``user`` messages, ``speaker_b``'s ``assistant``
  ones; the content is ``"Name: text"``, plus ``" [image: caption]"`` when the
  turn shared an image (``blip_caption``). The id is the turn's ``dia_id``
  ("D3:7"); metadata carries the session number, speaker and raw dia_id.
* Sessions are taken in numeric order (session_10 after session_9). Only
  sessions that exist are kept: some ``session_<n>_date_time`` keys have no
  session. A session starts at its parsed date ("1:56 pm on 8 May, 2023",
  read as UTC) and its turns are ``turn_gap_seconds`` apart.
* Categories: 1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop,
  5 adversarial (answerless: their ``adversarial_answer`` goes to metadata).
* Evidence strings are normalized where the intent is clear ("D8:6; D9:17"
  is two ids, so is "D9:1 D4:4" with spaces only, "D:11:26" is "D11:26",
  "D30:05" is "D30:5"); ids that match no
  turn are dropped; questions left with no evidence are dropped. Every such
  repair is counted in the dataset's ``LocomoReport``.

Taught in ``notebooks/12_parameter_tuning.ipynb``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from memorykit._validate import (require_bool, require_int, require_non_negative, require_positive,
                                 require_str)
from memorykit.evaluation.dataset import EvalConversation, EvalDataset, EvalQuestion, Session
from memorykit.messages import MessageFactory
from memorykit.tokens import TokenCounter, Tokenizer

__all__ = [
    "DOWNLOAD_MAX_BYTES",
    "CATEGORIES",
    "LOCOMO_BYTES",
    "LOCOMO_SHA256",
    "LOCOMO_URL",
    "LocomoIntegrityError",
    "LocomoReport",
    "download_locomo",
    "load_locomo",
    "normalize_evidence",
    "parse_locomo",
    "parse_session_datetime",
]

LOCOMO_URL = "https://raw.githubusercontent.com/snap-research/locomo/main/data/locomo10.json"
"""Where ``download_locomo`` fetches the published file by default."""
LOCOMO_SHA256 = "79fa87e90f04081343b8c8debecb80a9a6842b76a7aa537dc9fdf651ea698ff4"
"""sha256 of the published ``data/locomo10.json``."""
LOCOMO_BYTES = 2_805_274
"""Its size in bytes."""
DOWNLOAD_MAX_BYTES = 8 * 1024 * 1024
"""``download_locomo``'s default size cap: about three times the published file, so a
wrong URL serving something huge is refused after 8 MiB rather than filling the disk."""

CATEGORIES: dict[int, str] = {
    1: "multi-hop",
    2: "temporal",
    3: "open-domain",
    4: "single-hop",
    5: "adversarial",
}
"""LoCoMo's numeric question categories and the names memorykit reports them under."""

_SESSION = re.compile(r"^session_(\d+)$")
_EVIDENCE = re.compile(r"^D:?(\d+):(\d+)$")
_SPLIT = re.compile(r"[;,\s]+")


class LocomoIntegrityError(ValueError):
    """A LoCoMo file does not have the published sha256."""


@dataclass
class LocomoReport:
    """What loading did to the raw file: sizes, and every repair, counted."""

    conversations: int = 0
    sessions: int = 0
    turns: int = 0
    image_turns: int = 0
    questions: int = 0
    """Questions kept (with at least one evidence turn)."""
    questions_by_category: dict[str, int] = field(default_factory=dict)
    evidence_ids: int = 0
    """Evidence ids kept, after normalization."""
    evidence_normalized: int = 0
    """Kept ids that were written differently in the file (split, "D:11:26", "D30:05", ...)."""
    evidence_dropped: int = 0
    """Evidence strings (or parts of one) that name no turn and were dropped."""
    dropped_examples: list[str] = field(default_factory=list)
    """Up to 20 of the dropped strings, as written in the file."""
    questions_without_evidence: int = 0
    """Questions dropped because none of their evidence names a turn."""
    session_dates_without_session: int = 0
    """``session_<n>_date_time`` keys with no (or an empty) ``session_<n>``: skipped."""
    duplicate_turn_ids: int = 0
    """Turns whose dia_id repeats an earlier one; they get a ``#2``-style suffix."""

    def to_dict(self) -> dict[str, Any]:
        return {k: (dict(v) if isinstance(v, dict) else list(v) if isinstance(v, list) else v)
                for k, v in self.__dict__.items()}


# ---------------------------------------------------------------- parsing


def parse_session_datetime(text: str) -> datetime:
    """``"1:56 pm on 8 May, 2023"`` as a UTC datetime (month names full or abbreviated)."""
    require_str("date_time", text, non_empty=True)
    cleaned = " ".join(text.replace(",", ", ").split()).replace(" ,", ",")
    for fmt in ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y"):
        try:
            return datetime.strptime(cleaned, fmt).replace(tzinfo=timezone.utc)
        except ValueError:
            continue
    raise ValueError(f"date_time must look like '1:56 pm on 8 May, 2023', got {text!r}")


def _canonical(part: str) -> str | None:
    m = _EVIDENCE.match(part.strip())
    if m is None:
        return None
    return f"D{int(m.group(1))}:{int(m.group(2))}"


def normalize_evidence(raw: Any, turn_ids: Mapping[str, Any] | frozenset[str] | set[str]
                       ) -> tuple[list[str], int, list[str]]:
    """Turn ids cited by one evidence string: ``(ids, normalized, dropped_parts)``.

    ``raw`` is split on ";", "," and white space ("D9:1 D4:4 D4:6" is three ids); each part is read as ``D<session>:<turn>``
    (an extra colon after the D and leading zeros are repaired). ``normalized``
    counts kept ids not written exactly so in ``raw``; ``dropped_parts`` are
    the parts that name no turn in ``turn_ids``.
    """
    if not isinstance(raw, str):
        return [], 0, [repr(raw)]
    parts = [p.strip() for p in _SPLIT.split(raw)]
    parts = [p for p in parts if p]
    ids: list[str] = []
    dropped: list[str] = []
    normalized = 0
    for part in parts:
        canonical = _canonical(part)
        if canonical is None or canonical not in turn_ids:
            dropped.append(part)
            continue
        if canonical != raw:
            normalized += 1
        ids.append(canonical)
    return ids, normalized, dropped


def _session_numbers(conversation: Mapping[str, Any]) -> list[int]:
    return sorted(int(m.group(1)) for k in conversation if (m := _SESSION.match(k)))


def parse_locomo(
    data: Any,
    *,
    counter: TokenCounter | None = None,
    turn_gap_seconds: float = 30.0,
    name: str = "locomo",
) -> EvalDataset:
    """Build an ``EvalDataset`` from LoCoMo's parsed JSON (a list of samples)."""
    if not isinstance(data, list):
        raise TypeError(f"data must be LoCoMo's list of samples, got {type(data).__name__}")
    turn_gap_seconds = require_non_negative("turn_gap_seconds", turn_gap_seconds)
    counter = counter if counter is not None else Tokenizer()
    report = LocomoReport()
    conversations = []
    for s_index, sample in enumerate(data):
        if not isinstance(sample, Mapping) or "conversation" not in sample:
            raise ValueError(f"data[{s_index}] must be an object with a 'conversation', got {sample!r:.80}")
        conversations.append(_parse_sample(sample, s_index, counter, turn_gap_seconds, report))
    report.conversations = len(conversations)
    return EvalDataset(name, tuple(conversations), report)


def _parse_sample(sample: Mapping[str, Any], s_index: int, counter: TokenCounter,
                  gap: float, report: LocomoReport) -> EvalConversation:
    sample_id = str(sample.get("sample_id", f"sample-{s_index}"))
    conv = sample["conversation"]
    if not isinstance(conv, Mapping):
        raise ValueError(f"{sample_id}: conversation must be an object, got {conv!r:.80}")
    speaker_a, speaker_b = conv.get("speaker_a"), conv.get("speaker_b")
    roles = {speaker_a: "user", speaker_b: "assistant"}
    factory = MessageFactory(counter)
    messages = []
    sessions = []
    existing = set(_session_numbers(conv))
    for key in conv:
        m = re.match(r"^session_(\d+)_date_time$", key)
        if m and (int(m.group(1)) not in existing or not conv.get(f"session_{m.group(1)}")):
            report.session_dates_without_session += 1
    seen: dict[str, int] = {}
    for number in sorted(existing):
        turns = conv[f"session_{number}"]
        if not isinstance(turns, list):
            raise ValueError(f"{sample_id}: session_{number} must be a list of turns, got {turns!r:.80}")
        if not turns:
            continue
        date_text = conv.get(f"session_{number}_date_time", "")
        start_time = parse_session_datetime(date_text).timestamp() if date_text else 0.0
        start = len(messages)
        for t_index, turn in enumerate(turns):
            if not isinstance(turn, Mapping):
                raise ValueError(f"{sample_id}: session_{number}[{t_index}] must be an object")
            speaker = turn.get("speaker")
            role = roles.get(speaker)
            if role is None:
                raise ValueError(
                    f"{sample_id}: session_{number}[{t_index}] has speaker {speaker!r}, neither "
                    f"speaker_a ({speaker_a!r}) nor speaker_b ({speaker_b!r})"
                )
            raw_id = str(turn.get("dia_id", ""))
            mid = _canonical(raw_id) or raw_id or f"D{number}:{t_index + 1}"
            if mid in seen:
                seen[mid] += 1
                report.duplicate_turn_ids += 1
                mid = f"{mid}#{seen[mid]}"
            else:
                seen[mid] = 1
            content = f"{speaker}: {turn.get('text', '')}"
            caption = turn.get("blip_caption")
            if caption:
                content += f" [image: {caption}]"
                report.image_turns += 1
            messages.append(factory.message(
                role, content, id=mid, created_at=start_time + gap * t_index,
                metadata={"session": number, "speaker": speaker, "dia_id": raw_id,
                          "image": bool(caption)},
            ))
        sessions.append(Session(number, start, len(messages), date_text))
    report.sessions += len(sessions)
    report.turns += len(messages)
    turn_ids = frozenset(m.id for m in messages)
    questions = []
    for q_index, qa in enumerate(sample.get("qa", []) or []):
        if not isinstance(qa, Mapping):
            raise ValueError(f"{sample_id}: qa[{q_index}] must be an object, got {qa!r:.80}")
        raw_cat = qa.get("category")
        category = CATEGORIES.get(raw_cat) if isinstance(raw_cat, int) else None
        if category is None:
            raise ValueError(f"{sample_id}: qa[{q_index}] has category {raw_cat!r}, expected 1-5")
        evidence: list[str] = []
        raw_evidence = qa.get("evidence", []) or []
        if isinstance(raw_evidence, str):
            raw_evidence = [raw_evidence]
        for raw in raw_evidence:
            ids, _normalized, dropped = normalize_evidence(raw, turn_ids)
            report.evidence_dropped += len(dropped)
            room = 20 - len(report.dropped_examples)
            report.dropped_examples.extend(dropped[:max(room, 0)])
            for i in ids:
                if i not in evidence:  # a repeated id is kept once and not counted again
                    evidence.append(i)
                    report.evidence_normalized += i != raw
        if not evidence:
            report.questions_without_evidence += 1
            continue
        answer = qa.get("answer")
        meta: dict[str, Any] = {"category_number": raw_cat, "raw_evidence": list(raw_evidence)}
        if "adversarial_answer" in qa:
            meta["adversarial_answer"] = qa["adversarial_answer"]
        questions.append(EvalQuestion(
            f"{sample_id}:q{q_index}", str(qa.get("question", "")).strip() or "(empty question)",
            None if answer is None else str(answer), tuple(evidence), category, None, meta,
        ))
        report.questions += 1
        report.evidence_ids += len(evidence)
        report.questions_by_category[category] = report.questions_by_category.get(category, 0) + 1
    meta = {"source": "locomo", "speaker_a": speaker_a, "speaker_b": speaker_b}
    return EvalConversation(sample_id, tuple(messages), tuple(questions), tuple(sessions), meta)


# ------------------------------------------------------------ files


def _sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def load_locomo(
    path: str | os.PathLike[str],
    *,
    verify: bool = True,
    counter: TokenCounter | None = None,
    turn_gap_seconds: float = 30.0,
) -> EvalDataset:
    """Read a local ``locomo10.json`` (or a directory holding it) into an ``EvalDataset``.

    With ``verify=True`` the file must be byte-for-byte the published one
    (sha256 ``LOCOMO_SHA256``); pass ``verify=False`` to read a modified copy or
    a file with the same schema (such as the test fixture).
    """
    require_bool("verify", verify)
    p = Path(path)
    if p.is_dir():
        p = p / "locomo10.json"
    if not p.is_file():
        raise FileNotFoundError(
            f"path {str(path)!r} is not a LoCoMo file; fetch it with "
            "memorykit.evaluation.download_locomo(dest) (CC BY-NC 4.0, not shipped with memorykit)"
        )
    raw = p.read_bytes()  # one read: the bytes hashed are the bytes parsed
    if verify:
        digest = hashlib.sha256(raw).hexdigest()
        if digest != LOCOMO_SHA256:
            raise LocomoIntegrityError(
                f"{p} is not the published locomo10.json: sha256 {digest}, expected "
                f"{LOCOMO_SHA256}; pass verify=False to load it anyway"
            )
    data = json.loads(raw.decode("utf-8"))
    return parse_locomo(data, counter=counter, turn_gap_seconds=turn_gap_seconds, name=p.stem)


def download_locomo(
    dest: str | os.PathLike[str],
    *,
    url: str = LOCOMO_URL,
    expected_sha256: str | None = LOCOMO_SHA256,
    timeout: float = 60.0,
    max_bytes: int = DOWNLOAD_MAX_BYTES,
    opener: Callable[..., Any] = urllib.request.urlopen,
) -> Path:
    """Download LoCoMo to ``dest`` (a file, or a directory for ``locomo10.json``) and verify it.

    Only call this if you accept its licence (CC BY-NC 4.0). The bytes go to a
    temporary file beside ``dest`` and are moved into place only when their
    sha256 equals ``expected_sha256`` (None skips the check); otherwise the
    temporary file is removed and ``LocomoIntegrityError`` is raised. A response
    longer than ``max_bytes`` is refused as soon as it passes the cap (or before
    reading, when its Content-Length says so). The file is flushed to disk before
    the atomic rename, so a crash leaves either the old file or the whole new one;
    it gets the mode of any new file (0o666 less the umask, usually 0o644). A
    ``dest`` that already holds the expected file is left alone. ``opener(url,
    timeout=...)`` is injectable (tests pass a local one: no network).
    """
    require_str("url", url, non_empty=True)
    if expected_sha256 is not None:
        require_str("expected_sha256", expected_sha256)
        if not re.fullmatch(r"[0-9a-f]{64}", expected_sha256):
            raise ValueError(f"expected_sha256 must be 64 lowercase hex digits, got {expected_sha256!r}")
    require_positive("timeout", timeout)
    # a cap past 1 GiB is no cap for a 3 MB file: it would let junk fill the disk again
    require_int("max_bytes", max_bytes, minimum=1, maximum=1 << 30)
    target = Path(dest)
    if target.is_dir() or str(dest).endswith(os.sep):
        target = target / "locomo10.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    if expected_sha256 is not None and target.is_file() and _sha256_file(target) == expected_sha256:
        return target
    tmp_name, fd = _new_file_beside(target)
    try:
        with os.fdopen(fd, "wb") as out, opener(url, timeout=timeout) as response:
            digest = _copy_capped(response, out, url=url, max_bytes=max_bytes)
            out.flush()
            os.fsync(out.fileno())
        if expected_sha256 is not None and digest != expected_sha256:
            raise LocomoIntegrityError(
                f"download from {url} has sha256 {digest}, expected {expected_sha256}: "
                f"not the published locomo10.json; nothing was written to {target}"
            )
        os.replace(tmp_name, target)
    except BaseException:
        if os.path.exists(tmp_name):
            os.unlink(tmp_name)
        raise
    _fsync_dir(target.parent)  # the rename itself survives a crash
    return target


def _new_file_beside(target: Path) -> tuple[str, int]:
    """A fresh temporary file next to ``target``: (name, fd), created as any new file is
    (0o666 less the umask; ``tempfile.mkstemp`` would make it 0o600)."""
    for _ in range(100):
        name = str(target.parent / f".{target.name}-{secrets.token_hex(8)}.part")
        try:
            return name, os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:  # pragma: no cover - 64 random bits
            continue
    raise FileExistsError(f"could not create a temporary file beside {target}")  # pragma: no cover


def _copy_capped(response: Any, out: Any, *, url: str, max_bytes: int) -> str:
    """Copy ``response`` to ``out``, refusing as soon as more than ``max_bytes`` arrive; the
    sha256 of what was copied."""
    headers = getattr(response, "headers", None)
    declared = headers.get("Content-Length") if headers is not None else None
    if declared is not None and declared.isdigit() and int(declared) > max_bytes:
        raise LocomoIntegrityError(
            f"download from {url} declares {int(declared)} bytes, more than max_bytes={max_bytes}"
        )
    h = hashlib.sha256()
    received = 0
    for chunk in iter(lambda: response.read(1 << 16), b""):
        received += len(chunk)
        if received > max_bytes:
            raise LocomoIntegrityError(
                f"download from {url} passed max_bytes={max_bytes}: refused (not LoCoMo, or "
                "raise max_bytes)"
            )
        h.update(chunk)
        out.write(chunk)
    return h.hexdigest()


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
