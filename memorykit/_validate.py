"""Argument checks shared by every public constructor and method.

Each helper raises a ValueError or TypeError that names the parameter and the
offending value, so bad input fails at the call site rather than deep inside a
policy. Not taught by a notebook: it is plumbing.
"""

from __future__ import annotations

import math
from numbers import Real
from typing import Any

import numpy as np


def _is_real(value: Any) -> bool:
    # exact float/int first: the abstract-class check is slow and this runs on every setting
    kind = type(value)
    if kind is float or kind is int:
        return True
    return isinstance(value, Real) and not isinstance(value, bool)


def require_real(name: str, value: Any) -> float:
    if not _is_real(value):
        raise TypeError(f"{name} must be a number, got {value!r} ({type(value).__name__})")
    try:
        number = float(value)
    except OverflowError:  # an int past float's range (10**400) is not finite either
        raise ValueError(f"{name} must be finite, got an integer of {len(str(abs(value)))} digits") from None
    if math.isnan(number) or math.isinf(number):
        raise ValueError(f"{name} must be finite, got {value!r}")
    return number


def require_positive(name: str, value: Any) -> float:
    value = require_real(name, value)
    if value <= 0:
        raise ValueError(f"{name} must be > 0, got {value!r}")
    return value


def require_non_negative(name: str, value: Any) -> float:
    value = require_real(name, value)
    if value < 0:
        raise ValueError(f"{name} must be >= 0, got {value!r}")
    return value


def require_int(
    name: str, value: Any, *, minimum: int | None = None, maximum: int | None = None
) -> int:
    """An int (not a bool); ``maximum`` caps sizes whose work grows with the value, so a
    typo such as 10**30 fails at once instead of running for ever."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an integer, got {value!r} ({type(value).__name__})")
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value!r}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} must be <= {maximum}, got {value!r}")
    return value


def require_optional_int(
    name: str, value: Any, *, minimum: int, maximum: int | None = None
) -> int | None:
    return None if value is None else require_int(name, value, minimum=minimum, maximum=maximum)


def require_real_array(
    name: str, values: Any, *, minimum: float | None = None, allow_nan: bool = False
) -> np.ndarray:
    """A number or an array-like of numbers as a float array. Bools, text and None are
    refused, not cast (numpy reads True as 1.0 and None as NaN); every value must be
    finite and >= ``minimum`` when given. ``allow_nan`` lets NaN through where it marks a
    gap the caller fills on purpose (a heatmap cell with no entity)."""
    raw = np.asarray(values)
    if raw.dtype.kind not in "iuf":  # 'b' bool, 'U' text, 'O' None or mixed
        raise TypeError(f"{name} must be numbers, got {values!r}")
    out = raw.astype(np.float64)
    with np.errstate(invalid="ignore"):
        bad = np.isinf(out) if allow_nan else ~np.isfinite(out)
        if minimum is not None:
            bad |= out < minimum
    if bad.any():
        floor = "" if minimum is None else f" and >= {minimum:g}"
        raise ValueError(f"{name} must be finite{floor}, got {values!r}")
    return out


def require_fraction(name: str, value: Any, *, include_zero: bool = False) -> float:
    """A share of something: in (0, 1], or [0, 1] with include_zero."""
    value = require_real(name, value)
    low_ok = value >= 0 if include_zero else value > 0
    if not (low_ok and value <= 1):
        interval = "[0, 1]" if include_zero else "(0, 1]"
        raise ValueError(f"{name} must be in {interval}, got {value!r}")
    return value


def require_between(name: str, value: Any, low: float, high: float) -> float:
    """A finite number in [low, high] (a cosine in [-1, 1], a temperature in [0, 2], ...)."""
    value = require_real(name, value)
    if not low <= value <= high:
        raise ValueError(f"{name} must be in [{low:g}, {high:g}], got {value!r}")
    return value


def require_unit_interval(name: str, value: Any) -> float:
    return require_fraction(name, value, include_zero=True)


def require_bool(name: str, value: Any) -> bool:
    """A real flag: ``bool("false")`` is True, so text, numbers and None are refused."""
    if type(value) is not bool:
        raise TypeError(f"{name} must be a bool, got {value!r} ({type(value).__name__})")
    return value


def require_str(name: str, value: Any, *, non_empty: bool = False) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, got {value!r} ({type(value).__name__})")
    if non_empty and not value.strip():
        raise ValueError(f"{name} must be a non-empty string, got {value!r}")
    return value


def require_choice(name: str, value: Any, choices: tuple[str, ...]) -> str:
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, choices))}, got {value!r}")
    return value


def require_texts(name: str, value: Any) -> list[str]:
    """A sequence of str as a list (one str is refused: it would be read as its characters)."""
    if isinstance(value, str):
        raise TypeError(f"{name} must be a sequence of str, not one str: got {value!r}")
    out = list(value)
    for t in out:
        if not isinstance(t, str):
            raise TypeError(f"{name} must hold str, got {t!r} ({type(t).__name__})")
    return out



def unicode_problem(text: str) -> str | None:
    """Why ``text`` is not valid Unicode, or None. A lone surrogate (``"\\ud800"``, from a broken
    decode) cannot be stored as UTF-8 or embedded: converters refuse it where it comes in, named,
    not deep inside a tokenizer."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return (f"not valid Unicode text: {exc.reason} at position {exc.start} "
                f"({text[exc.start]!r}) in {text!r:.80}")
    return None
