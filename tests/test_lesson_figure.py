"""The live figure of the lesson explorers (memorykit.classroom.figure), without a browser.

What reaches the browser is checked on the messages the kernel sends: a ``LessonFigure`` edit
never carries plotly's ``Undefined`` placeholder (the browser stored it literally and later
views lost ``x``), a full-state request answers with the figure as it is now, and a new view is
asked to autosize. tests/browser/ checks the same things in JupyterLab.
"""

from __future__ import annotations

import base64
import html

import numpy as np
import pytest

go = pytest.importorskip("plotly.graph_objects")
from plotly.basedatatypes import Undefined  # noqa: E402

from memorykit.classroom.explorer import readout_table  # noqa: E402
from memorykit.classroom.figure import (  # noqa: E402
    STATIC_FIGURES_ENV,
    lesson_figure_class,
    live_figure,
    typed_spec,
)


def _two_traces() -> go.Figure:
    fig = go.Figure()
    fig.add_scatter(x=np.arange(5), y=np.arange(5) * 1.0, name="line")
    fig.add_bar(x=["p", "q"], y=[1, 2], name="bars")
    fig.add_heatmap(z=[[1.0, 2.0]], name="heat")
    return fig


def _capture(fig, trait: str) -> list:
    sent: list = []
    fig.observe(lambda change: sent.append(change["new"]) if change["new"] else None, names=trait)
    return sent


def _mixed_edit(fig) -> None:
    with fig.batch_update():  # x on one trace, only y on another, z on a third
        fig.data[0].x = np.arange(8)
        fig.data[0].y = np.arange(8) * 3.0
        fig.data[1].y = [3, 4]
        fig.data[2].z = [[5.0, 6.0]]


def _flatten(values):
    for v in values:
        if isinstance(v, (list, tuple)):
            yield from _flatten(v)
        else:
            yield v


def test_plain_figurewidget_sends_the_placeholder_we_work_around():
    # If plotly stops sending Undefined, LessonFigure's fill becomes unnecessary: this says so.
    fig = go.FigureWidget(_two_traces())
    sent = _capture(fig, "_py2js_update")
    _mixed_edit(fig)
    style = sent[-1]["style_data"]
    assert style["x"][1] is Undefined and style["z"][0] is Undefined


def test_lesson_figure_edits_carry_every_traces_current_value():
    fig = live_figure(_two_traces())
    sent = _capture(fig, "_py2js_update")
    _mixed_edit(fig)
    msg = sent[-1]
    style, traces = msg["style_data"], msg["style_traces"]
    assert traces == [0, 1, 2]
    assert not any(v is Undefined for values in style.values() for v in _flatten(values))
    assert list(style["x"][1]) == ["p", "q"]            # the bars keep their categories
    assert style["x"][2] is None                         # the heat map has no x: "unset" is a no-op
    assert style["z"][0] is None and style["z"][1] is None   # z does not exist on line or bars
    assert list(style["x"][0]) == list(range(8))
    # the kernel's figure is the edit
    assert list(fig.data[1].x) == ["p", "q"] and list(fig.data[1].y) == [3, 4]


def test_restyle_outside_a_batch_is_sent_unchanged():
    fig = live_figure(_two_traces())
    sent = _capture(fig, "_py2js_restyle")
    fig.data[1].y = [7, 8]
    assert sent[-1]["restyle_data"] == {"y": [[7, 8]]}


def test_full_state_request_returns_the_figure_as_it_is_now():
    fig = live_figure(_two_traces())
    _mixed_edit(fig)
    stale = [t.get("y") for t in fig._widget_data]
    state = fig.get_state()  # what a reloaded page asks for

    def values(v):  # 1-D numeric arrays travel as binary buffers
        if isinstance(v, dict) and "buffer" in v:
            return np.frombuffer(v["buffer"], dtype=v["dtype"]).tolist()
        return [float(x) for x in v]

    ys = [values(t["y"]) if "y" in t else None for t in state["_widget_data"]]
    assert ys[:2] == [(np.arange(8) * 3.0).tolist(), [3.0, 4.0]], (stale, ys)


def test_a_new_view_is_asked_to_autosize():
    fig = live_figure(_two_traces())
    sent = _capture(fig, "_py2js_relayout")
    fig._view_count = 1          # what the frontend reports when a view is created
    assert sent and sent[-1]["relayout_data"] == {"autosize": True}
    fig._view_count = 0          # a view removed: nothing to size
    assert len(sent) == 1
    fig._view_count = 1          # another view (a page reload): sized again
    assert len(sent) == 2


def test_live_figure_is_responsive_and_keeps_a_set_width():
    fig = live_figure(_two_traces())
    assert fig._config["responsive"] is True and fig.layout.autosize is True
    fixed = _two_traces()
    fixed.update_layout(width=600)
    assert live_figure(fixed).layout.autosize is None


def test_lesson_figure_is_a_figurewidget():
    assert issubclass(lesson_figure_class(), go.FigureWidget)
    assert lesson_figure_class() is lesson_figure_class()


def test_typed_spec_round_trips_and_keeps_nan():
    grid = np.array([[0.5, np.nan, 1.0], [2.0, 3.0, -1.0]])
    spec = typed_spec(grid)
    assert spec["dtype"] == "f4" and spec["shape"] == "2,3"
    back = np.frombuffer(base64.b64decode(spec["bdata"]), dtype="<f4").reshape(2, 3)
    np.testing.assert_array_equal(np.isnan(back), np.isnan(grid))
    np.testing.assert_allclose(back[~np.isnan(back)], grid[~np.isnan(grid)])
    assert typed_spec(np.arange(4))["shape"] == "4"


def test_typed_spec_rejects_other_shapes_naming_them():
    with pytest.raises(ValueError, match=r"got shape \(2, 2, 2\)"):
        typed_spec(np.zeros((2, 2, 2)))


def test_readout_table_escapes_and_lists_every_pair():
    out = readout_table([("budget", 1500), ("rule", "<b>fifo</b>")])
    assert "budget" in out and "1500" in out
    assert html.escape("<b>fifo</b>") in out and "<b>fifo</b>" not in out
    assert out.count("justify-content:space-between") == 2


def test_explorer_display_carries_the_widget_and_a_static_picture(monkeypatch):
    from memorykit.classroom import explorer as _app
    from memorykit.classroom.lesson06 import EscalationExplorer

    explorer = EscalationExplorer(base_priority=0.6)
    monkeypatch.delenv(STATIC_FIGURES_ENV, raising=False)
    bundle = explorer._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert "image/png" not in bundle
    assert "run the notebook" in bundle["text/plain"] and "VBox" not in bundle["text/plain"]

    calls = []
    monkeypatch.setenv(STATIC_FIGURES_ENV, "1")
    monkeypatch.setattr(_app, "static_png", lambda fig: calls.append(fig) or b"\x89PNG fake")
    bundle = explorer._repr_mimebundle_()
    assert base64.b64decode(bundle["image/png"]) == b"\x89PNG fake"
    explorer._repr_mimebundle_()
    assert len(calls) == 1, "the picture is of the figure as first shown, rendered once"
    assert explorer.widget is explorer.widget


def test_static_png_renders_offline_with_the_system_chromium():
    import os
    from pathlib import Path

    from memorykit.classroom.figure import static_png

    if not Path("/usr/bin/chromium").exists():
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("CI=true but /usr/bin/chromium is missing")
        pytest.skip("/usr/bin/chromium is missing (./run test installs it)")
    pytest.importorskip("kaleido")
    fig = live_figure(_two_traces())
    fig.update_layout(height=300)
    png = static_png(fig, width=500)
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
    assert (width, height) == (500, 300)


def test_heat_grid_rounds_and_marks_empty_cells_none():
    from memorykit.classroom.figure import heat_grid

    grid = heat_grid([[0.123456, np.nan], [1.0, 2.0]], mask=[[True, True], [False, True]])
    assert grid.tolist() == [[0.1235, None], [None, 2.0]]
    with pytest.raises(ValueError, match=r"got shape \(3,\)"):
        heat_grid([1.0, 2.0, 3.0])


def test_entity_heat_map_columns_average_present_turns():
    from memorykit.classroom.lesson04 import _column_turns, _columns

    score = np.array([[1.0, np.nan, 3.0, 5.0, np.nan], [np.nan, np.nan, 2.0, 2.0, 7.0]])
    np.testing.assert_array_equal(_columns(score, 2), [[1.0, 4.0, np.nan], [np.nan, 2.0, 7.0]])
    assert _column_turns(5, 2).tolist() == [2, 4, 5]
