"""The public-API sweep (``tests/api_sweep.py``): wrong types, NaN, inf, bools, huge ints and
negative numbers at every numeric and flag parameter.

Not yet at 0 "other": ``OPEN_DEFECTS`` names the callables that still accept or crash on
some probe, and ``NO_BASELINE`` those the sweep cannot call yet (no valid arguments built
for their required parameters). Both lists may only shrink: a new defect anywhere fails,
and so does a listed callable that no longer needs its entry (remove it then).
Counts: ``python tests/api_sweep.py`` (``-v`` for every probe that is not a clear error).
"""

from __future__ import annotations

import math

import pytest

from api_sweep import bad_values, param_kind, public_callables, run_sweep

OPEN_DEFECTS = frozenset({
    "memorykit.entities.scoring.RelevanceWeights",
    "memorykit.entities.scoring.relevance_scores",
    "memorykit.lessons.architectures_app.curve",
    "memorykit.lessons.architectures_app.curves",
    "memorykit.lessons.checks.entities.entity_ttl_answer",
    "memorykit.lessons.checks.longterm.tau_recall_ok",
    "memorykit.lessons.notes_app.surfacing_report",
    "memorykit.lessons.recall_app.episode_verdicts",
    "memorykit.lessons.recall_app.score_surface",
    "memorykit.lessons.recall_app.semantic_recall",
    "memorykit.lessons.recall_app.surface_facts",
    "memorykit.lessons.recall_app.threshold_line",
    "memorykit.llm.critic.make_rule",
    "memorykit.llm.critic.parse_rules",
    "memorykit.llm.embedder.OpenAIEmbedder",
    "memorykit.llm.testing.Behaviour",
    "memorykit.llm.testing.FakeOpenAIServer",
    "memorykit.longterm.episodic.EpisodicSettings",
    "memorykit.longterm.episodic.full_match_horizon_seconds",
    "memorykit.longterm.sentence_embedder.SentenceTransformerEmbedder",
    "memorykit.workspace.objects.SalienceWeights",
    "memorykit.workspace.objects.WorkspaceObject",
})

NO_BASELINE = frozenset({
    "memorykit.buffers.attention.AttentionSelection", "memorykit.buffers.attention.AttentionWindow",
    "memorykit.buffers.compression.CompressionPipeline", "memorykit.entities.health.health_report",
    "memorykit.entities.health.measure_access_latency",
    "memorykit.entities.hybrid.EntitySummaryMemory", "memorykit.entities.prompt.prompt_token_series",
    "memorykit.entities.prompt.render_system_prompt", "memorykit.entities.store.ReadThroughMemory",
    "memorykit.evaluation.dataset.EvalQuestion", "memorykit.evaluation.dataset.from_simulated",
    "memorykit.evaluation.harness.compare_policies", "memorykit.evaluation.harness.evaluate",
    "memorykit.evaluation.locomo.download_locomo", "memorykit.evaluation.locomo.load_locomo",
    "memorykit.evaluation.locomo.parse_locomo", "memorykit.evaluation.pareto.cheapest_reaching",
    "memorykit.evaluation.service_loop.make_service", "memorykit.evaluation.service_loop.run_loop",
    "memorykit.evaluation.sweep.run_sweep", "memorykit.lessons.checks.buffers.check_budget",
    "memorykit.lessons.checks.buffers.check_pruning_choice",
    "memorykit.lessons.checks.buffers.check_summary_settings",
    "memorykit.lessons.checks.entities.check_entity_capacity",
    "memorykit.lessons.checks.entities.check_entity_ttl",
    "memorykit.lessons.checks.longterm.check_episodic_tau",
    "memorykit.lessons.checks.longterm.check_loop_settings",
    "memorykit.lessons.checks.longterm.check_recall_limit",
    "memorykit.lessons.checks.longterm.check_semantic_best",
    "memorykit.lessons.checks.longterm.check_semantic_threshold",
    "memorykit.lessons.checks.longterm.check_window_size",
    "memorykit.lessons.checks.tuning.check_beats_bm25",
    "memorykit.lessons.checks.workspace.check_column_limits",
    "memorykit.lessons.checks.workspace.check_escalation",
    "memorykit.lessons.checks.workspace.check_min_shared_entities",
    "memorykit.lessons.checks.workspace.check_preemption_ratio",
    "memorykit.lessons.checks.workspace.check_salience_weights", "memorykit.llm.chat.ScriptRule",
    "memorykit.llm.critic.Rule", "memorykit.longterm.episodic.Episode",
    "memorykit.longterm.episodic.episode_scores", "memorykit.longterm.episodic.explain",
    "memorykit.longterm.episodic.overlap_needed", "memorykit.workspace.memory.WorkingMemory",
    "memorykit.workspace.memory.salience_inputs", "memorykit.workspace.render.render_columns",
})


@pytest.fixture(scope="module")
def sweep():
    result = run_sweep()
    print(result.summary())
    return result


def test_the_sweep_enumerates_the_api():
    found = public_callables()
    assert len(found) >= 190  # every class and function in the modules' __all__
    assert "memorykit.buffers.base.MessageBuffer" in found
    assert param_kind("int | None") == ("int", True) and param_kind("bool") == ("bool", False)
    assert param_kind("Sequence[float]") is None
    labels = [label for label, _ in bad_values("float", optional=False)]
    assert {"nan", "inf", "-inf", "bool True", "huge int", "negative", "str", "None"} <= set(labels)


def test_no_new_defect_and_no_stale_entry(sweep):
    other = {o.callable for o in sweep.outcomes if o.verdict == "other"}
    new = sorted(other - OPEN_DEFECTS)
    assert not new, "probes that are neither clear errors nor accepted on purpose:\n" + "\n".join(
        f"{o.callable}({o.param}={o.label}): {o.detail}" for o in sweep.outcomes
        if o.verdict == "other" and o.callable in new)
    assert not OPEN_DEFECTS - other, f"fixed, remove from OPEN_DEFECTS: {sorted(OPEN_DEFECTS - other)}"
    assert set(sweep.no_baseline) == NO_BASELINE


def test_most_probes_are_clear_errors(sweep):
    counts = sweep.counts()
    assert len(sweep.swept) >= 90 and counts["clear"] >= 1900


# The findings issue 12 names, each a clear error naming the parameter.
def _service_settings(**kw):
    from memorykit.longterm.service import LongTermSettings

    return LongTermSettings(**kw)


def _semantic_settings(**kw):
    from memorykit.longterm.semantic import SemanticSettings

    return SemanticSettings(**kw)


def _health(**kw):
    from memorykit.entities.health import HealthThresholds

    return HealthThresholds(**kw)


def _recency(**kw):
    from memorykit.buffers.policies import recency_weight

    return recency_weight(**{"age_minutes": 1.0, **kw})


def _generator(name, **kw):
    import importlib

    module, fn = name.rsplit(".", 1)
    return getattr(importlib.import_module(module), fn)(**kw)


@pytest.mark.parametrize("call, param", [
    (lambda: _service_settings(min_score=7), "min_score"),
    (lambda: _semantic_settings(threshold=1e30), "threshold"),
    (lambda: _health(fill_alert=math.nan), "fill_alert"),
    (lambda: _health(latency_alert_ms=math.nan), "latency_alert_ms"),
    (lambda: _health(fill_target=(0.9, math.nan)), "fill_target"),
    (lambda: _recency(decay_rate=math.nan), "decay_rate"),
    (lambda: _recency(decay_rate=-1.0), "decay_rate"),
    (lambda: _recency(age_minutes=[1.0, math.nan]), "age_minutes"),
    (lambda: _recency(half_life_minutes=0.0), "half_life_minutes"),
    (lambda: _generator("memorykit.scenarios.conversation.simulate_conversation",
                        n_turns=10**30), "n_turns"),
    (lambda: _generator("memorykit.scenarios.cms.generate_cms_scenario", n_turns=10**30),
     "n_turns"),
    (lambda: _generator("memorykit.evaluation.sweep.random_search", param_space={"a": [1]},
                        n=10**30), "n"),
])
def test_issue_findings_are_clear_errors(call, param):
    with pytest.raises((TypeError, ValueError), match=param):
        call()


def test_zero_decay_never_halves_instead_of_dividing_by_zero():
    from memorykit.buffers.policies import true_half_life_minutes

    assert true_half_life_minutes(decay_rate=0) == math.inf
    assert true_half_life_minutes(decay_rate=0.1) == pytest.approx(5 * math.log(2) / 0.1)
