"""The contract of every build-it-yourself exercise: the student's code does the work itself.

The library's function that does an exercise's work passes every other contract of that
exercise (it is what they were written against), and so does anything that hands the work to
it: the function itself, an alias, a wrapper, a call through its module. ``own_code`` fails
those, two ways:

* by what the code refers to (``reaches``): the library function itself, a global or closure
  holding it, its name reached through its module (or a package above it), or imported inside
  the function;
* given a ``probe`` (one call of the student's code on a small input), by what runs: the
  library functions' code objects are watched with ``sys.setprofile`` while the probe runs, so
  a path ``reaches`` cannot read (a method inherited, ``weights.score(...)``) is seen too.
"""

from __future__ import annotations

import sys
import types
from collections.abc import Callable
from typing import Any

from memorykit.classroom.contracts.runner import Contract


def reaches(fn: Any, target: Callable) -> bool:
    """Whether ``fn`` is ``target`` or its code refers to it (see the module's docstring)."""
    if fn is target or getattr(fn, "func", None) is target:  # functools.partial too
        return True
    code = getattr(fn, "__code__", None)
    if code is None:
        return False
    names, stack = set(), [code]
    while stack:  # the function's code and the code of what it defines (lambdas, inner defs)
        c = stack.pop()
        names.update(c.co_names)
        stack += [k for k in c.co_consts if isinstance(k, types.CodeType)]
    env = getattr(fn, "__globals__", {})
    held = [env.get(n) for n in names]
    for cell in getattr(fn, "__closure__", None) or ():
        try:
            held.append(cell.cell_contents)
        except ValueError:  # an empty cell
            pass
    home = target.__module__
    via_module = home in names or any(  # imported inside, or a module's attribute
        isinstance(v, types.ModuleType) and f"{home}.".startswith(f"{v.__name__}.") for v in held)
    return any(v is target for v in held) or (target.__name__ in names and via_module)


def library_calls(probe: Callable[[], Any], library: tuple[Callable, ...]) -> list[str]:
    """The names of the ``library`` functions that ran while ``probe()`` ran. An exception from
    the probe (the student's own crash) is left for the other contracts to report."""
    codes = {f.__code__: f.__qualname__ for f in library if hasattr(f, "__code__")}
    ran: list[str] = []

    def watch(frame: Any, event: str, arg: Any) -> None:
        if event == "call" and frame.f_code in codes:
            ran.append(codes[frame.f_code])

    previous = sys.getprofile()
    sys.setprofile(watch)
    try:
        probe()
    except Exception:  # noqa: BLE001 - a wrong answer's crash is another contract's business
        pass
    finally:
        sys.setprofile(previous)
    return ran


def own_code(*library: Callable, probe: Callable[[Any], Any] | None = None,
             what: str = "the rule", title: str | None = None) -> Contract:
    """The contract that the student's code is not, and does not call, any of ``library``.
    ``probe(subject)`` calls the student's function (or makes and uses the student's class) once
    on a small input; without it only what the code refers to is read. ``title`` names the
    contract in the verdict (default: every library function's name)."""
    if not library:
        raise ValueError("own_code needs at least one library function to refuse")
    names = " or ".join(f.__name__ for f in library)

    def check(subject: Any) -> None:
        used = [f.__name__ for f in library if reaches(subject, f)]
        if not used and probe is not None:
            used = library_calls(lambda: probe(subject), library)
        assert not used, (f"your code hands the work to the library's {used[0]}: write {what} "
                          "yourself (the library's version is what yours is compared with)")
    return Contract(title or f"your own code, not a call to the library's {names}", check)
