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
A state names only classes and functions of ``memorykit`` (and a few standard ones: deque,
random generators, compiled patterns): restoring never imports or calls anything else.
Not taught by a notebook: it is plumbing.
"""

from __future__ import annotations

import copyreg
import dataclasses
import importlib
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
_STDLIB_CALLABLES: dict[str, Any] = {
    "random:Random": random.Random,
    "re:Pattern": re.Pattern,
    "re:_compile": re._compile,  # type: ignore[attr-defined]
    "copyreg:__newobj__": copyreg.__newobj__,  # type: ignore[attr-defined]
    "copyreg:_reconstructor": copyreg._reconstructor,  # type: ignore[attr-defined]
    "builtins:object": object,
}
"""The only things outside memorykit a state may name (what pickle needs for these types)."""

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


def loads(text: str, **collaborators: Any) -> Any:
    """The memory the JSON text ``dumps`` wrote, restored by ``restore_state``."""
    if not isinstance(text, (str, bytes, bytearray)):
        raise TypeError(f"text must be the str dumps() wrote, got {type(text).__name__}")
    return restore_state(json.loads(text), **collaborators)


def _name_of(obj: Any) -> str:
    return f"{obj.__module__}:{obj.__qualname__}"


_SCALARS = (type(None), bool, int, float, str)


def _is_value(obj: Any) -> bool:
    """A frozen dataclass of memorykit's own holding only scalars (and tuples of them)."""
    params = getattr(type(obj), "__dataclass_params__", None)
    if params is None or not params.frozen or not _is_own(type(obj)):
        return False
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        if not isinstance(value, _SCALARS) and not (
                type(value) is tuple and all(isinstance(v, _SCALARS) for v in value)):
            return False
    return True


def _is_own(obj: Any) -> bool:
    module = getattr(obj, "__module__", None) or ""
    return (module == _OWN_PACKAGE or module.startswith(_OWN_PACKAGE + ".")) and "<" not in getattr(
        obj, "__qualname__", "<")


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
            if _is_own(obj) or _name_of(obj) in _STDLIB_CALLABLES:
                return {"$global": _name_of(obj)}
            return self._collaborator(obj, name)
        elif _is_own(kind) or _name_of(kind) in _STDLIB_CALLABLES:
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
def restore_state(state: Any, **collaborators: Any) -> Any:
    """The memory ``save_state`` described, with ``collaborators`` (by the names the state lists
    under ``"collaborators"``) put back where the saved memory held them."""
    if not isinstance(state, dict):
        raise TypeError(f"state must be the dict save_state() returned, got {type(state).__name__}")
    for key in ("kind", "version", "memory"):
        if key not in state:
            raise ValueError(f"state has no {key!r} field: not a memorykit state "
                             f"(fields: {', '.join(map(repr, state)) or 'none'})")
    if state["version"] != STATE_VERSION:
        raise ValueError(f"state version must be {STATE_VERSION}, got {state['version']!r}")
    kind = _resolve(state["kind"], "kind")
    if not isinstance(kind, type):
        raise ValueError(f"kind must name a memorykit class, got {state['kind']!r}")
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
    memory = _Decoder(collaborators).decode(state["memory"])
    if type(memory) is not kind:
        raise ValueError(f"state's memory is a {type(memory).__qualname__}, its kind says "
                         f"{state['kind']!r}")
    return memory


def _resolve(name: Any, what: str) -> Any:
    if not isinstance(name, str) or ":" not in name:
        raise ValueError(f"{what} must be 'module:name', got {name!r}")
    if name in _STDLIB_CALLABLES:
        return _STDLIB_CALLABLES[name]
    module_name, qualname = name.split(":", 1)
    if not (module_name == _OWN_PACKAGE or module_name.startswith(_OWN_PACKAGE + ".")):
        raise ValueError(f"{what} {name!r} is not part of memorykit: a state only names "
                         "memorykit's own classes and functions")
    try:
        obj: Any = importlib.import_module(module_name)
        for part in qualname.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError):
        raise ValueError(f"{what} {name!r} names nothing in this version of memorykit") from None
    return obj


class _Decoder:
    def __init__(self, collaborators: dict[str, Any]) -> None:
        self.collaborators = collaborators
        self.refs: dict[int, Any] = {}

    def decode(self, node: Any) -> Any:
        kind = type(node)
        if node is None or kind in (bool, int, float, str):
            return node
        if kind is list:
            out: list[Any] = []
            items = node
            if items and type(items[0]) is dict and set(items[0]) == {"$id"}:
                self.refs[items[0]["$id"]] = out
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
            self.refs[node["$id"]] = obj

    def _tagged(self, tag: str, node: dict[str, Any]) -> Any:
        value = node[tag]
        if tag in _LIST_TAGS and type(value) is not list:
            raise TypeError(f"{tag} must hold a JSON list, got {value!r}")
        if tag == "$ref":
            if value not in self.refs:
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
            obj: Any = set(items) if tag == "$set" else frozenset(items)
            self._register(node, obj)
            return obj
        if tag == "$deque":
            d: deque[Any] = deque(maxlen=node.get("maxlen"))
            self._register(node, d)
            d.extend(self.decode(x) for x in value)
            return d
        if tag == "$dict":
            out: dict[Any, Any] = {}
            self._register(node, out)
            for pair in value:
                if type(pair) is not list or len(pair) != 2:
                    raise ValueError(f"$dict items must be [key, value] pairs, got {pair!r}")
                out[self.decode(pair[0])] = self.decode(pair[1])
            return out
        if tag == "$bytes":
            return bytes.fromhex(value)
        if tag == "$ndarray":
            data = [self.decode(x) for x in node["data"]]
            array = np.array(data, dtype=np.dtype(value)).reshape(node["shape"])
            self._register(node, array)
            return array
        if tag == "$np":
            return np.dtype(value).type(self.decode(node["value"]))
        if tag == "$global":
            return _resolve(value, "$global")
        if tag == "$collaborator":
            return self.collaborators[value]
        if tag == "$reduce":
            return self._rebuild(node)
        raise ValueError(f"unknown tag {tag!r} in state (known: {', '.join(_TAGS)})")

    def _rebuild(self, node: dict[str, Any]) -> Any:
        if "args" not in node:
            raise ValueError(f"an object in the state lacks its 'args' field: {node['$reduce']!r}")
        func = self.decode(node["$reduce"])
        if func is copyreg.__newobj__:  # type: ignore[attr-defined]
            cls, *args = self.decode(node["args"])
            obj = cls.__new__(cls, *args)
        else:
            if not callable(func):
                raise ValueError(f"$reduce must name a class or function, got {node['$reduce']!r}")
            obj = func(*self.decode(node["args"]))
        self._register(node, obj)
        if "state" in node:
            _set_state(obj, self.decode(node["state"]))
        return obj


def _set_state(obj: Any, state: Any) -> None:
    """What ``pickle`` does with an object's state, with the fields checked for dataclasses."""
    setstate = getattr(obj, "__setstate__", None)
    if setstate is not None:
        if dataclasses.is_dataclass(obj) and isinstance(state, list):
            fields = dataclasses.fields(obj)
            if len(state) != len(fields):
                raise ValueError(f"{type(obj).__qualname__} state must have {len(fields)} fields "
                                 f"({', '.join(f.name for f in fields)}), got {len(state)}")
        setstate(state)
        return
    slots: dict[str, Any] = {}
    if isinstance(state, tuple) and len(state) == 2:
        state, slots = state
    if state:
        if dataclasses.is_dataclass(obj):
            missing = {f.name for f in dataclasses.fields(obj)} - set(state)
            if missing:
                raise ValueError(f"{type(obj).__qualname__} state lacks fields "
                                 f"{', '.join(sorted(missing))}")
        obj.__dict__.update(state)
    for key, value in (slots or {}).items():
        setattr(obj, key, value)
