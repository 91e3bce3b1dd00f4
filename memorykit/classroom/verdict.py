"""What every exercise checker shares: the ``Verdict`` it returns, how a notebook shows it, and
the checks of an answer's kind that several lessons' checkers make."""

from __future__ import annotations

import inspect
import math
from typing import Any

from memorykit._validate import require_bool, require_int
from memorykit.classroom.contracts.verdict import Verdict  # noqa: F401  (checkers import it from here)


def report(verdict: Verdict, show: bool) -> Verdict:
    """Return ``verdict``, printing it first when ``show`` (for scripts without a display).
    Every checker answers through here, so this is where its ``show`` is checked."""
    if require_bool("show", show):
        print(verdict)
    return verdict


def require_exercise_budget(budget: Any, fixed: int) -> None:
    """The exercise fixes the budget: another one is refused, not graded."""
    if require_int("budget", budget, minimum=1) != fixed:
        raise ValueError(f"the exercise fixes budget={fixed}, got {budget!r}: leave budget out")


def require_function(name: str, value: Any, params: tuple[str, ...], keywords: tuple[str, ...] = ()) -> None:
    """``value`` is a function taking ``params`` (positionally) and ``keywords``, or TypeError
    saying what to pass."""
    if isinstance(value, type) or not callable(value):
        raise TypeError(f"{name} must be your function itself (pass it without calling it), got {value!r}")
    try:
        inspect.signature(value).bind(*params, **dict.fromkeys(keywords))
    except TypeError:
        wanted = ", ".join([*params, *(["*"] if keywords else []), *keywords])
        raise TypeError(f"{name} must take the arguments ({wanted}), got "
                        f"{value.__name__}{inspect.signature(value)}") from None
    except ValueError:  # a builtin without a signature: let the contracts call it
        pass


def require_number(name: str, value: Any, what: str) -> float:
    """A finite real number (not a bool), else TypeError / ValueError naming the value."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be {what}, got {value!r} ({type(value).__name__})")
    if not math.isfinite(value):
        raise ValueError(f"{name} must be {what}, got {value!r}")
    return float(value)


def require_answer_dict(value: Any, keys: tuple[str, str]) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise TypeError(f"answer must be a dict with keys {keys[0]!r} and {keys[1]!r}, got "
                        f"{value!r} ({type(value).__name__})")
    if set(value) != set(keys):
        raise ValueError(f"answer must have exactly the keys {keys[0]!r} and {keys[1]!r}, got "
                         f"{sorted(map(str, value))}")
    return value


def require_unit(name: str, value: Any, what: str) -> float:
    x = require_number(name, value, what)
    if not 0 <= x <= 1:
        raise ValueError(f"{name} must be {what}, got {value!r}")
    return x
