"""Hostile state files (issue 25, findings 1 and 2): none runs code, none restores an invalid
memory, none exhausts the stack or memory; each is a ValueError/TypeError naming what is wrong."""

from __future__ import annotations

import json
from typing import Any

import pytest

from memorykit.buffers.policies import FIFOBuffer
from memorykit.buffers.summary_buffer import SummaryBuffer
from memorykit.messages import MessageFactory
from memorykit.state import MAX_DEPTH, dumps, loads, restore_state
from memorykit.tokens import Tokenizer

CANARY: list[str] = []
"""Set by ``_ran``: a hostile state that manages to call it would show here."""


def _ran(*args: Any) -> None:
    CANARY.append(repr(args))


def _buffer() -> FIFOBuffer:
    buffer = FIFOBuffer(500)
    factory = MessageFactory(Tokenizer())
    for text in ("You are terse.", "Hello there", "Hi, how can I help?"):
        buffer.add(factory.user(text))
    return buffer


def _state() -> dict[str, Any]:
    return json.loads(dumps(_buffer()))


def _call(name: str, *args: Any) -> dict[str, Any]:
    return {"$reduce": {"$global": name}, "args": {"$tuple": list(args)}}


def _hidden(node: dict[str, Any]) -> dict[str, Any]:
    """An ordinary FIFOBuffer state with ``node`` hidden in one of its fields."""
    state = _state()
    state["memory"]["state"]["_newest"] = node
    return state


@pytest.fixture(autouse=True)
def _no_code_ran(tmp_path):
    CANARY.clear()
    yield
    assert CANARY == []


CODE_RUNNERS = [
    "memorykit.embeddings:os.system",
    "memorykit.llm.local_server:subprocess.Popen",
    "memorykit.course.release:shutil.rmtree",
    "memorykit.state:importlib.import_module",
    "memorykit.state:json.loads",
    "memorykit:os",
    "memorykit.state",
    "memorykit.state:",
    "memorykit:state",
    "builtins:eval",
    "os:system",
    "tests.test_state_hostile:_ran",
    "memorykit.state:_resolve",
    "memorykit.state:restore_state",
    "memorykit.course.release:release",
    "memorykit.buffers:FIFOBuffer",  # a re-export: names are where a class is defined
    "memorykit.buffers.policies:FIFOBuffer.__init__.__globals__",
    "memorykit.buffers.policies:FIFOBuffer.add",
]


@pytest.mark.parametrize("name", CODE_RUNNERS)
def test_a_state_cannot_name_a_function_or_module(name, tmp_path):
    target = tmp_path / "pwned"
    for node in (_call(name, f"touch {target}"), {"$global": name}):
        with pytest.raises(ValueError, match="not part of memorykit|names nothing|module:name"):
            restore_state(_hidden(node))
    assert not target.exists()


def test_no_code_runs_through_the_few_standard_callables(tmp_path):
    hostile = [
        _call("copyreg:__newobj__", {"$global": "random:Random"}),  # not a memorykit class
        _call("copyreg:__newobj__", {"$global": "builtins:object"}),
        _call("copyreg:__newobj__", {"$global": "memorykit.buffers.policies:FIFOBuffer"}, 5),
        _call("copyreg:__newobj__"),
        _call("re:_compile", {"$global": "os:system"}, 0),
        _call("re:_compile", ["(a+)+"], 0),
        _call("re:_compile", "x", 1 << 20),
        _call("random:Random", "seed"),
        _call("copyreg:_reconstructor", {"$global": "memorykit.buffers.policies:FIFOBuffer"}),
        {"$reduce": _call("memorykit.tokens:Tokenizer", "cl100k_base"), "args": {"$tuple": []}},
    ]
    for node in hostile:
        with pytest.raises(ValueError):
            restore_state(_hidden(node))


def _set(field: str, value: Any) -> dict[str, Any]:
    state = _state()
    state["memory"]["state"][field] = value
    return state


@pytest.mark.parametrize("field, value, error", [
    ("max_tokens", {"$float": "nan"}, "max_tokens must be an integer, got nan"),
    ("max_tokens", {"$float": "inf"}, "max_tokens must be finite|max_tokens must be an integer"),
    ("max_tokens", -5, "max_tokens must be >= 1"),
    ("max_tokens", "abc", "max_tokens must be an integer"),
    ("max_tokens", 2.5, "max_tokens must be an integer"),
    ("max_entries", -1, "max_entries must be >= "),
    ("pin_system", "false", "pin_system must be a bool"),
    ("_tokens", 0, "_tokens=0.*disagree with its messages"),
    ("_content_tokens", 10**9, "disagree with its messages"),
    ("_messages", {"m1": "not a message"}, "_messages must map ids to messages"),
    # valid settings, but below what the buffer holds: it would be handed over past its budget
    ("max_tokens", 5, "holds 28 tokens > max_tokens 5 while it could evict"),
    ("max_entries", 1, "3 entries > max_entries 1 while it could evict"),
])
def test_a_setting_its_constructor_would_refuse_is_refused(field, value, error):
    with pytest.raises(ValueError, match=error):
        restore_state(_set(field, value))


def test_a_message_is_checked_as_new_input():
    state = _state()
    message = next(iter(state["memory"]["state"]["_messages"].values()))
    message["args"]["$tuple"][3] = -4  # a negative token count
    with pytest.raises(ValueError, match="Message in the state is invalid"):
        restore_state(state)


@pytest.mark.parametrize("version", [True, 1.0, "1", None])
def test_version_must_be_the_integer_1(version):
    state = _state()
    state["version"] = version
    with pytest.raises(ValueError, match="state version must be 1"):
        restore_state(state)


@pytest.mark.parametrize("kind, error", [
    ("memorykit.tokens:Tokenizer", "must name a memory kind"),
    ("memorykit.trace:Trace", "must name a memory kind"),
    ("memorykit.state:dumps", "names nothing"),
    ("memorykit.buffers.summary_buffer:SummaryBuffer", "its kind says"),
])
def test_kind_must_be_the_memory_the_state_holds(kind, error):
    state = _state()
    state["kind"] = kind
    with pytest.raises(ValueError, match=error):
        restore_state(state)


def test_the_expected_kind_is_checked():
    text = dumps(_buffer())
    assert type(loads(text, kind=FIFOBuffer)) is FIFOBuffer
    with pytest.raises(ValueError, match="FIFOBuffer.*expected.*SummaryBuffer"):
        loads(text, kind=SummaryBuffer)


def test_deep_nesting_is_a_clear_error_not_a_recursion_error():
    for depth in (400, 5_000, 100_000):
        text = json.dumps(_hidden({"$tuple": []}))
        text = text.replace('{"$tuple": []}', "[" * depth + "]" * depth)
        with pytest.raises(ValueError, match=f"MAX_DEPTH={MAX_DEPTH}"):
            loads(text)


def test_text_over_max_chars_is_refused_before_parsing():
    text = dumps(_buffer())
    with pytest.raises(ValueError, match="over max_chars=100"):
        loads(text, max_chars=100)
    assert type(loads(text, max_chars=len(text))) is FIFOBuffer


@pytest.mark.parametrize("node, error", [
    ({"$ndarray": "<U250000000", "shape": [1], "data": ["x"]}, "must be numeric|numeric dtype"),
    ({"$ndarray": "|O", "shape": [1], "data": [1]}, "must be numeric"),
    ({"$ndarray": "<f8", "shape": [10**9, 10**9], "data": []}, "needs .* values"),
    ({"$ndarray": "<f8", "shape": [-1], "data": [1.0]}, "integers >= 0"),
    ({"$ndarray": "<f8", "shape": [2], "data": [1.0]}, "needs 2 values"),
    ({"$ndarray": "<f8", "shape": [1], "data": [[1.0]]}, "must be numbers"),
    ({"$ndarray": "<f8", "shape": "7", "data": []}, "shape must be a list"),
    ({"$np": "<U9999999", "value": 1}, "numeric dtype"),
    ({"$np": "<f8", "value": [1]}, "must be a number"),
    ({"$deque": [], "maxlen": "5"}, "maxlen must be"),
    ({"$deque": [], "maxlen": -1}, "maxlen must be"),
    ({"$deque": [], "maxlen": True}, "maxlen must be"),
    ({"$bytes": 5}, "hex string"),
    ({"$bytes": "zz"}, "hex string"),
    ({"$ref": 1}, "before defining it"),
    ({"$id": 1, "$ref": 1}, "before defining it"),
    ({"$ref": [1]}, "before defining it"),
    ({"$collaborator": "summarizer", "type": "x"}, "does not list"),
    ({"$set": [[1]]}, "hashable"),
    ({"$float": "1e999"}, r"\$float must be"),
])
def test_a_malformed_value_is_refused_before_it_is_allocated(node, error):
    with pytest.raises(ValueError, match=error):
        restore_state(_hidden(node))


@pytest.mark.parametrize("key", ["__class__", "__dict__", "__reduce__", "__setstate__", "not an identifier", "1x"])
def test_state_cannot_set_dunder_or_odd_attributes(key):
    state = _state()
    state["memory"]["state"][key] = {"$global": "memorykit.buffers.policies:FIFOBuffer"}
    with pytest.raises(ValueError, match="state sets attribute"):
        restore_state(state)
    assert type(restore_state(_state())) is FIFOBuffer


def test_a_ref_cycle_to_itself_is_refused_or_harmless():
    state = _hidden([{"$id": 99}, {"$ref": 99}])  # a list holding itself: data, no code
    buffer = restore_state(state)
    assert buffer._newest[0] is buffer._newest


def test_allowed_names_only_classes_defined_where_named():
    from memorykit.state import ALLOWED, _allowed

    for name in ALLOWED:
        cls = _allowed(name)
        assert isinstance(cls, type) and f"{cls.__module__}:{cls.__qualname__}" == name


@pytest.mark.parametrize("field, value", [
    ("active_context", "nowhere"), ("stack", ["main", "nowhere"]), ("stack", "main"),
    ("contexts", {"main": 5}), ("max_tokens_per_context", 0), ("boost_to", {"$float": "nan"}),
])
def test_a_context_manager_state_must_be_consistent(field, value):
    from memorykit.buffers.context_manager import ContextManager

    manager = ContextManager(500)
    manager.switch("other")
    state = json.loads(dumps(manager))
    assert type(restore_state(state, kind=ContextManager)) is ContextManager
    state["memory"]["state"][field] = value
    with pytest.raises(ValueError, match=f"ContextManager (state's|in the state is invalid).*{field}"):
        restore_state(state)


@pytest.mark.parametrize("key", ["evil_hook", "_on_add_hook", "add"])
def test_state_cannot_plant_an_attribute_its_constructor_never_makes(key):
    state = _state()
    state["memory"]["state"][key] = 1
    with pytest.raises(ValueError, match=f"FIFOBuffer state sets unknown attributes {key}"):
        restore_state(state)


@pytest.mark.parametrize("change", [
    lambda s: s["_index"].update(ghost=0),
    lambda s: s["_index"].update({next(iter(s["_index"])): 10**6}),
    lambda s: s["_ids"].append("extra"),
    lambda s: s["_matrix"].update(data=[{"$float": "nan"}] + s["_matrix"]["data"][1:]),
    lambda s: s["_alive"].update({"$ndarray": "<f8"}),
])
def test_a_vector_store_state_must_describe_one_set_of_rows(change):
    from memorykit.longterm.semantic import SemanticMemory
    from tests.memory_kinds import message_stream

    memory = SemanticMemory()
    for m in message_stream(3, 12):
        memory.add([m])
    state = json.loads(dumps(memory))
    assert type(restore_state(state)) is SemanticMemory
    change(state["memory"]["state"]["store"]["state"])
    with pytest.raises(ValueError, match="NumpyVectorStore state"):
        restore_state(state)


@pytest.mark.parametrize("name", ["buffer-fifo", "buffer-summary", "entity-relevance"])
def test_every_field_replaced_by_junk_is_a_clear_error_or_a_valid_memory(name):
    # each node of a small state swapped for a wrong value: ValueError/TypeError or a memory,
    # never another exception (before: AttributeError from a chat format that is a list, a
    # state set on a class without __dict__, a missing attribute met later)
    import copy

    import tests.memory_kinds as kinds

    kind = kinds.MEMORY_KINDS[name]
    memory = kind.make()
    for item in kind.stream(2, 12):
        kind.feed(memory, item)
    base = json.loads(dumps(memory))
    given = {c: getattr(kinds, v.split(":")[1]) for c, v in base["collaborators"].items()}

    def paths(node: Any, path: tuple = ()):
        items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(
            node, list) else ()
        for key, value in items:
            yield path + (key,)
            yield from paths(value, path + (key,))

    junk = [None, -1, "x", [], {}, True, {"$tuple": []}, {"$global": "memorykit.trace:Trace"}]
    for path in list(paths(base["memory"]))[:400]:
        for bad in junk:
            state = copy.deepcopy(base)
            node = state["memory"]
            for key in path[:-1]:
                node = node[key]
            node[path[-1]] = bad
            try:
                restore_state(state, **given)
            except (ValueError, TypeError):
                pass
