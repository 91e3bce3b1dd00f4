"""The map of the notebook sequence, kept in one place so it never goes stale.

``CATALOG`` lists every notebook of the course, in order, with its title (which
must equal the notebook's ``# NN · Title`` heading), a one-line description, the
package modules it teaches, the design documents it draws on (bibliography keys,
``"D1"`` for ``docs/BIBLIOGRAPHY.md#d1``), its part of the course, a time estimate,
its prerequisites (earlier lessons and skills) and what the student builds. A
notebook whose file is not in ``notebooks/`` yet is shown as *planned*; once the
file exists it is shown as *ready*. ``check_catalog`` compares the catalog with the
files (a test runs it): a notebook without an entry, a heading that differs from
the catalog's title, a prerequisite that is not an earlier lesson or a reference
without a bibliography anchor is an error. Adding a notebook therefore means adding
its entry here, then re-running ``./run notebooks notebooks/00_index.ipynb``, whose
map is rendered from this module, and
``python -m memorykit.classroom.learning_path --readme --learning-path``, which rewrites the
README's lessons map and ``docs/LEARNING_PATH.md`` (rendered by
``memorykit.classroom.learning_path``; tests check both files are current).

Taught in ``notebooks/00_index.ipynb``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

NOTEBOOKS_DIR = Path(__file__).resolve().parent.parent.parent / "notebooks"
DOCS_DIR = NOTEBOOKS_DIR.parent / "docs"
BIBLIOGRAPHY = "BIBLIOGRAPHY.md"
REFERENCE_KEYS = ("D0", "D1", "D2", "D3", "D4")
_TITLE = re.compile(r"^#\s+(\d{2})\s+·\s+(.+?)\s*$")


@dataclass(frozen=True)
class Lesson:
    number: int
    filename: str
    title: str
    description: str
    modules: tuple[str, ...] = ()
    references: tuple[str, ...] = ()
    """Bibliography keys of the design documents the lesson draws on (``"D1"``: the anchor
    ``d1`` of docs/BIBLIOGRAPHY.md)."""
    interactive: bool = True
    """Whether the notebook has sliders (the index is a tour without any)."""
    part: str = ""
    """The part of the course: buffers, entities, three columns, long-term memory, evaluation."""
    minutes: int = 0
    """An estimate for a student reading the lesson, moving its sliders and doing its exercises."""
    prerequisites: tuple[int | str, ...] = ()
    """Lesson numbers to do first, and skills (strings) the lesson assumes."""
    builds: str = ""
    """What the student builds or can do at the end (the learning path's "you build" column)."""

    @property
    def heading(self) -> str:
        return f"# {self.number:02d} · {self.title}"

    @property
    def after(self) -> tuple[int, ...]:
        """The lessons to do first."""
        return tuple(p for p in self.prerequisites if isinstance(p, int))

    @property
    def skills(self) -> tuple[str, ...]:
        """The skills the lesson assumes beyond earlier lessons."""
        return tuple(p for p in self.prerequisites if isinstance(p, str))


_PY = "Python: functions, lists and dicts"
_CLASS = "Python: a subclass overriding one method"

CATALOG: tuple[Lesson, ...] = (
    Lesson(0, "00_index.ipynb", "Index: how agents remember",
           "A tour: the memory problems agents have, this map, sliders, offline vs a real model.",
           ("memorykit.classroom",), ("D0", "D4"), interactive=False, part="introduction",
           minutes=15, prerequisites=(_PY, "running cells in Jupyter"),
           builds="the two failures every memory trades off: a lost reference and a growing prompt"),
    Lesson(1, "01_tokens_and_budgets.ipynb", "Tokens and budgets",
           "Exact counts per encoding, content vs billed tokens, the context-window budget, "
           "why characters / 4 misleads.",
           ("memorykit.tokens", "memorykit.messages"), ("D1", "D4"), part="buffers",
           minutes=65, prerequisites=(0,),
           builds="a billed-token count of a chat request, and a context-window budget"),
    Lesson(2, "02_pruning_strategies.ipynb", "Pruning strategies",
           "FIFO vs importance vs hybrid vs recency-weighted on one conversation: who leaves "
           "when, under which rule, and which facts survive.",
           ("memorykit.buffers.policies", "memorykit.buffers.registry", "memorykit.trace",
            "memorykit.classroom.replays.buffer_replay"), ("D1",), part="buffers",
           minutes=75, prerequisites=(1, _CLASS),
           builds="a buffer's victim choice (which message leaves), checked by the buffer contract"),
    Lesson(3, "03_summary_buffer.ipynb", "The summary buffer",
           "The token sawtooth, summaries of summaries, which planted facts survive, the "
           "compression pipeline, the attention window and named contexts (switch, return, merge).",
           ("memorykit.buffers.summary_buffer", "memorykit.summary",
            "memorykit.buffers.compression", "memorykit.classroom.replays.summary_replay",
            "memorykit.buffers.attention", "memorykit.buffers.context_manager"),
           ("D1", "D4"), part="buffers", minutes=90, prerequisites=(2,),
           builds="a summary buffer's schedule (threshold, target) and its cost in lost facts"),
    Lesson(4, "04_entity_memory.ipynb", "Entity working memory",
           "Which page do you mean? Entities in a sliding window, relevance eviction, TTL on "
           "three clocks (wall, simulated, per turn) and reference resolution.",
           ("memorykit.entities", "memorykit.classroom.scenarios.cms", "memorykit.classroom.replays.entity_replay",
            "memorykit.clock"),
           ("D0",), part="entities", minutes=90, prerequisites=(1, "exponential decay, exp(-x)"),
           builds="an entity memory sized and timed for a session: relevance score, TTL, resolution"),
    Lesson(5, "05_task_slots.ipynb", "Task slots",
           "Slot occupancy over a month of work: admissions, preemptions at 1.3x the lowest, "
           "demotions to notes; sliders for max_slots, the activation threshold and the ratio.",
           ("memorykit.workspace.tasks", "memorykit.classroom.replays.timeline", "memorykit.classroom.scenarios.workflow"),
           ("D2",), part="three columns", minutes=60, prerequisites=(0, _PY),
           builds="the admission and preemption rule of a few task slots"),
    Lesson(6, "06_notes_ttl.ipynb", "Notes with a time-to-live",
           "Effective priority as the TTL runs out (x1.5 under 20%, x2 under 5%), expiry, and "
           "surfacing precision and recall on a labelled month.",
           ("memorykit.workspace.notes", "memorykit.classroom.replays.escalation", "memorykit.classroom.scenarios.workflow"),
           ("D2",), part="three columns", minutes=60, prerequisites=(5, "precision and recall"),
           builds="a note's escalated priority as its TTL runs out, and surfacing measured"),
    Lesson(7, "07_objects_salience.ipynb", "Objects and salience",
           "Which objects reach the prompt: D2's salience over objects x turns, its five "
           "components, sliders for every weight, and the 2-hop knowledge-graph neighbourhood.",
           ("memorykit.workspace.objects", "memorykit.workspace.graph",
            "memorykit.classroom.replays.salience"), ("D2",), part="three columns",
           minutes=75, prerequisites=(5, "graphs: nodes, edges, neighbourhoods"),
           builds="an object's salience score and the top-k objects it selects"),
    Lesson(8, "08_three_columns.ipynb", "Three columns in the prompt",
           "The rendered three-column prompt and its tokens against a flat buffer of the same "
           "state and a log that never forgets, measured with tiktoken (D2 claims 40% fewer).",
           ("memorykit.workspace.render", "memorykit.workspace.memory",
            "memorykit.classroom.replays.columns"), ("D2",), part="three columns",
           minutes=60, prerequisites=(1, 6, 7),
           builds="the three-column prompt, and a fair token comparison against a flat buffer"),
    Lesson(9, "09_long_term_memory.ipynb", "Long-term memory and recall",
           "Episodic scoring over keyword overlap and age (alpha, beta, tau, threshold), "
           "semantic recall and its threshold with all-MiniLM-L6-v2 (numpy, offline) beside the "
           "lexical baseline, auto-recall in the memory service.",
           ("memorykit.longterm.episodic", "memorykit.classroom.replays.episode_probes",
            "memorykit.longterm.semantic", "memorykit.longterm.minilm", "memorykit.longterm.service",
            "memorykit.longterm.search_tool"), ("D3", "D4"), part="long-term memory",
           minutes=90, prerequisites=(3, "vectors and cosine similarity"),
           builds="an episodic score and a semantic threshold fitted to an embedder"),
    Lesson(10, "10_architectures.ipynb", "Memory architectures compared",
           "Context window, episodic, semantic and reflective memory on D3's "
           "inject/distract/probe benchmark, C and D on all-MiniLM-L6-v2 (numpy, offline) beside the "
           "lexical baseline: recall vs distractors, tokens per call, learned rules; D3's "
           "table reproduced with a local LLM and all-MiniLM-L6-v2.",
           ("memorykit.longterm.architectures", "memorykit.classroom.scenarios.probes",
            "memorykit.classroom.replays.recall_benchmark", "memorykit.classroom.replays.recall_curves",
            "memorykit.longterm.reflection", "memorykit.classroom.replays.reproduction"), ("D3",),
           part="long-term memory", minutes=90, prerequisites=(9, "confidence intervals"),
           builds="a benchmark comparison of four architectures, and reading why a result differs"),
    Lesson(11, "11_llm_in_the_loop.ipynb", "LLM in the loop",
           "The same memories driving a real model over an OpenAI-compatible API when one is "
           "configured, and the offline components otherwise, saying which.",
           ("memorykit.llm", "memorykit.classroom.replays.service_loop"), ("D3", "D4"),
           part="long-term memory", minutes=85, prerequisites=(3, 9, "HTTP APIs (optional)"),
           builds="a memory service wired to a real or offline model, and its failure handling"),
    Lesson(12, "12_parameter_tuning.ipynb", "Parameter tuning",
           "Evidence recall at a token budget: recall surfaces, Pareto fronts across policies, "
           "per-category breakdowns, on simulated data or a local LoCoMo copy.",
           ("memorykit.evaluation",), ("D1", "D4"), part="evaluation",
           minutes=75, prerequisites=(2, 9, "pandas tables (reading)"),
           builds="a tuned memory configuration for a token budget, chosen from a sweep"),
    Lesson(13, "13_changing_facts.ipynb", "Memory that changes its mind",
           "Facts that are updated, corrected, cancelled and contradicted: stale and doubled "
           "answers of every memory by gap and budget, supersession with validity intervals and "
           "update policies, and a write-quality audit of a long-term store.",
           ("memorykit.facts.statement", "memorykit.facts.detect", "memorykit.facts.timeline",
            "memorykit.facts.audit", "memorykit.evaluation.superseding",
            "memorykit.evaluation.scoring", "memorykit.classroom.scenarios.changing_facts"),
           ("D2", "D3"), part="evaluation", minutes=60, prerequisites=(9, 12, _CLASS),
           builds="an update rule that never serves a superseded value, run in a long-term store"),
)


def _check_entries() -> list[str]:
    """Problems inside the catalog: time estimates, prerequisites, references, routes."""
    problems: list[str] = []
    numbers = {lesson.number for lesson in CATALOG}
    anchors = _bibliography_anchors()
    for lesson in CATALOG:
        name = f"{lesson.number:02d}"
        if isinstance(lesson.minutes, bool) or not isinstance(lesson.minutes, int) \
                or lesson.minutes <= 0:
            problems.append(f"{name}: minutes must be a positive int, got {lesson.minutes!r}")
        for before in lesson.after:
            if before not in numbers or before >= lesson.number:
                problems.append(f"{name}: prerequisite {before!r} is not an earlier lesson")
        for key in lesson.references:
            if key not in REFERENCE_KEYS:
                problems.append(f"{name}: reference {key!r} is not one of {', '.join(REFERENCE_KEYS)}")
            elif anchors is not None and key.lower() not in anchors:
                problems.append(f"{name}: reference {key!r} has no anchor in docs/{BIBLIOGRAPHY}")
        if not lesson.builds:
            problems.append(f"{name}: says nothing about what the student builds")
    return problems + check_routes()


def _bibliography_anchors() -> set[str] | None:
    path = DOCS_DIR / BIBLIOGRAPHY
    if not path.is_file():
        return None
    return set(re.findall(r'<a id="([\w-]+)"></a>', path.read_text(encoding="utf-8")))


def lessons(notebooks_dir: Path | str | None = None) -> list[tuple[Lesson, bool]]:
    """Every catalog entry with whether its notebook file exists (ready) or not (planned)."""
    d = Path(notebooks_dir) if notebooks_dir is not None else NOTEBOOKS_DIR
    return [(lesson, (d / lesson.filename).is_file()) for lesson in CATALOG]


def notebook_heading(path: Path | str) -> str | None:
    """The first ``# NN · Title`` line of a notebook's markdown cells, if any."""
    nb = json.loads(Path(path).read_text(encoding="utf-8"))
    for cell in nb.get("cells", []):
        if cell.get("cell_type") != "markdown":
            continue
        source = cell.get("source", "")
        text = "".join(source) if isinstance(source, list) else source
        for line in text.splitlines():
            if _TITLE.match(line.strip()):
                return line.strip()
    return None


@dataclass(frozen=True)
class Route:
    """A suggested way through the lessons, for one audience."""

    name: str
    audience: str
    lessons: tuple[int, ...]
    how: str


ROUTES: tuple[Route, ...] = (
    Route("A 90-minute intro lab", "a first lab session, or a reader who wants the core idea",
          (0, 2),
          "The tour, then pruning: one conversation, four eviction rules, and the student's own "
          "victim choice graded against the buffer contract. Hand out lesson 01's Summary to "
          "read beforehand (5 minutes) for billed tokens and the budget."),
    Route("The full course", "a course of weekly labs on agent memory",
          tuple(lesson.number for lesson in CATALOG),
          "Every lesson in order, one part per week or two: buffers (01-03), entities (04), the "
          "three columns (05-08), long-term memory (09-11), evaluation (12-13). Each lesson's "
          "review questions close the session: students write their answers in the cell under "
          "the questions (the student edition has one); reference answers are in the instructor "
          "edition only (docs/review/, for discussion in class)."),
    Route("An engineer tuning a production agent",
          "an engineer who has an agent and wants its memory to fit a budget",
          (1, 3, 9, 11, 12),
          "Billed tokens and the budget, the summary buffer, long-term recall, a real model in "
          "the loop, then a sweep over your own logs (`python -m memorykit tune`). Skip the "
          "exercises' graded cells if you like; keep the explorers and the printed numbers."),
)


def check_routes() -> list[str]:
    """Routes that name a lesson the catalog does not have."""
    numbers = {lesson.number for lesson in CATALOG}
    problems = []
    for route in ROUTES:
        unknown = [n for n in route.lessons if n not in numbers]
        if unknown:
            problems.append(f"route {route.name!r}: no lesson {unknown}")
    return problems


def check_catalog(notebooks_dir: Path | str | None = None) -> list[str]:
    """Problems between the catalog and the notebook files (empty when they agree)."""
    d = Path(notebooks_dir) if notebooks_dir is not None else NOTEBOOKS_DIR
    problems: list[str] = []
    by_file = {lesson.filename: lesson for lesson in CATALOG}
    numbers = [lesson.number for lesson in CATALOG]
    if len(set(numbers)) != len(numbers):
        problems.append("two catalog entries share a number")
    if numbers != sorted(numbers):
        problems.append("catalog entries are not in notebook order")
    for lesson in CATALOG:
        if not lesson.filename.startswith(f"{lesson.number:02d}_"):
            problems.append(f"{lesson.filename}: file name does not start with {lesson.number:02d}_")
    problems += _check_entries()
    for path in sorted(d.glob("*.ipynb")):
        lesson = by_file.get(path.name)
        if lesson is None:
            problems.append(f"{path.name} has no entry in memorykit/classroom/catalog.py")
            continue
        heading = notebook_heading(path)
        if heading != lesson.heading:
            problems.append(f"{path.name}: heading {heading!r} differs from the catalog's "
                            f"{lesson.heading!r}")
    return problems


def reference_links(lesson: Lesson, docs_prefix: str = "../docs/") -> str:
    """The lesson's design documents as Markdown links into the bibliography."""
    return ", ".join(f"[{key}]({docs_prefix}{BIBLIOGRAPHY}#{key.lower()})"
                     for key in lesson.references)


def render_map(notebooks_dir: Path | str | None = None, *, status: bool = True,
               link_prefix: str = "", docs_prefix: str = "../docs/") -> str:
    """The map as a Markdown table (notebook, title, what it teaches, the library modules it
    teaches, sources[, status]).

    With ``status=False`` every notebook is linked and nothing depends on which files
    exist yet (the form pasted into the index notebook's markdown). ``link_prefix`` is put
    before each link target (``"notebooks/"`` in the README), ``docs_prefix`` before the
    bibliography's (``"docs/"`` in the README).
    """
    head = ("| # | notebook | title | what you learn | library modules | sources |"
            + (" status |" if status else ""))
    rows = [head, "|---" * (7 if status else 6) + "|"]
    for lesson, ready in lessons(notebooks_dir):
        link = (f"[{lesson.filename}]({link_prefix}{lesson.filename})" if ready or not status
                else f"`{lesson.filename}`")
        modules = ", ".join(f"`{m}`" for m in lesson.modules)
        row = (f"| {lesson.number:02d} | {link} | {lesson.title} | {lesson.description} | "
               f"{modules} | {reference_links(lesson, docs_prefix)} |")
        rows.append(row + (f" {'ready' if ready else 'planned'} |" if status else ""))
    return "\n".join(rows)


README_START = "<!-- lessons map: generated by `python -m memorykit.classroom.learning_path --readme` -->"
README_END = "<!-- end of lessons map -->"


def readme_block() -> str:
    """The lessons map as the README shows it, between its two marker comments."""
    return (f"{README_START}\n"
            f"{render_map(status=False, link_prefix='notebooks/', docs_prefix='docs/')}\n"
            f"{README_END}")


def sync_readme(readme: Path | str, *, write: bool) -> bool:
    """Whether the README's lessons map is current; with ``write=True`` make it so."""
    path = Path(readme)
    text = path.read_text(encoding="utf-8")
    start, end = text.find(README_START), text.find(README_END)
    if start < 0 or end < start:
        raise ValueError(f"{path} has no lessons map markers ({README_START!r} ... {README_END!r})")
    current = text[start:end + len(README_END)]
    if current == readme_block():
        return True
    if write:
        path.write_text(text[:start] + readme_block() + text[end + len(README_END):],
                        encoding="utf-8")
    return False
