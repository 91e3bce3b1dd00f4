"""Run contracts against one implementation and say, in a student's words, what failed.

A ``Contract`` is a named check: a callable that takes the implementation under test and
raises ``AssertionError`` when the property does not hold (property checks are Hypothesis
tests with a fixed seed, so a checker gives the same verdict on every run). ``run_contracts``
runs them all and returns a ``Verdict``: every contract that failed, with the message, the
falsifying example Hypothesis found, and what the student's code raised if it crashed.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, TypeVar

from memorykit._validate import require_str
from memorykit.classroom.contracts.verdict import Verdict

Subject = TypeVar("Subject")

_MAX_MESSAGE = 600


@dataclass(frozen=True)
class Contract(Generic[Subject]):
    """One property an implementation must keep."""

    name: str
    """What must hold, as a sentence a student can act on ("nothing is lost: ...")."""
    check: Callable[[Subject], None]
    """Raises ``AssertionError`` (or anything else, if the implementation crashes) when the
    property fails for ``subject``; returns None when it holds."""

    def __call__(self, subject: Subject) -> None:
        self.check(subject)


def _explain(error: BaseException) -> str:
    """The failure as a student reads it: the assertion's message, the falsifying example."""
    if isinstance(error, NotImplementedError):
        return ("your code still raises NotImplementedError: replace the "
                "`raise NotImplementedError()` line with your implementation")
    if isinstance(error, AssertionError):
        text = str(error) or "an assertion failed (no message)"
    else:
        text = f"your code raised {type(error).__name__}: {error}"
    # Hypothesis attaches the smallest input it found as a note ("Falsifying example: ..."
    # or, in newer releases, "Failing test case: ..."); its "# or any other generated value"
    # comments are noise in a one-line message.
    examples = [n for n in getattr(error, "__notes__", ())
                if n.startswith(("Falsifying example", "Failing test case"))]
    if examples:
        example = re.sub(r"#[^\n]*", "", examples[0].split(":", 1)[1])
        text += " | smallest failing input: " + example
    text = " ".join(text.split())
    return text if len(text) <= _MAX_MESSAGE else text[: _MAX_MESSAGE - 3] + "..."


def missing_override(candidate: object, base: type, method: str, *, argument: str,
                     exercise: str) -> Verdict | None:
    """For a checker whose student subclasses ``base`` and overrides ``method``: ``TypeError``
    when ``candidate`` is not such a class, a failing verdict when it does not override
    ``method`` (it would pass as the library's own code), else None."""
    if not (isinstance(candidate, type) and issubclass(candidate, base)):
        raise TypeError(f"{argument} must be a class that subclasses {base.__name__} (pass the "
                        f"class itself, not an instance), got {candidate!r}")
    if getattr(candidate, method) is getattr(base, method):
        return Verdict(exercise, False, f"{candidate.__name__} does not override {method}: it is "
                                        f"still {base.__name__}'s own")
    return None


def _hypothesis_files_outside_the_notebook() -> None:
    """Hypothesis caches (its constants and unicode tables; examples are never saved here) go to
    a temp folder instead of ``.hypothesis/`` in the student's working directory, unless the
    user chose a place with ``HYPOTHESIS_STORAGE_DIRECTORY``."""
    if os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY"):
        return
    from hypothesis import configuration

    configuration.set_hypothesis_home_dir(Path(tempfile.gettempdir()) / "memorykit-hypothesis")


def run_contracts(
    subject: Subject, contracts: Sequence[Contract[Subject]], *, exercise: str
) -> Verdict:
    """Every contract run against ``subject``; the verdict passes when none failed.

    A contract that crashes the student's code counts as failed with what was raised, so
    the checker itself never crashes on a wrong implementation.
    """
    exercise = require_str("exercise", exercise, non_empty=True)
    if not contracts:
        raise ValueError("contracts must not be empty: a checker with no contract cannot fail")
    _hypothesis_files_outside_the_notebook()
    failures: list[str] = []
    for contract in contracts:
        if not isinstance(contract, Contract):
            raise TypeError(f"contracts must hold Contract objects, got {contract!r}")
        try:
            contract(subject)
        except Exception as error:  # the student's code may raise anything
            failures.append(f"{contract.name}: {_explain(error)}")
    held = len(contracts) - len(failures)
    if failures:
        return Verdict(exercise, False,
                       f"{len(failures)} of {len(contracts)} contracts failed "
                       f"({held} held); fix the first one and run the cell again",
                       tuple(failures))
    return Verdict(exercise, True, f"all {len(contracts)} contracts hold",
                   tuple(c.name for c in contracts))
