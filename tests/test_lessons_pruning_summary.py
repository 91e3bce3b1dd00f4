"""Lessons 02 (pruning) and 03 (summary buffer): apps, explorers and exercise checkers.

The apps' results are checked against the library run directly and against facts about
the policies that hold by construction (FIFO evicts in arrival order, system messages stay,
each summary round replaces the previous summary so depth grows by one per round).
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from tests.explorers import traces_drawn

from memorykit.buffers.policies import (
    FIFOBuffer,
    HybridBuffer,
    ImportanceBuffer,
    RecencyWeightedBuffer,
    overtake_minutes,
    true_half_life_minutes,
)
from memorykit.buffers.summary_buffer import SummaryBuffer
from memorykit.classroom import lesson02 as pa
from memorykit.classroom import lesson03 as sa
from memorykit.classroom.lesson02_checks import PRUNING_EXERCISE, check_pruning_choice
from memorykit.classroom.lesson03_checks import SUMMARY_EXERCISE, check_summary_settings
from memorykit.classroom.verdict import Verdict
from memorykit.classroom.data import default_conversation
from memorykit.tokens import Tokenizer

pytest.importorskip("plotly")
pytest.importorskip("ipywidgets")

# Reference answers used by the notebooks.
PRUNING_ANSWER = {"policy": "hybrid", "importance_threshold": 0.75}
SUMMARY_ANSWER = {"threshold": 0.95, "target": 0.4, "min_recent": 0}


@pytest.fixture(scope="module")
def conv():
    return default_conversation()


# ------------------------------------------------------------------ lesson 02
@pytest.mark.parametrize("policy,buffer", [
    ("fifo", lambda: FIFOBuffer(1500)),
    ("importance", lambda: ImportanceBuffer(1500)),
    ("hybrid", lambda: HybridBuffer(1500, importance_threshold=0.6)),
    ("recency", lambda: RecencyWeightedBuffer(1500, decay_rate=0.2, half_life_minutes=10)),
])
def test_run_policy_matches_the_library(conv, policy, buffer):
    run = pa.run_policy(conv, policy, budget=1500, importance_threshold=0.6, decay_rate=0.2,
                        half_life_minutes=10)
    buf = buffer()
    buf.extend(conv.messages)
    assert run.fact_alive == conv.fact_survival(buf.messages())
    assert run.final_messages == len(buf)
    assert run.final_tokens == buf.tokens <= 1500
    assert set(run.evicted_at) == set(buf.trace.evicted_ids())
    assert run.evict_turn.size == len(run.evicted_at)


def test_every_lost_fact_has_an_eviction_and_system_stays(conv):
    system = next(m for m in conv.messages if m.role == "system")
    for policy in [s.name for s in pa.pruning_policies()]:
        run = pa.run_policy(conv, policy, budget=1000)
        assert system.id not in run.evicted_at
        for f in conv.facts:
            if not run.fact_alive[f.id]:
                turn, rule = run.evicted_at[f.message_id]
                assert turn >= f.turn
                assert rule.startswith(policy)


def test_fifo_evicts_in_arrival_order(conv):
    run = pa.run_policy(conv, "fifo", budget=1500)
    assert np.all(np.diff(run.victim_turn) >= 0)
    assert set(run.rules) == {"fifo"}


def test_hybrid_rules_and_threshold_extremes(conv):
    run = pa.run_policy(conv, "hybrid", budget=1500, importance_threshold=0.5)
    assert set(run.rules) <= {"hybrid-below-threshold", "hybrid-fifo-fallback"}
    # Nothing is below importance 0: threshold 1e-9 means pure FIFO fallback.
    tiny = pa.run_policy(conv, "hybrid", budget=1500, importance_threshold=1e-9)
    assert set(tiny.rules) == {"hybrid-fifo-fallback"}
    assert tiny.fact_alive == pa.run_policy(conv, "fifo", budget=1500).fact_alive


def test_importance_keeps_more_facts_than_fifo(conv):
    # Planted facts have importance >= 0.8, chitchat <= 0.3: importance pruning hoards facts.
    fifo = pa.run_policy(conv, "fifo", budget=1500)
    imp = pa.run_policy(conv, "importance", budget=1500)
    assert imp.facts_alive > fifo.facts_alive
    assert np.all(imp.victim_importance <= 1.0)


def test_run_policy_is_memoized_and_ignores_unused_params(conv):
    a = pa.run_policy(conv, "fifo", budget=1750, importance_threshold=0.3)
    b = pa.run_policy(conv, "fifo", budget=1750, importance_threshold=0.9, decay_rate=0.5)
    assert a is b
    c = pa.run_policy(conv, "hybrid", budget=1750, importance_threshold=0.3)
    d = pa.run_policy(conv, "hybrid", budget=1750, importance_threshold=0.9)
    assert c is not d


@pytest.mark.parametrize("kwargs,word", [
    ({"policy": "lifo"}, "'lifo'"),
    ({"policy": "fifo", "budget": 0}, "budget"),
    ({"policy": "hybrid", "importance_threshold": 1.5}, "1.5"),
    ({"policy": "fifo", "importance_threshold": 1.5}, "1.5"),  # validated whatever the policy
    ({"policy": "hybrid", "threshold": 0.5}, "'threshold'"),  # not a registered setting
    ({"policy": "recency", "decay_rate": -0.1}, "-0.1"),
    ({"policy": "recency", "half_life_minutes": 0}, "half_life_minutes"),
])
def test_run_policy_bad_input(conv, kwargs, word):
    with pytest.raises(ValueError, match=word):
        pa.run_policy(conv, **kwargs)


def test_curves_and_overtake():
    curves = pa.importance_curves(0.1, 5.0, importances=[0.9, 0.5], minutes=np.array(
        [0.0, true_half_life_minutes(0.1, 5.0)]))
    assert curves[:, 0] == pytest.approx([0.9, 0.5])
    assert curves[:, 1] == pytest.approx([0.45, 0.25])
    t = overtake_minutes(0.9, 0.15, 0.1, 5.0)
    assert t == pytest.approx(5.0 * math.log(6) / 0.1)
    assert 0.9 * math.exp(-0.1 * t / 5.0) == pytest.approx(0.15)
    assert overtake_minutes(0.9, 0.15, 0.0, 5.0) == math.inf
    assert overtake_minutes(0.1, 0.5) == 0.0
    with pytest.raises(ValueError, match="half_life_minutes"):
        overtake_minutes(0.9, 0.1, 0.1, 0.0)


def test_rule_mask_and_fact_fates(conv, capsys):
    run = pa.run_policy(conv, "hybrid", budget=1500, importance_threshold=0.5)
    below = run.rule_mask("hybrid-below-threshold")
    fallback = run.rule_mask("hybrid-fifo-fallback")
    assert below.sum() + fallback.sum() == run.evict_turn.size
    # A victim at or above the threshold only leaves with a tool call/result it belongs to.
    by_id = {m.id: m for m in conv.messages}
    for mid, (_, rule) in run.evicted_at.items():
        m = by_id[mid]
        if rule == "hybrid-below-threshold" and m.importance >= 0.5:
            assert m.role == "tool" or m.tool_calls
    runs = {p: pa.run_policy(conv, p, budget=1500) for p in [s.name for s in pa.pruning_policies()]}
    pa.print_fact_fates(runs, conv.facts[-3:])
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 4 and lines[1].startswith(conv.facts[-3].id)


def test_compare_policies(conv):
    table = pa.compare_policies(conv, budget=1500)
    assert list(table) == list([s.name for s in pa.pruning_policies()])
    n_recent = sum(1 for f in conv.facts if f.turn >= 401)
    for row in table.values():
        assert 0 <= row["recent_facts_alive"] <= min(n_recent, row["facts_alive"])


def _data(fig):
    return [(None if t.x is None else list(t.x), None if t.y is None else list(t.y))
            for t in fig.data]


@pytest.mark.parametrize("param,value,changed", [
    ("budget", 2500, [0, 6, 7, 8, 9, 10]),
    ("importance_threshold", 0.75, [8, 9]),
    ("decay_rate", 0.3, [2, 3, 4, 10]),
    ("half_life_minutes", 20.0, [2, 3, 4, 5, 10]),
])
def test_pruning_explorer_updates_figure(conv, param, value, changed):
    ex = pa.PruningExplorer(conv)
    before = _data(ex.fig)
    ex.update(**{param: value})
    after = _data(ex.fig)
    for i in changed:
        assert before[i] != after[i], (param, i)
    assert ex.sliders[param].value == pytest.approx(value)
    summary = ex.summary()
    assert summary[param if param != "half_life_minutes" else "half_life_minutes"] == \
        pytest.approx(value)


def test_pruning_explorer_slider_drives_update(conv):
    ex = pa.PruningExplorer(conv)
    ex.sliders["importance_threshold"].value = 0.7000000000000001
    assert ex.params["importance_threshold"] == 0.7
    assert ex.result["runs"]["hybrid"].params["importance_threshold"] == 0.7


def test_check_pruning_choice(conv):
    ok = check_pruning_choice(PRUNING_ANSWER["policy"],
                              importance_threshold=PRUNING_ANSWER["importance_threshold"])
    assert ok.passed, ok
    fifo = check_pruning_choice("fifo")
    assert not fifo.passed
    assert "FIFO evicts by age" in fifo.reason
    assert any("left at turn" in d for d in fifo.details)
    low = check_pruning_choice("hybrid", importance_threshold=0.5)
    assert not low.passed and "loses" in low.reason
    assert PRUNING_EXERCISE["budget"] == 1500


@pytest.mark.parametrize("threshold, way", [(0.5, "raise"), (0.65, "raise"), (0.85, "lower"),
                                             (0.9, "lower"), (1.0, "lower")])
def test_a_failing_hybrid_threshold_is_told_which_way_to_move(conv, threshold, way):
    """Issue 24: the verdict described both failure modes and left the direction to guess."""
    verdict = check_pruning_choice("hybrid", importance_threshold=threshold)
    assert not verdict.passed
    other = {"raise": "lower", "lower": "raise"}[way]
    assert f"{way} importance_threshold" in verdict.reason, verdict
    assert f"{other} importance_threshold" not in verdict.reason, verdict
    # the evidence is the lost facts' rule, named in the details
    rule = "hybrid-fifo-fallback" if way == "raise" else "hybrid-below-threshold"
    assert all(rule in d for d in verdict.details[1:]), verdict


def test_the_hybrid_rules_have_markers_of_their_own_in_the_timeline(conv):
    """Issue 24: both hybrid rules were 4-px filled dots of one colour (a circle and a diamond
    read the same at that size): the fallback is an open, larger symbol, legended apart."""
    ex = pa.PruningExplorer(conv)
    for spec in pa.pruning_policies():
        traces = [ex.trace(name) for s, _, name in pa.timeline_traces() if s is spec]
        if len(traces) < 2:
            continue
        first, *others = traces
        for t in others:
            assert t.name != first.name and t.showlegend is not False
            assert t.marker.symbol.endswith("-open") != first.marker.symbol.endswith("-open")
            assert t.marker.size >= 2 * first.marker.size, (t.name, t.marker.size)


def test_fact_holders_say_where_every_planted_fact_is(conv):
    """Issue 24: the setup printed 31 'fact' messages beside 50 planted facts; the other 19 sit
    in assistant decisions."""
    holders = pa.fact_holders(conv)
    assert sum(n for n, _ in holders.values()) == len(conv.facts)
    by_id = {m.id: m for m in conv.messages}
    for f in conv.facts:
        m = by_id[f.message_id]
        assert f.id in m.metadata["facts"] and m.metadata["kind"] in holders
    kinds = {m.metadata["kind"] for m in conv.messages}
    assert set(holders) <= kinds
    for kind, (n, role) in holders.items():
        assert n == sum(1 for f in conv.facts if by_id[f.message_id].metadata["kind"] == kind)
        assert {by_id[f.message_id].role for f in conv.facts
                if by_id[f.message_id].metadata["kind"] == kind} == {role}


@pytest.mark.parametrize("args, kwargs, error, text", [
    (("random",), {}, ValueError, "policy must be one of fifo, importance, hybrid, recency, "
                                  "got 'random'"),
    ((3,), {}, TypeError, "policy must be a str, got 3"),
    (("hybrid",), {"importance_threshold": 0.75, "budget": 3000}, ValueError,
     "the exercise fixes budget=1500, got 3000"),
    (("hybrid",), {"budget": 1500.0}, TypeError, "budget must be an integer, got 1500.0"),
    # A setting the chosen policy does not have is refused, not silently ignored.
    (("hybrid",), {"decay_rate": 0.1}, ValueError,
     "decay_rate does not apply to the hybrid policy (its settings: importance_threshold)"),
    (("hybrid",), {"half_life_minutes": 5.0}, ValueError, "half_life_minutes does not apply"),
    (("importance",), {"importance_threshold": 0.7}, ValueError,
     "importance_threshold does not apply to the importance policy (its settings: none)"),
    (("fifo",), {"decay_rate": 0.1}, ValueError, "decay_rate does not apply to the fifo policy"),
    (("recency",), {"importance_threshold": 0.7}, ValueError,
     "importance_threshold does not apply to the recency policy (its settings: decay_rate, "
     "half_life_minutes)"),
    (("hybrid",), {"importance_threshold": 1.5}, ValueError,
     "importance_threshold must be in (0, 1], got 1.5"),
    (("hybrid",), {"importance_threshold": True}, TypeError,
     "importance_threshold must be a number, got True"),
    (("recency",), {"decay_rate": math.nan}, ValueError, "decay_rate must be finite, got nan"),
])
def test_check_pruning_choice_refuses_nonsense_naming_it(args, kwargs, error, text):
    with pytest.raises(error, match=re.escape(text)):
        check_pruning_choice(*args, **kwargs)


def test_pruning_and_summary_checkers_return_their_verdict_without_printing(capsys):
    verdict = check_pruning_choice("fifo")
    summary = check_summary_settings(0.8, 0.6, 3)
    assert capsys.readouterr().out == ""
    assert isinstance(verdict, Verdict) and isinstance(summary, Verdict)
    assert check_pruning_choice("fifo", show=True) == verdict
    assert capsys.readouterr().out.count("[02 pruning] NOT YET") == 1


# ------------------------------------------------------------------ lesson 03
@pytest.mark.parametrize("budget,threshold,target,min_recent", [
    (2000, 0.85, 0.5, 2), (1000, 0.95, 0.1, 0), (3500, 0.6, 0.55, 9),
])
def test_run_summary_buffer_measures_a_plain_summary_buffer(conv, budget, threshold, target,
                                                             min_recent):
    """The lesson's replay (one summarizer with warm memos, a memo counter) measures what a
    SummaryBuffer with its default summarizer does."""
    plain = SummaryBuffer(budget, threshold, target, min_recent)
    for m in conv.messages:
        plain.add(m)
    run = sa.run_summary_buffer(conv, budget=budget, threshold=threshold, target=target,
                                min_recent=min_recent)
    events = plain.trace.summarizations()
    assert [e.depth for e in events] == [r.depth for r in run.rounds]
    assert [len(e.message_ids) for e in events] == [r.taken for r in run.rounds]
    assert [s.content for s in plain.summaries()] == [run.final_summary]
    assert conv.fact_survival(plain.messages()) == run.fact_alive
    assert [s.after for s in plain.token_history] == list(run.after)
    assert run.summarizer == plain.summarizer.name


def test_sawtooth_facts(conv):
    run = sa.run_summary_buffer(conv)  # seed 004's defaults
    assert (run.budget, run.threshold, run.target, run.min_recent) == (2000, 0.8, 0.6, 3)
    assert run.after.max() <= run.budget
    assert len(run.turns) == len(conv.messages)
    for r in run.rounds:
        assert r.tokens_before > run.threshold * run.budget or r.rule == "summary-overflow"
        assert r.tokens_after < r.tokens_before
    # The summary sits at the front and is re-summarized each round: depth +1 per round.
    assert [r.depth for r in run.rounds] == list(range(1, run.n_summarizations + 1))
    assert run.max_depth == run.n_summarizations
    assert np.all(np.diff(run.depth) >= 0)
    assert run.facts_alive == sum(run.fact_alive.values())
    for f in conv.facts:
        lost = run.fact_lost_turn[f.id]
        assert (lost is None) == run.fact_alive[f.id]
        if lost is not None:
            assert lost >= f.turn


def test_wider_gap_means_fewer_rounds(conv):
    narrow = sa.run_summary_buffer(conv, threshold=0.8, target=0.6)
    wide = sa.run_summary_buffer(conv, threshold=0.9, target=0.3)
    assert wide.n_summarizations < narrow.n_summarizations


def test_run_summary_buffer_memoized(conv):
    a = sa.run_summary_buffer(conv, budget=2000, threshold=0.9, target=0.4, min_recent=0)
    assert sa.run_summary_buffer(conv, budget=2000, threshold=0.9, target=0.4,
                                 min_recent=0) is a


@pytest.mark.parametrize("kwargs,word", [
    ({"target": 0.8}, "0.8"),
    ({"threshold": 1.2}, "1.2"),
    ({"budget": -5}, "budget"),
    ({"min_recent": -1}, "min_recent"),
])
def test_run_summary_buffer_bad_input(conv, kwargs, word):
    with pytest.raises(ValueError, match=word):
        sa.run_summary_buffer(conv, **kwargs)


def test_compression_demo(conv):
    res = sa.compression_demo(conv)
    assert res.rounds > 0
    assert all(rule.startswith("compression:") for rule in res.steps)
    assert res.final_tokens <= res.max_tokens
    assert res.facts_alive == sum(res.fact_alive.values())
    with pytest.raises(ValueError, match="max_tokens"):
        sa.compression_demo(conv, max_tokens=0)


def _traces(fig):
    return {t.name: (None if t.x is None else list(t.x), None if t.y is None else list(t.y))
            for t in fig.data}


@pytest.mark.parametrize("param,value,changed", [
    ("budget", 3000, ["tokens", "budget", "threshold", "target", "summarization"]),
    ("threshold", 0.9, ["tokens", "threshold", "summarization"]),
    ("target", 0.3, ["tokens", "target", "summarization"]),
    ("min_recent", 8, ["tokens", "summarization"]),
])
def test_summary_explorer_updates_figure(conv, param, value, changed):
    ex = sa.SummaryExplorer(conv)
    before = _traces(ex.fig)
    ex.update(**{param: value})
    after = _traces(ex.fig)
    for name in changed:
        assert before[name] != after[name], (param, name)
    assert before["planted"] == after["planted"]
    assert ex.summary()[param] == pytest.approx(value)


def test_summary_explorer_settings_are_seed_004s(conv):
    assert sa.DEFAULTS == {"budget": 2000, "threshold": 0.8, "target": 0.6, "min_recent": 3}
    ex = sa.SummaryExplorer(conv, min_recent=5)
    assert ex.params == {**sa.DEFAULTS, "min_recent": 5}
    assert ex.sliders["budget"].max == 4000 and type(ex.sliders["budget"].value) is int


def test_summary_explorer_keeps_target_below_threshold(conv):
    ex = sa.SummaryExplorer(conv)
    ex.update(threshold=0.6)
    assert ex.params["target"] == pytest.approx(0.55)
    assert ex.sliders["target"].value == pytest.approx(0.55)


def test_check_summary_settings(conv):
    ok = check_summary_settings(**SUMMARY_ANSWER)
    assert ok.passed, ok
    default = check_summary_settings(0.8, 0.6, 3)
    assert not default.passed
    assert "more than 60" in default.reason and SUMMARY_EXERCISE["fact"] in default.reason
    # Few rounds, but the fact is squeezed out: the reason names only that.
    lost = check_summary_settings(0.9, 0.35, 3)
    assert not lost.passed
    assert "squeezed out" in lost.reason and "more than" not in lost.reason


@pytest.mark.parametrize("threshold, target, min_recent", [
    (0.9, 0.4, 0), (0.9, 0.4, 3),  # rows of the lesson's settings table: they passed for f0026
    (0.95, 0.1, 0),  # the sliders' widest gap, nothing protected: it passed for f0026
])
def test_check_summary_settings_refuses_the_lessons_printed_settings(threshold, target, min_recent):
    v = check_summary_settings(threshold, target, min_recent)
    assert not v.passed and "f0048" in v.reason and "squeezed out" in v.reason

@pytest.mark.parametrize("args, kwargs, error, text", [
    ((0.5, 0.7, 3), {}, ValueError, "target must be < threshold (0.5), got 0.7"),
    ((True, 0.4, 0), {}, TypeError, "threshold must be a number, got True"),
    ((0.9, math.nan, 0), {}, ValueError, "target must be finite, got nan"),
    ((0.9, 0.4, -1), {}, ValueError, "min_recent must be >= 0, got -1"),
    ((0.9, 0.4, 0.5), {}, TypeError, "min_recent must be an integer, got 0.5"),
    ((0.9, 0.4, 0), {"budget": 2500}, ValueError, "the exercise fixes budget=2000, got 2500"),
])
def test_check_summary_settings_refuses_nonsense_naming_it(args, kwargs, error, text):
    with pytest.raises(error, match=re.escape(text)):
        check_summary_settings(*args, **kwargs)


# ---------------------------------------------------------------- benchmark
def test_bench_sliders_time_moves_smoke(conv):
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from bench.sliders import time_moves

    ex = pa.PruningExplorer(conv)
    report = time_moves(ex, 4, seed=1, cache_size=pa._replay.cache_len)
    assert report["all"]["n"] == 4 and report["all"]["p95_ms"] >= report["all"]["p50_ms"] > 0
    assert sum(s["n"] for s in report["per_slider"].values()) == 4
    assert 0 <= report["fresh_replays"]["n"] <= 4


def test_replay_buffer_records_what_the_buffer_decided(conv):
    from memorykit.classroom.replays.buffer_replay import replay_buffer
    from memorykit.trace import Trace

    buf = FIFOBuffer(800)
    run = replay_buffer(conv, buf, policy="fifo", params={"budget": 800})
    assert run.final_messages == len(buf) and run.final_tokens == buf.tokens <= 800
    assert sum(len(e.message_ids) for e in buf.trace.evictions()) == run.evict_turn.size
    assert run.final_messages + run.evict_turn.size == len(conv.messages)
    assert np.all(run.evict_turn >= run.victim_turn)
    with pytest.raises(ValueError, match="buffer must start empty, got"):
        replay_buffer(conv, buf, policy="fifo", params={})
    with pytest.raises(ValueError, match="max_events=5"):
        replay_buffer(conv, FIFOBuffer(800, trace=Trace(max_events=5)), policy="fifo", params={})
    with pytest.raises(TypeError, match="buffer must be a MessageBuffer"):
        replay_buffer(conv, [], policy="fifo", params={})


def test_weighted_window_rows_follow_weighted_context_not_arrival(conv):
    """The table lesson 02 prints is weighted_context's order: effective importance
    descending, each row's arrival place consistent with the window, the system prompt last."""
    from memorykit.classroom.lesson02 import weighted_window_rows

    rows = weighted_window_rows(conv, budget=1500)
    effective = [float(r["effective"]) for r in rows]
    assert effective == sorted(effective, reverse=True)
    assert sorted(r["arrival"] for r in rows) == list(range(len(rows)))
    assert [r["arrival"] for r in rows] != list(range(len(rows)))
    assert rows[-1]["kind"] == "system" and rows[-1]["effective"] == "0.000"


# ------------------------------------------- lesson 03: attention window, contexts
def test_attention_recall_matches_the_window_run_directly(conv):
    """The table's counts are AttentionWindow's own selections; the recency column counts
    facts among the newest messages that fit, and neighbours never find more facts than none
    at the same budget here."""
    from memorykit.buffers.attention import AttentionWindow
    from memorykit.classroom import lesson03_focus as fa

    rows = {(r["window_tokens"], r["neighbours"]): r for r in fa.attention_recall(conv)}
    buffer = FIFOBuffer(max_tokens=None)
    buffer.extend(conv.messages)
    window = AttentionWindow(buffer, window_tokens=250, neighbours=0)
    direct = sum(f.message_id in window.select_with_scores(f.question).ids for f in conv.facts)
    assert rows[(250, 0)]["facts found"] == f"{direct}/{len(conv.facts)}"
    for (tokens, neighbours), row in rows.items():
        found = int(row["facts found"].split("/")[0])
        assert found <= int(rows[(tokens, 0)]["facts found"].split("/")[0])
        assert int(row["mean tokens used"]) <= tokens
    fact_ids = {f.message_id for f in conv.facts}
    last_fact = max(i for i, m in enumerate(conv.messages) if m.id in fact_ids)
    reach = sum(m.billed_tokens for m in conv.messages[last_fact:])
    assert fa.recency_hits(conv, reach) == 1 and fa.recency_hits(conv, reach - 1) == 0
    assert fa.recency_hits(conv, 10**7) == len(conv.facts)
    with pytest.raises(ValueError, match="window_tokens must be >= 1, got 0"):
        fa.recency_hits(conv, 0)


def test_context_story_follows_switch_stack_return_merge(conv):
    from memorykit.classroom import lesson03_focus as fa

    rows = fa.context_story(conv)
    assert [r["active"] for r in rows] == ["main", "side", "side", "main", "main", "main"]
    assert [r["stack"] for r in rows] == ["-", "main", "main", "-", "-", "-"]
    assert rows[1]["left-off message"] == "importance 0.90"  # boosted on leaving
    assert "side" not in rows[-1]["contexts"]  # merged away
    survival = fa.boost_survival(conv, (0.0, 0.9), (0, 10))
    assert survival[1] == {"boost_to": "0.90", "after 0": "kept", "after 10": "kept"}
    with pytest.raises(ValueError, match="after must be >= 0, got -1"):
        fa.boost_survival(conv, (0.9,), (-1,))


def test_attention_checker():
    from memorykit.classroom.lesson03_checks import check_attention_window

    assert check_attention_window(270, 0)
    seed = check_attention_window(500, 1)
    assert not seed and "neighbour" in seed.reason
    # the table's row and the explorer's default passed when any window <= 500 tokens did
    table = check_attention_window(500, 0)
    assert not table and "window_tokens=490 neighbours=0 finds 42" in table.reason
    assert "look for the smallest" in check_attention_window(280, 0).reason
    assert "finds 39 facts, fewer than 40" in check_attention_window(260, 0).reason


@pytest.mark.parametrize("call, error, text", [
    (("attention", 0, 0), ValueError, "window_tokens must be >= 1, got 0"),
    (("attention", 500.0, 0), TypeError, "window_tokens must be an integer, got 500.0"),
    (("attention", 500, -1), ValueError, "neighbours must be >= 0, got -1"),
    (("attention", 500, True), TypeError, "neighbours must be an integer, got True"),
])
def test_attention_checker_refuses_nonsense_naming_it(call, error, text):
    from memorykit.classroom.lesson03_checks import check_attention_window

    with pytest.raises(error, match=re.escape(text)):
        check_attention_window(*call[1:])


def test_kept_for_agrees_with_boost_survival_and_the_explorer_draws_it(conv):
    from memorykit.classroom import lesson03_focus as fa

    for boost in (0.7, 0.9):
        kept = fa.kept_for(conv, boost)
        row = fa.boost_survival(conv, (boost,), (kept, kept + 5))[0]
        assert row[f"after {kept}"] == "kept" and row[f"after {kept + 5}"] == "evicted"
    ex = fa.FocusExplorer(conv, window_tokens=250, neighbours=0, boost_to=0.7)
    found, _ = fa.attention_hits(conv, 250, 0)
    assert list(ex.trace("facts found").y) == [found, fa.recency_hits(conv, 250)]
    assert list(ex.trace("kept after return").y) == [fa.kept_for(conv, 0.7)]
    ex.update(boost_to=0.9)
    assert list(ex.trace("kept after return").y) == [fa.kept_for(conv, 0.9)]
    assert ex.summary()["left-off message lasts"] == f"{fa.kept_for(conv, 0.9)} messages after the return"
    with pytest.raises(ValueError, match="boost_to"):
        fa.kept_for(conv, 1.5)
    with pytest.raises(ValueError, match="step must be <= 80, got 81"):
        fa.kept_for(conv, 0.9, step=81)


# ------------------------------------------- lesson 03: the build-it-yourself summarizer
def test_check_summarizer_runs_the_summary_contracts_and_names_what_to_change():
    from memorykit.classroom.lesson03_checks import check_summarizer
    from memorykit.summary import ExtractiveSummarizer

    extractive = check_summarizer(ExtractiveSummarizer)
    # The library's summarizer keeps the contracts but is not a facts-only summarizer.
    assert not extractive.passed and "3 held" in extractive.reason
    assert "a sentence without a number is not a fact" in str(extractive)

    class OverTheCap:
        name, is_llm = "over", False

        def summarize(self, messages, max_tokens):
            return " ".join(f"{m.role}: {m.content}" for m in messages)

    verdict = check_summarizer(OverTheCap)
    assert not verdict.passed and "over max_tokens" in str(verdict)
    with pytest.raises(TypeError, match="summarizer_class must be a class"):
        check_summarizer(ExtractiveSummarizer())
    with pytest.raises(TypeError, match="must define summarize"):
        check_summarizer(int)


def test_check_summarizer_fails_a_summarizer_that_keeps_the_oldest_facts():
    """Found in the issue-16 review: filling the cap from the oldest fact passed every check;
    the exercise asks for the newest that fit."""
    from memorykit.classroom.lesson03_checks import check_summarizer

    class OldestFirst:
        name, is_llm = "oldest-first", False

        def __init__(self):
            self.counter = Tokenizer()

        def summarize(self, messages, max_tokens):
            kept = []
            for m in messages:
                for part in m.content.split(". "):
                    part = part.strip()
                    if part and any(ch.isdigit() for ch in part):
                        line = f"{m.role}: {part}{'' if part[-1] in '.!?' else '.'}"
                        if self.counter.count(" ".join([*kept, line])) <= max_tokens:
                            kept.append(line)
            return " ".join(kept)

    verdict = check_summarizer(OldestFirst)
    assert not verdict.passed and "1 of 5 contracts failed" in verdict.reason
    assert "keep the newest that do" in str(verdict)


# ------------------------------------ lesson 03: the student's summarizer in the explorer
class FactsFirstSummarizer:
    """The notebook's reference answer to Exercise 5 (keeps the sentences holding a digit)."""

    name, is_llm = "facts-first", False

    def __init__(self):
        self.counter = Tokenizer()

    def summarize(self, messages, max_tokens):
        sentences = []
        for message in messages:
            for part in message.content.split(". "):
                part = part.strip()
                if part and any(ch.isdigit() for ch in part):
                    sentences.append(f"{message.role}: {part}{'' if part[-1] in '.!?' else '.'}")
        kept = []
        for position in reversed(range(len(sentences))):
            trial = sorted(kept + [position])
            if self.counter.count(" ".join(sentences[i] for i in trial)) <= max_tokens:
                kept = trial
        return " ".join(sentences[i] for i in kept)


def test_summary_explorer_runs_the_students_summarizer_beside_the_librarys(conv):
    settings = {"budget": 2000, "threshold": 0.9, "target": 0.4, "min_recent": 0}
    ex = sa.SummaryExplorer(conv, yours=FactsFirstSummarizer, **settings)
    plain = SummaryBuffer(summarizer=FactsFirstSummarizer(), **settings)
    for m in conv.messages:
        plain.add(m)
    mine = sa.run_yours(conv, FactsFirstSummarizer, **settings)
    assert mine is ex.result["yours"]["FactsFirstSummarizer"]
    assert mine.summarizer == "facts-first"
    assert [s.after for s in plain.token_history] == list(mine.after)
    assert conv.fact_survival(plain.messages()) == mine.fact_alive
    assert mine.n_summarizations == len(plain.trace.summarizations())
    saw = ex.trace("yours: FactsFirstSummarizer")
    assert list(saw.y[1::2]) == list(mine.after) and list(saw.y[0::2]) == list(mine.before)
    assert list(ex.trace("yours: FactsFirstSummarizer depth").y) == list(mine.depth)
    facts = ex.trace("yours: FactsFirstSummarizer facts")
    assert sum(x is None for x in facts.x) == len(conv.facts)
    assert list(ex.trace("tokens").y[1::2]) == list(ex.result["run"].after)  # the library's
    summary = ex.summary()
    assert summary["yours: FactsFirstSummarizer_summarizations"] == mine.n_summarizations
    assert summary["yours: FactsFirstSummarizer_facts_alive"] == mine.facts_alive
    assert summary["facts_alive"] == sa.run_summary_buffer(conv, **settings).facts_alive
    ex.update(target=0.3)  # every slider replays the student's summarizer too
    assert ex.result["yours"]["FactsFirstSummarizer"] is sa.run_yours(
        conv, FactsFirstSummarizer, **{**settings, "target": 0.3})


def test_summary_explorer_without_yours_draws_what_it_did(conv):
    ex = sa.SummaryExplorer(conv)
    assert not any(t.name.startswith("yours: ") for t in ex.fig.data)
    assert "summarizations" in ex.summary()
    assert not any(k.startswith("yours: ") for k in ex.summary())


@pytest.mark.parametrize("value, text", [
    (FactsFirstSummarizer(), "must be a Summarizer class"),  # an instance, not the class
    ("FactsFirstSummarizer", "yours['str'] must be a Summarizer class"),
    (int, "int has no summarize method"),
])
def test_summary_explorer_refuses_a_yours_that_is_not_a_summarizer_class(conv, value, text):
    with pytest.raises(TypeError, match=re.escape(text)):
        sa.SummaryExplorer(conv, yours=value)
    with pytest.raises(TypeError, match="summarizer_class must be a Summarizer class"):
        sa.run_yours(conv, value)



def test_lesson03_slider_moves_redraw_only_the_panels_they_change(conv):
    from memorykit.classroom import lesson03_focus as fa

    ex = sa.SummaryExplorer(conv)
    touched = traces_drawn(ex)
    ex.update(min_recent=5)
    assert not {"budget", "threshold", "target"} & set(touched) and "tokens" in touched
    touched.clear()
    ex.update(threshold=0.85)
    assert "threshold" in touched and not {"budget", "target"} & set(touched)
    focus = fa.FocusExplorer(conv)
    touched = traces_drawn(focus)
    focus.update(boost_to=0.7)
    assert touched == ["kept after return"]
    touched.clear()
    focus.update(neighbours=1)
    assert touched == ["facts found"]


def test_lesson03_replays_are_memoized_by_value(conv):
    from memorykit.classroom import lesson03_focus as fa

    a = sa.run_summary_buffer(conv, budget=1750, threshold=0.85, target=0.45, min_recent=2)
    n = sa._replay.cache_len()
    assert sa.run_summary_buffer(conv, budget=1750, threshold=0.85, target=0.45,
                                 min_recent=2) is a and sa._replay.cache_len() == n
    kept = fa.kept_for(conv, 0.9)
    n = fa._kept_for.cache_len()
    assert fa.kept_for(conv, 0.9) == kept and fa._kept_for.cache_len() == n >= 1
    with pytest.raises(TypeError, match="window_tokens must be an integer, got True"):
        fa.attention_hits(conv, True, 0)  # checked before the memo, where True == 1


def test_check_victim_choice_refuses_a_non_buffer_class():
    from memorykit.classroom.lesson02_checks import check_victim_choice

    with pytest.raises(TypeError, match="buffer_class must be a class that subclasses"):
        check_victim_choice(HybridBuffer(max_tokens=100))


def test_check_victim_choice_refuses_the_librarys_own_choice():
    """A subclass of the library's ImportanceBuffer, or a method that calls its choice, passed
    every contract (issue 24's shortcuts)."""
    from memorykit.buffers.base import MessageBuffer
    from memorykit.classroom.lesson02_checks import check_victim_choice

    class Inherits(ImportanceBuffer):
        pass

    class Delegates(MessageBuffer):
        def _choose_victim(self, now):
            return ImportanceBuffer._choose_victim(self, now)

    for cls in (Inherits, Delegates, ImportanceBuffer):
        verdict = check_victim_choice(cls)
        assert not verdict.passed and "ImportanceBuffer" in verdict.reason, (cls, verdict)
