"""Held-out tuning: splits by conversation, bootstrap intervals, picks made without the test part."""

from __future__ import annotations

import numpy as np
import pytest

from memorykit.evaluation.chatlog import load_chat_logs
from memorykit.evaluation.harness import evaluate
from memorykit.evaluation.heldout import MIN_TEST_CONVERSATIONS, bootstrap_ci, split_conversations
from memorykit.evaluation.toolkit import TUNABLE
from memorykit.evaluation.tune import tune

from tests.test_cli_tune import CHATS, QUESTIONS

IDS = [f"c{i}" for i in range(10)]


def test_one_split_holds_out_the_share_and_never_mixes_parts():
    (split,) = split_conversations(IDS, 0.3, seed=4)
    assert len(split.test) == 3 and len(split.tuning) == 7
    assert sorted(split.test + split.tuning) == sorted(IDS)
    assert split_conversations(IDS, 0.3, seed=4) == [split]  # seeded
    assert split_conversations(IDS, 0.3, seed=5) != [split]


def test_few_conversations_get_folds_that_test_each_once():
    splits = split_conversations(IDS[:6], 0.3)
    assert round(0.3 * 6) < MIN_TEST_CONVERSATIONS and len(splits) == 3
    tested = [c for s in splits for c in s.test]
    assert sorted(tested) == sorted(IDS[:6])
    for s in splits:
        assert set(s.tuning) == set(IDS[:6]) - set(s.test)
    assert len(split_conversations(IDS, 0.3, folds=5)) == 5
    assert split_conversations(IDS[:2], 0.3) != []  # 2 conversations: leave one out
    assert split_conversations(IDS[:1], 0.3) == [] and split_conversations(IDS, 0.0) == []


@pytest.mark.parametrize("kwargs, said", [
    ({"holdout": 1.0}, "holdout must be below 1"), ({"holdout": -0.1}, "holdout"),
    ({"holdout": "0.3"}, "holdout"), ({"holdout": True}, "holdout"),
    ({"folds": 1}, "folds must be >= 2, got 1"),
    ({"folds": 11}, "folds must be at most the number of conversations \\(10\\), got 11"),
    ({"seed": 1.5}, "seed")])
def test_bad_split_requests_are_refused_naming_the_value(kwargs, said):
    with pytest.raises((ValueError, TypeError), match=said):
        split_conversations(IDS, **kwargs)
    with pytest.raises(ValueError, match="ids must be distinct"):
        split_conversations(["a", "a", "b"])


def test_bootstrap_interval_covers_the_truth_about_95_percent_of_the_time():
    """Conversations whose questions share a conversation-level ease: resampling conversations
    (not questions) keeps the interval honest. 300 simulated studies of 12 conversations."""
    rng = np.random.default_rng(1)
    truth, covered, widths = 0.6, 0, []
    for study in range(300):
        ease = rng.beta(6, 4, size=12)  # mean 0.6: each conversation's own recall
        counts = rng.integers(5, 40, size=12)
        sums = rng.binomial(counts, ease).astype(float)
        low, high = bootstrap_ci(sums, counts, seed=study, resamples=500)
        covered += low <= truth <= high
        widths.append(high - low)
    assert 0.85 <= covered / 300 <= 0.99, covered
    assert 0.05 < float(np.mean(widths)) < 0.4


def test_bootstrap_edges():
    assert bootstrap_ci([3.0], [4]) is None  # one conversation: no spread to resample
    assert bootstrap_ci([3.0, 0.0], [4, 0]) is None  # a conversation without questions drops
    assert bootstrap_ci([2.0, 4.0], [4, 8]) == (0.5, 0.5)
    with pytest.raises(ValueError, match="level must be in \\(0, 1\\), got 1.5"):
        bootstrap_ci([1.0, 2.0], [2, 2], level=1.5)
    with pytest.raises(ValueError, match="two lists of one length"):
        bootstrap_ci([1.0, 2.0], [2])
    with pytest.raises(ValueError, match="finite"):
        bootstrap_ci([float("nan"), 2.0], [2, 2])


@pytest.fixture(scope="module")
def data():
    return load_chat_logs(CHATS, QUESTIONS)


def _recall(policy, data, conversations):
    return evaluate(policy, data.select(conversations=conversations), 1000).summary()["recall"]


def test_the_pick_is_made_on_the_tuning_part_and_scored_on_the_test_part(data):
    result = tune(data, [1000], ["attention"], holdout=0.5, seed=3)
    (split,) = result.splits
    k = TUNABLE["attention"]
    configs = [dict(zip(k.names, (a, b))) for a in k.values[0] for b in k.values[1]]
    # the same pick by the harness alone: best tuning recall, ties to fewer tokens, then order
    scored = [evaluate(k.make(**c), data.select(conversations=list(split.tuning)), 1000).summary()
              for c in configs]
    pick = max(range(len(configs)), key=lambda i: (scored[i]["recall"], -scored[i]["tokens"], -i))
    best = result.best()[0]
    assert best["split"] == "test"
    assert best["configuration"] == ", ".join(f"{n}={v}" for n, v in configs[pick].items())
    assert best["tuning_recall"] == pytest.approx(scored[pick]["recall"])
    assert best["recall"] == pytest.approx(_recall(k.make(**configs[pick]), data, list(split.test)))
    low, high = best["recall_ci"]
    assert low <= best["recall"] <= high
    rows = result.table.where(configuration=best["configuration"])
    assert sorted(rows.column("split")) == ["test", "tuning"]
    # on all six conversations another configuration wins: the pick did not see the test part
    assert tune(data, [1000], ["attention"], holdout=0).best()[0]["configuration"] \
        != best["configuration"]


def test_folds_score_every_conversation_by_a_pick_made_without_it(data):
    result = tune(data, [1000], ["attention"], seed=0)
    assert result.split_kind == "folds"
    k = TUNABLE["attention"]
    configs = [dict(zip(k.names, (a, b))) for a in k.values[0] for b in k.values[1]]
    total, questions = 0.0, 0
    for split in result.splits:
        scored = [evaluate(k.make(**c), data.select(conversations=list(split.tuning)), 1000).summary()
                  for c in configs]
        pick = max(range(len(configs)), key=lambda i: (scored[i]["recall"], -scored[i]["tokens"], -i))
        test = evaluate(k.make(**configs[pick]), data.select(conversations=list(split.test)), 1000)
        s = test.summary()
        total += s["recall"] * s["questions"]
        questions += s["questions"]
    assert result.best()[0]["recall"] == pytest.approx(total / questions)
    assert result.best()[0]["questions"] == questions == data.n_questions


def test_paired_comparison_is_the_difference_on_the_same_questions(data):
    result = tune(data, [1000], ["fifo", "window-20"], holdout=0.5)
    c = result.compare("fifo", "window-20", 1000)
    best = {r["policy"]: r["recall"] for r in result.best()}
    assert c["difference"] == pytest.approx(best["fifo"] - best["window-20"])
    low, high = c["difference_ci"]
    assert low <= c["difference"] <= high
    flipped = result.compare("window-20", "fifo", 1000)["difference_ci"]
    assert flipped == pytest.approx((-high, -low))
    with pytest.raises(ValueError, match="policy must be one of .*, got 'bm25'"):
        result.compare("fifo", "bm25", 1000)
    with pytest.raises(ValueError, match="budget must be one of \\[1000\\], got 500"):
        result.compare("fifo", "window-20", 500)
