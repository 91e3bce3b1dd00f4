"""ProbeCheckpoints: recall curves from one ingest equal build_context at every checkpoint."""

from __future__ import annotations

import pytest

from memorykit.classroom.replays.recall_curves import ProbeCheckpoints
from memorykit.longterm.episodic import EpisodicSettings
from memorykit.longterm.semantic import SemanticSettings
from memorykit.longterm.architectures import make_architectures
from memorykit.classroom.scenarios.probes import booking_critic


@pytest.fixture(scope="module")
def run():
    return ProbeCheckpoints((0, 10, 40), budget=1500)


def test_checkpoints_are_prefixes_of_the_longest_conversation(run):
    assert run.cuts[-1] == len(run.messages) and list(run.cuts) == sorted(set(run.cuts))
    assert len(run.facts) == 4


@pytest.mark.parametrize("letter, threshold", [("B", 0.7), ("B", 0.4), ("C", 0.65), ("C", 0.3),
                                               ("D", 0.3)])
def test_captured_probes_scored_at_a_threshold_equal_build_context(run, letter, threshold):
    episodic = EpisodicSettings(stm_limit=8, consolidation_factor=1.5,
                                threshold=threshold if letter == "B" else 0.7)
    semantic = SemanticSettings(threshold=threshold if letter != "B" else 0.65)
    fresh = make_architectures(window=8, episodic=episodic, semantic=semantic,
                               critic=booking_critic())[letter]
    if letter == "B":
        captured = run.capture_episodic(8, 1.5)
    else:
        captured = run.capture_semantic(8)[letter == "D"]
    assert captured.letter == letter
    curve = run.score(captured, threshold)
    assert curve == run.reference_curve(fresh)
    assert curve.recall[0] == 1.0  # no distractors: every fact is still in the window


def test_window_curve_forgets_what_left_the_window(run):
    curve = run.window_curve(8)
    assert curve.letter == "A" and curve.recall[0] == 1.0 and curve.recall[-1] == 0.0
    assert len(curve.missed[-1]) == 4


@pytest.mark.parametrize("distractors, error, message", [
    ((), ValueError, "distractors must be a non-empty list"),
    (5, ValueError, "got 5"),
    ((10, 5), ValueError, r"distractors must increase, got \(10, 5\)"),
    ((0, -1), ValueError, "distractors\\[\\] must be >= 0, got -1"),
])
def test_bad_checkpoints_are_named(distractors, error, message):
    with pytest.raises(error, match=message):
        ProbeCheckpoints(distractors)


def test_bad_threshold_is_named(run):
    with pytest.raises(TypeError, match="threshold must be a number, got 'x'"):
        run.score(run.capture_semantic(8)[0], "x")
