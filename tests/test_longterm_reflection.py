"""Reflection (architecture D): rules from a critic, injected with their provenance."""

from __future__ import annotations

import pytest

from memorykit.llm.critic import Rule, ScriptedCritic
from memorykit.longterm.reflection import RULE_PREFIX, ReflectionMemory, ReflectionSettings
from memorykit.longterm.architectures import (
    ContextWindowArchitecture,
    ReflectionArchitecture,
    make_architectures,
)
from memorykit.messages import MessageFactory
from memorykit.classroom.scenarios.probes import (
    adaptability_scenario,
    asks_for_confirmation,
    booking_actor,
    booking_critic,
)


def test_booking_mistake_becomes_a_cited_rule_and_only_d_adapts():
    scenario = adaptability_scenario(30)
    booked, complaint = scenario.mistake_ids
    by_id = {m.id: m for m in scenario.messages}
    assert by_id[booked].content.startswith("Done: I booked")  # the scripted mistake
    actor = booking_actor()
    assert "not an LLM" in actor.name
    replies = {}
    for label, arch in make_architectures(critic=booking_critic()).items():
        ctx = arch.build_context(scenario.messages, scenario.second_request, 2000)
        replies[label] = actor.complete(ctx.to_openai())
        if label == "D":
            rules = [i for i in ctx.items if i.kind == "rule"]
            assert len(rules) == 1 and rules[0].sources == (booked, complaint)
            assert rules[0].role == "system" and rules[0].content.startswith(RULE_PREFIX)
            assert ctx.items[0].kind == "message" and ctx.items[1] is rules[0]  # after instructions
            [learned] = [e for e in arch.trace if e.kind == "rule"]
            assert learned.sources == (booked, complaint)
    assert {k: asks_for_confirmation(v) for k, v in replies.items()} == {
        "A": False, "B": False, "C": False, "D": True,
    }
    assert replies["D"].startswith("Before I book a train to Oslo")


def test_default_critic_patterns_do_not_see_a_complaint():
    scenario = adaptability_scenario(0)
    d = ReflectionArchitecture(critic=ScriptedCritic())
    ctx = d.build_context(scenario.messages, scenario.second_request, 2000)
    assert not [i for i in ctx.items if i.kind == "rule"]


class _InventingCritic:
    name = "inventing"

    def critique(self, history):
        return [Rule("rule-x", "Do better.", ("not-in-history",), 0.0)]


def test_a_rule_citing_unknown_messages_is_refused():
    f = MessageFactory()
    d = ReflectionArchitecture(critic=_InventingCritic())
    with pytest.raises(ValueError, match="cites message ids not in the history: \\['not-in-history'\\]"):
        d.build_context([f.user("hello")], "q", 100)


def test_rules_are_deduplicated_capped_and_reflection_runs_when_due():
    f = MessageFactory()
    history = [f.assistant("Your flight is on Tuesday."), f.user("No, I said Thursday.")]
    memory = ReflectionMemory(ScriptedCritic(), ReflectionSettings(reflect_every=3, max_rules=1))
    assert memory.due(3) and not memory.due(2)
    [rule] = memory.reflect(history, 5.0)
    assert memory.reflect(history, 6.0) == []  # the same rule is not learned twice
    assert memory.active() == [rule] and memory.reflections == 2
    assert memory.critic_input_tokens > 0
    assert not memory.due(4) and memory.due(5)
    assert ReflectionMemory(ScriptedCritic(), ReflectionSettings(max_rules=0)).active() == []


@pytest.mark.parametrize(
    "kwargs, error, text",
    [
        ({"reflect_every": 0}, ValueError, "reflect_every must be >= 1, got 0"),
        ({"critic_window": 0}, ValueError, "critic_window must be >= 1, got 0"),
        ({"max_rules": -1}, ValueError, "max_rules must be >= 0"),
    ],
)
def test_bad_reflection_settings_are_named(kwargs, error, text):
    with pytest.raises(error, match=text):
        ReflectionSettings(**kwargs)


def test_bad_critic_and_base_are_named():
    with pytest.raises(TypeError, match="critic must have a critique"):
        ReflectionMemory(object())
    with pytest.raises(TypeError, match="base must be an Architecture"):
        ReflectionArchitecture(base=object())


def test_reflection_over_a_context_window_base():
    scenario = adaptability_scenario(5)
    d = ReflectionArchitecture(ContextWindowArchitecture(4), booking_critic())
    ctx = d.build_context(scenario.messages, scenario.second_request, 2000)
    assert asks_for_confirmation(booking_actor().complete(ctx.to_openai()))


def test_confirmation_judge():
    assert asks_for_confirmation("Shall I go ahead and book it?")
    assert not asks_for_confirmation("Done: I booked it. Please confirm you got the email.")
    assert not asks_for_confirmation("I booked the train.")
