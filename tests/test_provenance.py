"""IdRuns: ids in order, stored as runs of counters, given back exactly."""

from __future__ import annotations

import pickle

from hypothesis import given
from hypothesis import strategies as st

from memorykit.provenance import IdRuns

ID = st.one_of(
    st.builds(lambda p, n, w: p + str(n).zfill(w), st.sampled_from(["m", "s", "D2:", ""]),
              st.integers(0, 120), st.integers(0, 4)),
    st.text(min_size=1, max_size=6),
    st.just("x" + "9" * 25),  # a digit tail too long to count is kept as it is
)


@given(st.lists(ID, max_size=60))
def test_any_ids_come_back_exactly_in_order(ids):
    runs = IdRuns(ids)
    assert list(runs) == ids and len(runs) == len(ids)
    assert runs.runs <= len(ids)
    assert pickle.loads(pickle.dumps(runs)) == runs


def test_factory_ids_collapse_into_one_run_and_gaps_start_another():
    ids = [f"m{n:06d}" for n in range(2, 100_002)]
    runs = IdRuns(ids)
    assert runs.runs == 1 and len(runs) == 100_000
    runs.extend(["m100003", "m100004", "summary000001", "m100005"])
    assert runs.runs == 4  # the gap (m100002 missing), the other prefix, then m100005 again
    assert list(runs)[-4:] == ["m100003", "m100004", "summary000001", "m100005"]


def test_padding_is_part_of_the_run():
    runs = IdRuns(["m9", "m10", "m011", "m098", "m099", "m100"])
    assert list(runs) == ["m9", "m10", "m011", "m098", "m099", "m100"]
    assert runs.runs == 3  # m9-m10, m011, m098-m100


def test_extending_by_itself_doubles_it():
    runs = IdRuns(["a1", "a2"])
    runs.extend(runs)
    assert list(runs) == ["a1", "a2", "a1", "a2"]
