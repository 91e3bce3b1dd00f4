"""Critics for reflection memory: the scripted one, and the JSON-speaking LLM one."""

from __future__ import annotations

import json

import pytest

from memorykit.clock import StepClock
from memorykit.llm.critic import Critic, CritiqueFailed, OpenAICritic, Rule, ScriptedCritic
from memorykit.llm.chat import OpenAIChatModel, ScriptedChatModel
from memorykit.classroom.doubles.openai_server import Behaviour
from memorykit.messages import MessageFactory


@pytest.fixture
def history():
    clock = StepClock()
    f = MessageFactory(clock=clock)
    out = [f.system("You book flights.")]
    out.append(f.user("Book me a flight on Thursday."))
    clock.advance(10)
    out.append(f.assistant("Your flight is booked for Tuesday."))
    clock.advance(10)
    out.append(f.user("No, I said Thursday!"))
    clock.advance(10)
    out.append(f.assistant("Sorry, rebooked for Thursday."))
    out.append(f.user("Thanks. Seat by the window please."))
    out.append(f.assistant("Seat 14C, aisle."))
    out.append(f.user("That's wrong, I asked for a window seat."))
    return out


def test_scripted_critic_cites_the_mistake_and_the_correction(history):
    critic = ScriptedCritic()
    assert isinstance(critic, Critic) and "not an LLM" in critic.name
    rules = critic.critique(history)
    assert [r.source_message_ids for r in rules] == [
        (history[2].id, history[3].id),
        (history[6].id, history[7].id),
    ]
    assert "Tuesday" in rules[0].text and "No, I said Thursday!" in rules[0].text
    assert all(isinstance(r, Rule) and r.id.startswith("rule-") for r in rules)
    assert rules[0].created_at == history[-1].created_at
    assert critic.critique(history) == rules  # deterministic


def test_scripted_critic_needs_an_assistant_message_before_the_correction():
    f = MessageFactory()
    history = [f.user("Hello"), f.user("No, I said hello"), f.assistant("Hi!"), f.user("Great.")]
    assert ScriptedCritic().critique(history) == []


@pytest.mark.parametrize(
    "text",
    ["no, I said 42", "No I meant the blue one", "That's wrong, it is 7",
     "that is not what I asked for",
     "Actually, I said Paris", "Wrong: the code is X1", "You got it wrong."],
)
def test_correction_patterns(text):
    assert ScriptedCritic().is_correction(text)


@pytest.mark.parametrize(
    "text", ["No problem, thanks", "I said hello to Bob", "Nothing wrong here"]
)
def test_non_corrections(text):
    assert not ScriptedCritic().is_correction(text)


def test_scripted_critic_clock_and_custom_patterns(history):
    critic = ScriptedCritic([r"asked for a window"], clock=StepClock(500.0))
    (rule,) = critic.critique(history)
    assert rule.source_message_ids == (history[6].id, history[7].id)
    assert rule.created_at == 500.0


# ---------------------------------------------------------------------------- LLM critic


def _critic(server, reply, **kw):
    server.chat = ScriptedChatModel(default=reply)
    return OpenAICritic(OpenAIChatModel("m", server.client(**kw)), clock=StepClock(7.0))


def test_openai_critic_parses_rules(server, history):
    reply = json.dumps({"rules": [{"text": "Repeat the requested day before booking.",
                                   "source_message_ids": [history[2].id, history[3].id]}]})
    critic = _critic(server, reply)
    assert isinstance(critic, Critic) and critic.is_llm
    (rule,) = critic.critique(history)
    assert rule.text == "Repeat the requested day before booking."
    assert rule.source_message_ids == (history[2].id, history[3].id)
    assert rule.created_at == 7.0
    sent = server.requests[0].body["messages"]
    assert "JSON" in sent[0]["content"]
    assert f"[{history[3].id}] user: No, I said Thursday!" in sent[1]["content"]


@pytest.mark.parametrize(
    "wrap",
    [
        lambda j: f"```json\n{j}\n```",
        lambda j: f"Here are the rules:\n{j}\nHope this helps.",
        lambda j: j,
    ],
)
def test_openai_critic_tolerates_wrapping(server, history, wrap):
    payload = json.dumps([{"text": "Ask before assuming.", "source_message_ids": [history[6].id]}])
    (rule,) = _critic(server, wrap(payload)).critique(history)
    assert rule.source_message_ids == (history[6].id,)


def test_no_mistakes_means_no_rules(server, history):
    assert _critic(server, '{"rules": []}').critique(history) == []


@pytest.mark.parametrize(
    ("reply", "problem"),
    [
        ("I think the assistant did fine.", "no JSON"),
        ('{"rules": [{"text": "x", "source_message_ids": [', "no JSON"),
        ('{"rules": "none"}', "expected"),
        ('{"rules": [{"text": "", "source_message_ids": ["m000001"]}]}', "text must be"),
        ('{"rules": [{"text": "Rule", "source_message_ids": []}]}', "source_message_ids"),
        ('{"rules": [{"text": "Rule", "source_message_ids": ["m999"]}]}', "not in the history"),
        ('{"rules": ["just a string"]}', "must be an object"),
    ],
)
def test_malformed_critiques_are_rejected(server, history, reply, problem):
    with pytest.raises(CritiqueFailed, match=problem) as info:
        _critic(server, reply).critique(history)
    assert info.value.reply == reply
    assert "malformed critique" in str(info.value)


def test_api_failure_becomes_critique_failed(server, history):
    server.behave(Behaviour.error(500))
    with pytest.raises(CritiqueFailed, match="http 500") as info:
        _critic(server, '{"rules": []}', max_retries=0).critique(history)
    assert info.value.cause.kind == "http 500"


def test_empty_history_makes_no_request(server):
    assert _critic(server, '{"rules": []}').critique([]) == []
    assert server.requests == []
