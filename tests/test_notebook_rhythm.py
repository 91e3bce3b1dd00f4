"""Every lesson notebook keeps the same rhythm and the facts CI depends on.

One test per (rule, notebook), so a failure names both. With no notebooks yet, the tests skip.

Lesson notebooks (``NN_name.ipynb``, NN != 00) have markdown headings in this order:
``# NN · Title``, ``## Objectives``, ``## Background``, ``## Exercises``, ``## Summary``,
``## Next``, and at least one code cell between Exercises and Summary calls a checker
(``check_...(``). ``00_index.ipynb`` is the tour: ``# 00 · Title``, ``## Objectives``,
``## Summary``, ``## Next``, and its compared outputs name every other notebook file.

For all notebooks: no ``def``, ``class`` or ``lambda`` in code cells (library logic belongs in
``memorykit/``; see docs/LESSON_FORMAT.md), every code cell executed and stored with its execution count (strict nbval
compares only executed cells), no saved widget state, under 2 MB, and every cell whose output
nbval ignores is followed by a compared code cell that prints a text summary; every number the
``## Summary`` cell states is printed by a compared output (the prose cannot drift from the code);
``## Next`` links to the following notebook (the last one to the index); every cell that makes an
explorer follows a markdown cell with a **Predict first** prompt; ``## Background`` names (in
backticks) every library module the catalog lists for the lesson.
"""

from __future__ import annotations

import io
import json
import os
import re
import tokenize
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NB_DIR = Path(os.environ.get("MEMORYKIT_RHYTHM_NOTEBOOKS", ROOT / "notebooks"))
NOTEBOOKS = sorted(NB_DIR.glob("*.ipynb"))
INDEX = NB_DIR / "00_index.ipynb"
MAX_BYTES = 2_000_000

LESSON_HEADINGS = ["Objectives", "Background", "Exercises", "Summary", "Review questions", "Next"]
INDEX_HEADINGS = ["Objectives", "Summary", "Next"]
TITLE = re.compile(r"^(\d{2})\s*[·:\-–—]\s*\S")
DEFINITION = re.compile(r"\s*(?:async\s+def|def|class)\s")
CHECKER_CALL = re.compile(r'\bcheck_\w*\s*\(|\bgraded\("lesson\d\d_checks\.check_')
IGNORE_MARK = "# NBVAL_IGNORE_OUTPUT"
RICH_ONLY = ("application/vnd.jupyter.widget-view+json", "application/vnd.plotly.v1+json")


def _load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def _source(cell: dict) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def _headings(nb: dict) -> list[tuple[int, int, str]]:
    """(cell index, level, text) of every markdown heading outside code fences."""
    out = []
    for i, cell in enumerate(nb["cells"]):
        if cell["cell_type"] != "markdown":
            continue
        fenced = False
        for line in _source(cell).splitlines():
            if line.lstrip().startswith(("```", "~~~")):
                fenced = not fenced
                continue
            m = re.match(r"^(#{1,6})\s+(.*?)\s*#*\s*$", line)
            if m and not fenced:
                out.append((i, len(m.group(1)), m.group(2)))
    return out


def _is_index(path: Path) -> bool:
    return path.name.startswith("00")


def _ignores_output(cell: dict) -> bool:
    tags = cell.get("metadata", {}).get("tags", [])
    return "nbval-ignore-output" in tags or IGNORE_MARK in _source(cell)


def _has_text_output(cell: dict) -> bool:
    for out in cell.get("outputs", []):
        if out.get("output_type") == "stream" and out.get("name") == "stdout" and _source(
                {"source": out.get("text", "")}).strip():
            return True
        if out.get("output_type") in ("execute_result", "display_data"):
            data = out.get("data", {})
            if "text/plain" in data and not any(k in data for k in RICH_ONLY):
                return True
    return False


# --- rules: each returns a list of problems --------------------------------------------------

def rule_headings(path: Path, nb: dict) -> list[str]:
    heads = _headings(nb)
    if not heads:
        return ["no markdown headings"]
    problems = []
    _, level, title = heads[0]
    m = TITLE.match(title)
    if level != 1 or not m:
        problems.append(f"the first heading must be the title '# NN · ...', found {'#' * level} {title!r}")
    else:
        prefix = path.name[:2]
        if prefix.isdigit() and m.group(1) != prefix:
            problems.append(f"title number {m.group(1)} does not match the file name {path.name}")
    wanted = INDEX_HEADINGS if _is_index(path) else LESSON_HEADINGS
    last = -1
    h2 = [(k, text) for k, (_, lvl, text) in enumerate(heads) if lvl == 2]
    for name in wanted:
        at = next((k for k, text in h2 if k > last and text.lower().startswith(name.lower())), None)
        if at is None:
            anywhere = any(text.lower().startswith(name.lower()) for _, text in h2)
            problems.append(f"'## {name}' " + ("is out of order" if anywhere else "is missing")
                            + f" (wanted, in order: {', '.join('## ' + w for w in wanted)})")
        else:
            last = at
    return problems


def _lambda_lines(source: str) -> set[int]:
    """Line numbers (0-based) with a ``lambda`` keyword outside strings and comments."""
    code = "\n".join("" if line.lstrip().startswith(("%", "!")) else line
                     for line in source.splitlines())
    try:
        return {tok.start[0] - 1 for tok in tokenize.generate_tokens(io.StringIO(code).readline)
                if tok.type == tokenize.NAME and tok.string == "lambda"}
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return {n for n, line in enumerate(source.splitlines()) if re.search(r"\blambda\b", line)}


def _nbgrader(cell: dict) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {})


def _is_answer_cell(cell: dict) -> bool:
    return cell["cell_type"] == "code" and bool(_nbgrader(cell).get("solution"))


def rule_no_definitions(path: Path, nb: dict) -> list[str]:
    problems = []
    for i, cell in enumerate(nb["cells"]):
        # A student's answer (an nbgrader solution cell) is where a student writes code.
        if cell["cell_type"] != "code" or _is_answer_cell(cell):
            continue
        source = _source(cell)
        lambdas = _lambda_lines(source)
        for n, line in enumerate(source.splitlines()):
            if DEFINITION.match(line) or n in lambdas:
                problems.append(f"cell {i} defines a function/class: {line.strip()[:60]!r} "
                                "(no def/class/lambda in notebooks: library logic belongs in "
                                "memorykit/)")
    return problems


def rule_checker_exercise(path: Path, nb: dict) -> list[str]:
    if _is_index(path):
        return []
    heads = _headings(nb)
    start = next((i for i, lvl, t in heads if lvl == 2 and t.lower().startswith("exercises")), None)
    end = next((i for i, lvl, t in heads if lvl == 2 and t.lower().startswith("summary")
                and (start is None or i > start)), len(nb["cells"]))
    if start is None:
        return ["no '## Exercises' section"]
    for cell in nb["cells"][start:end]:
        if cell["cell_type"] == "code" and CHECKER_CALL.search(_source(cell)):
            return []
    return ["no code cell between '## Exercises' and '## Summary' calls a checker (check_...())"]


SOLUTION_BEGIN, SOLUTION_END = "### BEGIN SOLUTION", "### END SOLUTION"
# The checker re-imported and verified by name (issue 25): a redefined check_... is not run.
GRADED_CALL = re.compile(r'^graded\("lesson\d\d_checks\.check_\w+"(?:,.*)?\)\Z', re.S | re.M)
# A visible scaffold (a class header, a signature and its docstring) whose body the student
# writes: the solution region is indented inside a def or class of the same cell.
SCAFFOLDED_BODY = re.compile(r"^\s*(?:def|class)\s.*?^[ \t]+### BEGIN SOLUTION", re.M | re.S)
REVEALING = re.compile(r"reference answer|the answer is", re.I)


def _solution_regions(source: str) -> list[str] | None:
    """The text between each BEGIN/END SOLUTION pair; None when the markers do not pair up."""
    regions, current = [], None
    for line in source.splitlines():
        marker = line.strip()
        if marker == SOLUTION_BEGIN:
            if current is not None:
                return None
            current = []
        elif marker == SOLUTION_END:
            if current is None:
                return None
            regions.append("\n".join(current))
            current = None
        elif current is not None:
            current.append(line)
    return regions if current is None else None


def rule_graded_exercises(path: Path, nb: dict) -> list[str]:
    """nbgrader's conventions (docs/LESSON_FORMAT.md, "Exercises"): every reference answer sits in
    a solution region of an answer cell, followed by a locked graded cell that runs its checker
    as ``graded("lessonNN_checks.check_...", ...)``; at least one answer is code the student
    writes; every answer cell carries a wrong answer for the grading test; no markdown reveals an answer."""
    if _is_index(path):
        return []
    problems: list[str] = []
    cells = nb["cells"]
    prefix = path.name[:2]
    ids: list[str] = []
    graded = code_answers = 0
    for i, cell in enumerate(cells):
        meta = _nbgrader(cell)
        if cell["cell_type"] == "markdown" and REVEALING.search(_source(cell)):
            problems.append(f"markdown cell {i} reveals an answer "
                            f"({REVEALING.search(_source(cell)).group(0)!r}): put the reference "
                            "answer and its discussion in the answer cell's solution region")
        if not meta:
            if SOLUTION_BEGIN in _source(cell):
                problems.append(f"cell {i} has a solution region but no nbgrader metadata")
            continue
        grade_id = meta.get("grade_id", "")
        ids.append(grade_id)
        if not grade_id.startswith(f"{prefix}-"):
            problems.append(f"cell {i}: grade_id {grade_id!r} must start with '{prefix}-'")
        if meta.get("schema_version") != 3:
            problems.append(f"cell {i}: nbgrader schema_version must be 3")
        if meta.get("solution"):
            regions = _solution_regions(_source(cell))
            if cell["cell_type"] != "code" or meta.get("grade") or meta.get("locked"):
                problems.append(f"cell {i}: an answer cell is an ungraded, unlocked code cell")
            if not regions:
                problems.append(f"cell {i}: answer cell without a paired "
                                f"'{SOLUTION_BEGIN}' / '{SOLUTION_END}' region")
            elif any(re.search(r"^\s*(?:def|class)\s", r, re.M) for r in regions) or (
                    SCAFFOLDED_BODY.search(_source(cell))):
                code_answers += 1
            wrong = cell.get("metadata", {}).get("memorykit", {}).get("wrong_answer")
            if not isinstance(wrong, str) or not wrong.strip() or wrong == _source(cell):
                problems.append(f"cell {i}: answer cell needs metadata.memorykit.wrong_answer "
                                "(a plausible wrong answer, the whole cell, for the grading test)")
            following = next((c for c in cells[i + 1:] if c["cell_type"] == "code"), None)
            if following is None or not _nbgrader(following).get("grade"):
                problems.append(f"cell {i}: the next code cell after an answer cell must be "
                                "its graded cell")
        elif meta.get("grade"):
            graded += 1
            if cell["cell_type"] != "code" or not meta.get("locked"):
                problems.append(f"cell {i}: a graded cell is a locked code cell")
            if not (isinstance(meta.get("points"), (int, float)) and meta["points"] > 0):
                problems.append(f"cell {i}: a graded cell needs points > 0")
            if not GRADED_CALL.search(_source(cell).strip()):
                problems.append(f"cell {i}: a graded cell ends in "
                                'graded("lessonNN_checks.check_...", answer)')
    duplicates = sorted({g for g in ids if ids.count(g) > 1})
    if duplicates:
        problems.append(f"duplicate grade_ids: {duplicates}")
    if not graded:
        problems.append("no graded cell (nbgrader grade=true) in the exercises")
    if not code_answers:
        problems.append("no exercise whose answer is code the student writes (a def or class "
                        "inside a solution region)")
    return problems


SEED_CITATION = re.compile(r"\bseeds?\s+00[0-4]", re.I)
BIBLIOGRAPHY_LINK = "../docs/BIBLIOGRAPHY.md"


def rule_cites_the_bibliography(path: Path, nb: dict) -> list[str]:
    """Sources are cited from docs/BIBLIOGRAPHY.md (D0-D4, the literature), never as "seed 00x",
    which names nothing a student can read."""
    problems = []
    for i, cell in enumerate(nb["cells"]):
        text = _source(cell) + (_output_text(cell) if cell["cell_type"] == "code" else "")
        found = SEED_CITATION.search(text)
        if found:
            problems.append(f"cell {i} cites {found.group(0)!r}: cite the bibliography "
                            f"([D1]({BIBLIOGRAPHY_LINK}#d1)) instead")
    if not any(BIBLIOGRAPHY_LINK in _source(c) for c in nb["cells"] if c["cell_type"] == "markdown"):
        problems.append(f"no markdown cell links to {BIBLIOGRAPHY_LINK}")
    return problems


def rule_review_questions(path: Path, nb: dict) -> list[str]:
    if _is_index(path):
        return []
    heads = _headings(nb)
    at = next((i for i, lvl, t in heads if lvl == 2 and t.lower().startswith("review questions")),
              None)
    if at is None:
        return []  # rule_headings reports it
    questions = re.findall(r"^\s*\d+\.\s+\S", _source(nb["cells"][at]), re.M)
    if len(questions) < 3:
        return [f"'## Review questions' has {len(questions)} numbered questions, wants 3-6"]
    return []


def rule_executed(path: Path, nb: dict) -> list[str]:
    return [f"code cell {i} has no execution count (run `./run notebooks {path.name}`): nbval "
            "never compares unexecuted cells"
            for i, cell in enumerate(nb["cells"])
            if cell["cell_type"] == "code" and _source(cell).strip()
            and cell.get("execution_count") is None]


def rule_no_widget_state(path: Path, nb: dict) -> list[str]:
    if "widgets" in nb.get("metadata", {}):
        return ["metadata.widgets (saved widget state) is present: `./run notebooks` strips it"]
    return []


def rule_size(path: Path, nb: dict) -> list[str]:
    size = path.stat().st_size
    return [f"{size / 1e6:.1f} MB >= 2 MB"] if size >= MAX_BYTES else []


def rule_ignored_output_followed_by_summary(path: Path, nb: dict) -> list[str]:
    problems = []
    code = [(i, c) for i, c in enumerate(nb["cells"]) if c["cell_type"] == "code"]
    for k, (i, cell) in enumerate(code):
        if not _ignores_output(cell):
            continue
        nxt = code[k + 1] if k + 1 < len(code) else None
        if nxt is None or _ignores_output(nxt[1]) or not _has_text_output(nxt[1]):
            problems.append(
                f"cell {i} ignores its output (nbval-ignore-output) but the next code cell "
                + ("does not exist" if nxt is None else f"({nxt[0]}) "
                   + ("ignores its output too" if _ignores_output(nxt[1]) else
                      "has no text output"))
                + ": print a short summary there so nbval checks something")
    return problems


def _output_text(cell: dict) -> str:
    parts = []
    for out in cell.get("outputs", []):
        data = out.get("data", {})
        text = out.get("text") or data.get("text/markdown") or data.get("text/plain", "")
        parts.append("".join(text) if isinstance(text, list) else text)
    return "\n".join(parts)


def _compared_output_text(nb: dict) -> str:
    """Text outputs nbval compares (cells not tagged to ignore their output)."""
    return "\n".join(_output_text(c) for c in nb["cells"]
                     if c["cell_type"] == "code" and not _ignores_output(c))


def rule_listed_in_index(path: Path, nb: dict) -> list[str]:
    # The index names the other notebooks in the map it prints from the catalog (compared by
    # nbval), not in hand-written markdown that could go stale.
    if not INDEX.exists():
        return []
    if path == INDEX:
        text = _compared_output_text(nb)
        missing = [p.name for p in NOTEBOOKS if p != INDEX and p.name not in text]
        return [f"the index does not print {', '.join(missing)} in its map"] if missing else []
    return ([] if path.name in _compared_output_text(_load(INDEX))
            else [f"{path.name} is not printed in the map of 00_index.ipynb"])


# A number in a Summary: digits with optional thousands commas and decimals, and an optional
# percent sign. Single digits are counts the prose can carry ("all four", "2 of 5").
SUMMARY_NUMBER = re.compile(r"(?<![\w.$])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(\s?%)?")
# Seed numbers ("seed 004"), seed figures quoted as such ("the seed's 87%"), lesson numbers.
SEED_REFERENCE = re.compile(r"(?i)seeds?\s+$|seed's\s+$|lesson\s+$|\b\d{2}_$|\[\d{2}$")


def _number_forms(integer: str, decimals: str, percent: str) -> set[str]:
    plain = integer.replace(",", "") + (decimals or "")
    forms = {plain, integer + (decimals or "")}
    if percent:
        # 85.1% may be printed as the fraction 0.851.
        value = float(plain) / 100
        for digits in range(2, 6):
            forms.add(f"{value:.{digits}f}")
        forms.add(f"{value:g}")
    return forms


def summary_numbers_not_printed(nb: dict) -> list[str]:
    """Numbers stated in the ``## Summary`` cell that no compared output of the notebook prints."""
    printed = _compared_output_text(nb)
    printed_plain = printed.replace(",", "")
    missing = []
    for cell in nb["cells"]:
        source = _source(cell)
        if cell["cell_type"] != "markdown" or not source.lstrip().startswith("## Summary"):
            continue
        for m in SUMMARY_NUMBER.finditer(source):
            integer, decimals, percent = m.group(1), m.group(2), m.group(3)
            if not decimals and not percent and len(integer) == 1:
                continue
            if SEED_REFERENCE.search(source[max(0, m.start() - 8):m.start()]):
                continue
            forms = _number_forms(integer, decimals, percent)
            if not any(f in printed or f in printed_plain for f in forms):
                missing.append(m.group(0).strip())
    return missing


def rule_summary_numbers_printed(path: Path, nb: dict) -> list[str]:
    # Every figure a Summary states must also be printed by a cell nbval compares, so a change
    # in the library that moves the figure fails CI instead of leaving stale prose behind.
    missing = summary_numbers_not_printed(nb)
    return ([f"the Summary states {', '.join(missing)}, which no compared output prints"]
            if missing else [])


NEXT_LINK = re.compile(r"\[[^\]]+\]\((\d{2}_[\w.-]+\.ipynb)\)")
EXPLORER_CELL = re.compile(r"^\w+\s*=\s*\w+Explorer\(", re.M)


def rule_next_links_to_following_lesson(path: Path, nb: dict) -> list[str]:
    # "Next" is a working link to the next notebook in the sequence (the last one back to the
    # index), never a code span or a skipped lesson.
    names = [p.name for p in NOTEBOOKS]
    want = names[(names.index(path.name) + 1) % len(names)]
    for cell in nb["cells"]:
        source = _source(cell)
        if cell["cell_type"] == "markdown" and source.lstrip().startswith("## Next"):
            links = NEXT_LINK.findall(source)
            if want in links:
                return []
            return [f"## Next links to {links or 'nothing'}, not to {want}"]
    return ["no ## Next cell"]


def rule_predict_first_before_explorer(path: Path, nb: dict) -> list[str]:
    # Each explorer is preceded by a markdown prompt asking what the student expects a slider
    # to do, so they commit to a guess before the figure answers it.
    problems = []
    cells = nb["cells"]
    for i, cell in enumerate(cells):
        if cell["cell_type"] == "code" and EXPLORER_CELL.search(_source(cell)):
            prev = cells[i - 1] if i else None
            if not (prev and prev["cell_type"] == "markdown"
                    and "Predict first" in _source(prev)):
                problems.append(f"code cell {i} makes an explorer with no 'Predict first' prompt "
                                "in the markdown cell before it")
    return problems


def rule_background_names_its_modules(path: Path, nb: dict) -> list[str]:
    # A reader reaches the code in one hop: the Background names every library module the
    # catalog says the lesson teaches (and the README map lists beside it).
    if _is_index(path):
        return []
    from memorykit.classroom.catalog import CATALOG

    lesson = next((les for les in CATALOG if les.filename == path.name), None)
    if lesson is None:
        return []  # test_catalog_matches_notebook_files reports it
    text, inside = [], False
    for cell in nb["cells"]:
        if cell["cell_type"] != "markdown":
            continue
        for line in _source(cell).splitlines():
            if line.startswith("## "):
                inside = line.lower().startswith("## background")
            elif inside:
                text.append(line)
    background = "\n".join(text)
    return [f"## Background does not name {m} (catalog modules: {', '.join(lesson.modules)})"
            for m in lesson.modules if f"`{m}`" not in background]


SHOW_CODE = re.compile(r"^show_code\(", re.M)
DEFINED = re.compile(r"^(?:class|def) (\w+)", re.M)


def _interactive(nb: dict) -> bool:
    return nb.get("metadata", {}).get("memorykit", {}).get("interactive", True) is not False


def _plain_output(cell: dict) -> str:
    out = []
    for o in cell.get("outputs", []):
        if o.get("output_type") == "stream":
            out.append("".join(o.get("text", "")))
        elif "data" in o:
            out.append("".join(o["data"].get("text/plain", "")))
    return "".join(out)


def rule_mechanism_before_explorer(path: Path, nb: dict) -> list[str]:
    # Before a lesson's first explorer draws results, a visible cell shows the decision it
    # teaches in the library's own code (``show_code``: at most 30 lines, not the classroom's).
    cells = nb["cells"]
    explorers = [i for i, c in enumerate(cells)
                 if c["cell_type"] == "code" and EXPLORER_CELL.search(_source(c))]
    if _is_index(path) or not _interactive(nb) or not explorers:
        return []
    shown = [c for c in cells[:explorers[0]]
             if c["cell_type"] == "code" and SHOW_CODE.search(_source(c))]
    if not shown:
        return [f"no show_code(...) cell before the first explorer (code cell {explorers[0]})"]
    problems = []
    for cell in shown:
        text = _plain_output(cell).strip("\n")
        head = text.splitlines()[0] if text else ""
        if not head.startswith("# memorykit.") or head.startswith("# memorykit.classroom"):
            problems.append(f"show_code cell shows {head or 'nothing'!r}, not the library's code")
        elif text.count("\n") > 30:
            problems.append(f"show_code cell shows {text.count(chr(10))} lines (at most 30)")
    return problems


def rule_student_code_runs_in_explorer(path: Path, nb: dict) -> list[str]:
    # After every code exercise, the student's class or function runs in the lesson's explorer
    # beside the library's (``yours=``), under the same sliders.
    cells = nb["cells"]
    problems = []
    for i, cell in enumerate(cells):
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if cell["cell_type"] != "code" or not meta.get("solution"):
            continue
        for name in DEFINED.findall(_source(cell)):
            later = [c for c in cells[i + 1:] if c["cell_type"] == "code"
                     and EXPLORER_CELL.search(_source(c))
                     and re.search(rf"\byours\s*=\s*(?:\{{[^}}]*)?\b{name}\b", _source(c))]
            if not later:
                problems.append(f"{meta.get('grade_id')}: no explorer after it runs {name} "
                                f"(make one with yours={name})")
    return problems


RULES = [rule_headings, rule_no_definitions, rule_checker_exercise, rule_executed,
         rule_no_widget_state, rule_size, rule_ignored_output_followed_by_summary,
         rule_listed_in_index, rule_summary_numbers_printed, rule_next_links_to_following_lesson,
         rule_predict_first_before_explorer, rule_background_names_its_modules,
         rule_graded_exercises, rule_cites_the_bibliography, rule_review_questions,
         rule_mechanism_before_explorer, rule_student_code_runs_in_explorer]


def _cases():
    if not NOTEBOOKS:
        return [pytest.param(None, None, id="no-notebooks",
                             marks=pytest.mark.skip(reason=f"no notebooks in {NB_DIR} yet"))]
    return [pytest.param(rule, path, id=f"{rule.__name__[5:]}-{path.name}")
            for path in NOTEBOOKS for rule in RULES]


@pytest.mark.parametrize(("rule", "path"), _cases())
def test_notebook_rhythm(rule, path: Path):
    problems = rule(path, _load(path))
    assert not problems, f"{path.name}: " + "; ".join(problems)


def test_catalog_matches_notebook_files():
    from memorykit.classroom.catalog import check_catalog

    assert check_catalog() == []


def test_readme_lessons_map_is_current():
    from memorykit.classroom.catalog import NOTEBOOKS_DIR, sync_readme

    assert sync_readme(NOTEBOOKS_DIR.parent / "README.md", write=False), (
        "README.md's lessons map differs from memorykit/classroom/catalog.py: "
        "run `python -m memorykit.classroom.learning_path --readme`")


def test_readme_lessons_map_detects_and_repairs_staleness(tmp_path):
    from memorykit.classroom.catalog import README_END, README_START, readme_block, sync_readme

    stale = tmp_path / "README.md"
    stale.write_text(f"intro\n{README_START}\n| old | map |\n{README_END}\noutro\n", encoding="utf-8")
    assert not sync_readme(stale, write=False)
    assert not sync_readme(stale, write=True)
    assert stale.read_text(encoding="utf-8") == f"intro\n{readme_block()}\noutro\n"
    assert sync_readme(stale, write=False)
    (tmp_path / "bare.md").write_text("no markers\n", encoding="utf-8")
    with pytest.raises(ValueError, match="no lessons map markers"):
        sync_readme(tmp_path / "bare.md", write=False)


def _nb(summary: str, printed: str) -> dict:
    return {"cells": [
        {"cell_type": "code", "metadata": {}, "source": "print(x)",
         "outputs": [{"output_type": "stream", "name": "stdout", "text": printed}]},
        {"cell_type": "markdown", "metadata": {}, "source": summary}]}


def test_summary_number_rule_catches_a_stale_figure():
    assert summary_numbers_not_printed(
        _nb("## Summary\n\n- FIFO keeps 12 facts at 58,207 tokens (85.1%).",
            "facts: 12\ntokens: 58207\nshare: 0.851\n")) == []
    assert summary_numbers_not_printed(
        _nb("## Summary\n\n- FIFO keeps 13 facts, seed 004 says 40%; the seed's 87%.",
            "facts: 12\n")) == ["13", "40%"]


def test_background_rule_catches_a_module_left_unnamed():
    path = NB_DIR / "09_long_term_memory.ipynb"
    nb = _load(path)
    assert rule_background_names_its_modules(path, nb) == []
    for cell in nb["cells"]:
        if cell["cell_type"] == "markdown" and _source(cell).lstrip().startswith("## Background"):
            cell["source"] = _source(cell).replace("`memorykit.longterm.semantic`", "semantic memory")
    assert rule_background_names_its_modules(path, nb) == [
        "## Background does not name memorykit.longterm.semantic (catalog modules: "
        "memorykit.longterm.episodic, memorykit.classroom.replays.episode_probes, "
        "memorykit.longterm.semantic, memorykit.longterm.minilm, memorykit.longterm.service, "
        "memorykit.longterm.search_tool)"]


def test_the_yours_rule_catches_an_exercise_left_out_of_the_explorer():
    nb = _load(NB_DIR / "02_pruning_strategies.ipynb")
    assert rule_student_code_runs_in_explorer(NB_DIR / "02_pruning_strategies.ipynb", nb) == []
    for cell in nb["cells"]:
        cell["source"] = _source(cell).replace("yours=LeastImportantBuffer", "budget=1500")
    problems = rule_student_code_runs_in_explorer(NB_DIR / "02_pruning_strategies.ipynb", nb)
    assert problems and "LeastImportantBuffer" in problems[0], problems


def test_the_mechanism_rule_refuses_classroom_code_and_a_missing_cell():
    path = NB_DIR / "02_pruning_strategies.ipynb"
    nb = _load(path)
    for cell in nb["cells"]:
        if SHOW_CODE.search(_source(cell)):
            cell["outputs"] = [{"output_type": "execute_result", "metadata": {},
                                "data": {"text/plain": "# memorykit.classroom.lesson02.x\n"}}]
    assert "not the library's code" in rule_mechanism_before_explorer(path, nb)[0]
    nb["cells"] = [c for c in nb["cells"] if not SHOW_CODE.search(_source(c))]
    assert "no show_code" in rule_mechanism_before_explorer(path, nb)[0]
