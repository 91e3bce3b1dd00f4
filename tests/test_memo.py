"""The classroom's one memoizer (memorykit.classroom.memo)."""

from __future__ import annotations

import gc

import numpy as np
import pytest

from memorykit.classroom.memo import memo


def _counted(maxsize=8):
    calls = []

    @memo(maxsize=maxsize)
    def f(*args, **kwargs):
        calls.append((args, kwargs))
        return len(calls)

    return f, calls


def test_equal_hashable_arguments_compute_once():
    f, calls = _counted()
    assert f(1, "a", k=(2, 3)) == f(1, "a", k=(2, 3)) == 1
    assert len(calls) == 1 and f.cache_len() == 1


def test_keys_are_typed_so_a_check_inside_sees_every_kind_of_value():
    f, calls = _counted()
    f(1), f(1.0), f(True)
    assert len(calls) == 3


def test_unhashable_arguments_are_keyed_by_identity_and_kept_alive():
    f, calls = _counted()
    a = np.arange(3)
    f(a), f(a)
    assert len(calls) == 1
    f(np.arange(3))  # equal but another object: computed again
    assert len(calls) == 2
    ident = id(a)
    del a
    gc.collect()
    # the entry holds the array, so its id cannot belong to a new object meanwhile
    assert any(id(args[0]) == ident for args, _ in calls)


def test_a_dict_is_keyed_by_its_items():
    f, calls = _counted()
    f({"a": 1, "b": 2}), f({"b": 2, "a": 1})
    assert len(calls) == 1
    f({"a": 1, "b": 3})
    assert len(calls) == 2


def test_least_recently_used_leaves_first_and_results_none_are_cached():
    calls = []

    @memo(maxsize=2)
    def g(x):
        calls.append(x)
        return None

    g(1), g(2), g(1), g(3)  # 2 is the least recently used when 3 arrives
    assert calls == [1, 2, 3]
    g(1)
    assert calls == [1, 2, 3]
    g(2)
    assert calls == [1, 2, 3, 2]
    g.cache_clear()
    assert g.cache_len() == 0


def test_an_error_is_not_remembered():
    calls = []

    @memo()
    def h(x):
        calls.append(x)
        if len(calls) == 1:
            raise ValueError("first time")
        return x

    with pytest.raises(ValueError):
        h(5)
    assert h(5) == 5 and calls == [5, 5]


@pytest.mark.parametrize("bad", [0, -1, 2.5, True, "8"])
def test_maxsize_must_be_a_positive_int_or_none(bad):
    with pytest.raises(ValueError, match="maxsize must be a positive int or None"):
        memo(maxsize=bad)
