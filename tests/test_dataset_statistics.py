"""dataset_statistics, hand-checked on the mini LoCoMo fixture."""

from __future__ import annotations

from pathlib import Path

import pytest

from memorykit.evaluation import EvalDataset, dataset_statistics, load_locomo

FIXTURE = Path(__file__).parent / "fixtures" / "locomo_mini.json"


def test_sessions_turns_and_evidence_distance_by_hand():
    data = load_locomo(FIXTURE, verify=False)
    a = data.conversations[0]
    one = dataset_statistics(EvalDataset("a", (a,)))
    # Sessions 1, 2 and 10 hold 4, 3 and 2 turns; every question is asked after session 10.
    assert one["sessions_per_conversation"] == "3-3 (median 3)"
    assert one["turns_per_conversation"] == "9-9 (median 9)"
    assert one["turns_per_session"] == "2-4 (median 3)"
    # Evidence D1:2, D1:2 + D2:3, D2:1, D10:2, D1:3, D1:1: sessions back 2, 2, 1, 1, 0, 2, 2.
    assert one["evidence_sessions_back"] == "0-2 (median 2)"
    assert one["evidence_5_or_more_sessions_back"] == 0.0
    assert one["questions_by_kind"] == a_kinds(a)


def a_kinds(conv):
    out: dict[str, int] = {}
    for q in conv.questions:
        out[q.category] = out.get(q.category, 0) + 1
    return out


def test_bad_input_names_the_value():
    with pytest.raises(TypeError, match="dataset must be an EvalDataset, got 3"):
        dataset_statistics(3)  # type: ignore[arg-type]
