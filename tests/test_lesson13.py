"""Lesson 13's explorer (memorykit.classroom.lesson13, lesson13_memories): the outcome split,
the one-replay sweep against the harness's own per-budget evaluation, the student's rule in the
store, the sliders and what they refuse."""

from __future__ import annotations

import numpy as np
import pytest

from memorykit.classroom import lesson13 as app
from memorykit.classroom import lesson13_memories as mem
from memorykit.classroom.scenarios.changing_facts import changing_facts_dataset
from memorykit.evaluation.harness import EvalResult, QuestionResult, evaluate
from memorykit.facts.timeline import KeepBothDated, LatestWins, UpdatePolicy

SEED, CONVERSATIONS = 13, 1  # the explorer's smallest sweep: one conversation per gap


def _q(qid: str, n_superseded: int, covered: int, stale: bool | None, both: bool | None,
       unclear: bool | None) -> QuestionResult:
    return QuestionResult("c", qid, "updated", 10, 1, covered, float(covered), float(covered),
                          None, 100, 1000, False, 0.0, n_superseded, stale, both, unclear)


def test_every_changed_question_has_exactly_one_outcome_and_controls_none():
    rows = [_q("stale", 1, 0, True, False, False), _q("unclear", 1, 1, False, True, True),
            _q("clear", 1, 1, False, True, False), _q("current", 1, 1, False, False, False),
            _q("neither", 1, 0, False, False, False), _q("control", 0, 1, None, None, None)]
    shares = mem.outcomes(EvalResult("p", 1000, rows))
    assert list(shares) == [0.2] * 5  # one of five changed questions in each; the control left out
    assert mem.outcomes(EvalResult("p", 1000, rows[-1:])).tolist() == [0.0] * 5


@pytest.fixture(scope="module")
def small():
    return changing_facts_dataset(seed=SEED, conversations=1, gap=8)


@pytest.mark.parametrize("name", ["summary buffer", "recency (last tokens)", "bm25"])
def test_one_replay_at_every_budget_equals_the_harness_at_each(small, name):
    make = mem.MEMORIES[name]
    shares, recall = mem._measure(make, (small,), app.BUDGETS)
    for b, budget in enumerate(app.BUDGETS):
        result = evaluate(make(), small, budget)
        assert np.allclose(shares[0, b], mem.outcomes(result))
        assert recall[0, b] == pytest.approx(result.summary()["recall"])


@pytest.mark.parametrize("policy", ["keep-all", "latest-wins", "keep-both-dated"])
def test_the_store_read_at_every_budget_equals_the_harness_at_each(small, policy):
    shares, _ = mem._measure(lambda: mem._store(policy), (small,), (500, 2000))
    for b, budget in enumerate((500, 2000)):
        assert np.allclose(shares[0, b], mem.outcomes(evaluate(mem._store(policy), small, budget)))


@pytest.mark.parametrize("rule,named", [(LatestWins, "latest-wins"),
                                        (KeepBothDated, "keep-both-dated")])
def test_a_rule_in_the_store_is_the_store_under_the_policy_of_that_rule(small, rule, named):
    """The explorer's route for a student's class (a RuleStore) gives exactly what the store
    gives under the library's policy of the same rule: the comparison is fair."""
    mine = mem._measure(lambda: mem.RuleStore(rule()), (small,), (1000,))
    library = mem._measure(lambda: mem._store(named), (small,), (1000,))
    assert np.array_equal(mine[0], library[0]) and np.array_equal(mine[1], library[1])


def test_rule_store_refuses_a_class_where_an_instance_goes():
    with pytest.raises(TypeError, match="LatestWins"):
        mem.RuleStore(LatestWins)


class FirstWins(UpdatePolicy):
    """A wrong rule: the first statement stays current (the explorer must still draw it)."""

    def choose_current(self, statements):
        return statements[0]


@pytest.fixture(scope="module")
def explorer():
    return app.ChangingFactsExplorer(seed=SEED, conversations=CONVERSATIONS, yours=FirstWins)


def test_the_summary_reads_the_sweep_at_the_selected_setting(explorer):
    explorer.update(update_policy="latest-wins", gap=80, budget=1500)
    g, b = app.GAPS.index(80), app.BUDGETS.index(1500)
    sw = mem.sweep(SEED, CONVERSATIONS, app.GAPS, app.BUDGETS)
    s = explorer.summary()
    assert s["changed_questions"] == sw.changed[g]
    store = sw.shares["long-term store: latest-wins"][g, b]
    both = store[1] + store[2]
    assert s["long-term store"].startswith(f"stale only {store[0]:.2f}, both {both:.2f}")
    bars = explorer.trace("stale only").x
    assert bars[list(mem.MEMORIES).index("bm25")] == round(float(sw.shares["bm25"][g, b, 0]), 3)


def test_a_gap_move_redraws_the_marker_not_the_lines(explorer):
    explorer.update(update_policy="keep-all", gap=0, budget=1000)
    line = explorer.trace("bm25")
    before = line.y
    explorer.update(gap=120)
    assert explorer._moved == {"gap"} and line.y is before
    assert list(explorer.trace("selected gap 1").x) == [120, 120]


def test_the_students_rule_is_drawn_with_points(explorer):
    assert "yours: FirstWins" in explorer.summary()
    for name in ("yours: FirstWins", "yours: FirstWins (both)"):
        ys = explorer.trace(name).y
        assert len(ys) == len(app.GAPS) and all(0.0 <= y <= 1.0 for y in ys)


@pytest.mark.parametrize("params,error,named", [
    ({"gap": 50}, ValueError, "50"), ({"budget": 750}, ValueError, "750"),
    ({"update_policy": "newest"}, ValueError, "newest"), ({"window": 3}, TypeError, "window")])
def test_the_explorer_refuses_a_setting_off_its_grids_naming_it(explorer, params, error, named):
    with pytest.raises(error, match=named):
        explorer.update(**params)


@pytest.mark.parametrize("yours", [LatestWins(), "latest-wins", len])
def test_yours_must_be_an_update_policy_class(yours):
    with pytest.raises(TypeError, match="UpdatePolicy subclass"):
        app.ChangingFactsExplorer(seed=SEED, conversations=CONVERSATIONS, yours=yours)


def test_change_example_names_a_category_it_cannot_show(small, capsys):
    mem.change_example(small, "corrected")
    assert "superseded" in capsys.readouterr().out
    with pytest.raises(ValueError, match="'moved'"):
        mem.change_example(small, "moved")


def test_known_updates_of_a_prefix_are_what_the_rules_find_in_it(small):
    """KnownUpdates answers a prefix from the whole conversation's updates: exact only while
    the rules read each message in the light of the ones before it, which this checks."""
    from memorykit.facts.detect import find_updates

    messages = small.conversations[0].messages
    known = mem.KnownUpdates(messages)
    for k in (0, 1, len(messages) // 3, len(messages) // 2, len(messages) - 1, len(messages)):
        assert known.find(messages[:k]) == find_updates(list(messages[:k])), k
    shuffled = list(reversed(messages[:20]))  # not a prefix: read as it is
    assert known.find(shuffled) == find_updates(shuffled)


@pytest.mark.parametrize("keep", ["latest", "dated"])
def test_the_superseding_rows_equal_the_policy_with_its_own_detector(small, keep):
    from memorykit.evaluation.superseding import SupersedingRetrieval

    shares, _ = mem._measure(mem.MEMORIES[f"superseding, {keep}"], (small,), (500, 2000))
    for b, budget in enumerate((500, 2000)):
        plain = evaluate(SupersedingRetrieval(keep=keep), small, budget)
        assert np.allclose(shares[0, b], mem.outcomes(plain))
