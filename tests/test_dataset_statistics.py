"""dataset_statistics, hand-checked on the mini LoCoMo fixture; the bundled LoCoMo-style
fixture's evidence turns are no longer longer than the rest."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from memorykit.evaluation.baselines import BM25Retrieval
from memorykit.evaluation.dataset import EvalDataset, dataset_statistics
from memorykit.evaluation.harness import evaluate
from memorykit.evaluation.locomo import load_locomo
from memorykit.evaluation.scored import ScoredRetrieval

FIXTURE = Path(__file__).parent / "fixtures" / "locomo_mini.json"
LOCOMO_STYLE = Path(__file__).parent.parent / "data" / "locomo_style" / "locomo_style.json"


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
    # Cited turns D1:1-D1:3, D2:1, D2:3, D10:2 carry 18, 18, 27, 14, 16, 13 content tokens
    # (median 17); the others D1:4, D2:2, D10:1 carry 12, 13, 10 (median 12).
    assert one["evidence_vs_other_content_tokens"] == "median 17 vs 12 (ratio 1.417)"
    assert one["questions_by_kind"] == a_kinds(a)


def a_kinds(conv):
    out: dict[str, int] = {}
    for q in conv.questions:
        out[q.category] = out.get(q.category, 0) + 1
    return out


def test_bad_input_names_the_value():
    with pytest.raises(TypeError, match="dataset must be an EvalDataset, got 3"):
        dataset_statistics(3)  # type: ignore[arg-type]


class LengthOnly(ScoredRetrieval):
    """Ranks messages by how many terms they hold; never reads the question."""

    def score(self, query_terms, message_terms):
        return float(len(message_terms))


def test_locomo_style_evidence_is_not_longer_than_the_rest():
    data = load_locomo(LOCOMO_STYLE, verify=False)
    line = dataset_statistics(data)["evidence_vs_other_content_tokens"]
    ratio = float(re.fullmatch(r"median \S+ vs \S+ \(ratio (\S+)\)", line).group(1))
    assert 0.8 <= ratio <= 1.25, line
    # Evidence turns twice as long as the small talk once let length alone beat BM25 (0.96
    # against 0.62 at 1,000 tokens); it must not.
    by_length = evaluate(LengthOnly(), data, 1000).summary()["recall"]
    bm25 = evaluate(BM25Retrieval(), data, 1000).summary()["recall"]
    assert by_length < bm25, (by_length, bm25)
