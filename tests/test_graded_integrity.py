"""A student cannot grade themself (issue 25, item 3): an answer cell that redefines the
checkers, patches ``Verdict`` or replaces the checker on its lesson module does not make the
lesson's real graded cells pass a wrong answer; a right answer still passes.

Kernel-free: the graded cells' sources are read from the notebooks and run with ``exec`` in a
namespace standing for the kernel's, after the cheat ran in it.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pytest

from memorykit.classroom import lesson01_checks
from memorykit.classroom.contracts import verdict as verdict_module
from memorykit.classroom.contracts.graded import TamperedChecker, graded
from memorykit.classroom.contracts.verdict import NotYet, Verdict

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"


def graded_cells(path: Path) -> list[tuple[str, str]]:
    """(grade_id, source) of every graded cell of a notebook."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return [(c["metadata"]["nbgrader"]["grade_id"], "".join(c["source"])) for c in cells
            if c.get("metadata", {}).get("nbgrader", {}).get("grade")]


def answer_cell(path: Path, grade_id: str) -> str:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return next("".join(c["source"]) for c in cells
                if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == grade_id)


LESSON01 = NOTEBOOKS / "01_tokens_and_budgets.ipynb"
WRONG = {"answer": 1, "billed_tokens": lambda messages, counter: 0}


def always_passes(*args: Any, **kwargs: Any) -> Verdict:
    return Verdict("cheat", True, "redefined in the notebook")


def run_graded_cells(namespace: dict) -> list[BaseException | None]:
    outcomes: list[BaseException | None] = []
    for _, source in graded_cells(LESSON01):
        try:
            exec(source, namespace)
            outcomes.append(None)
        except Exception as error:  # the cell fails: nbgrader scores it 0
            outcomes.append(error)
    return outcomes


def test_redefined_checkers_in_an_answer_cell_grade_zero():
    namespace = dict(WRONG, check_budget=always_passes, check_billed_tokens=always_passes)
    outcomes = run_graded_cells(namespace)
    assert all(type(o) is NotYet for o in outcomes), outcomes


def test_patched_assert_passed_grades_zero(monkeypatch):
    monkeypatch.setattr(Verdict, "assert_passed", lambda self: self)
    outcomes = run_graded_cells(dict(WRONG))
    assert all(isinstance(o, TamperedChecker) for o in outcomes), outcomes
    assert "Verdict.assert_passed is not memorykit's own" in str(outcomes[0])


@pytest.mark.parametrize("attribute", ["__bool__", "__init__", "__post_init__", "__getattribute__"])
def test_any_patched_verdict_method_grades_zero(monkeypatch, attribute):
    monkeypatch.setattr(Verdict, attribute, lambda self, *a, **k: True, raising=False)
    assert all(isinstance(o, TamperedChecker) for o in run_graded_cells(dict(WRONG)))


@pytest.mark.parametrize("module, name", [
    (lesson01_checks, "check_budget"),
    (lesson01_checks, "check_billed_tokens"),
    (lesson01_checks, "report"),  # what every checker answers through
    (lesson01_checks, "Verdict"),
    (verdict_module, "Verdict"),
])
def test_a_checker_patched_on_its_module_grades_zero(monkeypatch, module, name):
    fake = type("Verdict", (), {}) if name == "Verdict" else always_passes
    monkeypatch.setattr(module, name, fake)
    outcomes = run_graded_cells(dict(WRONG))
    assert all(isinstance(o, TamperedChecker) for o in outcomes), outcomes


@pytest.mark.parametrize("name", ["isinstance", "round", "abs"])
def test_a_builtin_hidden_by_a_global_of_the_checks_module_grades_zero(monkeypatch, name):
    monkeypatch.setattr(lesson01_checks, name, lambda *args: True, raising=False)
    with pytest.raises(TamperedChecker, match="hiding builtins"):
        graded("lesson01_checks.check_budget", 1)


def test_a_patched_checker_with_the_real_code_but_other_globals_grades_zero(monkeypatch):
    import types
    real = lesson01_checks.check_budget
    copy = types.FunctionType(real.__code__, dict(vars(lesson01_checks), report=lambda v, s: v))
    monkeypatch.setattr(lesson01_checks, "check_budget", copy)
    with pytest.raises(TamperedChecker, match="other globals"):
        graded("lesson01_checks.check_budget", 1)


def test_a_right_answer_still_passes():
    namespace: dict = {}
    exec(answer_cell(LESSON01, "01-ex2-answer"), namespace)
    [_, (_, source)] = graded_cells(LESSON01)
    exec(source, namespace)  # no error: full points
    assert graded("lesson01_checks.check_billed_tokens", namespace["billed_tokens"]).passed


def test_graded_refuses_a_checker_that_is_not_a_lessons():
    with pytest.raises(ValueError, match="os.system"):
        graded("os.system", "true")
    with pytest.raises(TamperedChecker, match="not a function"):
        graded("lesson01_checks.check_nothing", 1)


@pytest.mark.parametrize("path", sorted(NOTEBOOKS.glob("[01][0-9]_*.ipynb"))[1:], ids=lambda p: p.stem)
def test_every_graded_cell_ignores_checkers_redefined_in_the_notebook(path):
    """Every lesson's graded cells run with every ``check_...`` name redefined to pass and
    nonsense answers: none passes, and no redefinition is ever called."""
    called: list[str] = []

    def cheat(*args: Any, **kwargs: Any) -> Verdict:
        called.append("cheat")
        return Verdict("cheat", True, "redefined")

    for grade_id, source in graded_cells(path):
        call = ast.parse(source).body[-1].value
        assert isinstance(call, ast.Call) and getattr(call.func, "id", None) == "graded", (
            f"{path.stem} {grade_id}: a graded cell ends in graded(\"lessonNN_checks.check_...\", ...)")
        names = {n.id for n in ast.walk(call) if isinstance(n, ast.Name)} - {"graded"}
        namespace = {name: object() for name in names}
        namespace.update({f"check_{k}": cheat for k in ("budget", "victim_choice")})
        namespace.update({c.value.split(".")[-1]: cheat for c in ast.walk(call)
                          if isinstance(c, ast.Constant) and isinstance(c.value, str)})
        with pytest.raises(Exception) as failed:
            exec(source, namespace)
        assert not isinstance(failed.value, NameError), failed.value
    assert called == []


# The three cheats in one answer cell, as a student hands them in (issue 25's held-out check).
CHEATS = '''answer = 1
import memorykit.classroom.lesson01_checks as checks
from memorykit.classroom.contracts.verdict import Verdict

def check_budget(*args, **kwargs):
    return Verdict("01 budget", True, "redefined in the notebook")

check_billed_tokens = check_budget
checks.check_budget = checks.check_billed_tokens = check_budget
Verdict.assert_passed = lambda self: self
'''


def cheating_submission(release_notebook: Path) -> Any:
    """Lesson 01's release notebook answered with wrong answers and the three cheats in its
    first answer cell (for the grader's own tests too)."""
    import nbformat

    nb = nbformat.read(release_notebook, 4)
    answers = [c for c in nb.cells if c.get("metadata", {}).get("nbgrader", {}).get("solution")]
    answers[0].source = CHEATS
    answers[1].source = "def billed_tokens(messages, counter):\n    return 0\n"
    return nb


def test_a_cheating_notebook_autogrades_zero(tmp_path):
    """Through the course's own grader (nbgrader autograde, graded cells restored from the
    gradebook): the redefined-checker notebook of lesson 01 grades 0 of 3."""
    from memorykit.classroom.course import autograde, build_course, submit

    course = build_course(tmp_path / "course", lessons=["01_tokens_and_budgets"])
    lesson = "01_tokens_and_budgets"
    submit(course, "cheat", {lesson: cheating_submission(course.notebook("release", lesson))})
    grades = autograde(course, "cheat", workers=1)
    assert (grades.points, grades.max_points) == (0, 3), grades.report()
    feedback = "\n".join(c.feedback for g in grades.lessons for c in g.cells)
    assert "is not memorykit's own" in feedback, feedback


SWALLOWING_RUN_CODE = '''import types

async def run_code(self, code_obj, result=None, *, async_=False):
    try:
        exec(code_obj, self.user_global_ns, self.user_ns)
    except BaseException:
        pass
    return False

get_ipython().run_code = types.MethodType(run_code, get_ipython())'''


@pytest.mark.parametrize("cheat", [
    "get_ipython().set_custom_exc((Exception,), lambda *args, **kwargs: None)",
    "get_ipython()._showtraceback = lambda *args, **kwargs: None",
    SWALLOWING_RUN_CODE,
], ids=["custom-exc", "showtraceback", "run-code"])
def test_a_hidden_error_display_still_scores_zero(cheat):
    """nbgrader scores a graded cell 0 when it shows an error or writes to stderr: a notebook
    that keeps IPython from showing (or the kernel from reporting) the failed check still gets
    one of the two."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(cheat), nbformat.v4.new_code_cell(
        graded_cells(LESSON01)[0][1].replace("answer", "1"))])
    NotebookClient(nb, timeout=120, kernel_name="python3", allow_errors=True).execute()
    shown = [o for o in nb.cells[1].outputs
             if o.output_type == "error" or o.get("name") == "stderr"]
    assert shown and "error display is not its own" in str(shown[0]), nb.cells[1].outputs
