"""Every lesson, opened in a real JupyterLab in headless Chromium, draws what the kernel holds.

For each ``notebooks/*.ipynb`` (one test each, named after the notebook): open it, clear its
stored outputs, Run ▸ Run All Cells, wait until every code cell shows ``[n]``, and check that

* no cell raised or warned (error outputs in the notebook model, tracebacks or warnings in the
  page, widgets that failed to render), neither after the run nor after the slider moves;
* after load, and again after every step of a round trip of every slider of every explorer
  (one step with the keyboard and one back: ArrowRight then ArrowLeft on its handle, the other
  way round at the end of its range): every trace of every ``FigureWidget`` in the kernel is in
  the rendered plot with the same number of points and the same values (x, y, z, text, ...),
  heat maps drew a non-empty ``z``, and a trace with points that the kernel shows is drawn
  visible (``labdriver.compare_figures``);
* at the same moments, the text plotly.js wrote in the SVG is the text the kernel's figure holds
  (``labdriver.text_problems``): the labels of every text-mode trace (how many, which), the
  visible annotations (subplot titles among them), the figure's and the used axes' titles, the
  legend's entries and title, the colour bar titles. Data can be right while text is gone:
  lesson 07's graph drew 2 of its 10 labels after the turn went 510 -> 551 -> 510, because
  plotly.js drops a point's text element for good once its text is "";
* in every rendered figure no two titles, legends, colour bars or axis titles overlap, none of
  them covers a plot area, tick labels of one axis do not run into each other, and no text is
  cut off at the figure's edge (``labdriver.layout_problems``);
* every figure is as wide as the notebook's output area (no 700-pixel default);
* at least one slider changes a figure's data (what a student sees move);
* lesson 12's browser for the misses shows, under its figure, the text the kernel holds
  (question, missed evidence, reasons) after load and after every slider step
  (``misses_text_problems``);
* where the notebook puts the student's own code in an explorer (``yours=``), every trace
  named ``yours: ...`` is drawn, with points and visible, after every slider has been moved
  (``yours_problems``).

A screenshot of every cell output holding a figure, after load, goes to
``.ci/artifacts/browser/`` (CI keeps them; a reviewer looks at them). A notebook whose metadata
says ``{"memorykit": {"interactive": false}}`` (the index) is only checked for errors, drawing
and layout of its static figures.

``test_the_check_catches_a_half_updated_figure`` keeps the comparison honest: a plain plotly
``FigureWidget`` shown in a ``VBox`` after a batch edit that set ``x`` on one trace and only ``y``
on another (the bug lesson 04 had) must be reported, and the same figure as memorykit's
``LessonFigure`` must not.
``test_the_check_catches_labels_plotly_dropped`` does the same for text: labels set to "" and
back on a text-mode trace must be reported missing (and the same labels in a trace of their own
must not), and each kind of text deleted from the SVG must be named.

The notebook file on disk is never written (autosave is off; its hash is checked afterwards).
Chromium is Debian's ``/usr/bin/chromium`` (``./run test`` installs it); without it the test
skips, except under ``CI=true`` where it fails. ``MEMORYKIT_BROWSER_NOTEBOOKS`` (paths or
directories separated by ``os.pathsep``) points the test at other notebooks.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from pathlib import Path

import nbformat
import pytest

from tests.browser import labdriver

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
ON_CI = os.environ.get("CI", "").lower() == "true"
ARTIFACTS = ROOT / ".ci" / "artifacts" / "browser"

LOAD_TIMEOUT_S = 45      # page + notebook + kernel ready
RUN_TIMEOUT_S = float(os.environ.get("MEMORYKIT_BROWSER_RUN_TIMEOUT", "600"))  # Run All Cells (lesson 12 took 123-151 s at load 12; waits only as long as it must)
SETTLE_TIMEOUT_S = 30    # per slider move: kernel idle and figures quiet
FILL_TIMEOUT_S = 180     # figures filled after the run (a loaded 2-core machine needs ~40 s, over 90 at load 11-13; waits only as long as it must)


def _notebooks() -> list[Path]:
    override = os.environ.get("MEMORYKIT_BROWSER_NOTEBOOKS")
    if not override:
        return sorted((ROOT / "notebooks").glob("*.ipynb"))
    found: list[Path] = []
    for part in filter(None, override.split(os.pathsep)):
        p = Path(part).resolve()
        found.extend(sorted(p.glob("*.ipynb")) if p.is_dir() else [p])
    return found


NOTEBOOKS = _notebooks()


def _unavailable(reason: str) -> None:
    """Skip locally; fail on CI, where the browser test must run."""
    if ON_CI:
        pytest.fail(f"CI=true but {reason}", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="module")
def browser():
    if not Path(labdriver.CHROMIUM).exists():
        _unavailable(f"{labdriver.CHROMIUM} is missing (./run test installs Debian's chromium as root)")
    try:
        import playwright  # noqa: F401
    except ImportError:
        _unavailable("playwright is not installed (pip install -e '.[dev]')")
    with labdriver.chromium() as b:
        yield b


def _lab(root: Path):
    try:
        import jupyterlab  # noqa: F401
    except ImportError:
        _unavailable("jupyterlab is not installed (pip install -e '.[dev]')")
    return labdriver.lab_server(root)


@pytest.fixture(scope="module")
def lab():
    """A JupyterLab server on a free loopback port serving the notebooks' common directory."""
    if not NOTEBOOKS:
        pytest.skip("no notebooks")
    root = Path(os.path.commonpath([str(p.parent) for p in NOTEBOOKS]))
    with _lab(root) as server:
        yield server


def _interactive(nb_path: Path) -> bool:
    meta = json.loads(nb_path.read_text(encoding="utf-8")).get("metadata", {})
    return meta.get("memorykit", {}).get("interactive", True) is not False


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _params():
    if not NOTEBOOKS:
        return [pytest.param(None, id="no-notebooks",
                             marks=pytest.mark.skip(reason="no notebooks in notebooks/ yet"))]
    return [pytest.param(p, id=p.name) for p in NOTEBOOKS]


def _wait_filled(session: labdriver.NotebookSession) -> None:
    """FigureWidgets fill their traces asynchronously after their view attaches."""
    page = session.page
    page.wait_for_selector(".js-plotly-plot", timeout=FILL_TIMEOUT_S * 1000, state="attached")
    deadline = time.monotonic() + FILL_TIMEOUT_S
    js = ("() => { const cells = Array.from(document.querySelectorAll('.jp-Cell'));"
          " return Array.from(document.querySelectorAll('.js-plotly-plot'))"
          ".filter(gd => !(gd.data || []).length).map(gd => cells.indexOf(gd.closest('.jp-Cell')) + 1); }")
    while time.monotonic() < deadline and page.evaluate(js):
        page.wait_for_timeout(250)
    empty = page.evaluate(js)
    assert not empty, (f"{len(empty)} plotly figure(s) rendered with no traces {FILL_TIMEOUT_S} s "
                       f"after the run, in cell(s) {empty} (the FigureWidget's state never reached "
                       "plotly.js)")


CHECK_SECONDS = [0.0]  # time spent comparing kernel and browser (reported per notebook)
SLIDERS = [0]


def _drawing_problems(session: labdriver.NotebookSession, when: str) -> list[str]:
    t0 = time.monotonic()
    try:
        return _compare(session, when)
    finally:
        CHECK_SECONDS[0] += time.monotonic() - t0


def _compare(session: labdriver.NotebookSession, when: str) -> list[str]:
    kernel = session.kernel_figures()
    problems = labdriver.compare_figures(kernel, session.rendered_figures())
    problems += labdriver.text_problems(kernel, session.drawn_texts())
    problems += _misses_text(session)
    return [f"{when}: {p}" for p in problems]


MISSES = ".memorykit-misses"  # lesson 12's browser for the misses: its text under the figure
_KERNEL_MISSES = ("from memorykit.classroom.lesson12_misses import MissExplorer as _MkMiss\n"
                  "_mk_misses = [v.details.value for v in list(globals().values())"
                  " if isinstance(v, _MkMiss)]")


def _plain(html_text: str) -> str:
    import html
    import re
    return " ".join(html.unescape(re.sub(r"<[^>]+>", "", html_text)).split())


def misses_text_problems(kernel: list[str], drawn: list[str]) -> list[str]:
    """The misses browser's text (question, missed evidence, reasons, what filled the budget)
    as drawn in the page against the kernel's HTML widgets' values, compared as plain text."""
    want = [_plain(k) for k in kernel]
    got = [" ".join(d.split()) for d in drawn]
    if len(want) != len(got):
        return [f"misses browser: the kernel holds {len(want)} text(s), the page drew {len(got)}"]
    return [f"misses browser {n + 1}: the page shows {g[:120]!r}, the kernel holds {w[:120]!r}"
            for n, (w, g) in enumerate(zip(want, got)) if w != g]


def _misses_text(session: labdriver.NotebookSession) -> list[str]:
    js = f"() => Array.from(document.querySelectorAll('{MISSES}')).map(e => e.textContent)"
    drawn = session.page.evaluate(js)
    if not drawn:
        return []
    MISSES_COMPARED[0] += 1
    return misses_text_problems(session.kernel_json(_KERNEL_MISSES, "_mk_misses"), drawn)


MISSES_COMPARED = [0]  # how often the misses browser's text was compared (reported per notebook)


def _layout_problems(session: labdriver.NotebookSession, when: str) -> list[str]:
    problems = []
    for fig in session.figure_boxes():
        for p in labdriver.layout_problems(fig):
            problems.append(f"{when}, figure {fig['index'] + 1}: {p}")
        out = fig.get("output")
        if out and fig["figure"]["w"] < 0.9 * out["w"] - 40:
            problems.append(f"{when}, figure {fig['index'] + 1}: {fig['figure']['w']:.0f} px wide "
                            f"in an output area of {out['w']:.0f} px (not the notebook's width)")
    for text in session.output_overflow():
        problems.append(f"{when}: text cut off at the output's right edge: {text!r}")
    return problems


YOURS_PREFIX = "yours: "


def _expects_yours(nb_path: Path) -> bool:
    nb = json.loads(nb_path.read_text(encoding="utf-8"))
    return any(c["cell_type"] == "code" and "Explorer(" in "".join(c["source"])
               and "yours=" in "".join(c["source"]) for c in nb["cells"])


def yours_problems(drawn_figs: list[dict], expected: bool) -> tuple[list[str], int]:
    """The student's traces (named ``yours: ...``) as the browser drew them: each must be
    visible with points; a notebook that makes a ``yours=`` explorer must draw at least one.
    Returns (problems, number of such traces drawn with points)."""
    traces = [t for fig in drawn_figs for t in fig["traces"]
              if str(t.get("name") or "").startswith(YOURS_PREFIX)]
    problems, drawn = [], 0
    for t in traces:
        points = any(labdriver._flat(t.get(k) or []) for k in ("x", "y", "z"))
        if points and t.get("fullVisible") is True:
            drawn += 1
        else:
            problems.append(f"the student's trace {t['name']!r} is not drawn (points: {points}, "
                            f"visible: {t.get('fullVisible')!r})")
    if expected and not traces:
        problems.append("the notebook makes an explorer with yours=, but the browser drew no "
                        f"trace named {YOURS_PREFIX!r}...")
    return problems, drawn


def _move_every_slider(session: labdriver.NotebookSession) -> tuple[list[str], int]:
    """Move every slider one step and back (a round trip: lesson 07 lost graph labels on the way
    back); after each step, compare kernel and browser figures, data and drawn text.

    Returns (problems, number of sliders whose first step changed some figure's data)."""
    page = session.page
    handles = page.locator(".widget-slider .noUi-handle")
    n = handles.count()
    assert n >= 1, "no ipywidgets slider (.widget-slider .noUi-handle) rendered"
    SLIDERS[0] = n
    problems: list[str] = []
    changed = 0
    for i in range(n):
        slider = page.locator(".widget-slider").nth(i)
        label = (slider.locator(".widget-label").first.text_content() or f"slider {i + 1}").strip()
        readout = slider.locator(".widget-readout")

        def value() -> str | None:
            return readout.first.text_content() if readout.count() else None

        start = value()
        before = session.page.evaluate(labdriver.JS_PLOT_FINGERPRINT)
        handle = handles.nth(i)
        handle.scroll_into_view_if_needed(timeout=5000)
        handle.focus()
        there, back = "ArrowRight", "ArrowLeft"
        handle.press(there)
        if readout.count() and value() == start:  # at the top of its range: go the other way
            there, back = back, there
            handle.press(there)
        moved = value()
        session.wait_settled(SETTLE_TIMEOUT_S)
        if session.page.evaluate(labdriver.JS_PLOT_FINGERPRINT) != before:
            changed += 1
        problems += _drawing_problems(session, f"after moving {label!r} {start} -> {moved}")
        if moved == start:
            continue
        handle.focus()
        handle.press(back)
        session.wait_settled(SETTLE_TIMEOUT_S)
        problems += _drawing_problems(session, f"after moving {label!r} {start} -> {moved} "
                                               f"-> {value()}")
    problems += [f"after the slider moves: error or warning in the page: {text[:300]}"
                 for text in session.page_errors()]
    return problems, changed


@pytest.mark.parametrize("nb_path", _params())
def test_notebook_draws_what_the_kernel_holds(nb_path: Path, lab, browser):
    t0 = time.monotonic()
    CHECK_SECONDS[0], SLIDERS[0], MISSES_COMPARED[0] = 0.0, 0, 0
    before = _sha(nb_path)
    session = labdriver.NotebookSession(browser, lab, nb_path)
    try:
        try:
            session.open(LOAD_TIMEOUT_S)
            # Stored outputs carry [n] already: clear them so the prompts prove a fresh run.
            state = session.clear_outputs()
            assert state["code"] > 0, "the notebook has no code cells"
            assert all(c is None for c in state["counts"]), f"outputs not cleared: {state['counts']}"
            state = session.run_all(RUN_TIMEOUT_S)
            assert len(set(state["counts"])) == len(state["counts"]), (
                f"execution counts are not distinct: {state['counts']}")
            t_run = time.monotonic() - t0
            interactive = _interactive(nb_path)
            if interactive or session.page.locator(".js-plotly-plot").count():
                _wait_filled(session)
            session.wait_settled(SETTLE_TIMEOUT_S)
            bad = session.page_errors()
            assert not bad, "error output in the page:\n" + "\n---\n".join(bad)

            shots = session.output_screenshots(ARTIFACTS, nb_path.stem)
            problems = _drawing_problems(session, "after load") + _layout_problems(session,
                                                                                   "after load")
            if interactive:
                more, changed = _move_every_slider(session)
                problems += more + _layout_problems(session, "after the slider moves")
                assert changed >= 1, "no slider changed the data of any plotly figure"
                yours, drawn = yours_problems(session.rendered_figures(), _expects_yours(nb_path))
                problems += [f"after the slider moves: {p}" for p in yours]
                if drawn:
                    print(f"\n{nb_path.name}: {drawn} trace(s) of the student's code drawn "
                          "after the slider moves")
            assert not problems, (f"{len(problems)} problem(s) in what the browser drew:\n  "
                                  + "\n  ".join(problems[:40]))
            print(f"\n{nb_path.name}: ran in {t_run:.1f} s, total {time.monotonic() - t0:.1f} s "
                  f"({CHECK_SECONDS[0]:.1f} s comparing figures, {SLIDERS[0]} sliders moved there and back), "
                  f"{len(shots)} screenshot(s)"
                  + (f", the misses browser's text compared {MISSES_COMPARED[0]} times"
                     if MISSES_COMPARED[0] else ""))
        except Exception as exc:
            shot = f" (screenshot: {session.screenshot(ARTIFACTS / f'{nb_path.stem}-failure.png')})"
            if session.console_errors:
                shot += "\nbrowser errors:\n  " + "\n  ".join(session.console_errors[:8])
            raise AssertionError(f"{nb_path.name}: {exc}{shot}") from exc
    finally:
        session.close()
    assert _sha(nb_path) == before, f"{nb_path.name} was modified on disk by the browser run"


# --- the check itself can fail -----------------------------------------------------------------

_HALF_UPDATED = """
import numpy as np, ipywidgets as w, plotly.graph_objects as go
from memorykit.classroom.figure import live_figure

def figure(kind):
    base = go.Figure()
    base.add_scatter(x=np.arange(5), y=np.arange(5) * 1.0, name="line")
    base.add_bar(x=["p", "q"], y=[1, 2], name="bars")
    fig = go.FigureWidget(base) if kind == "plain" else live_figure(base)
    with fig.batch_update():          # x on one trace, only y on the other
        fig.data[0].x = np.arange(8)
        fig.data[0].y = np.arange(8) * 3.0
        fig.data[1].y = [3, 4]
    return fig

w.VBox([w.IntSlider(), figure({kind!r})])
"""


@contextlib.contextmanager
def _one_cell_notebook(browser, tmp_path: Path, name: str, source: str):
    """A notebook of one code cell, run in JupyterLab with its figures drawn and settled."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nb.cells = [nbformat.v4.new_code_cell(source)]
    path = tmp_path / f"{name}.ipynb"
    nbformat.write(nb, path)
    with _lab(tmp_path) as server:
        session = labdriver.NotebookSession(browser, server, path)
        try:
            session.open(LOAD_TIMEOUT_S)
            session.run_all(RUN_TIMEOUT_S)
            _wait_filled(session)
            session.wait_settled(SETTLE_TIMEOUT_S)
            yield session
        finally:
            session.close()


@pytest.mark.parametrize("kind,broken", [("plain", True), ("lesson", False)])
def test_the_check_catches_a_half_updated_figure(kind, broken, browser, tmp_path):
    with _one_cell_notebook(browser, tmp_path, f"half_updated_{kind}",
                            _HALF_UPDATED.format(kind=kind)) as session:
        problems = _drawing_problems(session, "after load")
    if broken:
        assert any("'bars'" in p and "x has 2 values in the kernel, none in the browser" in p
                   for p in problems), f"the check missed plotly's half-updated trace: {problems}"
    else:
        assert problems == [], problems


_LABELS = """
import ipywidgets as w, plotly.graph_objects as go
from memorykit.classroom.figure import live_figure

X, Y = [0, 1, 2], [0, 1, 2]
on_points = go.Figure()   # 1: the labels are the nodes' texts ("" = unlabelled): lesson 07's bug
on_points.add_scatter(x=X, y=Y, text=["a", "b", "c"], mode="markers+text", name="nodes")
own = go.Figure()         # 2: the labelled nodes only, in a trace of their own (lesson 07's fix)
own.add_scatter(x=X, y=Y, mode="markers", name="nodes", marker=dict(color=Y, showscale=True,
                colorbar=dict(title=dict(text="depth"))))
own.add_scatter(x=X, y=Y, text=["a", "b", "c"], mode="text", name="labels", legendgroup="g",
                legendgrouptitle_text="group")
own.add_annotation(x=1, y=1, text="an <b>annotation</b>")
own.update_layout(title="own trace", xaxis_title="x title", legend_title_text="key")
on_points, own = live_figure(on_points), live_figure(own)

def relabel(texts):
    on_points.data[0].text = texts
    keep = [i for i, t in enumerate(texts) if t]
    with own.batch_update():
        own.data[1].x, own.data[1].y = [X[i] for i in keep], [Y[i] for i in keep]
        own.data[1].text = [texts[i] for i in keep]

w.VBox([w.IntSlider(), on_points, own])
"""

# What each kind of drawn text looks like in figure 2's SVG (a selector, "=text" picks the element
# by its text), and the problem its loss must raise.
_REMOVE = {".gtitle": "title", ".g-xtitle text": "x-axis title", ".legendtext": "legend entries",
           ".cbtitle text": "colour bar title", ".annotation-text": "annotations",
           ".legendtitletext": "legend title",
           ".legendtext=group": "legend group titles"}


def test_the_check_catches_labels_plotly_dropped(browser, tmp_path):
    """Labels set to "" and back (lesson 07's graph after a turn round trip): plotly.js drops a
    point's text element for good, and the text check must say which labels are missing; the
    same labels in a trace of their own must pass. Then each kind of text is deleted from the
    second figure's SVG, and the check must name it."""
    with _one_cell_notebook(browser, tmp_path, "labels", _LABELS) as session:
        loaded = _drawing_problems(session, "after load")
        for texts in (["a", "", ""], ["a", "b", "c"]):  # there and back
            session.kernel_json(f"relabel({texts!r})", "None")
            session.wait_settled(SETTLE_TIMEOUT_S)
        after = _drawing_problems(session, "after the round trip")
        session.page.evaluate("""(sels) => { const gd = document.querySelectorAll(
            '.js-plotly-plot')[1]; for (const s of sels) { const [sel, text] = s.split('=');
            Array.from(gd.querySelectorAll(sel)).find(
                el => text === undefined || el.textContent === text).remove(); } }""",
                              list(_REMOVE))
        removed = _drawing_problems(session, "after removing")
    assert loaded == [], loaded
    assert after == ["after the round trip: figure 1, labels of trace 'nodes' (uid "
                     f"{after[0].split('(uid ')[1][:8]}): drew 1 of the kernel's 3; missing 'b', "
                     "'c'"], after
    for sel, what in _REMOVE.items():
        assert any(p.startswith(f"after removing: figure 2, {what}") and "missing" in p
                   for p in removed), f"deleting {sel} went unnoticed: {removed}"


def test_the_label_check_counts_placed_non_empty_texts():
    trace = {"type": "scatter", "mode": "markers+text", "x": [0, 1, None, 3], "y": [0, 1, 2, 3],
             "text": ["a", "", "c", 4.0], "uid": "u", "name": "n"}
    assert labdriver.trace_labels(trace) == ["a", 4.0]       # "" and an unplaced point: no label
    assert labdriver.trace_labels({**trace, "mode": "markers"}) is None
    assert labdriver.trace_labels({**trace, "text_all": "t"}) == ["t", "t", "t"]
    kernel = [{"traces": [trace], "texts": {"title": None, "axes": {}, "coloraxes": {},
                                            "legend_title": None, "annotations": []}}]
    drawn = {"index": 0, "traces": [{"uid": "u", "visible": True, "showlegend": False,
                                     "colorbar": False}], "labels": {"u": ["a", "4"]},
             "axes": {}, "colorbars": {}, "title": [], "annotations": [], "legendShown": False,
             "legend": [], "legendGroups": [], "legendTitle": []}
    assert labdriver.text_problems(kernel, [drawn]) == []
    drawn["labels"]["u"] = ["a", "x"]
    assert labdriver.text_problems(kernel, [drawn]) == [
        "figure 1, labels of trace 'n' (uid u): drew 1 of the kernel's 2; missing '4'",
        "figure 1, labels of trace 'n' (uid u): drew text the kernel does not hold: 'x'"]


def test_the_misses_text_check_fails_on_stale_text():
    kernel = ["<div class='memorykit-misses'><p><b>Q:</b> Where &amp; when?</p></div>"]
    assert misses_text_problems(kernel, ["Q: Where & when?"]) == []
    assert "the page shows 'Q: Who?'" in misses_text_problems(kernel, ["Q: Who?"])[0]
    assert "holds 1 text(s), the page drew 0" in misses_text_problems(kernel, [])[0]


def test_the_yours_check_fails_without_the_students_trace():
    drawn = [{"traces": [{"name": "FIFO", "x": [1], "fullVisible": True}]}]
    assert yours_problems(drawn, expected=True)[0]
    drawn[0]["traces"].append({"name": "yours: Mine", "x": [], "y": [], "fullVisible": False})
    problems, n = yours_problems(drawn, expected=True)
    assert n == 0 and "'yours: Mine' is not drawn" in problems[0]
    drawn[0]["traces"][1].update(x=[3, 4], y=[1, 2], fullVisible=True)
    assert yours_problems(drawn, expected=True) == ([], 1)
