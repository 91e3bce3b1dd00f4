"""Sweeps (grid, random, executors, progress) and the Pareto front, on small data."""

from __future__ import annotations

from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path

import pytest

from memorykit.classroom.scenarios.conversation import from_simulated
from memorykit.evaluation.baselines import BM25Retrieval, LastMessages
from memorykit.evaluation.sweep import LogUniform, RandInt, Uniform, grid, random_search, run_sweep
from memorykit.evaluation.pareto import cheapest_reaching, pareto_front
from memorykit.evaluation.locomo import load_locomo
from memorykit.classroom.scenarios.conversation import load_conversation

DATA = Path(__file__).parent.parent / "data" / "conversations"
FIXTURE = Path(__file__).parent / "fixtures" / "locomo_mini.json"
TIMING = {"seconds_per_question", "prepare_seconds", "wall_seconds"}


@pytest.fixture(scope="module")
def conv():
    return from_simulated(load_conversation(DATA / "short_60.jsonl"))


def _untimed(rows):
    return [{k: v for k, v in r.items() if k not in TIMING} for r in rows]


def test_grid_lists_every_combination_last_fastest():
    assert grid({"k1": [1.0, 2.0], "b": [0.5, 0.75], "method": "lucene"}) == [
        {"k1": 1.0, "b": 0.5, "method": "lucene"}, {"k1": 1.0, "b": 0.75, "method": "lucene"},
        {"k1": 2.0, "b": 0.5, "method": "lucene"}, {"k1": 2.0, "b": 0.75, "method": "lucene"},
    ]
    with pytest.raises(ValueError, match=r"param_space\['b'\] must list at least one value"):
        grid({"b": []})
    with pytest.raises(TypeError, match="grid needs a list"):
        grid({"b": Uniform(0, 1)})


def test_random_search_is_seeded_and_in_range():
    space = {"k1": Uniform(0.5, 2.0), "b": [0.25, 0.75], "n": RandInt(1, 3), "s": LogUniform(10, 1000)}
    a, b = random_search(space, 20, seed=3), random_search(space, 20, seed=3)
    assert a == b and a != random_search(space, 20, seed=4)
    assert all(0.5 <= c["k1"] <= 2.0 and c["b"] in (0.25, 0.75) and 1 <= c["n"] <= 3
               and 10 <= c["s"] <= 1000 for c in a)
    assert {c["n"] for c in a} == {1, 2, 3}
    with pytest.raises(ValueError, match="low must be <= high"):
        Uniform(2, 1)


def test_sweep_rows_and_categories(conv):
    result = run_sweep(LastMessages, grid({"n": [2, 50]}), conv, [200, 2000], progress=False)
    rows = result.to_records()
    assert [(r["config_id"], r["n"], r["budget"]) for r in rows] == [
        (0, 2, 200), (0, 2, 2000), (1, 50, 200), (1, 50, 2000)]
    assert rows[0]["policy"] == "last-2-messages"
    assert all(f"recall:{q.category}" in rows[0] for q in conv.questions)
    assert rows[3]["recall"] >= rows[1]["recall"]
    cats = result.by_category().to_records()
    assert len(cats) == 4 * len({q.category for q in conv.questions})
    assert result.parameters == ["n"] and result.wall_seconds > 0


def test_budget_can_be_a_swept_parameter(conv):
    configs = grid({"n": [4], "budget": [100, 400]})
    rows = run_sweep(LastMessages, configs, conv, None, progress=False).to_records()
    assert [r["budget"] for r in rows] == [100, 400] and "budget" not in LastMessages(4).__dict__
    with pytest.raises(ValueError, match="has no 'budget'"):
        run_sweep(LastMessages, [{"n": 2}], conv, None, progress=False)
    with pytest.raises(ValueError, match="sets 'budget' and budgets"):
        run_sweep(LastMessages, configs, conv, 100, progress=False)


def test_executors_give_the_same_rows_as_serial(conv):
    configs = grid({"k1": [0.9, 1.5], "b": [0.4, 0.75]})
    serial = run_sweep(BM25Retrieval, configs, conv, [300, 900], progress=False)
    with ThreadPoolExecutor(2) as pool:
        threaded = run_sweep(BM25Retrieval, configs, conv, [300, 900], executor=pool,
                             progress=False)
    with ProcessPoolExecutor(2) as pool:
        processes = run_sweep(BM25Retrieval, configs, conv, [300, 900], executor=pool,
                              progress=False, chunksize=3)
    assert _untimed(serial.to_records()) == _untimed(threaded.to_records())
    assert _untimed(serial.to_records()) == _untimed(processes.to_records())


def test_dask_local_cluster_executor(conv):
    distributed = pytest.importorskip("distributed")
    configs = grid({"n": [2, 8]})
    serial = run_sweep(LastMessages, configs, conv, 500, progress=False)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        result = run_sweep(LastMessages, configs, conv, 500, executor=client.get_executor(),
                           progress=False)
    assert _untimed(result.to_records()) == _untimed(serial.to_records())


def test_progress_bar_counts_evaluations(conv, capsys):
    run_sweep(LastMessages, grid({"n": [1, 2, 3]}), conv, 300, progress=True)
    err = capsys.readouterr().err
    assert "3/3" in err


def test_locomo_fixture_sweep_reports_adversarial_separately():
    data = load_locomo(FIXTURE, verify=False)
    row = run_sweep(LastMessages, [{"n": 100}], data, 10_000, progress=False).to_records()[0]
    assert row["questions"] == 6 and row["adversarial_questions"] == 1
    assert row["recall"] == 1.0 and row["recall:adversarial"] == 1.0


def test_pareto_front_on_a_hand_made_set():
    rows = [
        {"name": "a", "tokens": 100, "recall": 0.2},
        {"name": "b", "tokens": 200, "recall": 0.6},
        {"name": "c", "tokens": 250, "recall": 0.5},  # dominated by b
        {"name": "d", "tokens": 400, "recall": 0.6},  # dominated by b (same recall, more tokens)
        {"name": "e", "tokens": 500, "recall": 0.9},
        {"name": "f", "tokens": 100, "recall": 0.1},  # dominated by a
        {"name": "g", "tokens": 300, "recall": None},  # no value: ignored
    ]
    assert [r["name"] for r in pareto_front(rows)] == ["a", "b", "e"]
    assert cheapest_reaching(rows, 0.5)["name"] == "b"
    assert cheapest_reaching(rows, 0.6)["name"] == "b"
    assert cheapest_reaching(rows, 0.61)["name"] == "e"
    assert cheapest_reaching(rows, 0.95) is None
    with pytest.raises(ValueError, match=r"recall must be in \[0, 1\], got 80"):
        cheapest_reaching(rows, 80)
    with pytest.raises(ValueError, match="has no column 'tokens'"):
        pareto_front([{"recall": 1.0}])


def test_sweep_pareto_helpers(conv):
    result = run_sweep(LastMessages, grid({"n": [1, 4, 16, 64, 200, 400]}), conv, 100_000, progress=False)
    front = result.pareto_front()
    assert front and all(r in result.to_records() for r in front)
    best = result.cheapest_reaching(1.0)
    assert best is not None and best["recall"] == 1.0
    assert best["tokens"] == min(r["tokens"] for r in result.to_records() if r["recall"] == 1.0)


def test_bad_sweep_arguments(conv):
    with pytest.raises(TypeError, match="make_policy must be callable"):
        run_sweep(3, [{}], conv, 10, progress=False)
    with pytest.raises(ValueError, match="at least one configuration"):
        run_sweep(LastMessages, [], conv, 10, progress=False)
    with pytest.raises(ValueError, match="reserved column name 'recall'"):
        run_sweep(LastMessages, [{"recall": 1}], conv, 10, progress=False)
    with pytest.raises(TypeError, match="executor must be"):
        run_sweep(LastMessages, [{}], conv, 10, executor=object(), progress=False)


@pytest.mark.parametrize("chunksize", [1, 4])
def test_budgets_sharing_a_policy_and_its_prepared_conversations_score_as_fresh_ones(chunksize):
    # A sweep builds one policy object per configuration and prepares each conversation once
    # for all its budgets; every row must be what a fresh policy, freshly prepared, scores.
    from memorykit.evaluation.harness import evaluate
    from memorykit.evaluation.locomo import load_locomo
    from memorykit.evaluation.hybrid import HybridRetrieval, HybridSettings
    from memorykit.evaluation.toolkit import TUNABLE, fixed_policy
    from memorykit.embeddings import LexicalHashingEmbedder
    from memorykit.classroom.data import LOCOMO_FIXTURE

    data = load_locomo(LOCOMO_FIXTURE, verify=False).select(max_questions=6)
    budgets = [250, 1000, 500, 2000]

    def lexical_hybrid(**params):  # MiniLM is optional: the same policy over a lexical embedder
        return HybridRetrieval(HybridSettings(**params), embedder=LexicalHashingEmbedder(128))

    cases = [(TUNABLE["bm25"].make, [{"k1": 0.9, "b": 0.5}, {"k1": 1.5, "b": 0.75}]),
             (TUNABLE["attention"].make, [{"neighbours": 0, "dimension": 64},
                                          {"neighbours": 2, "dimension": 512}]),
             (lexical_hybrid, [{"lexical_weight": 0.25, "neighbours": 1}]),
             (fixed_policy, [{"name": n} for n in ("summary", "fifo", "full-context")])]
    for make, configs in cases:
        sweep = run_sweep(make, configs, data, budgets, progress=False, chunksize=chunksize)
        fresh = [evaluate(make(**c), data, b).fingerprint() for c in configs for b in budgets]
        assert list(sweep.fingerprints) == fresh, make
