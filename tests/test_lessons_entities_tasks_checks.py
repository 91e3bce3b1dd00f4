"""Lessons 04 and 05's checkers: verdicts displayed once, nonsense refused, the build-it-yourself
checkers' messages; and lesson 04's explorer with the student's score (``yours=``)."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from memorykit.classroom.lesson05_checks import check_admission_rule
from memorykit.classroom.lesson04_checks import (
    check_entity_capacity,
    check_entity_ttl,
    check_relevance_score,
)
from memorykit.workspace.tasks import strictly_above
from memorykit.workspace import TaskSlots


@pytest.mark.parametrize(("answer", "passed", "why"), [
    (14, True, "smallest memory that loses no antecedent; max_size 13 loses 1"),
    (13, False, "still evicts 1 antecedents"),
    (20, False, "19 loses nothing either"),
])
def test_check_entity_capacity(answer, passed, why, capsys):
    v = check_entity_capacity(answer)
    assert v.passed is passed and why in v.reason
    assert capsys.readouterr().out == ""  # returned, not printed: a bare call displays it once


@pytest.mark.parametrize(("answer", "passed", "why"), [
    (30, True, "shortest that keeps resolution success >= 93%"),
    (29, False, "forgets too early: 92.3% < 93%"),
    (31, False, "30 min works too"),
])
def test_check_entity_ttl(answer, passed, why, capsys):
    v = check_entity_ttl(answer)
    assert v.passed is passed and why in v.reason
    assert capsys.readouterr().out == ""


@pytest.mark.parametrize(("check", "value", "error", "message"), [
    (check_entity_capacity, 14.5, TypeError, "max_size must be an int number of entities, got 14.5 (float)"),
    (check_entity_capacity, True, TypeError, "got True (bool)"),
    (check_entity_capacity, "14", TypeError, "got '14' (str)"),
    (check_entity_capacity, float("nan"), TypeError, "got nan"),
    (check_entity_capacity, 0, ValueError, "max_size must be >= 1, got 0"),
    (check_entity_capacity, -3, ValueError, "got -3"),
    (check_entity_capacity, 10**9, ValueError, "max_size must be <= 1000"),
    (check_entity_ttl, 30.0, TypeError, "ttl_minutes must be an int number of minutes, got 30.0"),
    (check_entity_ttl, None, TypeError, "got None"),
    (check_entity_ttl, -5, ValueError, "ttl_minutes must be >= 1, got -5"),
    (check_entity_ttl, 10**6, ValueError, "ttl_minutes must be <= 1440"),
])
def test_lesson04_checkers_refuse_nonsense(check, value, error, message):
    with pytest.raises(error, match=re.escape(message)):
        check(value)


def test_show_prints_the_verdict_once(capsys):
    check_entity_capacity(14, show=True)
    assert capsys.readouterr().out.count("[04 capacity] PASS") == 1


def _seed_score(age, count, w):
    return w.w_recency * math.exp(-w.decay_per_minute * age) + w.w_frequency * min(
        count / w.frequency_cap, 1.0)


def test_check_relevance_score_passes_the_formula_and_says_what_to_change():
    assert check_relevance_score(_seed_score).passed
    hours = check_relevance_score(
        lambda age, count, w: _seed_score(age / 60, count, w))  # age read in hours
    assert not hours.passed
    assert "expected 0.420728 (0.6 e^-1 + 0.4 x 5/10 = 0.42073)" in hours.details[0]


@pytest.mark.parametrize("bad", [None, 0.6, "relevance", TaskSlots])
def test_check_relevance_score_wants_a_function(bad):
    with pytest.raises(TypeError, match="relevance must be a function"):
        check_relevance_score(bad)


def test_check_admission_rule_wants_a_taskslots_subclass():
    with pytest.raises(TypeError, match="subclasses TaskSlots"):
        check_admission_rule(TaskSlots())
    with pytest.raises(TypeError, match="subclasses TaskSlots"):
        check_admission_rule(lambda p, active: ("noted", None))
    v = check_admission_rule(TaskSlots)
    assert not v.passed and "does not override decide" in v.reason


def test_check_admission_rule_refuses_the_librarys_rule_called_from_the_override():
    # An override that calls the library's decide passed every contract: it is the library's.
    class Super(TaskSlots):
        def decide(self, priority, active):
            return super().decide(priority, active)

    class ByName(TaskSlots):
        def decide(self, priority, active):
            return TaskSlots.decide(self, priority, active)

    for cls in (Super, ByName):
        v = check_admission_rule(cls)
        assert not v.passed and "calls TaskSlots.decide" in v.reason


def test_check_admission_rule_passes_the_rule():
    class Mine(TaskSlots):
        def decide(self, priority, active):
            s = self.settings
            if priority <= s.activation_threshold:
                return ("deferred" if priority < s.defer_below else "noted"), None
            if len(active) < s.max_slots:
                return "activated", None
            victim = max(range(len(active)), key=lambda i: (-active[i], i))
            # A product on the bound counts as on it (1.3 x 0.7 is 0.9099999999999999).
            if strictly_above(priority, s.preemption_ratio * active[victim]):
                return "preempted", victim
            return "noted", None

    v = check_admission_rule(Mine)
    assert v.passed, str(v)


# ---------------------------------------------------------------- lesson 04: yours= in the explorer
def relevance(age_minutes, access_count, weights):
    """The notebook's reference answer to Exercise 1."""
    recency = math.exp(-weights.decay_per_minute * age_minutes)
    frequency = min(access_count / weights.frequency_cap, 1.0)
    return weights.w_recency * recency + weights.w_frequency * frequency


def uncapped(age_minutes, access_count, weights):
    """The notebook's wrong answer: frequency never saturates at the cap."""
    recency = math.exp(-weights.decay_per_minute * age_minutes)
    return weights.w_recency * recency + weights.w_frequency * access_count / weights.frequency_cap


def _sent_updates(explorer, monkeypatch) -> list:
    """(restyled properties, trace indexes, relayout keys) of each update the figure sends."""
    sent = []
    send = explorer.fig._send_update_msg

    def spy(restyle_data, relayout_data, trace_indexes=None, source_view_id=None):
        sent.append((set(restyle_data or {}), trace_indexes, set(relayout_data or {})))
        return send(restyle_data, relayout_data, trace_indexes, source_view_id)

    monkeypatch.setattr(explorer.fig, "_send_update_msg", spy)
    return sent


def test_heatmap_explorer_draws_the_students_score_beside_the_librarys():
    from memorykit.classroom.lesson04_heatmap import EntityHeatmapExplorer

    plain = EntityHeatmapExplorer()
    assert not any("yours" in k for k in plain.summary())
    assert not any(str(t.name).startswith("yours: ") for t in plain.fig.data)
    ex = EntityHeatmapExplorer(yours={"relevance": relevance, "uncapped": uncapped})
    assert {k: v for k, v in ex.summary().items() if "yours" not in k} == plain.summary()
    library, mine, wrong = (ex.trace(n) for n in ("score", "yours: relevance", "yours: uncapped"))
    assert len(library.z) == 2740 and list(mine.x) == list(library.x) and list(mine.y) == list(library.y)
    np.testing.assert_array_equal(mine.z, library.z)
    assert not np.array_equal(wrong.z, library.z)
    s = ex.summary()
    assert s["yours: relevance cells that differ"] == "0 of 8390"
    assert s["yours: relevance largest difference"] == 0.0
    assert len(ex.trace("differs from the library (relevance)").x) == 0
    # more than 10 accesses at D0's cap of 10: only the uncapped score parts ways
    assert s["yours: uncapped cells that differ"] == "59 of 8390"
    assert s["yours: uncapped largest difference"] == 0.24
    assert len(ex.trace("differs from the library (uncapped)").x) == 18  # four-turn columns
    ex.update(ttl_minutes=0)
    assert ex.summary()["yours: uncapped cells that differ"] == "1995 of 19582"


@pytest.mark.parametrize(("yours", "text"), [
    (0.6, "yours['float'] must be your function itself"),
    (TaskSlots, "yours['TaskSlots'] must be your function itself"),
    (lambda age, count: 0.5, "must take the arguments (age_minutes, access_count, weights)"),
    (lambda age_minutes, access_count, weights: "high",
     "yours: <lambda> must return a finite number, returned 'high' for age_minutes=0.0"),
    (lambda age_minutes, access_count, weights: float("nan"), "must return a finite number, returned nan"),
])
def test_heatmap_explorer_refuses_the_wrong_kind_of_yours(yours, text):
    from memorykit.classroom.lesson04_heatmap import EntityHeatmapExplorer

    with pytest.raises(TypeError) as caught:
        EntityHeatmapExplorer(yours=yours)
    assert text in str(caught.value)


def test_a_weight_move_leaves_fifos_bar_alone(monkeypatch):
    from memorykit.classroom.lesson04_heatmap import EntityHeatmapExplorer

    ex = EntityHeatmapExplorer(yours=relevance)
    fifo = next(i for i, t in enumerate(ex.fig.data) if t.name == "FIFO")
    sent = _sent_updates(ex, monkeypatch)
    ex.update(w_frequency=0.45)
    assert sent and all(fifo not in indexes for _, indexes, _ in sent)
    assert all(not any(k.startswith("yaxis") for k in relayout) for _, _, relayout in sent)
    ex.update(max_size=19)
    assert any(fifo in indexes for _, indexes, _ in sent[1:])


def test_heat_cells_are_the_occupied_cells_plus_one_gap_per_empty_row_and_column():
    from memorykit.classroom.lesson04_heatmap import heat_cells

    nan = np.nan
    grid = np.array([[0.5, nan, nan], [nan, nan, nan], [0.2, nan, 0.7]])
    rows, cols = heat_cells(grid)
    assert sorted(zip(rows.tolist(), cols.tolist())) == [(0, 0), (0, 1), (1, 0), (2, 0), (2, 2)]
    assert np.isnan(grid[1, 0]) and np.isnan(grid[0, 1])  # the anchors are drawn as gaps


MODEBAR_PX = 33
"""How far plotly's toolbar (the modebar) reaches down from a figure's top in Chromium: measured
on lesson 04's explorer at 760, 1000 and 1400 px (bottom at 33 px in each)."""


def test_heatmap_explorer_titles_clear_the_toolbar_and_its_legend_shows_every_marker():
    """Issue 24: the right panel's two-line title ("FIFO vs relevance") sat under the modebar
    (15-58 px from the top, the toolbar 10-33 px), and the TTL-expiry marker was white on the
    legend's white."""
    from memorykit.classroom.lesson04_heatmap import EntityHeatmapExplorer

    fig = EntityHeatmapExplorer().fig
    top = fig.layout.margin.t
    for title in fig.layout.annotations:
        if title.y < 1:
            continue  # not above the top row
        lines = title.text.count("<br>") + 1
        size = title.font.size or 16
        assert top - lines * 1.3 * size >= MODEBAR_PX, (
            f"{title.text!r} reaches {top - lines * 1.3 * size:.0f} px from the figure's top, "
            f"under the toolbar (down to {MODEBAR_PX} px)")
    white = {"white", "#fff", "#ffffff", "rgb(255,255,255)"}
    markers = [t for t in fig.data if t.type == "scattergl" and t.showlegend is not False]
    assert "TTL expiry" in [t.name for t in markers]
    for trace in markers:
        colours = {str(trace.marker.color).lower().replace(" ", ""),
                   str(trace.marker.line.color).lower().replace(" ", "")}
        assert not colours & white, f"{trace.name!r} is drawn in {colours}: invisible on the legend's white"


def _through_the_weights(age_minutes, access_count, weights):
    return weights.score(age_minutes, access_count)[2]


def _through_the_class(age_minutes, access_count, weights):
    from memorykit.entities import RelevanceWeights

    return RelevanceWeights.score(weights, age_minutes, access_count)[2]


def _through_components(age_minutes, access_count, weights):
    from memorykit.entities.scoring import components  # what show_code(_choose_victim) calls

    return components(age_minutes, access_count, weights)[2]


@pytest.mark.parametrize("relevance", [_through_the_weights, _through_the_class, _through_components])
def test_relevance_checker_refuses_the_librarys_score(relevance):
    """Issue 24: each of these passed every contract with no formula written."""
    import memorykit.entities.scoring as scoring

    real = scoring.relevance_scores
    v = check_relevance_score(relevance)
    assert not v.passed and "hands the work to the library's" in v.details[0], v
    assert scoring.relevance_scores is real  # the tripwire is put back
    assert check_relevance_score(_own_formula).passed


def _own_formula(age_minutes, access_count, weights):
    import math

    return (weights.w_recency * math.exp(-weights.decay_per_minute * age_minutes)
            + weights.w_frequency * min(access_count / weights.frequency_cap, 1.0))
