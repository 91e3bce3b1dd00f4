"""A failed graded cell shows the checker's verdict, not a traceback into the verdict module
(issue 24: every NOT YET sat under ten lines of ``verdict.py``'s source and install path)."""

from __future__ import annotations

import re

import nbformat
import pytest

from memorykit.classroom.verdict import Verdict

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def test_a_failed_verdict_raises_an_assertion_error_with_its_text():
    verdict = Verdict("01 budget", False, "too low", ("add 289 tokens",))
    with pytest.raises(AssertionError) as raised:
        verdict.assert_passed()
    assert str(raised.value) == str(verdict)
    assert Verdict("01 budget", True, "fits").assert_passed().passed


def test_a_kernel_shows_the_failed_verdict_alone():
    from nbclient import NotebookClient

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        "from memorykit.classroom.verdict import Verdict\n"
        "Verdict('01 budget', False, 'too low', ('add 289 tokens',)).assert_passed()")])
    NotebookClient(nb, timeout=120, kernel_name="python3", allow_errors=True).execute()
    [error] = [o for o in nb.cells[0].outputs if o.output_type == "error"]
    shown = ANSI.sub("", "\n".join(error.traceback))
    assert shown == "[01 budget] NOT YET: too low\n  - add 289 tokens"
    assert error.ename == "NotYet" and "NOT YET" in error.evalue  # nbgrader: 0 points, feedback
