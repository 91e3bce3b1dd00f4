"""The OpenAI Agents SDK adapter with the real SDK: ``agents.Runner``, an ``Agent`` on
``OpenAIChatCompletionsModel`` and the real ``AsyncOpenAI`` client against the loopback server.

What the SDK sends the model is read back from ``server.requests``: the instructions, then the
policy's context of the history (``Context.to_openai()`` for the same history and query), then
this turn's items as the SDK's own converter sends them; the context within its budget; the whole
request valid on the wire. A scripted tool call stays paired across turns, the session keeps every
item, bad input is refused naming the value. One test runs the local model (SmolLM2) where it is
installed, gated as tests/llm/test_llm_real_server.py gates it (CI=true: fail, never skip).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

pytest.importorskip("agents", reason="the 'agents' extra (openai-agents) is not installed")

from agents import (Agent, ModelSettings, OpenAIChatCompletionsModel, RunConfig,  # noqa: E402
                    Runner, SQLiteSession, function_tool)
from agents.models.chatcmpl_converter import Converter  # noqa: E402
from openai import AsyncOpenAI  # noqa: E402

from memorykit.adapters.openai_agents import (TunedContextFilter, UnconvertibleItem,  # noqa: E402
                                              context_to_items, items_to_messages,
                                              messages_to_items)
from memorykit.classroom.doubles import openai_server  # noqa: E402
from memorykit.classroom.doubles.openai_server import FAKE_API_KEY, FakeOpenAIServer  # noqa: E402
from memorykit.evaluation.toolkit import TUNABLE, fixed_policy  # noqa: E402
from memorykit.messages import validate_wire  # noqa: E402
from offline import leave_only_loopback, require  # noqa: E402

INSTRUCTIONS = "You are a brief assistant. Use the tools when you need live data."
TURNS = [
    "My car is parked on level 3 of the blue garage, space 3-114, next to the lifts.",
    "Please remember that my sister Maya lands at terminal 2 on Friday at 18:40.",
    "What is the weather in Lisbon right now? I need to pack for the weekend.",
    "The hotel booking reference is QX-5521 and breakfast is included in the rate.",
    "My dentist moved the appointment to Tuesday at 9:15, room 12 on the second floor.",
    "Remind me that the library books are due back on the 14th, three of them.",
    "Did the Lisbon weather say anything about rain? I still need an umbrella decision.",
    "Where did I park the car, and which space was it again?",
]
BUDGET = 120


@pytest.fixture(autouse=True)
def loopback_only(monkeypatch: pytest.MonkeyPatch):
    """No credentials, and any connection off 127.0.0.1 fails (the SDK must not phone home)."""
    attempts = leave_only_loopback(monkeypatch)
    yield
    assert not attempts, f"a test tried to leave the machine: {attempts}"


class _ToolCallingHandler(openai_server._Handler):
    """The loopback handler, plus one scripted tool call: a user message about the weather is
    answered by a ``get_weather`` call (the FakeOpenAIServer itself only replies with text)."""

    def _chat(self, body: dict[str, Any], behaviour: Any) -> None:
        last = body["messages"][-1]
        if last.get("role") == "user" and "weather in" in str(last.get("content")).lower():
            n = len(self.server.owner.requests)
            call = {"id": f"call_{n}", "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Lisbon"}'}}
            message = {"role": "assistant", "content": None, "tool_calls": [call]}
            return self._send_json(200, {
                "id": f"chatcmpl-tool-{n}", "object": "chat.completion", "created": 0,
                "model": body.get("model"), "choices": [{"index": 0, "message": message,
                                                         "finish_reason": "tool_calls",
                                                         "logprobs": None}],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})
        return super()._chat(body, behaviour)


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(openai_server, "_Handler", _ToolCallingHandler)
    with FakeOpenAIServer() as srv:
        yield srv


@function_tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"Light rain in {city}, 17 degrees, wind from the north-west."


class _Spy:
    """Wraps the filter and keeps what the SDK handed it (the input before the policy)."""

    def __init__(self, tuned: TunedContextFilter) -> None:
        self.tuned, self.seen = tuned, []

    def __call__(self, data: Any) -> Any:
        self.seen.append(json.loads(json.dumps(data.model_data.input)))
        return self.tuned(data)


def _agent(base_url: str, model: str = "memorykit-fake-chat", api_key: str = FAKE_API_KEY,
           tools: list[Any] | None = None, max_tokens: int | None = None) -> Agent:
    client = AsyncOpenAI(base_url=base_url, api_key=api_key, max_retries=0, timeout=120)
    return Agent(name="assistant", instructions=INSTRUCTIONS, tools=tools or [],
                 model=OpenAIChatCompletionsModel(model=model, openai_client=client),
                 model_settings=ModelSettings(max_tokens=max_tokens))


def _converse(agent: Agent, spy: _Spy, session: SQLiteSession, turns: list[str]) -> list[str]:
    config = RunConfig(call_model_input_filter=spy, tracing_disabled=True)

    async def run() -> list[str]:
        results = [await Runner.run(agent, text, session=session, run_config=config)
                   for text in turns]
        return [str(result.final_output) for result in results]
    return asyncio.run(run())


def _split(items: list[dict[str, Any]]) -> int:
    return max(i for i, item in enumerate(items) if item.get("role") == "user")


def _wire(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    # null content is allowed on the wire for an assistant message that only calls tools
    return [{**m, "content": m.get("content") or ""} for m in messages]


@pytest.mark.parametrize("make_policy", [
    lambda: TUNABLE["bm25"].make(k1=1.2, b=0.75),
    lambda: fixed_policy("recency"),
    lambda: _require_minilm() or TUNABLE["hybrid-retrieval"].make(lexical_weight=0.25,
                                                                 neighbours=0),
], ids=["bm25", "recency", "hybrid"])
def test_every_model_call_gets_the_policys_context_within_budget(server, make_policy):
    policy = make_policy()
    spy = _Spy(TunedContextFilter(policy, BUDGET))
    session = SQLiteSession("budget-bites")
    replies = _converse(_agent(server.base_url, tools=[get_weather]), spy, session, TURNS)
    requests = server.requests_to("/chat/completions")
    assert len(requests) == len(spy.seen) == len(TURNS) + 1  # the weather turn: call, then answer
    assert all(reply.startswith("Scripted reply to:") for reply in replies)
    bitten = 0
    for request, seen in zip(requests, spy.seen):
        sent = request.body["messages"]
        cut = _split(seen)
        history = items_to_messages(seen[:cut])
        context = policy.build_context(history, seen[cut]["content"], BUDGET)
        turn = Converter.items_to_messages(seen[cut:])
        assert sent == [{"role": "system", "content": INSTRUCTIONS}, *context.to_openai(), *turn]
        assert not context.over_budget and context.tokens <= BUDGET
        validate_wire(_wire(sent))
        bitten += sum(m.billed_tokens for m in history) > BUDGET
    assert bitten >= 3, "the conversation never outgrew the budget: the test shows nothing"


def test_the_session_keeps_every_item_and_conversion_round_trips(server):
    spy = _Spy(TunedContextFilter(TUNABLE["bm25"].make(k1=1.2, b=0.75), BUDGET))
    session = SQLiteSession("lossless")
    _converse(_agent(server.base_url, tools=[get_weather]), spy, session, TURNS)
    items = asyncio.run(session.get_items())
    users = [item["content"] for item in items if item.get("role") == "user"]
    assert users == TURNS
    kinds = [item.get("type", "message") for item in items]
    assert kinds.count("function_call") == kinds.count("function_call_output") == 1
    assert len(items) == 2 * len(TURNS) + 2
    messages = items_to_messages(items)
    assert messages_to_items(messages) == items
    validate_wire([m.to_openai() for m in messages])


def test_a_tool_call_and_its_result_stay_paired_across_turns(server):
    # a budget large enough for everything: the call and its result come back as a real call
    spy = _Spy(TunedContextFilter(fixed_policy("recency"), 4_000))
    _converse(_agent(server.base_url, tools=[get_weather]), spy, SQLiteSession("paired"),
              TURNS[2:5])
    last = server.requests_to("/chat/completions")[-1].body["messages"]
    calls = [i for i, m in enumerate(last) if m.get("tool_calls")]
    assert len(calls) == 1
    call_id = last[calls[0]]["tool_calls"][0]["id"]
    assert last[calls[0] + 1] == {"role": "tool", "tool_call_id": call_id,
                                  "content": "Light rain in Lisbon, 17 degrees, wind from the "
                                             "north-west."}
    validate_wire(_wire(last))


def test_a_streamed_run_gets_the_same_context(server):
    policy = TUNABLE["bm25"].make(k1=1.2, b=0.75)
    spy = _Spy(TunedContextFilter(policy, BUDGET))
    config = RunConfig(call_model_input_filter=spy, tracing_disabled=True)
    agent, session = _agent(server.base_url), SQLiteSession("streamed")

    async def run() -> None:
        for text in (TURNS[0], TURNS[1], TURNS[-1]):
            result = Runner.run_streamed(agent, text, session=session, run_config=config)
            async for _ in result.stream_events():
                pass
    asyncio.run(run())
    requests = server.requests_to("/chat/completions")
    assert len(requests) == 3 and all(r.body.get("stream") for r in requests)
    seen = spy.seen[-1]
    cut = _split(seen)
    context = policy.build_context(items_to_messages(seen[:cut]), TURNS[-1], BUDGET)
    assert requests[-1].body["messages"] == [{"role": "system", "content": INSTRUCTIONS},
                                             *context.to_openai(), seen[cut]]
    assert "level 3" in json.dumps(context.to_openai())


def test_a_call_whose_result_the_policy_left_out_travels_as_text():
    items = [{"role": "user", "content": "weather in Lisbon?"},
             {"type": "function_call", "call_id": "c1", "name": "get_weather",
              "arguments": '{"city": "Lisbon"}'},
             {"type": "function_call_output", "call_id": "c1", "output": "rain"}]
    messages = items_to_messages(items)
    from memorykit.context import Context, ContextItem
    half = Context((ContextItem.from_message(messages[0]), ContextItem.from_message(messages[1])),
                   500, "test")
    sent = Converter.items_to_messages(context_to_items(half))
    assert sent == half.to_openai()
    validate_wire(sent)
    whole = Context(tuple(ContextItem.from_message(m) for m in messages), 500, "test")
    assert Converter.items_to_messages(context_to_items(whole)) == whole.to_openai()


def test_items_convert_to_messages_and_back_losing_nothing():
    items = [
        {"role": "developer", "content": "Be brief."},
        {"type": "message", "role": "user",
         "content": [{"type": "input_text", "text": "two"},
                     {"type": "input_text", "text": "parts"}]},
        {"type": "function_call", "call_id": "a", "name": "f", "arguments": "{}", "id": "fc1"},
        {"type": "function_call", "call_id": "b", "name": "g", "arguments": '{"x": 1}'},
        {"type": "function_call_output", "call_id": "a", "output": "A"},
        {"type": "function_call_output", "call_id": "b",
         "output": [{"type": "input_text", "text": "B"}]},
        {"type": "message", "role": "assistant", "id": "msg_1", "status": "completed",
         "content": [{"type": "refusal", "refusal": "no"}]},
    ]
    messages = items_to_messages(items)
    assert [(m.role, m.content) for m in messages] == [
        ("system", "Be brief."), ("user", "two\nparts"), ("assistant", ""), ("tool", "A"),
        ("tool", "B"), ("assistant", "no")]
    assert [c.id for c in messages[2].tool_calls] == ["a", "b"]
    assert messages[2].tool_calls[1].arguments == '{"x": 1}'
    assert messages_to_items(messages) == items
    validate_wire([m.to_openai() for m in messages])


def test_text_the_model_said_before_its_calls_is_one_message_with_them():
    # A logged assistant turn {"content": null, "tool_calls": [...]} travels as an (empty) output
    # message followed by its call; the SDK's converter sends them as ONE chat message, so the
    # memory must hold one Message too, or the context carries an extra empty assistant message.
    said = {"type": "message", "role": "assistant", "id": "msg_2", "status": "completed",
            "content": [{"type": "output_text", "text": "Let me check.", "annotations": []}]}
    call = {"type": "function_call", "call_id": "c1", "name": "get_weather",
            "arguments": '{"city": "Porto"}'}
    result = {"type": "function_call_output", "call_id": "c1", "output": "rain"}
    items = [{"role": "user", "content": "Weather?"}, said, call, result]
    messages = items_to_messages(items)
    assert [(m.role, m.content, m.tool_call_ids) for m in messages] == [
        ("user", "Weather?", ()), ("assistant", "Let me check.", ("c1",)), ("tool", "rain", ())]
    assert messages_to_items(messages) == items
    assert Converter.items_to_messages(items) == [m.to_openai() for m in messages]


@pytest.mark.parametrize("item, named", [
    ({"type": "reasoning", "id": "rs_1", "summary": []}, "'reasoning'"),
    ({"type": "message", "role": "user",
      "content": [{"type": "input_image", "image_url": "http://x"}]}, "'input_image'"),
    ({"role": "critic", "content": "hm"}, "'critic'"),
    ({"type": "function_call", "call_id": "", "name": "f", "arguments": "{}"}, "''"),
    ("just text", "str"),
    ({"role": "user", "content": "a set is not JSON", "extra": {1, 2}}, "JSON cannot keep"),
])
def test_an_item_memorykit_cannot_hold_is_refused_by_name(item, named):
    with pytest.raises(UnconvertibleItem, match=named):
        items_to_messages([{"role": "user", "content": "hi"}, item])
    tuned = TunedContextFilter(fixed_policy("recency"), 100)
    with pytest.raises(UnconvertibleItem, match=r"items\[0\]"):
        tuned.model_input([item, {"role": "user", "content": "hi"}])


def test_bad_settings_are_refused_naming_the_value():
    policy = TUNABLE["bm25"].make(k1=1.2, b=0.75)
    with pytest.raises(ValueError, match="budget.*0"):
        TunedContextFilter(policy, 0)
    with pytest.raises(TypeError, match="budget.*'100'"):
        TunedContextFilter(policy, "100")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="policy must be a ContextPolicy.*'bm25'"):
        TunedContextFilter("bm25", 100)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="budget is None.*no budget"):
        TunedContextFilter(policy)


def test_a_policy_carrying_its_budget_needs_none_given():
    class WithBudget:
        name, budget = "recency-with-budget", 64

        def build_context(self, history, query, budget):
            return fixed_policy("recency").build_context(history, query, budget)

    tuned = TunedContextFilter(WithBudget())
    assert tuned.budget == 64
    items = [{"role": "user", "content": f"message number {i} " * 8} for i in range(20)]
    tuned.model_input(items)
    assert tuned.last_context is not None and tuned.last_context.budget == 64
    assert not tuned.last_context.over_budget


def test_a_loaded_tuned_policy_drives_the_agent_at_its_own_budget(server, tmp_path):
    from memorykit import load_policy
    from memorykit.evaluation.export import TunedPolicy

    path = TunedPolicy("bm25", {"k1": 1.2, "b": 0.75}, BUDGET).save(tmp_path / "best.json")
    tuned = load_policy(path)
    spy = _Spy(TunedContextFilter(tuned))  # no budget given: the file's
    assert spy.tuned.budget == BUDGET
    _converse(_agent(server.base_url), spy, SQLiteSession("tuned"), TURNS[:2] + TURNS[-1:])
    reference = TUNABLE["bm25"].make(k1=1.2, b=0.75)  # what tune built, rebuilt by hand
    for request, seen in zip(server.requests_to("/chat/completions"), spy.seen, strict=True):
        cut = _split(seen)
        context = reference.build_context(items_to_messages(seen[:cut]), seen[cut]["content"],
                                          BUDGET)
        assert request.body["messages"] == [{"role": "system", "content": INSTRUCTIONS},
                                            *context.to_openai(), seen[cut]]
        assert not context.over_budget
    assert "level 3" in json.dumps(server.requests_to("/chat/completions")[-1].body["messages"])


def test_history_messages_are_made_once_with_stable_ids():
    tuned = TunedContextFilter(fixed_policy("recency"), 100)
    items = [{"role": "user", "content": "ok"}, {"role": "assistant", "content": "ok"},
             {"role": "user", "content": "ok"}]
    first = tuned.history_messages(items)
    again = tuned.history_messages(items + [{"role": "assistant", "content": "new"}])
    assert [m.id for m in again[:3]] == [m.id for m in first]
    assert again[0] is first[0] and len({m.id for m in again}) == 4


# ------------------------------------------------------------ the local models
def _require_minilm() -> None:
    from memorykit.longterm.minilm import minilm_available

    require(minilm_available())


def _require_local_model() -> None:
    from memorykit.llm.local_server import local_model_available

    require(local_model_available())


def test_the_local_model_answers_through_the_tuned_context():
    _require_local_model()
    from ports import free_port

    from memorykit.llm.local_server import LocalModelServer

    policy = TUNABLE["bm25"].make(k1=1.2, b=0.75)
    spy = _Spy(TunedContextFilter(policy, 60))
    turns = ["My car is on level 3 of the blue garage.", "My sister lands on Friday.",
             "Where is my car?"]
    with LocalModelServer(free_port(), n_threads=2) as real:
        agent = _agent(real.base_url, model=real.model, api_key="no-key-needed", max_tokens=24)
        replies = _converse(agent, spy, SQLiteSession("local"), turns)
    assert len(replies) == 3 and all(isinstance(r, str) and r.strip() for r in replies)
    last = spy.seen[-1]
    cut = _split(last)
    context = policy.build_context(items_to_messages(last[:cut]), turns[-1], 60)
    assert not context.over_budget
    assert "level 3" in " ".join(m["content"] for m in context.to_openai())
    sent = Converter.items_to_messages(spy.tuned.model_input(last))
    assert sent == [*context.to_openai(), {"role": "user", "content": turns[-1]}]
    validate_wire(sent)


# ------------------------------------------------------------ faults: nothing stored is lost
class _Failing:
    """A policy that breaks on its ``fail_on``-th call (a bug in a student's or a tuned policy)."""

    def __init__(self, inner: Any, fail_on: int) -> None:
        self.inner, self.fail_on, self.calls = inner, fail_on, 0

    def build_context(self, history: Any, query: str, budget: int) -> Any:
        self.calls += 1
        if self.calls == self.fail_on:
            raise RuntimeError("policy broke")
        return self.inner.build_context(history, query, budget)


def _stored(session: SQLiteSession) -> list[dict[str, Any]]:
    return asyncio.run(session.get_items())


def test_a_failing_model_call_or_policy_loses_no_stored_item_and_the_next_turn_sees_all(server):
    from memorykit.classroom.doubles.openai_server import Behaviour

    policy = _Failing(TUNABLE["bm25"].make(k1=1.2, b=0.75), fail_on=0)
    spy, session = _Spy(TunedContextFilter(policy, BUDGET)), SQLiteSession("faults")
    agent = _agent(server.base_url, tools=[get_weather])
    _converse(agent, spy, session, TURNS[:3])
    before = _stored(session)
    assert len(before) == 8  # three questions, three answers, a weather call and its result
    server.behave(Behaviour.error(500))  # the model endpoint fails on turn 4
    with pytest.raises(Exception) as failed:
        _converse(agent, spy, session, [TURNS[3]])
    assert "500" in str(failed.value) or "simulated failure" in str(failed.value)
    after_model_fault = _stored(session)
    assert after_model_fault[:len(before)] == before  # nothing stored before is lost
    _converse(agent, spy, session, [TURNS[4]])  # the model is back
    policy.fail_on = policy.calls + 1  # the policy breaks on the next turn: not hidden
    with pytest.raises(RuntimeError, match="policy broke"):
        _converse(agent, spy, session, [TURNS[5]])
    after_policy_fault = _stored(session)
    assert after_policy_fault[:len(after_model_fault)] == after_model_fault
    # the next turn ranks the whole history: turn 1's fact is found again within the budget
    _converse(agent, spy, session, [TURNS[-1]])
    sent = server.requests[-1].body["messages"]
    assert any("level 3" in str(m.get("content")) for m in sent[1:-1])
    kept = [i.get("content") for i in _stored(session) if i.get("role") == "user"]
    assert kept[:3] == TURNS[:3] and TURNS[4] in kept and kept[-1] == TURNS[-1]
