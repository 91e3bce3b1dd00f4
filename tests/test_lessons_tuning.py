"""Lesson 12 (notebooks/12_parameter_tuning.ipynb): data choice, sweeps as arrays, explorer, checker."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from memorykit.evaluation.toolkit import AttentionPolicy
from memorykit.evaluation.harness import HarnessSettings, evaluate
from memorykit.evaluation.dataset import dataset_statistics
from memorykit.evaluation.locomo import load_locomo
from memorykit.evaluation.toolkit import TUNABLE as KNOBS
from memorykit.classroom.lesson12_checks import check_beats_bm25
from memorykit.classroom.lesson12_checks import evaluate_configuration
from memorykit.classroom.data import LOCOMO_ENV, load_tuning_data
from memorykit.classroom.data import LOCOMO_FIXTURE as FIXTURE
from memorykit.classroom.lesson12 import (TuningExplorer, comparison_notes, front_rows, policy_table,
                                          precompute)

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def small():
    data = load_locomo(FIXTURE, verify=False).select(max_questions=4)
    return data, precompute(data, "small", budgets=(500, 1000), progress=False)


def test_fixture_is_generated_and_reproduces_the_quirks(monkeypatch):
    out = subprocess.run([sys.executable, str(ROOT / "data/locomo_style/generate.py"), "--check"],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    monkeypatch.delenv(LOCOMO_ENV, raising=False)
    data, description = load_tuning_data()
    assert description.startswith("bundled LoCoMo-style fixture") and "/work" not in description
    r = data.report
    assert r.evidence_normalized > 0 and r.evidence_dropped > 0 and r.image_turns > 0
    assert r.session_dates_without_session == len(data)
    assert set(data.categories()) == {"single-hop", "multi-hop", "temporal", "open-domain", "adversarial"}
    # In the range of real multi-session chat, not a short fixture that flatters every memory.
    stats = dataset_statistics(data)
    for c in data:
        assert 19 <= len(c.sessions) <= 35 and 300 <= len(c.messages) <= 700
        assert all(15 <= s.stop - s.start <= 35 for s in c.sessions)
    assert stats["evidence_5_or_more_sessions_back"] >= 0.5


def test_local_locomo_path_is_used_and_verified(monkeypatch, tmp_path):
    fake = tmp_path / "locomo10.json"
    fake.write_bytes(FIXTURE.read_bytes())
    monkeypatch.setenv(LOCOMO_ENV, str(fake))
    with pytest.raises(Exception, match="not the published locomo10.json"):
        load_tuning_data()


def test_sweeps_are_arrays_over_the_grid(small):
    data, sw = small
    s = sw.surfaces["bm25"]
    k = KNOBS["bm25"]
    assert s.recall.shape == (len(k.values[0]), len(k.values[1]), 2)
    assert s.category_recall.shape[0] == len(sw.categories)
    # one cell, recomputed directly, equals the array
    i, j = k.values[0].index(0.9), k.values[1].index(0.5)
    direct = evaluate(k.make(k1=0.9, b=0.5), data, 1000).summary()
    assert s.recall[i, j, 1] == direct["recall"] and s.tokens[i, j, 1] == direct["tokens"]
    assert sw.front and all(p in sw.points for p in sw.front)
    assert front_rows(sw)[0]["billed_tokens"] <= front_rows(sw)[-1]["billed_tokens"]
    assert {r["policy"] for r in policy_table(sw, 1000)} >= {"last-tokens", "full-context", "bm25(k1=1.5, b=0.75)"}
    with pytest.raises(ValueError, match="budget must be one of .* got 750"):
        policy_table(sw, 750)


def test_over_budget_points_score_nothing_and_stay_off_the_front(small):
    data, sw = small
    full = [p for p in sw.points if p["policy"] == "full-context"]
    assert full and all(p["over_budget"] == 1.0 and p["recall"] == 0.0 for p in full)
    assert all(p["over_budget"] == 0.0 for p in sw.front)
    rows = {r["policy"]: r for r in policy_table(sw, 1000)}
    assert rows["full-context"]["recall"] == 0.0 and rows["full-context"]["over_budget"] == 1.0
    # the summary buffer is compared like any policy, with answer containment beside recall
    assert "summary" in rows and all(0.0 <= r["answer_recall"] <= 1.0 for r in rows.values())
    notes = comparison_notes(data, 1000)
    assert sw.units == "billed" and notes[0].startswith("tokens and budgets are billed tokens")
    assert any(n.startswith("fifo, importance, hybrid, recency") for n in notes)


def test_explorer_reslices_and_switches_policy(small):
    _, sw = small
    e = TuningExplorer(sw, "bm25", 1000)
    before = np.array(e.trace("recall surface").z, dtype=float).copy()
    e.update(budget=500)
    assert e.summary()["selected"] == "bm25(k1=1.5, b=0.75) at 500 tokens"
    e.update(policy="attention")
    assert e.sliders["p1"].description == "neighbours" and e.params["p1"] == 1
    assert e.summary()["selected"] == "attention(neighbours=1, dimension=512) at 500 tokens"
    assert np.array(e.trace("recall surface").z).shape == (4, 4) and before.shape == (6, 5)
    e.sliders["p1"].value = 0  # a slider move recomputes
    assert e.params["p1"] == 0 and "neighbours=0" in e.summary()["selected"]
    with pytest.raises(ValueError, match="policy must be one of .* got 'lru'"):
        e.update(policy="lru")
    with pytest.raises(ValueError, match="p2 must be an index .* got 9"):
        e.update(p2=9)
    with pytest.raises(ValueError, match="budget must be one of"):
        TuningExplorer(sw, "bm25", 3000)


def _my_retrieval():
    from memorykit.evaluation.scored import ScoredRetrieval

    class MyRetrieval(ScoredRetrieval):  # the notebook's reference answer to exercise 2
        def score(self, query_terms, message_terms):
            return float(len(set(query_terms) & set(message_terms)))

    return MyRetrieval


def test_explorer_draws_the_students_policy_beside_the_librarys(small):
    data, sw = small
    mine = _my_retrieval()
    e = TuningExplorer(sw, "bm25", 1000, yours=mine)
    points, bars = e.trace("yours: MyRetrieval"), e.trace("yours: MyRetrieval by category")
    direct = {b: evaluate(mine(), data, b) for b in sw.budgets}
    assert list(points.x) == [direct[b].summary()["tokens"] for b in sw.budgets]
    assert list(points.y) == [direct[b].summary()["recall"] for b in sw.budgets]
    assert list(points.marker.size) == [10, 18]  # the selected budget's point is the larger
    by_category = direct[1000].recall_by_category()
    assert list(bars.y) == [by_category.get(c, 0.0) for c in sw.categories]
    s = e.summary()
    assert s["yours: MyRetrieval_recall"] == round(direct[1000].summary()["recall"], 3)
    assert s["yours: MyRetrieval_beats_bm25_default"] == (
        direct[1000].summary()["recall"] > s["bm25_default_recall_at_this_budget"])
    # without yours= the explorer prints what it printed before
    assert list(TuningExplorer(sw, "bm25", 1000).summary()) == [
        k for k in s if not k.startswith("yours: ")]
    e.update(budget=500)
    assert list(e.trace("yours: MyRetrieval").marker.size) == [18, 10]
    assert s != e.summary() and "yours: MyRetrieval_recall" in e.summary()


def test_explorer_refuses_a_policy_of_the_wrong_kind_naming_it(small):
    from memorykit.evaluation.baselines import BM25Retrieval

    _, sw = small
    mine = _my_retrieval()
    with pytest.raises(TypeError, match="yours\\['MyRetrieval'\\] must be your class itself, "
                                        "not an instance of it: pass MyRetrieval, not MyRetrieval"):
        TuningExplorer(sw, yours=mine())
    with pytest.raises(TypeError, match="yours\\['str'\\] must be a ScoredRetrieval subclass"):
        TuningExplorer(sw, yours="MyRetrieval")
    with pytest.raises(TypeError, match="yours\\['BM25Retrieval'\\] must be a ScoredRetrieval"):
        TuningExplorer(sw, yours=BM25Retrieval)
    import dataclasses

    with pytest.raises(ValueError, match="do not say which data they ran on"):
        TuningExplorer(dataclasses.replace(sw, dataset=None), yours=mine)


def test_a_parameter_slider_leaves_the_surface_and_the_unparameterized_alone(small):
    _, sw = small
    e = TuningExplorer(sw, "bm25", 1000, yours=_my_retrieval())
    asked: list[str] = []
    trace = e.trace
    e.trace = lambda name: asked.append(name) or trace(name)
    e.update(p1=0)  # k1 moves the selected cell, not the surface, BM25's default or yours
    assert asked == ["selected cell", "selected configuration", "selected"]
    asked.clear()
    e.update(budget=500)
    assert {"recall surface", "bm25 default", "yours: MyRetrieval",
            "yours: MyRetrieval by category"} <= set(asked)


def test_attention_fast_path_equals_plain_path():
    data = load_locomo(FIXTURE, verify=False).select(max_questions=3)
    for policy in (AttentionPolicy(neighbours=0), AttentionPolicy(neighbours=2)):
        fast = evaluate(policy, data, 600)
        slow = evaluate(policy, data, 600, settings=HarnessSettings(use_prepare=False))
        assert [(q.recall, q.tokens) for q in fast.questions] == [(q.recall, q.tokens) for q in slow.questions]


def test_evaluate_configuration_names_bad_input():
    with pytest.raises(ValueError, match="config\\['policy'\\] must be one of bm25, attention, hybrid-retrieval, got 'lru'"):
        evaluate_configuration({"policy": "lru"})
    with pytest.raises(ValueError, match="bm25 takes parameters k1, b, got neighbours"):
        evaluate_configuration({"policy": "bm25", "neighbours": 1})
    with pytest.raises(TypeError, match="config must be a dict"):
        evaluate_configuration("bm25")
    with pytest.raises(TypeError, match="bm25's k1 must be a number, got True"):
        evaluate_configuration({"policy": "bm25", "k1": True})
    with pytest.raises(TypeError, match="attention's neighbours must be a number, got '2'"):
        evaluate_configuration({"policy": "attention", "neighbours": "2"})


def test_checker_fails_a_wrong_answer_with_a_reason_and_passes_the_reference():
    wrong = check_beats_bm25({"policy": "bm25", "k1": 0.9, "b": 0.5})
    assert not wrong and "does not beat BM25" in wrong.reason
    assert check_beats_bm25({"policy": "hybrid-retrieval", "lexical_weight": 0.5, "neighbours": 1})


@pytest.mark.parametrize("config, error, text", [
    ({"policy": "bm25", "budget": 2000}, ValueError, "budget 1000, got budget=2000"),
    ({"policy": "bm25", "neighbours": 1}, ValueError, "bm25 takes parameters k1, b, got neighbours"),
    ({"policy": "bm25", "k1": float("nan")}, TypeError, "k1 must be a number, got nan"),
    ("bm25", TypeError, "config must be a dict"),
])
def test_checker_refuses_nonsense_naming_it(config, error, text):
    with pytest.raises(error, match=text):
        check_beats_bm25(config)


def test_checker_displays_its_verdict_once(capsys):
    verdict = check_beats_bm25({"policy": "bm25", "k1": 0.9, "b": 0.5})
    assert capsys.readouterr().out == "" and not verdict
    check_beats_bm25({"policy": "bm25", "k1": 0.9, "b": 0.5}, show=True)
    assert capsys.readouterr().out.count("[12 beat BM25]") == 1


def test_retrieval_policy_checker_runs_the_library_contracts():
    from memorykit.evaluation.scored import ScoredRetrieval, TermOverlapRetrieval
    from memorykit.classroom.lesson12_checks import check_retrieval_policy, retrieval_threshold

    bar = retrieval_threshold()
    assert bar["query_blind_recall"] < bar["threshold"] < bar["bm25_recall"]
    passed = check_retrieval_policy(TermOverlapRetrieval)
    assert passed and "all 10 contracts hold" in passed.reason

    class Longest(ScoredRetrieval):  # ignores the question
        def score(self, query_terms, message_terms):
            return float(len(message_terms))

    class Nothing(ScoredRetrieval):
        def score(self, query_terms, message_terms):
            return 0.0

    class NotANumber(ScoredRetrieval):
        def score(self, query_terms, message_terms):
            return "high"

    wrong = check_retrieval_policy(Longest)
    assert not wrong and any("quotes message" in d and "must rise with the words" in d
                             for d in wrong.details)
    nothing = check_retrieval_policy(Nothing)
    assert not nothing and any(f"is under {bar['threshold']:.3f}" in d for d in nothing.details)
    text = check_retrieval_policy(NotANumber)
    assert not text and any("score() must return a number, got 'high'" in d for d in text.details)
    assert "does not override score" in check_retrieval_policy(ScoredRetrieval).reason
    with pytest.raises(TypeError, match="subclasses ScoredRetrieval .*got TermOverlapRetrieval"):
        check_retrieval_policy(TermOverlapRetrieval())


def test_process_pool_gives_the_serial_sweeps():
    data = load_locomo(FIXTURE, verify=False).select(max_questions=2)
    serial = precompute(data, "x", budgets=(500,), progress=False)
    pooled = precompute(data, "x", budgets=(500,), progress=False, workers=2)
    assert pooled.points == serial.points and pooled.front == serial.front
    with pytest.raises(ValueError, match="workers must be .*-1"):
        precompute(data, "x", workers=-1)


def test_attention_fast_path_equals_plain_path_at_every_position():
    from memorykit.classroom.scenarios.conversation import from_simulated
    from memorykit.classroom.scenarios.conversation import load_conversation

    conv = from_simulated(load_conversation(ROOT / "data/conversations/short_60.jsonl"), delay=5)
    assert len({conv.position(q) for q in conv.questions}) > 5
    policy = AttentionPolicy(neighbours=1)
    fast = evaluate(policy, conv, 300)
    slow = evaluate(policy, conv, 300, settings=HarnessSettings(use_prepare=False))
    assert [(q.recall, q.tokens) for q in fast.questions] == [(q.recall, q.tokens) for q in slow.questions]
    with pytest.raises(ValueError, match="position must be in \\[0, 131\\], got 500"):
        policy.prepare(conv).build_context(500, "x", 100)


def test_comparison_notes_read_the_sweeps_instead_of_evaluating_again(monkeypatch):
    import dataclasses

    import memorykit.classroom.lesson12_sweeps as app
    from memorykit.evaluation.harness import compare_policies
    from memorykit.evaluation.toolkit import FIXED_POLICIES

    data = load_locomo(FIXTURE, verify=False).select(max_questions=3)
    sweeps = precompute(data, "x", budgets=(1000,), progress=False)
    evaluated = compare_policies(FIXED_POLICIES, data, 1000)[0].notes
    assert any("give identical results" in n for n in evaluated)

    def no_evaluation(*args, **kwargs):
        raise AssertionError("comparison_notes evaluated the policies again")

    monkeypatch.setattr(app, "compare_policies", no_evaluation)
    assert comparison_notes(data, 1000) == tuple(evaluated) == tuple(sweeps.notes[1000])
    # another dataset object (or a budget the sweeps lack) is evaluated, not read
    with pytest.raises(AssertionError, match="evaluated the policies again"):
        comparison_notes(dataclasses.replace(data), 1000)
    with pytest.raises(AssertionError, match="evaluated the policies again"):
        comparison_notes(data, 500)


def test_the_generator_writes_a_locomo_sized_set_for_the_scale_benchmark(tmp_path):
    # bench/tuning_lesson_scale.py times lesson 12 on it: LoCoMo's size, the fixture's kind
    sys.path.insert(0, str(ROOT))
    from bench.tuning_lesson_scale import write_dataset

    data = load_locomo(write_dataset(tmp_path, 10, 24), verify=False)
    assert (len(data), data.n_messages, data.n_questions) == (10, 6578, 1950)
    assert len({c.id for c in data}) == 10 and data.report.duplicate_turn_ids == 0
    stats = dataset_statistics(data)
    assert stats["evidence_5_or_more_sessions_back"] > 0.5
