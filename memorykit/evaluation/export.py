"""Deploy what you tuned: a tuning run's pick as a file, and that file as a ready policy.

``python -m memorykit tune ... --export best.json`` (or ``export_policy(result).save(path)``)
writes the chosen policy, its settings, the budget and the token encoding the budget was
counted in, with the held-out recall it earned and the data it was tuned on.
``load_policy("best.json")`` reads it back as a ``TunedPolicy``: a ``ContextPolicy`` whose
``build_context(history, query)`` builds exactly the contexts the tuned configuration built.

The file is data, never code: JSON only, every field checked, the policy rebuilt by name from
the toolkit's own registry (``toolkit.TUNABLE`` / ``toolkit.fixed_policy``), never imported
or unpickled from the file. A bad file is refused with a ``TunedPolicyError`` naming the file,
the field and the value. Example file::

    {"format": "memorykit.tuned-policy", "version": 1,
     "policy": "hybrid-retrieval", "params": {"lexical_weight": 0.5, "neighbours": 0},
     "budget": 1000, "encoding": "cl100k_base", "chat_format": {...},
     "earned": {"recall": 0.96, "recall_ci": [0.94, 0.98], "questions": 48, "split": "folds"},
     "tuned_on": {"name": "support_chats.jsonl", "files": [...], "conversations": 6,
                  "messages": 990, "questions": 48, "seed": 0},
     "memorykit_version": "0.1.0"}
"""

from __future__ import annotations

import json
import math
import os
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from memorykit.context import Context, ContextPolicy
from memorykit.evaluation.toolkit import TUNABLE, fixed_policy
from memorykit.evaluation.tune import TuneResult, tunable_policy_names
from memorykit.messages import Message, MessageFactory
from memorykit.tokens import ENCODINGS, ChatFormat, Tokenizer

__all__ = ["EarnedRecall", "TunedPolicy", "TunedPolicyError", "TuningData", "export_policy",
           "load_policy"]

FORMAT = "memorykit.tuned-policy"
"""The ``format`` tag every tuned-policy file carries."""
VERSION = 1
"""The newest file version this memorykit writes and reads."""
MAX_FILE_BYTES = 1 << 20
"""A tuned-policy file is a few hundred bytes; anything past 1 MiB is not one."""
POLICY_ENCODING = "cl100k_base"
"""The encoding the toolkit's policies count in: the default ``Tokenizer`` that
``MessageFactory`` and the chat-log loader use, which tune's budgets were counted with."""
SPLITS = ("holdout", "folds", "none")


class TunedPolicyError(TypeError, ValueError):
    """A tuned policy (or its file) that cannot be honoured. A TypeError and a ValueError, so
    code catching either catches it; ``where`` is the file (or ``TunedPolicy``), ``field`` the
    path of the field at fault (``params.k1``)."""

    def __init__(self, field: str, problem: str, where: str = "TunedPolicy") -> None:
        self.field, self.problem, self.where = field, problem, where
        super().__init__(f"{where}: {field}: {problem}")


def _fail(name: str, problem: str) -> TunedPolicyError:
    return TunedPolicyError(name, problem)


@contextmanager
def _checking(record: str) -> Iterator[None]:
    """Errors raised inside name ``record`` (the class being made) as where they arose."""
    try:
        yield
    except TunedPolicyError as exc:
        raise TunedPolicyError(exc.field, exc.problem, record) from None


def _int(name: str, value: Any, minimum: int = 0) -> int:
    if type(value) is not int:  # bool is not an int here; neither is 3.0
        raise _fail(name, f"must be an int, got {value!r}")
    if value < minimum:
        raise _fail(name, f"must be an int >= {minimum}, got {value!r}")
    if value > sys.maxsize:  # no budget or setting is that large: a typo or a hostile file
        raise _fail(name, f"must be an int <= {sys.maxsize}, got {value!r}")
    return value


def _number(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _fail(name, f"must be a number, got {value!r}")
    if not math.isfinite(value):
        raise _fail(name, f"must be a finite number, got {value!r}")
    return float(value)


def _share(name: str, value: Any) -> float:
    share = _number(name, value)
    if not 0.0 <= share <= 1.0:
        raise _fail(name, f"must be in [0, 1], got {value!r}")
    return share


def _text(name: str, value: Any) -> str:
    if type(value) is not str:
        raise _fail(name, f"must be a str, got {value!r}")
    return value


@dataclass(frozen=True)
class EarnedRecall:
    """What the tuned configuration scored where it was not picked (``TuneResult.best``)."""

    recall: float | None
    """Held-out evidence recall (None: no question had evidence)."""
    recall_ci: tuple[float, float] | None
    """Its 95% bootstrap interval over conversations (None with fewer than 2)."""
    questions: int
    """Questions it was scored on."""
    split: str
    """"holdout" (one held-out part), "folds" (each conversation scored by the pick made
    without it; the exported configuration is the pick on all) or "none" (not held out)."""

    def __post_init__(self) -> None:
        with _checking("EarnedRecall"):
            self._check()

    def _check(self) -> None:
        if self.recall is not None:
            object.__setattr__(self, "recall", _share("recall", self.recall))
        if self.recall_ci is not None:
            ci = self.recall_ci
            if not isinstance(ci, (list, tuple)) or len(ci) != 2:
                raise _fail("recall_ci", f"must be [low, high] or null, got {ci!r}")
            low, high = _share("recall_ci[0]", ci[0]), _share("recall_ci[1]", ci[1])
            if low > high:
                raise _fail("recall_ci", f"must be [low, high] with low <= high, got {ci!r}")
            object.__setattr__(self, "recall_ci", (low, high))
        _int("questions", self.questions)
        if self.split not in SPLITS:
            raise _fail("split", f"must be one of {', '.join(SPLITS)}, got {self.split!r}")


@dataclass(frozen=True)
class TuningData:
    """The data a policy was tuned on."""

    name: str
    """The dataset's name (the conversations file's)."""
    files: tuple[str, ...]
    """The files read (conversations, questions), by name."""
    conversations: int
    messages: int
    questions: int
    seed: int
    """Seed of the split and the bootstrap."""

    def __post_init__(self) -> None:
        with _checking("TuningData"):
            self._check()

    def _check(self) -> None:
        _text("name", self.name)
        if not isinstance(self.files, (list, tuple)):
            raise _fail("files", f"must be a list of file names, got {self.files!r}")
        object.__setattr__(self, "files", tuple(_text(f"files[{i}]", f)
                                                for i, f in enumerate(self.files)))
        for name in ("conversations", "messages", "questions", "seed"):
            _int(name, getattr(self, name))


@dataclass(frozen=True)
class TunedPolicy:
    """A tuned policy and its settings, at the budget it was tuned for: itself a ContextPolicy.

    Checked when made: the policy must be one ``tune`` knows, with exactly its settings (a
    fixed policy takes none), the budget an int >= 1, the encoding and framing the ones the
    toolkit's policies count in. Build the history's messages with ``message_factory()`` so
    they are counted as the budget was.
    """

    policy: str
    """A name of ``tune.tunable_policy_names()``."""
    params: dict[str, Any]
    """Its settings by name (``toolkit.TUNABLE[policy].names``; empty for a fixed policy)."""
    budget: int
    """Tokens of history context it was tuned for (billed: contents plus framing)."""
    encoding: str = POLICY_ENCODING
    """The token encoding the budget was counted in."""
    chat_format: ChatFormat = field(default_factory=ChatFormat)
    """The chat framing the budget was counted with."""
    earned: EarnedRecall | None = None
    """The recall it earned held out (None: not from a tuning run)."""
    tuned_on: TuningData | None = None
    """The data it was tuned on."""
    memorykit_version: str = ""
    """The memorykit that tuned it."""
    _built: Any = field(init=False, repr=False, compare=False, default=None)

    def __post_init__(self) -> None:
        known = tunable_policy_names()
        if type(self.policy) is not str or self.policy not in known:
            raise _fail("policy", f"unknown policy {self.policy!r} (known: {', '.join(known)})")
        if not isinstance(self.params, Mapping):
            raise _fail("params", f"must be an object of settings, got {self.params!r}")
        object.__setattr__(self, "params",
                           _Settings(_checked_params(self.policy, self.params)))
        _int("budget", self.budget, minimum=1)
        if type(self.encoding) is not str or self.encoding not in ENCODINGS:
            raise _fail("encoding", f"unknown encoding {self.encoding!r} (known: "
                                    f"{', '.join(sorted(ENCODINGS))})")
        if self.encoding != POLICY_ENCODING:
            raise _fail("encoding", f"{self.encoding!r} cannot be honoured: the toolkit's "
                                    f"policies count in {POLICY_ENCODING}")
        if not isinstance(self.chat_format, ChatFormat):
            raise _fail("chat_format", f"must be a ChatFormat, got {self.chat_format!r}")
        if self.chat_format != ChatFormat():
            raise _fail("chat_format", f"{asdict(self.chat_format)} cannot be honoured: the "
                                       f"toolkit's policies count {asdict(ChatFormat())}")
        for name, kind in (("earned", EarnedRecall), ("tuned_on", TuningData)):
            value = getattr(self, name)
            if value is not None and not isinstance(value, kind):
                raise _fail(name, f"must be a {kind.__name__} or None, got {value!r}")
        _text("memorykit_version", self.memorykit_version)
        try:  # the factory checks the values (a weight in [0, 1]); its policy serves requests
            object.__setattr__(self, "_built", self.build())
        except (TypeError, ValueError) as exc:
            raise _fail("params", f"{dict(self.params)} refused by {self.policy}: {exc}") from None

    @property
    def name(self) -> str:
        """The policy's name, as its contexts carry it."""
        return self.policy

    def build(self) -> ContextPolicy:
        """The policy, from the toolkit's registry: a new one for a tuned policy; a fixed
        policy is the registry's (it keeps nothing between requests)."""
        if self.policy in TUNABLE:
            return TUNABLE[self.policy].make(**self.params)
        return fixed_policy(self.policy)

    def build_context(self, history: Sequence[Message], query: str,
                      budget: int | None = None) -> Context:
        """What the tuned policy sends for ``query`` after ``history``, within ``budget``
        (default: the tuned budget). One built policy serves every call, so its caches (BM25
        indexes, embeddings) are reused."""
        return self._built.build_context(history, query,
                                         self.budget if budget is None else budget)

    def message_factory(self, **options: Any) -> MessageFactory:
        """A ``MessageFactory`` counting as the budget was counted (its encoding and framing);
        ``options`` are the factory's own (``clock``, ``id_prefix``)."""
        return MessageFactory(Tokenizer(self.encoding), chat_format=self.chat_format, **options)

    def to_json(self) -> dict[str, Any]:
        """The file's content as plain JSON types."""
        def plain(record: Any) -> dict[str, Any] | None:
            if record is None:
                return None
            return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(record).items()}

        return {"format": FORMAT, "version": VERSION, "policy": self.policy,
                "params": dict(self.params), "budget": self.budget, "encoding": self.encoding,
                "chat_format": asdict(self.chat_format), "earned": plain(self.earned),
                "tuned_on": plain(self.tuned_on), "memorykit_version": self.memorykit_version}

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the policy as JSON to ``path`` (its folder must exist); returns the path."""
        out = Path(path)
        out.write_text(json.dumps(self.to_json(), indent=1) + "\n", encoding="utf-8")
        return out

    @classmethod
    def from_json(cls, data: Any, where: str = "TunedPolicy") -> TunedPolicy:
        """A policy from ``to_json``'s dict; ``where`` names the source in errors."""
        try:
            return _from_json(data)
        except TunedPolicyError as exc:
            raise TunedPolicyError(exc.field, exc.problem, where) from None


class _Settings(dict):  # type: ignore[type-arg]
    """A ``TunedPolicy``'s settings: a dict that refuses changes. The policy is built from them
    once, when checked; a setting changed afterwards would be saved to the file but never used,
    so the file would rebuild another policy than the one that answered."""

    def _refuse(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("a TunedPolicy's params cannot be changed: make a new TunedPolicy "
                        "(dataclasses.replace(tuned, params={...}))")

    __setitem__ = __delitem__ = __ior__ = update = setdefault = pop = popitem = clear = _refuse

    def __reduce__(self) -> tuple[Any, ...]:  # copy and pickle without calling __setitem__
        return (_Settings, (dict(self),))


def _checked_params(policy: str, params: Mapping[str, Any]) -> dict[str, Any]:
    """``params`` with each setting of ``policy`` present, known and of its default's type."""
    if policy not in TUNABLE:
        if params:
            raise _fail("params", f"the fixed policy {policy!r} takes no settings, got "
                                  f"{dict(params)!r}")
        return {}
    tunable = TUNABLE[policy]
    names = ", ".join(tunable.names)
    for given in params:
        if given not in tunable.names:
            raise _fail("params", f"unknown setting {given!r} for {policy} (its settings: {names})")
    out: dict[str, Any] = {}
    for name, default in zip(tunable.names, tunable.defaults):
        if name not in params:
            raise _fail("params", f"missing setting {name!r} for {policy} (its settings: {names})")
        value = params[name]
        if isinstance(default, int):
            out[name] = _int(f"params.{name}", value)
        else:  # a float setting: 1 in a hand-written file means 1.0
            out[name] = _number(f"params.{name}", value)
    return out


_FIELDS = {f.name for f in fields(TunedPolicy) if f.init}
_REQUIRED = ("format", "version", "policy", "params", "budget", "encoding")


def _from_json(data: Any) -> TunedPolicy:
    if not isinstance(data, dict):
        raise _fail("(top level)", f"must be a JSON object, got {type(data).__name__}")
    fmt = data.get("format")
    if fmt != FORMAT:
        raise _fail("format", f"not a tuned-policy file: expected {FORMAT!r}, got {fmt!r}")
    version = data.get("version")
    if type(version) is not int or version < 1:
        raise _fail("version", f"must be an int >= 1, got {version!r}")
    if version > VERSION:
        raise _fail("version", f"{version} was written by a newer memorykit (this one reads up "
                               f"to version {VERSION}): upgrade memorykit to load it")
    for name in _REQUIRED:
        if name not in data:
            raise _fail(name, "missing")
    unknown = sorted(set(data) - _FIELDS - {"format", "version"})
    if unknown:
        raise _fail(unknown[0], f"unknown field (version {VERSION} fields: "
                                f"{', '.join(sorted(_FIELDS | {'format', 'version'}))})")
    kwargs = {k: v for k, v in data.items() if k not in ("format", "version")}
    if "chat_format" in kwargs:
        kwargs["chat_format"] = _record("chat_format", ChatFormat, kwargs["chat_format"])
    for name, kind in (("earned", EarnedRecall), ("tuned_on", TuningData)):
        if kwargs.get(name) is not None:
            kwargs[name] = _record(name, kind, kwargs[name])
    return TunedPolicy(**kwargs)


def _record(section: str, kind: type, value: Any) -> Any:
    """``value`` (a JSON object) as ``kind``, every field present and none unknown; errors
    name the field as ``section.field``."""
    if not isinstance(value, dict):
        raise _fail(section, f"must be an object, got {value!r}")
    expected = [f.name for f in fields(kind)]
    for name in value:
        if name not in expected:
            raise _fail(f"{section}.{name}", f"unknown field ({section} fields: "
                                             f"{', '.join(expected)})")
    for name in expected:
        if name not in value:
            raise _fail(f"{section}.{name}", "missing")
    if kind is ChatFormat:
        for name in expected:
            _int(f"{section}.{name}", value[name])
    try:
        return kind(**value)
    except TunedPolicyError as exc:
        raise _fail(f"{section}.{exc.field}", exc.problem) from None


def load_policy(path: str | os.PathLike[str]) -> TunedPolicy:
    """The tuned policy saved at ``path`` (``tune --export`` or ``TunedPolicy.save``).

    Refuses, naming the file, the field and the value, a file that is not JSON, another
    format, a newer version, an unknown policy (listing the known ones), an unknown or missing
    setting, a value of the wrong type, a budget that is not an int >= 1, an encoding the
    policies cannot count in, and a file larger than ``MAX_FILE_BYTES``.
    """
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a str or a path, got {path!r}")
    where = os.fspath(path)
    if not os.path.exists(where):
        raise FileNotFoundError(f"{where}: no such file")
    if not os.path.isfile(where):  # a folder, or a FIFO that would block the read
        raise TunedPolicyError("(file)", "is not a regular file", where)
    with open(where, "rb") as fh:  # read at most one byte past the limit, whatever stat says
        raw = fh.read(MAX_FILE_BYTES + 1)
    if len(raw) > MAX_FILE_BYTES:
        raise TunedPolicyError("(file)", f"larger than {MAX_FILE_BYTES:,} bytes: not a "
                                         f"tuned-policy file", where)
    try:
        data = json.loads(raw.decode("utf-8"), parse_constant=_no_constant,
                          object_pairs_hook=_no_duplicates)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise TunedPolicyError("(file)", f"not JSON ({exc})", where) from None
    return TunedPolicy.from_json(data, where)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object as a dict, refusing a key given twice: ``json`` would keep the last one
    silently, so a file saying ``"budget": 1000`` and later ``"budget": 5`` is ambiguous."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"key {key!r} appears twice in one object ({out[key]!r} and "
                             f"{value!r})")
        out[key] = value
    return out


def export_policy(result: TuneResult, budget: int | None = None, *, policy: str | None = None,
                  files: Sequence[str] = ()) -> TunedPolicy:
    """The pick of a tuning run at ``budget`` (default: its largest) as a ``TunedPolicy``.

    The pick is the top row of ``result.best()`` at that budget (the best held-out recall),
    or, given ``policy``, that policy's row; ``files`` names the files it was tuned on.
    """
    if not isinstance(result, TuneResult):
        raise TypeError(f"result must be a TuneResult, got {result!r}")
    budget = max(result.budgets) if budget is None else budget
    if type(budget) is not int or budget not in result.budgets:
        raise ValueError(f"budget must be one of the run's budgets {list(result.budgets)}, "
                         f"got {budget!r}")
    rows = result.best().where(budget=budget)
    if policy is not None:
        if policy not in result.policies:
            raise ValueError(f"policy must be one of the run's policies "
                             f"({', '.join(result.policies)}), got {policy!r}")
        rows = rows.where(policy=policy)
    if not len(rows):
        raise ValueError(f"the run has no scored configuration of {policy or 'any policy'} at "
                         f"budget {budget}")
    top = rows[0]
    params = next(c["params"] for c in result.configurations
                  if (c["policy"], c["configuration"], c["budget"]) ==
                  (top["policy"], top["configuration"], budget))
    data = result.dataset
    # the package is imported before any of its modules; importing it here would be a cycle
    version = sys.modules["memorykit"].__version__
    return TunedPolicy(
        top["policy"], dict(params), budget,
        earned=EarnedRecall(top["recall"], top["recall_ci"], top["questions"], result.split_kind),
        tuned_on=TuningData(data.name, tuple(files), len(data), data.n_messages,
                            data.n_questions, result.seed),
        memorykit_version=version)
