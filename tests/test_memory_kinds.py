"""The memory-kind catalogue: it names every memory class, and its streams are deterministic."""

from __future__ import annotations

import importlib
import inspect
import itertools
import pkgutil
from typing import Protocol

import pytest

import memorykit
from memorykit.buffers.base import MessageBuffer
from memorykit.entities.memory import EntityMemory
from tests.memory_kinds import MEMORY_KINDS, NOT_KINDS
from memorykit.classroom.scenarios.conversation import MAX_TURNS

# Names that say "this class holds remembered things"; subclasses of the two memory bases too.
_MEMORY_SUFFIXES = ("Memory", "Buffer", "Service", "Store", "Queue", "Slots", "Graph")


def _memory_classes() -> set[type]:
    found: set[type] = set()
    for info in pkgutil.walk_packages(memorykit.__path__, "memorykit."):
        if info.name.startswith("memorykit.classroom"):
            continue  # the library's memories; the classroom's doubles are not kinds it ships
        module = importlib.import_module(info.name)
        for cls in vars(module).values():
            if (inspect.isclass(cls) and cls.__module__ == info.name
                    and not cls.__name__.startswith("_") and Protocol not in cls.__mro__
                    and (cls.__name__.endswith(_MEMORY_SUFFIXES)
                         or issubclass(cls, (MessageBuffer, EntityMemory)))):
                found.add(cls)
    return found


def test_every_memory_class_is_a_kind_or_says_why_not():
    kinds = {kind.cls for kind in MEMORY_KINDS.values()}
    missing = {cls.__qualname__ for cls in _memory_classes()
               if cls not in kinds and cls.__name__ not in NOT_KINDS}
    assert not missing, (f"add these to MEMORY_KINDS (or NOT_KINDS, with the reason) in "
                         f"tests/memory_kinds.py: {sorted(missing)}")


def test_not_kinds_names_real_classes_only():
    names = {cls.__name__ for cls in _memory_classes()}
    assert set(NOT_KINDS) - names == set()


@pytest.mark.parametrize("name", MEMORY_KINDS)
def test_a_kind_builds_its_class_and_its_stream_repeats(name):
    kind = MEMORY_KINDS[name]
    memory = kind.make()
    assert type(memory) is kind.cls
    first, second = list(kind.stream(3, 200)), list(kind.stream(3, 200))
    assert len(first) == 200 and first == second
    assert list(kind.stream(4, 200)) != first
    outputs = [kind.feed(memory, item) for item in first]
    assert any(outputs), f"{name}: 200 inputs made no decision at all"
    trace = getattr(memory, "trace", None)
    if trace is not None:
        assert trace.max_events is not None, f"{name}: the catalogue's trace must be bounded"


def test_a_stream_is_lazy():
    for kind in MEMORY_KINDS.values():
        assert len(list(itertools.islice(kind.stream(0, MAX_TURNS), 5))) == 5
