"""The public-API sweep (``tests/api_sweep.py``): wrong types, NaN, inf, bools, huge ints and
negative numbers at every numeric and flag parameter of every public class and function.

Every probe must be a clear error (naming the parameter or the value) or a value the sweep's
``ACCEPTED`` list explains; anything else fails here, with the probes listed.
Counts: ``python tests/api_sweep.py`` (``-v`` for every probe that is not a clear error).
"""

from __future__ import annotations

import math

import pytest

from api_sweep import ACCEPTED, bad_values, param_kind, public_callables, run_sweep


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


def test_every_probe_is_a_clear_error_or_accepted_on_purpose(sweep):
    other = [o for o in sweep.outcomes if o.verdict == "other"]
    assert not other, "probes that are neither clear errors nor accepted on purpose:\n" + "\n".join(
        f"{o.callable}({o.param}={o.label}): {o.detail}" for o in other)
    assert not sweep.no_baseline, f"callables the sweep cannot call: {sweep.no_baseline}"


def test_every_allowance_is_used(sweep):
    """An entry of the allow-list no probe needs is stale: it could hide a future defect."""
    used = set()
    for o in sweep.outcomes:
        if o.verdict == "accepted":
            qualified = (f"{o.callable}.{o.param}", o.label)
            used.add(qualified if qualified in ACCEPTED else (o.param, o.label))
    assert not set(ACCEPTED) - used, f"unused: {sorted(set(ACCEPTED) - used)}"


def test_most_probes_are_clear_errors(sweep):
    counts = sweep.counts()
    assert len(sweep.swept) >= 140 and counts["clear"] >= 2700


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
    (lambda: _generator("memorykit.classroom.scenarios.conversation.simulate_conversation",
                        n_turns=10**30), "n_turns"),
    (lambda: _generator("data.entities.generate.generate_cms_scenario", n_turns=10**30),
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


def test_an_unreachable_ttl_target_is_refused_instead_of_searched_for_ever():
    from memorykit.classroom.lesson04_checks import entity_ttl_answer

    with pytest.raises(ValueError, match="target must be <= 0.9505"):
        entity_ttl_answer(0.99)
    assert entity_ttl_answer() == 30  # the lesson's 93%
