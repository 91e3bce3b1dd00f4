"""Save a memory as JSON and restore it, with every decision it will make intact.

Every memory kind (``tests.memory_kinds``) can be saved and restored two ways:

* ``pickle.dumps(memory)`` / ``pickle.loads(...)``: the whole object, for a process pool or a
  cache on the same machine and version;
* ``save_state(memory) -> dict`` / ``restore_state(state, **collaborators)``: a JSON-able dict
  (``dumps``/``loads`` give the text) with ``"kind"`` (the memory's class), ``"version"``
  and ``"memory"``, to keep across restarts and read by eye.

Both read the same hooks: an object is saved as what ``pickle`` would save (its
``__reduce_ex__``: the class, its constructor arguments or its fields), so the JSON state and
the pickle cannot disagree about what a memory's state is. A record with checks (``Message``,
``Entity``) is rebuilt through its constructor, so a hand-edited state is checked like new
input. The restored memory is equal to the saved one, down to the heap order of its indexes
and the position of its random generators, so it makes the same future decisions.

For example::

    from memorykit.state import dumps, loads
    text = dumps(buffer)                     # str: write it to a file, a database...
    buffer = loads(text)                     # the same buffer, the same next evictions
    text = dumps(SummaryBuffer(summarizer=MySummarizer()))
    buffer = loads(text, summarizer=MySummarizer())   # what is not data is passed again

What goes in the JSON and what must be passed again:

* Settings, data and indexes go in the JSON.
* The library's own collaborators (``Tokenizer``, by its encoding's name; ``StepClock``;
  ``TurnClock``; ``WallClock``; the extractive summarizer; the lexical embedder; the scripted critic; a
  ``MemoCounter``, restored with an empty memo) are described by class and parameters and
  rebuilt.
* Anything else (a summarizer, critic, embedder, clock or LLM of your own, a lambda) is not
  data: the state names it (``{"$collaborator": "summarizer", "type": "my.Summarizer"}``,
  named by the attribute that held it) and ``restore_state(state, summarizer=mine)`` must be
  given it again; restoring without it is a ``ValueError`` naming what is missing. The same
  collaborator is one name however many times the memory holds it.
* Traces: the state holds the trace's retained events and its counts, so a restored memory
  explains the same past (a bounded ``Trace(max_events=...)`` keeps its bound).

``pickle`` cannot save a lambda or a local function the user injected: it raises
``PicklingError`` naming the function; the JSON state names it as a collaborator instead.

Trust: a pickle runs code by design (it can call any function it names), so unpickle only
files you wrote yourself. The JSON state is the format for files from others: restoring builds
only the classes on ``ALLOWED`` (memorykit's memories and their parts, each named where it is
defined) and three standard helpers (a random generator with no arguments, ``re`` compiling a
str pattern, ``copyreg.__newobj__`` for an ``ALLOWED`` class); it never walks an attribute or
imports a module the file chooses. Each rebuilt object's constructor is run again on the
settings the state gave it (a setting it would refuse is refused, naming the field), a buffer's
token totals must be those of its messages, no dunder attribute is set, and nesting
(``MAX_DEPTH``), text size (``max_chars``) and arrays (numeric dtypes, shape matching the data)
are checked before anything is allocated. ``loads(text, kind=FIFOBuffer)`` also checks the kind.
Not taught by a notebook: it is plumbing.
"""

from __future__ import annotations

import copyreg
import dataclasses
import functools
import importlib
import inspect
import json
import math
import random
import re
import types
from collections import deque
from typing import Any

import numpy as np

STATE_VERSION = 1
"""The layout of ``save_state``'s dict; ``restore_state`` refuses any other."""

_OWN_PACKAGE = "memorykit"

MAX_DEPTH = 100
"""Nesting a state may have (the catalogue's deepest is far less): deeper is refused, not a
``RecursionError``."""

MAX_TEXT_CHARS = 256 * 2**20
"""Characters of JSON text ``loads`` reads by default (``max_chars=`` raises or lowers it)."""

_MEMORIES = (
    "memorykit.buffers.base:MessageBuffer", "memorykit.buffers.policies:BufferWindow",
    "memorykit.buffers.policies:FIFOBuffer", "memorykit.buffers.policies:HybridBuffer",
    "memorykit.buffers.policies:ImportanceBuffer", "memorykit.buffers.policies:RecencyWeightedBuffer",
    "memorykit.buffers.policies:TokenBuffer", "memorykit.buffers.summary_buffer:SummaryBuffer",
    "memorykit.entities.hybrid:EntitySummaryMemory", "memorykit.entities.memory:EntityMemory",
    "memorykit.entities.memory:RelevanceMemory", "memorykit.entities.memory:SlidingWindowMemory",
    "memorykit.entities.store:ReadThroughMemory", "memorykit.longterm.episodic:EpisodicMemory",
    "memorykit.longterm.reflection:ReflectionMemory", "memorykit.longterm.semantic:SemanticMemory",
    "memorykit.longterm.service:MemoryService", "memorykit.workspace.memory:WorkingMemory",
    "memorykit.buffers.context_manager:ContextManager",
)
"""The memory kinds a state's ``kind`` may name (and ``Message``, a record saved alone)."""

ALLOWED: tuple[str, ...] = _MEMORIES + (
    "memorykit.messages:Message", "memorykit.messages:MessageFactory", "memorykit.messages:ToolCall",
    "memorykit.buffers.summary_buffer:TokenSample", "memorykit.clock:StepClock",
    "memorykit.clock:TurnClock", "memorykit.clock:WallClock", "memorykit.tokens:ChatFormat",
    "memorykit.tokens:Tokenizer", "memorykit.tokens:MemoCounter", "memorykit.trace:Eviction",
    "memorykit.trace:Summarization", "memorykit.trace:Trace", "memorykit.provenance:IdRuns",
    "memorykit.summary:ExtractiveSummarizer", "memorykit.summary:_Sentence",
    "memorykit.embeddings:LexicalHashingEmbedder", "memorykit.entities.memory:_Slot",
    "memorykit.entities.records:Entity", "memorykit.entities.records:EntityEviction",
    "memorykit.entities.scoring:RelevanceWeights", "memorykit.entities.store:InMemoryStore",
    "memorykit.entities.store:Lookup", "memorykit.llm.critic:Rule", "memorykit.llm.critic:ScriptedCritic",
    "memorykit.longterm._fitting:ItemPricer", "memorykit.longterm.episodic:Episode",
    "memorykit.longterm.episodic:EpisodicSettings", "memorykit.longterm.events:RuleLearned",
    "memorykit.longterm.events:Stored", "memorykit.longterm.reflection:ReflectionSettings",
    "memorykit.longterm.semantic:SemanticSettings", "memorykit.longterm.service:LongTermSettings",
    "memorykit.longterm.service:MemorySettings", "memorykit.longterm.service:Session",
    "memorykit.longterm.vectorstore:NumpyVectorStore", "memorykit.longterm.vectorstore:QdrantVectorStore",
    "memorykit.workspace.events:NoteEscalation", "memorykit.workspace.events:NoteExpiry",
    "memorykit.workspace.events:NoteSurfacing", "memorykit.workspace.events:TaskAdmission",
    "memorykit.workspace.events:TaskPromotion", "memorykit.workspace.events:TaskTransition",
    "memorykit.workspace.extract:VocabularyExtractor", "memorykit.workspace.graph:KnowledgeGraph",
    "memorykit.workspace.notes:Note", "memorykit.workspace.notes:NoteQueue",
    "memorykit.workspace.notes:NoteSettings", "memorykit.workspace.notes:_Ticked",
    "memorykit.workspace.objects:SalienceWeights", "memorykit.workspace.objects:WorkspaceObject",
    "memorykit.workspace.tasks:SlotSettings", "memorykit.workspace.tasks:Task",
    "memorykit.workspace.tasks:TaskHistoryEntry", "memorykit.workspace.tasks:TaskSlots",
    "memorykit.workspace.events:TaskDemotion", "memorykit.workspace.tasks:AdmissionDecision",
    "memorykit.longterm.events:Recall", "memorykit.longterm.events:StoreFailed",
    "memorykit.longterm.events:Trimmed", "memorykit.longterm.episodic:EpisodeScore",
    "memorykit.trace:Victim", "memorykit.trace:OverBudget",
    "memorykit.buffers.context_manager:RecencyFactory",
    "memorykit.facts.statement:Statement", "memorykit.facts.timeline:FactTimeline",
    "memorykit.facts.timeline:Version", "memorykit.facts.timeline:LatestWins",
    "memorykit.facts.timeline:KeepBothDated", "memorykit.facts.timeline:KeepStrongest",
    "memorykit.longterm.events:Superseded", "memorykit.entities.records:EntityUpdate",
)
"""Every memorykit class a state may name: the memories and the parts they hold. Nothing else
is built (no function, no module, no attribute of either); a memorykit object of another class
is saved as a collaborator to pass again. Reviewed by hand: each constructor only checks and
stores its arguments."""

_STDLIB_CALLABLES: dict[str, Any] = {
    "random:Random": random.Random,  # called with no arguments, then its state is set
    "re:_compile": re._compile,  # type: ignore[attr-defined]  # (pattern: str, flags: int) only
    "copyreg:__newobj__": copyreg.__newobj__,  # type: ignore[attr-defined]  # an ALLOWED class only
}
"""The only things outside memorykit a state may name (what pickle needs for these types)."""

_ALLOWED_SET = frozenset(ALLOWED)
_resolved: dict[str, Any] = {}


def _allowed(name: str) -> Any:
    """The class ``name`` on ``ALLOWED`` names: imported from memorykit, checked to be defined
    exactly there (a name is never walked from a module the file chooses)."""
    obj = _resolved.get(name)
    if obj is None:
        module_name, qualname = name.split(":")
        obj = getattr(importlib.import_module(module_name), qualname)
        assert isinstance(obj, type) and _name_of(obj) == name, name
        _resolved[name] = obj
    return obj


_TAGS = ("$id", "$ref", "$tuple", "$set", "$frozenset", "$deque", "$dict", "$float",
         "$ndarray", "$np", "$global", "$reduce", "$collaborator", "$bytes")
_LIST_TAGS = frozenset({"$tuple", "$set", "$frozenset", "$deque", "$dict"})


# --------------------------------------------------------------------------- saving
def save_state(memory: Any) -> dict[str, Any]:
    """The memory as a JSON-able dict: ``{"kind", "version", "memory", "collaborators"}``.

    ``collaborators`` lists what ``restore_state`` must be given again (name to type).
    """
    encoder = _Encoder()
    body = encoder.encode(memory, "memory")
    return {"kind": _name_of(type(memory)), "version": STATE_VERSION, "memory": body,
            "collaborators": dict(sorted(encoder.collaborators.items()))}


def dumps(memory: Any, **json_kw: Any) -> str:
    """A memory as JSON text: ``save_state`` written as strict JSON (no NaN or Infinity)."""
    return json.dumps(save_state(memory), allow_nan=False, **json_kw)


def loads(text: str | bytes, *, kind: type | None = None, max_chars: int = MAX_TEXT_CHARS,
          **collaborators: Any) -> Any:
    """The memory the JSON text ``dumps`` wrote, restored by ``restore_state``.

    The JSON state is the format for files from others: it is data, and ``loads`` treats it so.
    It builds only the classes on ``ALLOWED`` (memorykit's memories and their parts; no
    function, module or attribute the file names), rebuilds every object through its
    constructor's checks (a state its constructor would refuse is refused, naming the field),
    recomputes a buffer's token totals, and refuses text over ``max_chars`` characters, nesting
    over ``MAX_DEPTH``, arrays that are not numbers or whose shape disagrees with their data,
    before allocating them. ``kind``, when given, is the memory class expected: a state of
    another kind is refused. A pickle, by contrast, runs code by design: unpickle only files
    you wrote yourself.
    """
    if not isinstance(text, (str, bytes, bytearray)):
        raise TypeError(f"text must be the str dumps() wrote, got {type(text).__name__}")
    if len(text) > max_chars:
        raise ValueError(f"state text has {len(text):,} characters, over max_chars={max_chars:,} "
                         "(pass a larger max_chars= for a state you trust to be that big)")
    try:
        state = json.loads(text)
    except RecursionError:
        raise ValueError(f"state nests deeper than MAX_DEPTH={MAX_DEPTH}") from None
    return restore_state(state, kind=kind, **collaborators)


def _name_of(obj: Any) -> str:
    return f"{obj.__module__}:{obj.__qualname__}"


_SCALARS = (type(None), bool, int, float, str)


def _is_value(obj: Any) -> bool:
    """A frozen dataclass of memorykit's own holding only scalars (and tuples of them)."""
    params = getattr(type(obj), "__dataclass_params__", None)
    if params is None or not params.frozen or _name_of(type(obj)) not in _ALLOWED_SET:
        return False
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        if not isinstance(value, _SCALARS) and not (
                type(value) is tuple and all(isinstance(v, _SCALARS) for v in value)):
            return False
    return True


class _Encoder:
    """One pass over the object graph; an object met twice is written once and referenced."""

    def __init__(self) -> None:
        self.memo: dict[int, tuple[Any, Any]] = {}
        """id(obj) -> (obj, its node): nodes of shared objects get an "$id" when met again."""
        self.ids: dict[int, int] = {}
        self.collaborators: dict[str, str] = {}
        self._collaborator_names: dict[int, str] = {}

    def encode(self, obj: Any, name: str) -> Any:
        kind = type(obj)
        if obj is None or kind is bool or kind is int or kind is str:
            return obj
        if kind is float:
            return obj if math.isfinite(obj) else {"$float": repr(obj)}
        if _is_value(obj):
            # a frozen dataclass (settings, a chat format) is a value like a tuple: whether two
            # parts of a memory hold one such object or two equal ones changes no decision
            return self._reduce(obj, name, share=False)
        seen = self.memo.get(id(obj))
        if seen is not None:
            return {"$ref": self._share(obj, seen[1])}
        if kind is tuple:
            # tuples are values: equal tuples written twice restore equal, which is all they promise
            return {"$tuple": [self.encode(x, name) for x in obj]}
        node: Any
        if kind is list:
            node = []
            self.memo[id(obj)] = (obj, node)
            node.extend(self.encode(x, name) for x in obj)
        elif kind is dict:
            node = self._dict(obj, name)
        elif kind in (set, frozenset):
            node = {f"${kind.__name__}": []}
            self.memo[id(obj)] = (obj, node)
            node[f"${kind.__name__}"] = [self.encode(x, name) for x in sorted(obj, key=repr)]
        elif kind is deque:
            node = {"$deque": [], "maxlen": obj.maxlen}
            self.memo[id(obj)] = (obj, node)
            node["$deque"] = [self.encode(x, name) for x in obj]
        elif kind is bytes:
            return {"$bytes": obj.hex()}
        elif kind is np.ndarray:
            node = {"$ndarray": obj.dtype.str, "shape": list(obj.shape), "data": obj.ravel().tolist()}
            self.memo[id(obj)] = (obj, node)
            if obj.dtype.kind == "f" and not np.isfinite(obj).all():
                node["data"] = [self.encode(float(x), name) for x in obj.ravel()]
        elif isinstance(obj, np.generic):
            return {"$np": obj.dtype.str, "value": self.encode(obj.item(), name)}
        elif isinstance(obj, (type, types.FunctionType, types.BuiltinFunctionType)):
            if _name_of(obj) in _ALLOWED_SET or _name_of(obj) in _STDLIB_CALLABLES:
                return {"$global": _name_of(obj)}
            return self._collaborator(obj, name)
        elif _name_of(kind) in _ALLOWED_SET or kind in (random.Random, re.Pattern):
            node = self._reduce(obj, name)
        else:
            return self._collaborator(obj, name)
        return node

    def _share(self, obj: Any, node: Any) -> int:
        ref = self.ids.get(id(obj))
        if ref is None:
            ref = self.ids[id(obj)] = len(self.ids) + 1
            if isinstance(node, list):
                node.insert(0, {"$id": ref})  # a list cannot carry a key: its first item does
            else:
                node["$id"] = ref
        return ref

    def _dict(self, obj: dict[Any, Any], name: str) -> dict[str, Any]:
        plain = all(type(k) is str and not k.startswith("$") for k in obj)
        node: dict[str, Any] = {} if plain else {"$dict": []}
        self.memo[id(obj)] = (obj, node)
        if plain:
            for k, v in obj.items():
                node[k] = self.encode(v, k)
        else:
            node["$dict"] = [[self.encode(k, name), self.encode(v, name)] for k, v in obj.items()]
        return node

    def _reduce(self, obj: Any, name: str, *, share: bool = True) -> dict[str, Any]:
        try:
            # what pickle does: a type registered with copyreg (re.Pattern) first
            special = copyreg.dispatch_table.get(type(obj))
            reduced = special(obj) if special is not None else obj.__reduce_ex__(4)
        except TypeError as exc:
            raise TypeError(f"{name}: {type(obj).__qualname__} cannot be saved: {exc}") from None
        if isinstance(reduced, str):  # a module-level singleton, saved by name
            return {"$global": f"{type(obj).__module__}:{reduced}"}
        func, args, *rest = reduced
        node: dict[str, Any] = {"$reduce": None}
        if share:
            self.memo[id(obj)] = (obj, node)
        node["$reduce"] = self.encode(func, name)
        node["args"] = self.encode(tuple(args), name)
        state = rest[0] if rest else None
        if state is not None:
            if not share and type(state) is dict:
                state = dict(state)  # a value's __dict__ itself: written whole each time too
            node["state"] = self.encode(state, name)
        for extra in rest[1:3]:
            if extra is not None:
                raise TypeError(f"{name}: {type(obj).__qualname__} pickles its items separately; "
                                "a memory's state cannot hold it")
        return node

    def _collaborator(self, obj: Any, name: str) -> dict[str, Any]:
        known = self._collaborator_names.get(id(obj))
        if known is None:
            known = name
            n = 1
            while known in self.collaborators:
                n += 1
                known = f"{name}_{n}"
            self._collaborator_names[id(obj)] = known
            is_function = isinstance(obj, (type, types.FunctionType, types.BuiltinFunctionType))
            self.collaborators[known] = _name_of(obj if is_function else type(obj))
            self.memo[id(obj)] = (obj, {})  # keep it alive: its id must not be reused
        return {"$collaborator": known, "type": self.collaborators[known]}


# ------------------------------------------------------------------------- restoring
def restore_state(state: Any, *, kind: type | None = None, **collaborators: Any) -> Any:
    """The memory ``save_state`` described, with ``collaborators`` (by the names the state lists
    under ``"collaborators"``) put back where the saved memory held them. ``kind``, when given,
    is the class expected; the checks are those of ``loads``."""
    if not isinstance(state, dict):
        raise TypeError(f"state must be the dict save_state() returned, got {type(state).__name__}")
    for key in ("kind", "version", "memory"):
        if key not in state:
            raise ValueError(f"state has no {key!r} field: not a memorykit state "
                             f"(fields: {', '.join(map(repr, state)) or 'none'})")
    if type(state["version"]) is not int or state["version"] != STATE_VERSION:
        raise ValueError(f"state version must be {STATE_VERSION}, got {state['version']!r}")
    if kind is not None and state["kind"] != _name_of(kind):
        raise ValueError(f"state is a {state['kind']!r}, expected a {_name_of(kind)!r}")
    cls = _resolve(state["kind"], "kind")
    if _name_of(cls) not in _MEMORIES + ("memorykit.messages:Message",):
        raise ValueError(f"kind must name a memory kind, got {state['kind']!r}")
    needed = state.get("collaborators", {})
    if not isinstance(needed, dict):
        raise TypeError(f"state's collaborators must be a dict, got {needed!r}")
    missing = sorted(set(needed) - set(collaborators))
    if missing:
        raise ValueError(
            "this state needs collaborators that are not data, pass them again: "
            + ", ".join(f"{m}= (a {needed[m]})" for m in missing)
        )
    unknown = sorted(set(collaborators) - set(needed))
    if unknown:
        raise ValueError(f"state needs no collaborator named {', '.join(map(repr, unknown))}; "
                         f"it needs: {', '.join(map(repr, needed)) or 'none'}")
    try:
        memory = _Decoder(collaborators).decode(state["memory"])
    except (AttributeError, KeyError, IndexError) as exc:
        # a part of one ALLOWED class where another belongs, met by a constructor or a check
        raise ValueError(f"state is invalid: {type(exc).__name__}: {exc}") from None
    if type(memory) is not cls:
        raise ValueError(f"state's memory is a {type(memory).__qualname__}, its kind says "
                         f"{state['kind']!r}")
    return memory


def _resolve(name: Any, what: str) -> Any:
    """The class or function a state names: one of ``ALLOWED`` or ``_STDLIB_CALLABLES``."""
    if not isinstance(name, str) or ":" not in name:
        raise ValueError(f"{what} must be 'module:name', got {name!r}")
    if name in _STDLIB_CALLABLES:
        return _STDLIB_CALLABLES[name]
    if name in _ALLOWED_SET:
        return _allowed(name)
    module_name = name.split(":", 1)[0]
    if not (module_name == _OWN_PACKAGE or module_name.startswith(_OWN_PACKAGE + ".")):
        raise ValueError(f"{what} {name!r} is not part of memorykit: a state only names "
                         "memorykit's own classes and functions")
    raise ValueError(f"{what} {name!r} names nothing in this version of memorykit that a state "
                     "may build (memorykit.state.ALLOWED lists what it may)")


_NUMERIC_KINDS = "fiub"


def _dtype(value: Any) -> np.dtype[Any]:
    """A numeric dtype named by its ``str`` (``'<f8'``): no text, object or structured dtype."""
    if not isinstance(value, str) or len(value) > 8:
        raise ValueError(f"an array's dtype must be a numeric dtype string, got {value!r}")
    try:
        dtype = np.dtype(value)
    except TypeError:
        raise ValueError(f"an array's dtype must be a numeric dtype string, got {value!r}") from None
    if dtype.kind not in _NUMERIC_KINDS or dtype.itemsize > 16:
        raise ValueError(f"an array's dtype must be numeric (kinds {_NUMERIC_KINDS}), got {value!r}")
    return dtype


class _Decoder:
    def __init__(self, collaborators: dict[str, Any]) -> None:
        self.collaborators = collaborators
        self.refs: dict[int, Any] = {}
        self.depth = 0

    def decode(self, node: Any) -> Any:
        kind = type(node)
        if node is None or kind in (bool, int, float, str):
            return node
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise ValueError(f"state nests deeper than MAX_DEPTH={MAX_DEPTH}")
        try:
            return self._container(node)
        finally:
            self.depth -= 1

    def _container(self, node: Any) -> Any:
        kind = type(node)
        if kind is list:
            out: list[Any] = []
            items = node
            if items and type(items[0]) is dict and set(items[0]) == {"$id"}:
                self._register(items[0], out)
                items = items[1:]
            out.extend(self.decode(x) for x in items)
            return out
        if kind is not dict:
            raise TypeError(f"a state holds JSON values only, got {node!r}")
        tag = next((k for k in node if k.startswith("$") and k != "$id"), None)
        if tag is None:
            out_dict: dict[str, Any] = {}
            self._register(node, out_dict)
            for k, v in node.items():
                if k != "$id":
                    out_dict[k] = self.decode(v)
            return out_dict
        return self._tagged(tag, node)

    def _register(self, node: dict[str, Any], obj: Any) -> None:
        if "$id" in node:
            ref = node["$id"]
            if type(ref) is not int or ref in self.refs:
                raise ValueError(f"$id must be a new integer, got {ref!r}")
            self.refs[ref] = obj

    def _tagged(self, tag: str, node: dict[str, Any]) -> Any:
        value = node[tag]
        if tag in _LIST_TAGS and type(value) is not list:
            raise TypeError(f"{tag} must hold a JSON list, got {value!r}")
        if tag == "$ref":
            if type(value) is not int or value not in self.refs:
                raise ValueError(f"state refers to object {value!r} before defining it")
            return self.refs[value]
        if tag == "$tuple":
            return tuple(self.decode(x) for x in value)
        if tag == "$float":
            if value not in ("inf", "-inf", "nan"):
                raise ValueError(f"$float must be 'inf', '-inf' or 'nan', got {value!r}")
            return float(value)
        if tag in ("$set", "$frozenset"):
            items = [self.decode(x) for x in value]
            try:
                obj: Any = set(items) if tag == "$set" else frozenset(items)
            except TypeError:
                raise ValueError(f"{tag} items must be hashable, got {value!r:.200}") from None
            self._register(node, obj)
            return obj
        if tag == "$deque":
            maxlen = node.get("maxlen")
            if maxlen is not None and (type(maxlen) is not int or maxlen < 0):
                raise ValueError(f"$deque maxlen must be None or an integer >= 0, got {maxlen!r}")
            d: deque[Any] = deque(maxlen=maxlen)
            self._register(node, d)
            d.extend(self.decode(x) for x in value)
            return d
        if tag == "$dict":
            out: dict[Any, Any] = {}
            self._register(node, out)
            for pair in value:
                if type(pair) is not list or len(pair) != 2:
                    raise ValueError(f"$dict items must be [key, value] pairs, got {pair!r}")
                key = self.decode(pair[0])
                try:
                    out[key] = self.decode(pair[1])
                except TypeError:
                    raise ValueError(f"$dict key must be hashable, got {pair[0]!r:.200}") from None
            return out
        if tag == "$bytes":
            if type(value) is not str:
                raise ValueError(f"$bytes must be a hex string, got {value!r:.200}")
            try:
                return bytes.fromhex(value)
            except ValueError:
                raise ValueError(f"$bytes must be a hex string, got {value!r:.200}") from None
        if tag == "$ndarray":
            return self._array(node, value)
        if tag == "$np":
            item = node.get("value")
            if type(item) not in (bool, int, float) and not (
                    type(item) is dict and set(item) == {"$float"}):
                raise ValueError(f"$np value must be a number, got {item!r:.200}")
            return _dtype(value).type(self.decode(item))
        if tag == "$global":
            return _resolve(value, "$global")
        if tag == "$collaborator":
            if type(value) is not str or value not in self.collaborators:
                raise ValueError(f"state names a collaborator {value!r:.200} it does not list "
                                 "under 'collaborators'")
            return self.collaborators[value]
        if tag == "$reduce":
            return self._rebuild(node)
        raise ValueError(f"unknown tag {tag!r} in state (known: {', '.join(_TAGS)})")

    def _array(self, node: dict[str, Any], value: Any) -> np.ndarray:
        dtype = _dtype(value)
        shape, data = node.get("shape"), node.get("data")
        if (type(shape) is not list or len(shape) > 32
                or not all(type(n) is int and n >= 0 for n in shape)):
            raise ValueError(f"an array's shape must be a list of integers >= 0, got {shape!r:.200}")
        if type(data) is not list or math.prod(shape) != len(data):
            size = len(data) if type(data) is list else data
            raise ValueError(f"an array of shape {shape} needs {math.prod(shape)} values, "
                             f"got {size!r:.200}")
        items = [self.decode(x) for x in data]
        if not all(type(x) in (bool, int, float) for x in items):
            raise ValueError("an array's data must be numbers")
        try:
            array = np.array(items, dtype=dtype).reshape(shape)
        except (OverflowError, ValueError) as exc:
            raise ValueError(f"an array's data do not fit its dtype {value!r}: {exc}") from None
        self._register(node, array)
        return array

    def _rebuild(self, node: dict[str, Any]) -> Any:
        if "args" not in node:
            raise ValueError(f"an object in the state lacks its 'args' field: {node['$reduce']!r}")
        named = node["$reduce"]
        if type(named) is not dict or set(named) != {"$global"}:
            raise ValueError(f"$reduce must name a class: {{'$global': ...}}, got {named!r:.200}")
        func = _resolve(named["$global"], "$reduce")
        args = self.decode(node["args"])
        if type(args) is not tuple:
            raise ValueError(f"an object's args must be a $tuple, got {node['args']!r:.200}")
        if func is copyreg.__newobj__:  # type: ignore[attr-defined]
            cls = args[0] if args else None
            if (not isinstance(cls, type) or _name_of(cls) not in _ALLOWED_SET
                    or (len(args) > 1 and not issubclass(cls, tuple))):
                raise ValueError(f"copyreg:__newobj__ builds only memorykit's ALLOWED classes, "
                                 f"got {args!r:.200}")
            obj = cls.__new__(cls, *args[1:])  # a named tuple's fields are its new-arguments
        elif func is re._compile:  # type: ignore[attr-defined]
            if (len(args) != 2 or type(args[0]) is not str or type(args[1]) is not int
                    or args[1] & ~0x1FF):
                raise ValueError(f"re:_compile takes (pattern: str, flags: int), got {args!r:.200}")
            obj = re.compile(args[0], args[1])
        elif func is random.Random:
            if args:
                raise ValueError(f"random:Random takes no arguments, got {args!r:.200}")
            obj = random.Random()
        else:  # an ALLOWED class whose own __reduce__ rebuilds it through its constructor
            try:
                obj = func(*args)
            except (TypeError, ValueError) as exc:
                raise ValueError(f"{func.__qualname__} in the state is invalid: {exc}") from None
        self._register(node, obj)
        if "state" in node:
            _set_state(obj, self.decode(node["state"]))
        if func is copyreg.__newobj__ and not isinstance(obj, tuple):  # type: ignore[attr-defined]
            _check(obj)
        return obj


def _set_state(obj: Any, state: Any) -> None:
    """What ``pickle`` does with an object's state, with the fields checked: only names the
    object's class gives it (a dataclass's fields; no dunder or private-to-Python name)."""
    name = type(obj).__qualname__
    setstate = getattr(type(obj), "__setstate__", None)
    if setstate is not None:
        if isinstance(obj, random.Random):
            if (type(state) is not tuple or len(state) != 3 or type(state[1]) is not tuple
                    or len(state[1]) != 625 or not all(type(x) is int for x in state[1])):
                raise ValueError(f"a random generator's state is malformed: {state!r:.200}")
        if dataclasses.is_dataclass(obj) and isinstance(state, list):
            fields = dataclasses.fields(obj)
            if len(state) != len(fields):
                raise ValueError(f"{name} state must have {len(fields)} fields "
                                 f"({', '.join(f.name for f in fields)}), got {len(state)}")
        try:
            obj.__setstate__(state)
        except (TypeError, ValueError, KeyError, IndexError, AttributeError) as exc:
            raise ValueError(f"{name} state is invalid: {exc!r:.300}") from None
        if dataclasses.is_dataclass(obj) and not all(
                hasattr(obj, f.name) for f in dataclasses.fields(obj)):
            raise ValueError(f"{name} state lacks fields: got {state!r:.200}")
        return
    slots: Any = {}
    if isinstance(state, tuple) and len(state) == 2:
        state, slots = state
    if state and not hasattr(obj, "__dict__"):
        raise ValueError(f"{name} has no attributes dict: its state {state!r:.100} cannot be set")
    for part in (state, slots):
        if part is not None and type(part) is not dict:
            raise ValueError(f"{name} state must be a dict of attributes, got {part!r:.200}")
        for key in part or {}:
            if type(key) is not str or not key.isidentifier() or key.startswith("__"):
                raise ValueError(f"{name} state sets attribute {key!r:.100}: not allowed")
    if dataclasses.is_dataclass(obj):
        fields = {f.name for f in dataclasses.fields(obj)}
        given = set(state or {}) | set(slots or {})
        if fields - given:
            raise ValueError(f"{name} state lacks fields {', '.join(sorted(fields - given))}")
    if state:
        obj.__dict__.update(state)
    for key, value in (slots or {}).items():
        setattr(obj, key, value)


_UNSET = object()


def _check(obj: Any) -> None:
    """Refuse an object whose settings its constructor would refuse: the constructor is run
    again on the settings the state gave it (its plain values; objects it holds are checked
    where they are built), and a buffer's token totals must be those of its messages."""
    cls = type(obj)
    kwargs: dict[str, Any] = {}
    attrs: dict[str, str] = {}
    for name, required in _init_params(cls):
        attr = next((a for a in (name, "_" + name) if getattr(obj, a, _UNSET) is not _UNSET
                     and not inspect.ismethod(getattr(obj, a))), None)
        if attr is None:
            if required:
                return  # a constructor this object's fields do not mirror: nothing to replay
            continue
        value = getattr(obj, attr)
        # settings go back through the constructor; objects it holds are checked where they
        # are built (a constructor may wire itself to them)
        if required or _is_plain(value):
            kwargs[name], attrs[name] = value, attr
    while True:
        try:
            fresh = cls(**kwargs)
            break
        except (TypeError, ValueError, AttributeError) as exc:
            # a subclass that sets a base setting itself (BufferWindow's max_tokens): drop it
            clash = re.search(r"(?:multiple values for|unexpected) (?:keyword )?argument '(\w+)'",
                              str(exc))
            if isinstance(exc, TypeError) and clash and clash.group(1) in kwargs:
                del kwargs[clash.group(1)]
                continue
            raise ValueError(f"{cls.__qualname__} in the state is invalid: {exc}") from None
    have, made = set(getattr(obj, "__dict__", ())), set(getattr(fresh, "__dict__", ()))
    if have - made:  # an attribute its constructor never makes: nothing of the class would read it
        raise ValueError(f"{cls.__qualname__} state sets unknown attributes "
                         f"{', '.join(sorted(have - made))[:200]}")
    if made - have:
        raise ValueError(f"{cls.__qualname__} state lacks attributes "
                         f"{', '.join(sorted(made - have))[:200]}")
    for name, attr in attrs.items():  # a setting is stored as the constructor stores it
        value, stored = getattr(obj, attr), getattr(fresh, attr, _UNSET)
        if _is_plain(value) and stored is not _UNSET and _is_plain(stored) and stored != value:
            raise ValueError(f"{cls.__qualname__} state's {name}={value!r:.100} is not what its "
                             f"constructor makes of it ({stored!r:.100})")
    if isinstance(obj, _allowed("memorykit.buffers.base:MessageBuffer")):
        try:
            _check_buffer(obj)
        except AttributeError as exc:  # a part of the wrong class where a chat format belongs
            raise ValueError(f"{cls.__qualname__} state is invalid: {exc}") from None
    elif isinstance(obj, _allowed("memorykit.buffers.context_manager:ContextManager")):
        buffer_cls, contexts = _allowed("memorykit.buffers.base:MessageBuffer"), obj.contexts
        if type(contexts) is not dict or not all(
                type(k) is str and isinstance(b, buffer_cls) for k, b in contexts.items()):
            raise ValueError("ContextManager state's contexts must map names to buffers")
        if type(obj.stack) is not list or any(n not in contexts for n in obj.stack) or (
                obj.active_context is not None and obj.active_context not in contexts):
            raise ValueError(f"ContextManager state's active_context {obj.active_context!r:.100} "
                             f"and stack {obj.stack!r:.200} must name its contexts")


@functools.cache
def _init_params(cls: type) -> tuple[tuple[str, bool], ...]:
    """(name, required) of the constructor's parameters, following ``**kw`` to the bases."""
    params: dict[str, bool] = {}
    for klass in cls.__mro__:
        init = klass.__dict__.get("__init__")
        if init is None or klass is object:
            continue
        passes_on = False
        for p in list(inspect.signature(init).parameters.values())[1:]:
            if p.kind is p.VAR_KEYWORD:
                passes_on = True
            elif p.kind is not p.VAR_POSITIONAL and p.name not in params:
                params[p.name] = p.default is p.empty
        if not passes_on:
            break
    return tuple(params.items())


def _is_plain(value: Any) -> bool:
    if value is None or type(value) in (bool, int, float, str):
        return True
    if type(value) is tuple:
        return all(_is_plain(v) for v in value)
    return _is_value(value)


def _check_buffer(buffer: Any) -> None:
    """A buffer's totals are derived from its messages: a state must agree with them."""
    message_cls = _allowed("memorykit.messages:Message")
    messages = buffer._messages
    if type(messages) is not dict or not all(
            type(m) is message_cls and m.id == k for k, m in messages.items()):
        raise ValueError(f"{type(buffer).__qualname__} state's _messages must map ids to messages")
    tokens = buffer.chat_format.reply_primer + sum(m.billed_tokens for m in messages.values())
    content = sum(m.content_tokens for m in messages.values())
    if (buffer._tokens, buffer._content_tokens) != (tokens, content):
        raise ValueError(f"{type(buffer).__qualname__} state's _tokens={buffer._tokens!r}, "
                         f"_content_tokens={buffer._content_tokens!r} disagree with its messages "
                         f"({tokens}, {content})")
    # over its limits only when nothing may leave (every message pinned, just added or awaiting
    # a tool result), as after an add; else a file could hand over a buffer past its budget
    if buffer._over_limits() and any(buffer._evictable(i) for i in messages):
        raise ValueError(f"{type(buffer).__qualname__} state holds {buffer._limit_text()} while "
                         "it could evict: a saved buffer keeps to its limits")
