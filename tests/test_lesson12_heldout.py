"""Lesson 12's held-out figures and its browser for the misses (notebooks/12_parameter_tuning.ipynb):
read from the lesson's own sweeps, equal to what ``tune`` reports, and the misses as
``explain_misses`` explains them."""

from __future__ import annotations

import numpy as np
import pytest

from memorykit.classroom.data import LOCOMO_FIXTURE as FIXTURE
from memorykit.classroom.lesson12 import (conversation_sums, fold_rows, front_rows, heldout_table,
                                          paired_rows, precompute)
from memorykit.classroom.lesson12_misses import MissExplorer, policy_misses, reason_counts
from memorykit.evaluation.explain import explain_misses
from memorykit.evaluation.heldout import bootstrap_ci
from memorykit.evaluation.locomo import load_locomo
from memorykit.evaluation.toolkit import fixed_policy
from memorykit.evaluation.tune import tunable_policy_names, tune


@pytest.fixture(scope="module")
def small():
    data = load_locomo(FIXTURE, verify=False).select(max_questions=6)
    return data, precompute(data, "small", budgets=(250, 1000), progress=False)


def test_the_held_out_table_is_tunes_without_evaluating_again(small):
    data, sweeps = small
    # lesson 12 leaves lesson 13's superseding-retrieval out (its facts do not change)
    direct = tune(data, (250, 1000),
                  [n for n in tunable_policy_names() if n != "superseding-retrieval"])
    assert sweeps.tuned.split_kind == direct.split_kind == "folds"
    mine = list(sweeps.tuned.best())
    assert [(r["policy"], r["configuration"], r["budget"], r["recall"], r["recall_ci"],
             r["tuning_recall"]) for r in mine] == \
        [(r["policy"], r["configuration"], r["budget"], r["recall"], r["recall_ci"],
          r["tuning_recall"]) for r in direct.best()]
    table = heldout_table(sweeps, 1000)
    assert [r["policy"] for r in table] == [r["policy"] for r in direct.best().where(budget=1000)]
    assert {"recall_where_picked", "held_out_recall", "held_out_95%_interval"} <= set(table[0])


def test_fold_rows_rebuild_the_pooled_held_out_recall(small):
    data, sweeps = small
    for policy in ("bm25", "hybrid-retrieval"):
        rows = fold_rows(sweeps, policy, 1000)
        assert len(rows) == len(sweeps.tuned.splits) == 3
        counts = {c.id: sum(q.category != "adversarial" for q in c.questions) for c in data}
        pooled = sum(r["recall_there"] * counts[r["scored_on"]] for r in rows) / sum(counts.values())
        held = next(r for r in heldout_table(sweeps, 1000) if r["policy"] == policy)
        assert pooled == pytest.approx(held["held_out_recall"], abs=2e-3)
        assert all(r["scored_on"] not in r["picked_on"] for r in rows)


def test_the_bootstrap_by_hand_is_bootstrap_ci(small):
    _, sweeps = small
    sums, counts = conversation_sums(sweeps, "hybrid-retrieval", 1000)
    default = sweeps.surfaces["hybrid-retrieval"]
    i, j = default.knobs.default_index
    assert sums.sum() / counts.sum() == pytest.approx(default.recall[i, j, 1])
    draws = np.random.default_rng(0).integers(0, len(sums), size=(2000, len(sums)))
    pooled = sums[draws].sum(axis=1) / counts[draws].sum(axis=1)
    assert tuple(np.percentile(pooled, [2.5, 97.5])) == pytest.approx(bootstrap_ci(sums, counts))


def test_paired_rows_and_the_front_carry_intervals(small):
    _, sweeps = small
    rows = paired_rows(sweeps, 1000)
    assert rows and all("-" in r["95%_interval"] for r in rows)
    front = front_rows(sweeps)
    assert front and {r["split"] for r in front} == {"all"}
    assert all(r["overlaps_cheaper"] in (True, False, "-") for r in front)


@pytest.mark.parametrize("call, error, text", [
    (lambda s: heldout_table(s, 777), ValueError, "budget must be one of .*got 777"),
    (lambda s: fold_rows(s, "nope", 1000), ValueError, "policy must be one of .*'nope'"),
    (lambda s: conversation_sums(s, "bm25", 1000, "k1=9"), ValueError, "no configuration 'k1=9'"),
    (lambda s: heldout_table("sweeps"), TypeError, "precompute"),
    (lambda s: MissExplorer(s, policy="fifo"), ValueError, "policy must be one of .*'fifo'"),
    (lambda s: MissExplorer(s, budget=3), ValueError, "budget must be one of .*got 3"),
])
def test_bad_input_is_refused_naming_it(small, call, error, text):
    with pytest.raises(error, match=text):
        call(small[1])


def test_the_miss_browser_draws_what_explain_misses_says(small):
    data, sweeps = small
    ex = MissExplorer(sweeps, policy="bm25", budget=250)
    direct = explain_misses(fixed_policy("bm25"), data, 250, worst=1000)
    assert list(policy_misses(data, "bm25", 250)) == direct and len(direct) >= 2
    for n in (1, 2):
        ex.update(miss=n)
        m = direct[n - 1]
        star = ex.trace("missed evidence")
        ranked = [e for e in m.missed if e.rank is not None]
        assert list(star.x) == [e.rank for e in ranked]
        assert list(star.text) == [e.message_id for e in ranked]
        assert list(ex.trace("cutoff: where the budget ran out").x) == [m.cutoff.rank] * 2
        line = ex.trace("every message, in ranked order")
        for e in ranked:  # the star sits on the ranking's curve, at its rank
            assert line.y[e.rank - 1] == pytest.approx(e.score, abs=1e-4)
        assert m.question in ex.summary()["question"] and m.missed[0].message_id in ex.details.value
    assert sum(reason_counts(tuple(direct)).values()) == sum(len(m.missed) for m in direct)
    with pytest.raises(ValueError, match=f"miss must be a number from 1 to {len(direct)}"):
        ex.update(miss=len(direct) + 1)
    ex.update(policy="hybrid-retrieval")  # a new policy starts at its worst miss
    assert ex.params["miss"] == 1 and ex.sliders["miss"].max == len(
        policy_misses(data, "hybrid-retrieval", 250))
