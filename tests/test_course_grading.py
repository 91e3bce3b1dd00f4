"""The course editions end to end (issue 16): release, then grade the release three ways.

``build_course`` makes the student edition with nbgrader's ``generate_assignment`` and the
instructor edition; nbgrader's ``autograde`` then grades the release (a) unanswered: no marks,
(b) with every answer cell replaced by its ``metadata.memorykit.wrong_answer``: no marks on any
graded cell, each with the checker's "NOT YET" explanation as feedback, (c) with the reference
answers (the answer cells of the instructor notebooks): full marks. The student edition holds no
solution region, no line of a reference answer, no output and no wrong answer, and every relative
link in both editions resolves.

Run over a two-lesson toy course always, and over every lesson in ``notebooks/`` that has graded
cells (a lesson without them fails the rhythm test, tests/test_notebook_rhythm.py, not this one).
"""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

import pytest

pytest.importorskip("nbgrader")

import nbformat  # noqa: E402

from course_toy import write_toy_repo  # noqa: E402
from memorykit.classroom.course import Course, Grades, autograde, build_course, submit  # noqa: E402
from memorykit.classroom.course.layout import relative_links  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
WORKERS = 2
MAX_GRADED_BYTES = 1_000_000
BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"


def _nbgrader(cell) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {})


def graded_lessons(repo: Path) -> list[str]:
    """The lessons of ``repo`` whose notebook has at least one graded cell."""
    found = []
    for path in sorted((repo / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        if path.stem[:2] != "00" and any(_nbgrader(c).get("grade")
                                         for c in nbformat.read(path, 4).cells):
            found.append(path.stem)
    return found


def _answer_cells(nb) -> dict[str, object]:
    return {_nbgrader(c)["grade_id"]: c for c in nb.cells
            if c.cell_type == "code" and _nbgrader(c).get("solution")}


def _solution_lines(source: str) -> set[str]:
    inside, outside, within = set(), set(), False
    for line in source.splitlines():
        stripped = line.strip()
        if stripped in (BEGIN, END):
            within = stripped == BEGIN
        elif stripped:
            (inside if within else outside).add(stripped)
    return inside - outside


def _submission(course: Course, lesson: str, kind: str):
    """The release notebook of ``lesson`` answered as ``kind``: blank, wrong or reference."""
    nb = nbformat.read(course.notebook("release", lesson), 4)
    if kind == "blank":
        return nb
    teacher = _answer_cells(nbformat.read(course.notebook("instructor", lesson), 4))
    for grade_id, cell in _answer_cells(nb).items():
        if kind == "reference":
            cell.source = teacher[grade_id].source
        else:
            wrong = teacher[grade_id].metadata.get("memorykit", {}).get("wrong_answer")
            assert isinstance(wrong, str) and wrong.strip(), (
                f"{lesson} {grade_id}: no metadata.memorykit.wrong_answer to submit")
            cell.source = wrong
    return nb


def assert_student_edition_clean(course: Course) -> None:
    for lesson in course.lessons:
        student = nbformat.read(course.notebook("release", lesson), 4)
        teacher = _answer_cells(nbformat.read(course.notebook("instructor", lesson), 4))
        answers = _answer_cells(student)
        assert set(answers) == set(teacher), f"{lesson}: answer cells differ between editions"
        for i, cell in enumerate(student.cells):
            assert BEGIN not in cell.source and END not in cell.source, f"{lesson} cell {i}"
            assert not cell.get("outputs"), f"{lesson} cell {i} keeps outputs in the release"
            kept = cell.metadata.get("memorykit", {})
            assert "wrong_answer" not in kept and "shortcuts" not in kept, f"{lesson} cell {i}"
        for grade_id, cell in answers.items():
            shown = {line.strip() for line in cell.source.splitlines()}
            leaked = _solution_lines(teacher[grade_id].source) & shown
            assert not leaked, f"{lesson} {grade_id}: the release shows answer lines {leaked}"


def assert_review_answer_cells(course: Course) -> None:
    """Issue 24: the student edition had nowhere to write the review answers. Under each cell
    of review questions the release has a markdown cell with one line per question; the
    instructor edition has none."""
    for lesson in course.lessons:
        for edition, expected in (("release", True), ("instructor", False)):
            cells = nbformat.read(course.notebook(edition, lesson), 4).cells
            for i, cell in enumerate(cells):
                if cell.cell_type == "markdown" and cell.source.startswith("## Review questions"):
                    after = cells[i + 1] if i + 1 < len(cells) else None
                    has = after is not None and after.source.startswith("**Your answers**")
                    assert has == expected, f"{edition} {lesson}: answer cell {has}"
                    if expected:
                        asked = re.findall(r"^(\d+)\. ", cell.source, re.M)
                        assert re.findall(r"^(\d+)\. ", after.source, re.M) == asked, lesson
                        assert after.cell_type == "markdown", lesson


def broken_links(edition: Path) -> list[str]:
    """Relative links in ``edition``'s notebooks (markdown cells) and markdown files that
    do not resolve."""
    broken = []
    for path in sorted(edition.rglob("*")):
        if path.suffix == ".ipynb":
            texts = [c.source for c in nbformat.read(path, 4).cells if c.cell_type == "markdown"]
        elif path.suffix == ".md":
            texts = [path.read_text(encoding="utf-8")]
        else:
            continue
        for text in texts:
            for target in relative_links(text):
                if not (path.parent / target).exists():
                    broken.append(f"{path.relative_to(edition)} -> {target}")
    return broken


def grade_three_ways(course: Course) -> dict[str, Grades]:
    grades = {}
    for kind in ("blank", "wrong", "reference"):
        submit(course, kind, {lesson: _submission(course, lesson, kind)
                              for lesson in course.lessons})
        grades[kind] = autograde(course, kind, workers=WORKERS)
    return grades


def assert_graded_as_expected(grades: dict[str, Grades], lessons: tuple[str, ...]) -> None:
    for kind, result in grades.items():
        assert [g.lesson for g in result.lessons] == list(lessons), kind
        for lesson in result.lessons:
            assert lesson.cells, f"{lesson.lesson}: no graded cell was graded"
            for cell in lesson.cells:
                where = f"{kind} {lesson.lesson} {cell.grade_id}: {cell.points:g}/{cell.max_points:g}"
                if kind == "reference":
                    assert cell.passed and cell.max_points > 0, f"{where}\n{cell.feedback}"
                else:
                    assert cell.points == 0, where
                    assert cell.feedback, f"{where}: no feedback"
                if kind == "wrong":
                    assert "NOT YET" in cell.feedback, f"{where}: not the checker's verdict:\n" \
                                                       f"{cell.feedback}"
    reference = grades["reference"]
    assert reference.points == reference.max_points > 0


def run_end_to_end(repo: Path, out: Path, lessons: list[str]) -> tuple[Course, dict[str, Grades]]:
    course = build_course(out, repo=repo, lessons=lessons)
    assert course.lessons == tuple(lessons)
    assert_student_edition_clean(course)
    assert_review_answer_cells(course)
    for edition in (course.release, course.instructor):
        assert broken_links(edition) == [], edition.name
    grades = grade_three_ways(course)
    assert_graded_as_expected(grades, course.lessons)
    return course, grades


@pytest.fixture(scope="module")
def toy(tmp_path_factory) -> tuple[Course, dict[str, Grades]]:
    tmp = tmp_path_factory.mktemp("toy")
    return run_end_to_end(write_toy_repo(tmp / "repo"), tmp / "course", ["01_toy", "02_toy"])


def test_toy_course_releases_and_grades_end_to_end(toy):
    course, grades = toy
    assert grades["reference"].points == 4 and grades["reference"].max_points == 4
    victim = grades["wrong"].lesson("01_toy").cells[1]
    assert victim.grade_id == "01-ex2-check" and victim.max_points == 2
    assert "ImportanceBuffer" in victim.feedback and "smallest failing input" in victim.feedback
    assert "NameError" in grades["blank"].lesson("01_toy").cells[0].feedback


def test_the_toy_release_has_a_review_answer_cell(toy):
    course, _ = toy
    cells = nbformat.read(course.notebook("release", "01_toy"), 4).cells
    at = next(i for i, c in enumerate(cells) if c.source.startswith("## Review questions"))
    assert cells[at + 1].cell_type == "markdown"
    assert cells[at + 1].source.splitlines()[-2:] == ["1. *(your answer)*", "2. *(your answer)*"]
    assert "instructor" in cells[at + 1].source.splitlines()[0]


def test_the_student_workspace_is_refreshed_keeping_the_students_work(tmp_path):
    """`course student --out DIR` (./run lab --student): the release in DIR; a later run
    replaces what the student did not change and keeps what the student did."""
    from memorykit.classroom.course.student import MANIFEST, student_workspace

    repo = write_toy_repo(tmp_path / "repo")
    folder = tmp_path / "student"
    first = student_workspace(folder, repo=repo)
    assert first.lessons == ("01_toy", "02_toy") and not first.kept and not first.updated
    assert {"00_index.ipynb", "01_toy/01_toy.ipynb", "02_toy/02_toy.ipynb",
            "docs/BIBLIOGRAPHY.md"} <= set(first.added)
    assert not (folder / "docs" / "review").exists()
    assert "### BEGIN SOLUTION" not in (folder / "01_toy" / "01_toy.ipynb").read_text()
    mine = nbformat.read(folder / "01_toy" / "01_toy.ipynb", 4)
    answer = next(c for c in mine.cells if _nbgrader(c).get("grade_id") == "01-ex1-answer")
    assert "NotImplementedError" in answer.source
    answer.source = "budget = 4_200"
    nbformat.write(mine, folder / "01_toy" / "01_toy.ipynb")
    lesson = nbformat.read(repo / "notebooks" / "02_toy.ipynb", 4)
    lesson.cells.insert(1, nbformat.v4.new_markdown_cell("A new paragraph."))
    nbformat.write(lesson, repo / "notebooks" / "02_toy.ipynb")
    again = student_workspace(folder, repo=repo)
    assert again.kept == ("01_toy/01_toy.ipynb",) and again.updated == ("02_toy/02_toy.ipynb",)
    assert not again.added and "docs/BIBLIOGRAPHY.md" in again.unchanged
    assert "budget = 4_200" in (folder / "01_toy" / "01_toy.ipynb").read_text()
    assert "A new paragraph." in (folder / "02_toy" / "02_toy.ipynb").read_text()
    assert "kept your 01_toy/01_toy.ipynb" in again.report()
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep me", encoding="utf-8")
    with pytest.raises(FileExistsError, match="mine"):
        student_workspace(tmp_path / "mine", repo=repo)
    with pytest.raises(NotADirectoryError, match="notes.txt"):
        student_workspace(tmp_path / "mine" / "notes.txt", repo=repo)
    assert (folder / MANIFEST).is_file()


def test_editions_move_links_and_keep_instructor_pages_out_of_the_release(toy):
    course, _ = toy
    student = nbformat.read(course.notebook("release", "01_toy"), 4)
    text = "\n".join(c.source for c in student.cells)
    assert "[02 · Toy](../02_toy/02_toy.ipynb)" in text
    assert "[D1](../docs/BIBLIOGRAPHY.md#d1)" in text and 'href="../docs/GLOSSARY.md"' in text
    assert "INSTRUCTOR_GUIDE" not in text and "the guide" in text  # unlinked, text kept
    assert not (course.release / "docs" / "INSTRUCTOR_GUIDE.md").exists()
    assert not (course.release / "docs" / "review").exists()
    assert (course.instructor / "docs" / "review" / "01.md").is_file()
    assert "[the guide](../docs/INSTRUCTOR_GUIDE.md)" in "\n".join(
        c.source for c in nbformat.read(course.notebook("instructor", "01_toy"), 4).cells)
    bibliography = (course.release / "docs" / "BIBLIOGRAPHY.md").read_text(encoding="utf-8")
    assert "(../01_toy/01_toy.ipynb)" in bibliography
    assert "[Budgets](01_toy/01_toy.ipynb)" in "\n".join(
        c.source for c in nbformat.read(course.release / "00_index.ipynb", 4).cells)


PROBE = ("import json\nfrom ipykernel.connect import get_connection_info\n"
         "info = get_connection_info(unpack=True)\n"
         "print(json.dumps({'transport': info['transport'], 'ip': info['ip']}))")


@pytest.mark.parametrize("workers", [1, 2])
def test_grading_kernels_use_private_unix_sockets_not_tcp_ports(toy, workers):
    """Kernels started at once by two autograde processes were once handed the same TCP port
    ("Address already in use", a lesson failed to grade in CI): they talk over Unix sockets in
    a private folder instead, which no other process can take, and the folder is removed."""
    course, _ = toy
    student = f"probe{workers}"
    notebooks = {}
    for lesson in course.lessons:
        nb = _submission(course, lesson, "reference")
        nb.cells.append(nbformat.v4.new_code_cell(PROBE))
        notebooks[lesson] = nb
    submit(course, student, notebooks)
    grades = autograde(course, student, workers=workers)
    assert grades.points == grades.max_points > 0
    for lesson in course.lessons:
        graded = nbformat.read(course.root / "autograded" / student / lesson / f"{lesson}.ipynb", 4)
        printed = "".join(out.get("text", "") for out in graded.cells[-1].outputs)
        info = json.loads(printed)
        assert info["transport"] == "ipc", (lesson, info)
        assert Path(info["ip"]).parent.name.startswith("mk-kernel-"), (lesson, info)
        assert not Path(info["ip"]).parent.exists(), f"{info['ip']}: socket folder left behind"


def test_the_report_shows_points_and_feedback(toy):
    _, grades = toy
    report = grades["wrong"].report()
    assert report.startswith("wrong: 0 / 4 points")
    assert "01-ex2-check: 0 / 2" in report and "| [02 victim choice] NOT YET" in report
    assert "NotYet" not in report, "the verdict's exception name is not feedback"


def test_bad_arguments_are_refused_naming_the_value(toy, tmp_path):
    course, _ = toy
    with pytest.raises(ValueError, match="'a b'"):
        submit(course, "a b", {})
    with pytest.raises(ValueError, match="'99_nope'"):
        submit(course, "x", {"99_nope": course.notebook("release", "01_toy")})
    with pytest.raises(TypeError, match="2.5"):
        autograde(course, "blank", workers=2.5)
    with pytest.raises(ValueError, match="workers must be >= 1, got 0"):
        autograde(course, "blank", workers=0)
    with pytest.raises(TypeError, match="'01_toy'"):
        autograde(course, "blank", "01_toy")
    with pytest.raises(FileNotFoundError, match="nobody"):
        autograde(course, "nobody")
    with pytest.raises(ValueError, match="'99_nope'"):
        build_course(tmp_path / "c", repo=ROOT, lessons=["99_nope"])
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep me", encoding="utf-8")
    with pytest.raises(FileExistsError, match="not a course directory"):
        build_course(tmp_path / "mine", repo=ROOT)
    with pytest.raises(FileNotFoundError, match="not a course directory"):
        Course.open(tmp_path / "mine")


def test_the_lessons_release_and_grade_end_to_end(tmp_path):
    lessons = graded_lessons(ROOT)
    if not lessons:
        pytest.skip("no lesson in notebooks/ has graded cells yet")
    t0 = time.monotonic()
    course, grades = run_end_to_end(ROOT, tmp_path / "course", lessons)
    # issue 24: each FigureWidget's 5 MB JavaScript bundle was stored in the widget state of
    # every autograded notebook (5-20 MB each); one graded notebook per student and lesson
    sizes = {path.relative_to(course.root / "autograded").as_posix(): path.stat().st_size
             for path in sorted((course.root / "autograded").glob("*/*/*.ipynb"))}
    assert len(sizes) == 3 * len(lessons), sorted(sizes)
    heavy = {name: f"{size / 1e6:.1f} MB" for name, size in sizes.items() if size >= MAX_GRADED_BYTES}
    assert not heavy, f"autograded notebooks of 1 MB or more: {heavy}"
    artifacts = ROOT / ".ci" / "artifacts"
    artifacts.mkdir(parents=True, exist_ok=True)
    (artifacts / "course_grades.txt").write_text(
        "\n\n".join(g.report() for g in grades.values())
        + f"\n\n{len(lessons)} lessons x 3 submissions graded in {time.monotonic() - t0:.0f} s "
        f"({WORKERS} workers)\n"
        f"largest autograded notebook: {max(sizes.values()) / 1e6:.2f} MB "
        f"({max(sizes, key=sizes.get)})\n", encoding="utf-8")


def test_cli_grades_a_students_folder(toy, tmp_path, capsys):
    from memorykit.classroom.__main__ import main

    course, _ = toy
    folder = tmp_path / "ada"
    folder.mkdir()
    nbformat.write(_submission(course, "02_toy", "reference"), folder / "02_toy.ipynb")
    assert main(["course", "grade", "--course", str(course.root), "--student", "ada",
                 "--notebooks", str(folder)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("ada: 1 / 1 points") and "02-ex1-check: 1 / 1" in out
    for argv, named in ((["--workers", "0"], "workers must be >= 1, got 0"),
                        (["--notebooks", str(tmp_path / "none")], "none"),
                        (["--lessons", "99_x"], "'99_x'")):
        with pytest.raises(SystemExit) as exc:
            main(["course", "grade", "--course", str(course.root), "--student", "ada", *argv])
        assert exc.value.code == 2 and named in capsys.readouterr().err


def test_cli_grade_writes_nothing_to_stderr(toy, tmp_path):
    """`course grade` printed three SQLAlchemy warnings from nbgrader's gradebook on every run
    (issue 24): the command's stderr is empty when grading succeeds."""
    import subprocess
    import sys

    course, _ = toy
    folder = tmp_path / "quiet"
    folder.mkdir()
    nbformat.write(_submission(course, "02_toy", "reference"), folder / "02_toy.ipynb")
    done = subprocess.run([sys.executable, "-m", "memorykit.classroom", "course", "grade",
                           "--course", str(course.root), "--student", "quiet",
                           "--notebooks", str(folder)], capture_output=True, text=True,
                          cwd=tmp_path, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("quiet: 1 / 1 points"), done.stdout
    assert done.stderr == "", done.stderr


def test_graders_store_no_widget_state(toy):
    """What keeps graded notebooks small: nbgrader's Execute stores no widget state, in the
    API grading uses and in the course's nbgrader_config.py (for nbgrader run by hand)."""
    from memorykit.classroom.course import _nbgrader

    course, _ = toy
    assert _nbgrader.api(course.root).config.Execute.store_widget_state is False
    assert "c.Execute.store_widget_state = False" in (course.root / "nbgrader_config.py").read_text()


def test_cli_releases_a_lesson_and_refuses_bad_arguments(tmp_path, capsys):
    from memorykit.classroom.__main__ import main

    assert main(["course", "release", "--out", str(tmp_path / "c"),
                 "--lessons", "01_tokens_and_budgets"]) == 0
    assert "student edition:" in capsys.readouterr().out
    released = tmp_path / "c" / "release" / "01_tokens_and_budgets" / "01_tokens_and_budgets.ipynb"
    assert released.is_file() and broken_links(tmp_path / "c" / "release") == []
    with pytest.raises(SystemExit) as exc:
        main(["course", "release", "--out", str(tmp_path / "d"), "--lessons", "13_nope"])
    assert exc.value.code == 2 and "'13_nope'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["course", "release", "--out", str(released)])
    assert "is a file" in capsys.readouterr().err


def test_kernel_sockets_stay_short_under_a_long_tmpdir(tmp_path, monkeypatch):
    """A Unix socket path has at most 107 bytes: under a long TMPDIR the sockets go to /tmp."""
    import tempfile

    from memorykit.classroom.course._nbgrader import kernel_sockets

    deep = tmp_path / ("d" * 60) / ("e" * 60)
    deep.mkdir(parents=True)
    monkeypatch.setattr(tempfile, "tempdir", str(deep))
    with kernel_sockets() as prefix:
        assert len(prefix) + len("-65535") < 107 and Path(prefix).parent.is_dir()
        folder = Path(prefix).parent
    assert not folder.exists()
    short = tmp_path.parent.parent  # pytest's base temp: short on any usual machine
    monkeypatch.setattr(tempfile, "tempdir", str(short))
    if len(str(short)) < 60:
        with kernel_sockets() as prefix:
            assert Path(prefix).parent.parent == short, "a short TMPDIR is used as it is"


# Issue 25: what a student hands in cannot stop the grader, hide a lesson or reach the course.

LOOP = "while True:\n    try:\n        pass\n    except KeyboardInterrupt:\n        pass"
SNOOP = ("import json, os\nhere = os.getcwd()\nprint(json.dumps({'cwd': here, 'home': os.environ"
         ".get('HOME'), 'key': os.environ.get('OPENAI_API_KEY'), 'seen': sorted(os.listdir("
         "os.path.join(here, '..', '..', '..', 'submitted'))), 'source': sorted(os.listdir("
         "os.path.join(here, '..', '..', '..', 'source', '01_toy')))}))")


def _with_cell(nb, source: str, at: int = 2):
    nb.cells.insert(at, nbformat.v4.new_code_cell(source))
    return nb


@pytest.fixture(scope="module")
def hostile(toy, tmp_path_factory):
    """Three students' hostile submissions graded over the toy course (its reference grades
    already in the gradebook): files that are no notebook, a kernel killed and a loop that
    ignores interrupts, a deleted graded cell beside a cell that looks around."""
    course, _ = toy
    tmp = tmp_path_factory.mktemp("hostile")
    (tmp / "text.ipynb").write_text("this is not JSON", encoding="utf-8")
    (tmp / "empty.ipynb").write_text("{}", encoding="utf-8")
    invalid = json.loads(nbformat.writes(_submission(course, "02_toy", "reference")))
    del invalid["cells"][1]["source"]  # JSON, nbformat 4, but a cell without its source
    (tmp / "invalid.ipynb").write_text(json.dumps(invalid), encoding="utf-8")
    deleted = _with_cell(_submission(course, "01_toy", "reference"), SNOOP)
    deleted.cells = [c for c in deleted.cells if _nbgrader(c).get("grade_id") != "01-ex2-check"]
    submit(course, "broken", {"01_toy": tmp / "text.ipynb", "02_toy": tmp / "empty.ipynb"})
    submit(course, "hostile", {
        "01_toy": _with_cell(_submission(course, "01_toy", "reference"),
                             "import os\nos.kill(os.getpid(), 9)"),
        "02_toy": _with_cell(_submission(course, "02_toy", "reference"), LOOP)})
    submit(course, "deleter", {"01_toy": deleted, "02_toy": tmp / "invalid.ipynb"})
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("OPENAI_API_KEY", "sk-not-for-students")
        return course, {student: autograde(course, student, workers=WORKERS, notebook_timeout=20)
                        for student in ("broken", "hostile", "deleter")}


@pytest.mark.parametrize("student, lesson, reason", [
    ("broken", "01_toy", "the notebook is not JSON"),
    ("broken", "02_toy", "not a valid Jupyter notebook"),
    ("deleter", "02_toy", "not a valid Jupyter notebook"),
    ("hostile", "01_toy", "the kernel died"),
    ("hostile", "02_toy", "took longer than 20 s"),
])
def test_a_notebook_that_cannot_be_graded_scores_0_with_the_reason(hostile, student, lesson, reason):
    course, grades = hostile
    grade = grades[student].lesson(lesson)
    assert reason in grade.problem, grade.problem
    assert grade.points == 0 and grade.max_points == (3 if lesson == "01_toy" else 1)
    assert all(cell.feedback == grade.problem for cell in grade.cells)
    assert f"{lesson}: 0 / {grade.max_points:g} (not graded: {grade.problem})" in grades[student].report()


def test_a_deleted_graded_cell_scores_0_of_its_points(hostile):
    """The lesson stays in the percentage (0/2 for the cell, not 0/0)."""
    from nbgrader.api import Gradebook

    course, grades = hostile
    lesson = grades["deleter"].lesson("01_toy")
    assert [(c.grade_id, c.points, c.max_points) for c in lesson.cells] == [
        ("01-ex1-check", 1, 1), ("01-ex2-check", 0, 2)]
    assert lesson.cells[1].feedback == "graded cell deleted from the notebook"
    with Gradebook(f"sqlite:///{course.root}/gradebook.db") as gb:
        stored = gb.find_submission_notebook("01_toy", "01_toy", "deleter")
        assert (stored.score, stored.max_score) == (1, 3)


def test_student_code_runs_in_a_scratch_course_without_secrets(hostile):
    """Graded code once ran in the course itself: it read source/ (the reference answers) and
    listed every student. It runs in a scratch course holding only that student's submission,
    with HOME elsewhere and no API key in its environment."""
    course, _ = hostile
    graded = nbformat.read(course.root / "autograded" / "deleter" / "01_toy" / "01_toy.ipynb", 4)
    seen = json.loads("".join(o.get("text", "") for o in graded.cells[2].outputs))
    assert not Path(seen["cwd"]).is_relative_to(course.root), seen["cwd"]
    assert seen["seen"] == ["deleter"] and seen["source"] == [], seen
    assert seen["key"] is None and seen["home"] != os.environ.get("HOME")
    assert not Path(seen["cwd"]).exists(), "the scratch course is removed"


def test_cli_grades_hostile_notebooks_without_a_traceback(toy, tmp_path):
    """`course grade` with a relative --course on a killed kernel and a non-notebook: each
    lesson 0 with its reason, exit 0, nothing on stderr."""
    import subprocess
    import sys

    course, _ = toy
    folder = tmp_path / "mallory"
    folder.mkdir()
    nbformat.write(_with_cell(_submission(course, "01_toy", "reference"),
                              "import os\nos.kill(os.getpid(), 9)"), folder / "01_toy.ipynb")
    (folder / "02_toy.ipynb").write_bytes(b"\xff\xfe not a notebook")
    done = subprocess.run([sys.executable, "-m", "memorykit.classroom", "course", "grade",
                           "--course", os.path.relpath(course.root, tmp_path), "--student",
                           "mallory", "--notebooks", "mallory", "--notebook-timeout", "120"],
                          capture_output=True, text=True, cwd=tmp_path, check=False)
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    assert done.stdout.startswith("mallory: 0 / 4 points"), done.stdout
    assert "01_toy: 0 / 3 (not graded: the kernel died" in done.stdout
    assert "02_toy: 0 / 1 (not graded: the notebook is not UTF-8 text" in done.stdout


def test_cli_refuses_a_student_name_too_long_for_a_folder(toy, capsys):
    from memorykit.classroom.__main__ import main

    course, _ = toy
    with pytest.raises(SystemExit) as exc:
        main(["course", "grade", "--course", str(course.root), "--student", "x" * 300])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and "1-64 letters" in err and "x" * 300 in err
    assert "db upgrade" not in err and "Traceback" not in err
    for bad, message in [(0, r"must be in \[0.001, 86400\], got 0"),
                         (10**400, "must be finite, got an integer of 401 digits"),
                         (float("nan"), "must be finite, got nan")]:
        with pytest.raises(ValueError, match=f"notebook_timeout {message}"):
            autograde(course, "blank", notebook_timeout=bad)


def test_release_refuses_to_replace_a_graded_course_without_force(toy, tmp_path, capsys):
    """`course release` over a graded course emptied its gradebook (10 students -> 0)."""
    import shutil

    from memorykit.classroom.__main__ import main
    from memorykit.classroom.course.release import graded_in

    course, _ = toy
    copy = tmp_path / "course"
    shutil.copytree(course.root, copy)
    before = graded_in(copy)
    assert before[0] >= 3 and before[1] >= 6, before
    with pytest.raises(SystemExit) as exc:
        main(["course", "release", "--out", str(copy)])
    err = capsys.readouterr().err
    assert exc.value.code == 2
    assert f"holds {before[0]} students and {before[1]} graded submissions" in err
    assert "--force" in err and graded_in(copy) == before
    assert (copy / "autograded" / "reference").is_dir() and (copy / "source" / "01_toy").is_dir()
    again = build_course(copy, repo=course.root.parent / "repo", lessons=["02_toy"], force=True)
    assert graded_in(again.root) == (0, 0) and again.lessons == ("02_toy",)


def test_a_broken_or_missing_gradebook_is_a_clear_error(toy, tmp_path, capsys):
    """Not SQLAlchemy's traceback, nor nbgrader's advice to run `nbgrader db upgrade`."""
    import shutil

    from memorykit.classroom.__main__ import main

    course, _ = toy
    copy = tmp_path / "course"
    shutil.copytree(course.root, copy, ignore=shutil.ignore_patterns("autograded"))
    (copy / "gradebook.db").write_text("not a database", encoding="utf-8")
    for argv, named in ((["grade", "--course", str(copy), "--student", "reference"],
                         "is not a gradebook nbgrader can use (file is not a database)"),
                        (["release", "--out", str(copy)], "is not a gradebook nbgrader made")):
        with pytest.raises(SystemExit) as exc:
            main(["course", *argv])
        err = capsys.readouterr().err
        assert exc.value.code == 2 and named in err and "db upgrade" not in err, err
    (copy / "gradebook.db").unlink()
    with pytest.raises(SystemExit):
        main(["course", "grade", "--course", str(copy), "--student", "reference"])
    assert "no gradebook at" in capsys.readouterr().err
