"""One way to remember a lesson's computations: ``memo``, for every explorer and checker.

A slider moved back and forth should recompute nothing it has computed before, so the lessons'
pure functions (a replay of a conversation through a policy at some settings, a grid of scores)
are memoized, all with this one decorator. Arguments are keyed by type and value when they
can be hashed (numbers, strings, tuples, classes and functions, a student's included; so 1, 1.0
and True are three arguments, and a check inside the function still sees each) and by identity
when they cannot (a simulated conversation, a numpy array); a dict is keyed by its items. Each
entry keeps its arguments alive, so an identity is never reused while its entry is cached.
Least recently used entries leave first once ``maxsize`` is reached.

Not taught by a notebook: it is plumbing for the lesson apps.
"""

from __future__ import annotations

import functools
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


def _key(value: Any) -> Any:
    if isinstance(value, dict):
        return ("dict", tuple(sorted((k, _key(v)) for k, v in value.items())))
    try:
        hash(value)
    except TypeError:
        return ("id", type(value).__qualname__, id(value))
    return (type(value), value)  # typed: 1, 1.0 and True are different arguments


def memo(maxsize: int | None = 128) -> Callable[[F], F]:
    """Memoize a pure function of its arguments (see the module docstring); ``maxsize=None``
    keeps every result. The wrapped function gains ``cache_clear()`` and ``cache_len()``."""
    if maxsize is not None and (isinstance(maxsize, bool) or not isinstance(maxsize, int)
                                or maxsize < 1):
        raise ValueError(f"maxsize must be a positive int or None, got {maxsize!r}")

    def decorate(fn: F) -> F:
        cache: OrderedDict[Any, tuple[Any, Any]] = OrderedDict()

        @functools.wraps(fn)
        def call(*args: Any, **kwargs: Any) -> Any:
            key = (tuple(_key(a) for a in args),
                   tuple(sorted((k, _key(v)) for k, v in kwargs.items())))
            hit = cache.get(key)
            if hit is not None:
                cache.move_to_end(key)
                return hit[1]
            value = fn(*args, **kwargs)
            cache[key] = ((args, kwargs), value)
            if maxsize is not None and len(cache) > maxsize:
                cache.popitem(last=False)
            return value

        call.cache_clear = cache.clear  # type: ignore[attr-defined]
        call.cache_len = cache.__len__  # type: ignore[attr-defined]
        return call  # type: ignore[return-value]

    return decorate
