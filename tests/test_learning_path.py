"""The learning path (docs/LEARNING_PATH.md) is generated from the catalog and kept current;
the catalog's entries are checked (time, prerequisites, bibliography keys); the bibliography
and the glossary exist with the anchors and terms the lessons link to."""

from __future__ import annotations

import re

import pytest

from memorykit.classroom import catalog
from memorykit.classroom.catalog import CATALOG, DOCS_DIR, Lesson, check_catalog, render_map
from memorykit.classroom.catalog import ROUTES
from memorykit.classroom.learning_path import render_learning_path, sync_learning_path


def test_learning_path_is_current():
    assert sync_learning_path(write=False), (
        "docs/LEARNING_PATH.md differs from memorykit/classroom/catalog.py: run "
        "`python -m memorykit.classroom.learning_path --learning-path`")


def test_learning_path_detects_and_repairs_staleness(tmp_path):
    stale = tmp_path / "LEARNING_PATH.md"
    stale.write_text("# old\n", encoding="utf-8")
    assert not sync_learning_path(stale, write=False)
    assert not sync_learning_path(stale, write=True)
    assert stale.read_text(encoding="utf-8") == render_learning_path()
    assert sync_learning_path(stale, write=False)
    missing = tmp_path / "absent.md"
    assert not sync_learning_path(missing, write=False) and not missing.exists()


def test_learning_path_lists_every_lesson_with_its_time_and_the_routes():
    text = render_learning_path()
    for lesson in CATALOG:
        assert f"](../notebooks/{lesson.filename}) | {lesson.part} | {lesson.minutes} min |" in text
    for route in ROUTES:
        assert f"### {route.name}" in text
    total = sum(lesson.minutes for lesson in CATALOG)
    assert f"({total} min)" in text
    assert "A 90-minute intro lab" in text
    intro = next(r for r in ROUTES if r.name.startswith("A 90-minute"))
    assert sum(les.minutes for les in CATALOG if les.number in intro.lessons) == 90


def test_every_lesson_has_time_prerequisites_and_references():
    for lesson in CATALOG:
        assert lesson.minutes > 0 and lesson.builds and lesson.part
        assert all(before < lesson.number for before in lesson.after)
        assert lesson.references, f"{lesson.filename} cites no design document"
        if lesson.number:
            assert lesson.after, f"{lesson.filename} names no earlier lesson"


def test_check_catalog_reports_bad_entries(monkeypatch):
    bad = (Lesson(0, "00_index.ipynb", CATALOG[0].title, "", references=("D9",), minutes=0,
                  builds="x"),
           Lesson(1, "01_tokens_and_budgets.ipynb", CATALOG[1].title, "", references=("D1",),
                  minutes=True, prerequisites=(3,), builds=""))
    monkeypatch.setattr(catalog, "CATALOG", bad)
    problems = "\n".join(check_catalog())
    assert "00: minutes must be a positive int, got 0" in problems
    assert "01: minutes must be a positive int, got True" in problems
    assert "reference 'D9' is not one of D0, D1, D2, D3, D4" in problems
    assert "01: prerequisite 3 is not an earlier lesson" in problems
    assert "01: says nothing about what the student builds" in problems


def test_map_links_the_bibliography():
    assert "[D1](../docs/BIBLIOGRAPHY.md#d1)" in render_map(status=False)
    assert "[D1](docs/BIBLIOGRAPHY.md#d1)" in render_map(status=False, docs_prefix="docs/")
    assert not re.search(r"\bseeds?\s+00[0-4]", render_map(status=False), re.I)


def _anchors(name: str) -> set[str]:
    return set(re.findall(r'<a id="([\w-]+)"></a>', (DOCS_DIR / name).read_text(encoding="utf-8")))


def test_bibliography_has_the_anchors_lessons_link_to():
    anchors = _anchors("BIBLIOGRAPHY.md")
    assert {"d0", "d1", "d2", "d3", "d4"} <= anchors
    text = (DOCS_DIR / "BIBLIOGRAPHY.md").read_text(encoding="utf-8")
    for target in re.findall(r"\]\(#([\w-]+)\)", text):
        assert target in anchors, f"BIBLIOGRAPHY.md links #{target}, which has no anchor"


def test_bibliography_table_names_the_lessons_the_catalog_gives():
    text = (DOCS_DIR / "BIBLIOGRAPHY.md").read_text(encoding="utf-8")
    for key in catalog.REFERENCE_KEYS:
        row = re.search(rf"^\| \[{key}\]\(#{key.lower()}\) \|.*\| ([\d, ]+) \|$", text, re.M)
        assert row, f"no row for {key} in the bibliography's table"
        listed = [int(n) for n in row.group(1).split(",")]
        assert listed == [les.number for les in CATALOG if key in les.references], key


@pytest.mark.parametrize("term", ["billed tokens", "eviction", "victim", "TTL", "salience",
                                  "BM25", "evidence recall", "consolidation"])
def test_glossary_defines_the_terms(term):
    text = (DOCS_DIR / "GLOSSARY.md").read_text(encoding="utf-8")
    assert re.search(rf"^\*\*{re.escape(term)}\*\*", text, re.M | re.I), term


def test_check_routes_reports_a_route_through_a_missing_lesson(monkeypatch):
    from memorykit.classroom import catalog

    bad = (catalog.Route("nowhere", "nobody", (0, 99), "-"),)
    monkeypatch.setattr(catalog, "ROUTES", bad)
    assert catalog.check_routes() == ["route 'nowhere': no lesson [99]"]
    assert "route 'nowhere': no lesson [99]" in check_catalog()


def test_the_path_never_sends_students_to_answers_their_edition_lacks():
    """The full course's route told students their review answers were in docs/review/, which
    the student edition does not hold (issue 24): every mention says it is the instructor's."""
    from memorykit.classroom.course.release import INSTRUCTOR_PAGES

    text = render_learning_path()
    sentences = re.split(r"(?<=[.:;])\s+", text)
    for page in INSTRUCTOR_PAGES:
        for sentence in sentences:
            if page.rstrip("/") in sentence and "](" not in sentence:
                assert "instructor" in sentence, f"{page} named for students: {sentence!r}"
    assert "./run lab --student" in text
