"""The browser test's comparisons and layout rules, on hand-made inputs (no browser).

tests/browser/labdriver.py decides what counts as "drawn wrongly" (a trace the kernel holds
missing or different in plotly.js) and "laid out wrongly" (overlapping titles, legends, colour
bars, tick labels; text cut off at the figure's edge). These tests make sure each rule fires on
the fault it names and stays quiet on a correct picture, including rotated tick labels, whose
axis-aligned boxes overlap while the labels themselves do not.
"""

from __future__ import annotations

import math

from tests.browser.labdriver import compare_figures, compare_trace, layout_problems


def box(kind, label, x0, y0, x1, y1, **extra):
    return {"kind": kind, "label": label, "x0": x0, "y0": y0, "x1": x1, "y1": y1,
            "w": x1 - x0, "h": y1 - y0, **extra}


FIGURE = {"x0": 0, "y0": 0, "x1": 800, "y1": 500, "w": 800, "h": 500}


def fig(*items):
    return {"index": 0, "figure": FIGURE, "output": None, "items": list(items)}


def test_a_clean_layout_has_no_problems():
    assert layout_problems(fig(
        box("title", "T", 50, 5, 300, 25),
        box("annotation", "left panel", 60, 40, 250, 55),
        box("annotation", "right panel", 450, 40, 650, 55),
        box("plot area", "xy", 60, 60, 400, 400),
        box("plot area", "x2y2", 450, 60, 780, 400),
        box("legend", "legend", 60, 450, 500, 490),
        box("axis title", "turn", 200, 420, 260, 440),
    )) == []


def test_overlapping_subplot_titles_are_reported():
    problems = layout_problems(fig(box("annotation", "relevance memory: eviction score", 60, 40, 420, 55),
                                   box("annotation", "FIFO vs relevance", 400, 40, 560, 55)))
    assert problems == ["annotation 'relevance memory: eviction score' overlaps annotation "
                        "'FIFO vs relevance'"]


def test_a_legend_on_a_title_or_a_plot_is_reported():
    problems = layout_problems(fig(box("annotation", "window tokens", 300, 40, 420, 55),
                                   box("legend", "legend", 60, 30, 700, 58),
                                   box("plot area", "xy", 60, 50, 700, 400)))
    assert any("'window tokens' overlaps legend" in p or "legend 'legend' overlaps annotation"
               in p for p in problems), problems
    assert any("legend 'legend' covers a plot area" in p for p in problems)


def test_a_colour_bar_over_an_axis_title_is_reported():
    problems = layout_problems(fig(box("colorbar", "colour bar", 300, 60, 340, 400),
                                   box("axis title", "recall", 320, 200, 335, 240)))
    assert problems == ["colorbar 'colour bar' overlaps axis title 'recall'"]


def test_text_cut_off_at_the_edge_is_reported():
    problems = layout_problems(fig(box("annotation", "FIFO vs relevance, same session", 650, 40, 830, 55)))
    assert problems == ["annotation 'FIFO vs relevance, same session' is clipped (outside the figure)"]


def _rotated(label, cx, cy, width=90, height=12, degrees=30):
    a = math.radians(degrees)
    corners = []
    for dx, dy in ((-width / 2, -height / 2), (width / 2, -height / 2), (width / 2, height / 2),
                   (-width / 2, height / 2)):
        corners.append([cx + dx * math.cos(a) - dy * math.sin(a),
                        cy + dx * math.sin(a) + dy * math.cos(a)])
    xs, ys = [c[0] for c in corners], [c[1] for c in corners]
    return box("tick", label, min(xs), min(ys), max(xs), max(ys), axis="x", corners=corners)


def test_rotated_tick_labels_side_by_side_are_legible():
    # 30-degree labels 40 px apart: their bounding boxes overlap, the labels do not
    a, b = _rotated("F1: 123", 100, 450), _rotated("F2: Blue_Falcon_80", 140, 450)
    assert a["x1"] > b["x0"]
    assert layout_problems(fig(a, b)) == []


def test_tick_labels_on_top_of_each_other_are_reported():
    a, b = _rotated("F1: 123", 100, 450, degrees=0), _rotated("F2: 5289", 130, 450, degrees=0)
    assert layout_problems(fig(a, b)) == ["tick labels 'F1: 123' and 'F2: 5289' overlap (illegible)"]


def kernel_trace(**data):
    return {"uid": "u1", "type": data.pop("type", "scatter"), "name": "t", "visible": True, **data}


def drawn_trace(**data):
    return {"uid": "u1", "type": data.pop("type", "scatter"), "name": "t",
            "fullVisible": data.pop("fullVisible", True), "zCells": data.pop("zCells", None), **data}


def test_a_trace_drawn_as_the_kernel_holds_it_passes():
    assert compare_trace(kernel_trace(x=[1, 2], y=[0.5, None]),
                         drawn_trace(x=[1, 2], y=[0.5000001, "nan"])) == []


def test_a_lost_x_is_reported():
    # lesson 04's bars before the fix: the categories never reached plotly.js
    problems = compare_trace(kernel_trace(type="bar", x=["resolution success", "eviction rate"],
                                          y=[0.9, 0.7]),
                             drawn_trace(type="bar", y=[0.9, 0.7]))
    assert problems == ["trace 't' (uid u1): x has 2 values in the kernel, none in the browser"]


def test_different_lengths_and_values_are_reported():
    problems = compare_trace(kernel_trace(x=[1, 2, 3], y=[1, 2, 3]),
                             drawn_trace(x=[1, 2], y=[1, 5, 3]))
    assert "x has 3 values in the kernel, 2 in the browser" in problems[0]
    assert "y differs at 1 of 3 points (first at 1: kernel 2, browser 5)" in problems[1]


def test_an_invisible_heat_map_is_reported():
    problems = compare_trace(kernel_trace(type="heatmap", z=[[0.1, 0.2]]),
                             drawn_trace(type="heatmap", z=[[0.1, 0.2]], fullVisible=False,
                                         zCells=0))
    assert any("visible in the kernel, plotly.js drew it with visible=False" in p for p in problems)
    assert any("heat map with 2 values in the kernel drew 0 cells" in p for p in problems)


def test_an_empty_trace_may_be_invisible():
    assert compare_trace(kernel_trace(x=[], y=[]), drawn_trace(x=[], y=[], fullVisible=False)) == []


def test_a_trace_missing_from_the_page_is_reported():
    kernel = [{"traces": [kernel_trace(x=[1], y=[1])]}]
    assert compare_figures(kernel, [{"traces": []}]) == [
        "trace 't' (uid u1): not in the rendered figure"]
