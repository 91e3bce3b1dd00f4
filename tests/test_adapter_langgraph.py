"""The LangGraph adapter with the real packages: ``create_react_agent`` and ``ChatOpenAI`` (whose
client is the real ``openai`` package) against the loopback ``FakeOpenAIServer``, and once
against the local model SmolLM2.

What the model is sent is read from ``server.requests`` and compared with what the policy builds
on its own from the same history and query: the system prompt, then
``Context.to_openai()``, then the current turn in full; within the budget; valid on the wire.
The scripted model calls a tool once, so a call and its result travel paired. Conversion
langchain -> memorykit -> langchain returns every message kind unchanged; bad input is refused
naming the value. Nothing leaves 127.0.0.1; LangSmith tracing is switched off.
"""

from __future__ import annotations

import json
import warnings
from typing import Any

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.prebuilt import create_react_agent

from memorykit.adapters.langgraph import (
    from_memorykit,
    memorykit_pre_model_hook,
    position_id,
    to_memorykit,
)
from memorykit.classroom.doubles import openai_server
from memorykit.classroom.doubles.openai_server import FakeOpenAIServer
from memorykit.evaluation.export import TunedPolicy, load_policy
from memorykit.evaluation.toolkit import TUNABLE, fixed_policy
from memorykit.messages import validate_wire
from offline import CREDENTIALS_AND_PROXIES, leave_only_loopback, require

PROMPT = "You are a support agent. Answer briefly."
BUDGET = 120
_ENV = (*CREDENTIALS_AND_PROXIES, "LANGSMITH_API_KEY", "LANGCHAIN_API_KEY", "LANGSMITH_ENDPOINT",
        "LANGCHAIN_ENDPOINT", "LANGSMITH_PROJECT", "LANGCHAIN_PROJECT")
TURNS = [
    "Hi, I ordered a walnut bookshelf last week and the order id is A-7731.",
    "The delivery address is 14 Harbour Lane, flat 3, and the buzzer is broken.",
    "Please look up order A-7731 and tell me where it is.",
    "Also my callback number is 555-0142, evenings only please.",
    "The bookshelf should be the tall one, 180 centimetres, not the short one.",
    "If it is late I would like the refund to go to the Visa ending 4242.",
    "My neighbour Priya can sign for the parcel if I am out.",
    "What was the order id again, and where should the refund go?",
]


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch):
    """No credentials, no proxies, no LangSmith tracing, and no connection off 127.0.0.1."""
    attempts = leave_only_loopback(monkeypatch, _ENV)
    for name in ("LANGSMITH_TRACING", "LANGCHAIN_TRACING_V2", "LANGCHAIN_TRACING"):
        monkeypatch.setenv(name, "false")
    yield
    assert not attempts, f"a test tried to leave the machine: {attempts}"


# ------------------------------------------------------------ a scripted model that calls tools
CALL = "CALL "


def scripted_model(messages: list[dict[str, Any]]) -> str:
    """Asked to look something up, it calls ``lookup_order``; given a result, it reports it."""
    last = messages[-1]
    if last["role"] == "tool":
        return f"The lookup says: {last['content']}"
    if last["role"] == "user" and "look up" in last["content"]:
        return CALL + json.dumps({"name": "lookup_order", "arguments": {"order_id": "A-7731"}})
    return "Noted: " + " ".join(str(last.get("content")).split()[:6])


@pytest.fixture
def tool_calling_send(monkeypatch: pytest.MonkeyPatch):
    """FakeOpenAIServer answers in text only: a reply starting with ``CALL`` is sent as a
    tool call instead (patched on the handler for this test only)."""
    real_send = openai_server._Handler._send_json
    calls = iter(range(1, 1000))

    def send(self: Any, status: int, payload: Any, extra: Any = None) -> None:
        choices = payload.get("choices") if isinstance(payload, dict) else None
        content = choices[0]["message"]["content"] if choices else None
        if isinstance(content, str) and content.startswith(CALL):
            call = json.loads(content[len(CALL):])
            choices[0]["message"] = {"role": "assistant", "content": None, "tool_calls": [
                {"id": f"call_{next(calls)}", "type": "function",
                 "function": {"name": call["name"], "arguments": json.dumps(call["arguments"])}}]}
            choices[0]["finish_reason"] = "tool_calls"
        real_send(self, status, payload, extra)

    monkeypatch.setattr(openai_server._Handler, "_send_json", send)


@tool
def lookup_order(order_id: str) -> str:
    """Where an order is."""
    return f"order {order_id} left the depot on Tuesday"


def make_agent(base_url: str, model: str, hook: Any, tools: list[Any], **model_kw: Any) -> Any:
    llm = ChatOpenAI(model=model, base_url=base_url, api_key="x", max_retries=0, timeout=60,
                     **model_kw)
    with warnings.catch_warnings():  # create_react_agent is deprecated since LangGraph 1.0
        warnings.simplefilter("ignore")
        return create_react_agent(llm, tools, prompt=PROMPT, pre_model_hook=hook,
                                  checkpointer=InMemorySaver())


def wire(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The request's messages with a tool-calling assistant's null content read as "" (the
    chat API allows both; ChatOpenAI sends null, ``Context.to_openai`` writes "")."""
    return [{**m, "content": m["content"] if m.get("content") is not None else ""}
            for m in messages]


def expected_requests(policy: Any, messages: list[Any], budget: int) -> list[tuple[Any, list]]:
    """For each model call (one per AIMessage in the final state, in order): the policy's own
    context of the history before the latest human message, and the request that should carry
    it: the prompt, ``context.to_openai()``, the current turn in full."""
    out = []
    converted = to_memorykit(messages)
    for n, message in enumerate(messages):
        if type(message) is not AIMessage:
            continue
        last_human = max(i for i in range(n) if type(messages[i]) is HumanMessage)
        context = policy.build_context(converted[:last_human], converted[last_human].content,
                                       budget)
        turn = [m.to_openai() for m in converted[last_human:n]]
        out.append((context, [{"role": "system", "content": PROMPT}, *context.to_openai(),
                              *turn]))
    return out


def tuned_from_file(tmp_path: Any) -> TunedPolicy:
    """bm25 as ``tune --export`` writes it, read back by ``load_policy``: it carries its budget."""
    path = TunedPolicy("bm25", {"k1": 1.2, "b": 0.75}, budget=BUDGET).save(tmp_path / "best.json")
    return load_policy(path)


@pytest.mark.parametrize("make_policy, budget", [
    (lambda _: TUNABLE["bm25"].make(k1=1.2, b=0.75), BUDGET),
    (lambda _: fixed_policy("recency"), BUDGET),
    (tuned_from_file, None),
], ids=["bm25", "recency", "tuned-bm25-from-file"])
def test_the_model_is_sent_the_policys_context_within_budget(make_policy, budget, tmp_path,
                                                             tool_calling_send):
    policy = make_policy(tmp_path)
    hook = memorykit_pre_model_hook(policy, budget)
    assert hook.budget == BUDGET
    config = {"configurable": {"thread_id": "t1"}}
    with FakeOpenAIServer(chat=scripted_model, api_key="x") as server:
        agent = make_agent(server.base_url, "memorykit-fake-chat", hook, [lookup_order])
        for text in TURNS:
            state = agent.invoke({"messages": [HumanMessage(text)]}, config)
        sent = [r.body["messages"] for r in server.requests_to("/chat/completions")]
    messages = state["messages"]
    # nothing lost: the state holds every turn, the tool call and its result
    assert [m.content for m in messages if type(m) is HumanMessage] == TURNS
    calls = [m for m in messages if type(m) is AIMessage and m.tool_calls]
    results = [m for m in messages if type(m) is ToolMessage]
    assert len(calls) == len(results) == 1
    assert results[0].tool_call_id == calls[0].tool_calls[0]["id"]
    expected = expected_requests(policy, messages, BUDGET)
    assert len(sent) == len(expected) == len(TURNS) + 1  # one extra call for the tool loop
    history_tokens = sum(m.billed_tokens for m in to_memorykit(messages[:-2]))
    assert history_tokens > 2 * BUDGET  # the budget bites: most of the history is left out
    assert len(expected[-1][0]) > 0  # the last question (order id, refund) finds history
    for body, (context, request) in zip(sent, expected):
        assert wire(body) == request
        assert context.tokens <= BUDGET and not context.over_budget
        validate_wire(wire(body))
    # the call and its result were sent together, adjacent, in the tool loop's request
    loop = wire(sent[TURNS.index(next(t for t in TURNS if "look up" in t)) + 1])
    at = next(i for i, m in enumerate(loop) if m.get("tool_calls"))
    assert loop[at + 1] == {"role": "tool", "content": results[0].content,
                            "tool_call_id": calls[0].tool_calls[0]["id"]}
    assert hook.last_context.to_openai() == expected[-1][0].to_openai()
    assert hook.contexts_built == len(TURNS)  # once per turn: the tool loop reused its context


# ------------------------------------------------------------------------------- conversion
def every_kind() -> list[Any]:
    return [
        SystemMessage("Be brief.", id="s1", additional_kwargs={"__openai_role__": "developer"}),
        HumanMessage("My order is A-7731.", id="h1", name="dana"),
        HumanMessage([{"type": "text", "text": "Two"}, "parts", {"type": "text", "text": "x"}]),
        AIMessage("", id="a1", name="agent", tool_calls=[
            {"name": "lookup_order", "args": {"order_id": "A-7731", "n": [1, 2.5, None]},
             "id": "c1", "type": "tool_call"},
            {"name": "weather", "args": {}, "id": "c2", "type": "tool_call"}],
            response_metadata={"finish_reason": "tool_calls"},
            usage_metadata={"input_tokens": 5, "output_tokens": 3, "total_tokens": 8}),
        ToolMessage("left the depot", tool_call_id="c1", name="lookup_order", id="t1",
                    artifact={"raw": [1, 2]}),
        ToolMessage("unavailable", tool_call_id="c2", status="error"),
        AIMessage("It left the depot on Tuesday. Café ☕", id="a2", custom_field="kept"),
    ]


def test_round_trip_langchain_memorykit_langchain_returns_every_message_unchanged():
    original = every_kind()
    converted = to_memorykit(original)
    assert [m.role for m in converted] == ["system", "user", "user", "assistant", "tool", "tool",
                                           "assistant"]
    assert [m.id for m in converted] == ["s1", "h1", position_id(2), "a1", "t1", position_id(5),
                                         "a2"]
    assert converted[2].content == "Two\nparts\nx"
    assert [(c.id, c.name, json.loads(c.arguments)) for c in converted[3].tool_calls] == [
        ("c1", "lookup_order", {"order_id": "A-7731", "n": [1, 2.5, None]}), ("c2", "weather", {})]
    assert [m.tool_call_id for m in converted[4:6]] == ["c1", "c2"]
    assert [m.turn for m in converted] == [0, 1, 2, 2, 2, 2, 2]
    back = from_memorykit(converted)
    assert back == original
    assert [type(m) for m in back] == [type(m) for m in original]
    validate_wire([m.to_openai() for m in converted])


@pytest.mark.parametrize("bad, error, named", [
    (HumanMessage([{"type": "image_url", "image_url": {"url": "data:x"}}]), ValueError,
     "'image_url'"),
    (AIMessageChunk("partial"), TypeError, "AIMessageChunk"),
    (AIMessage("", invalid_tool_calls=[{"name": "f", "args": "{oops", "id": "c9",
                                        "error": "bad json", "type": "invalid_tool_call"}]),
     ValueError, "{oops"),
    (AIMessage("", tool_calls=[{"name": "f", "args": {"when": {1, 2}}, "id": "c9"}]),
     ValueError, "{1, 2}"),
    (AIMessage("", tool_calls=[{"name": "f", "args": {"pair": (1, 2)}, "id": "c9"}]),
     ValueError, "(1, 2)"),
])
def test_what_cannot_be_converted_is_refused_naming_it(bad, error, named):
    with pytest.raises(error, match=named.replace("(", r"\(").replace(")", r"\)")
                       .replace("{", r"\{").replace("}", r"\}")) as caught:
        to_memorykit([HumanMessage("hi"), bad])
    assert "messages[1]" in str(caught.value)


def test_the_hook_refuses_bad_settings_and_states_naming_them():
    policy = TUNABLE["bm25"].make(k1=1.2, b=0.75)
    with pytest.raises(ValueError, match="has no budget"):
        memorykit_pre_model_hook(policy)
    with pytest.raises(ValueError, match="budget must be >= 1, got 0"):
        memorykit_pre_model_hook(policy, 0)
    with pytest.raises(TypeError, match="ContextPolicy"):
        memorykit_pre_model_hook("bm25", 100)
    hook = memorykit_pre_model_hook(policy, 100)
    with pytest.raises(ValueError, match="no HumanMessage"):
        hook({"messages": [SystemMessage("rules")]})
    with pytest.raises(ValueError, match="'h1' appears twice"):
        hook({"messages": [HumanMessage("a", id="h1"), HumanMessage("b", id="h1")]})
    with pytest.raises(TypeError, match="under 'messages'"):
        hook({"messages": "hello"})


def test_a_policy_carrying_its_budget_needs_none_and_instructions_and_turn_go_in_full():
    class WithBudget:
        """A policy that knows its budget, as a TunedPolicy does."""

        def __init__(self) -> None:
            self.inner, self.budget, self.name = fixed_policy("recency"), 60, "recency-60"

        def build_context(self, history, query, budget):
            return self.inner.build_context(history, query, budget)

    hook = memorykit_pre_model_hook(WithBudget())
    assert hook.budget == 60
    rules = SystemMessage("x " * 200, id="rules")  # far over the budget: sent anyway
    history = [HumanMessage(f"message number {i} about the order", id=f"h{i}") for i in range(30)]
    turn = [HumanMessage("and now?", id="now"),
            AIMessage("", id="a", tool_calls=[{"name": "f", "args": {}, "id": "c"}]),
            ToolMessage("done", tool_call_id="c", id="t")]
    sent = hook({"messages": [rules, *history, *turn]})["llm_input_messages"]
    assert sent[0] is rules and sent[-3:] == turn
    assert hook.last_context.tokens <= 60 < sum(
        m.billed_tokens for m in to_memorykit(history))
    assert sent[1:-3] == [h for h in history if h.id in hook.last_context.covered_ids()]
    assert len(sent[1:-3]) < len(history)
    # the same turn again (a tool loop's next call): the context is reused, not rebuilt
    assert hook({"messages": [rules, *history, *turn]})["llm_input_messages"] == sent
    assert hook.contexts_built == 1
    # a history message edited in place (same id): the policy picks again, from the new text
    edited = HumanMessage("edited: the order moved", id="h29")
    again = hook({"messages": [rules, *history[:-1], edited, *turn]})["llm_input_messages"]
    assert hook.contexts_built == 2 and edited in again and history[-1] not in again


# ------------------------------------------------------------------------- the local model
def _require_local_model() -> None:
    from memorykit.llm.local_server import local_model_available

    require(local_model_available())


class SentMessages(BaseCallbackHandler):
    """Records the messages each chat model call was given (what ChatOpenAI then sends)."""

    def __init__(self) -> None:
        self.calls: list[list[Any]] = []

    def on_chat_model_start(self, serialized: Any, messages: Any, **kw: Any) -> None:
        self.calls.extend(messages)


def test_the_local_model_answers_from_the_policys_context():
    _require_local_model()
    from ports import free_port

    from memorykit.llm.local_server import LocalModelServer

    policy = TUNABLE["bm25"].make(k1=1.2, b=0.75)
    hook = memorykit_pre_model_hook(policy, BUDGET)
    seen = SentMessages()
    earlier = []
    for text in TURNS[:-1]:
        earlier += [HumanMessage(text), AIMessage("Noted.")]
    with LocalModelServer(free_port(), n_threads=2) as server:
        agent = make_agent(server.base_url, server.model, hook, [], temperature=0, max_tokens=24)
        state = agent.invoke({"messages": [*earlier, HumanMessage(TURNS[-1])]},
                             {"configurable": {"thread_id": "local"}, "callbacks": [seen]})
    messages = state["messages"]
    assert len(messages) == len(earlier) + 2 and type(messages[-1]) is AIMessage
    assert isinstance(messages[-1].content, str) and messages[-1].content.strip()
    converted = to_memorykit(messages[:-1])
    context = policy.build_context(converted[:-1], converted[-1].content, BUDGET)
    assert context.tokens <= BUDGET < sum(m.billed_tokens for m in converted[:-1])
    [given] = seen.calls
    sent = [m.to_openai() for m in to_memorykit(given)]
    assert sent == [{"role": "system", "content": PROMPT}, *context.to_openai(),
                    {"role": "user", "content": TURNS[-1]}]
    validate_wire(sent)


def test_the_benchmark_runs_on_valid_histories_and_reports_each_hook():
    from bench.adapter_langgraph import history, markdown, run

    messages = history(120)
    assert len(messages) <= 120 and type(messages[0]) is SystemMessage
    converted = to_memorykit(messages)  # unique ids, every message convertible
    validate_wire([m.to_openai() for m in converted])  # calls and results still paired
    report = run((120,), 1, ("bm25",))
    [row] = report["rows"]
    assert set(row["median_s"]) == {"bm25", "trim (approximate counter)",
                                    "trim (tiktoken counter)"}
    assert row["embedded_per_turn"]["bm25"] == [0] and row["context_tokens"]["bm25"] <= 1000
    table = markdown(report)
    assert f"| {len(messages):,} | bm25 |" in table and "trim (tiktoken counter) | " in table


# ------------------------------------------------------------------ faults: nothing is lost
class _Failing:
    """A policy that breaks while ``broken`` is set (a bug in a student's or a tuned policy)."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.broken = inner, False

    def build_context(self, history: Any, query: str, budget: int) -> Any:
        if self.broken:
            raise RuntimeError("policy broke")
        return self.inner.build_context(history, query, budget)


def test_a_failing_model_call_or_policy_loses_nothing_the_state_held():
    from memorykit.classroom.doubles.openai_server import Behaviour

    policy = _Failing(TUNABLE["bm25"].make(k1=1.2, b=0.75))
    config = {"configurable": {"thread_id": "faults"}}
    with FakeOpenAIServer(chat=scripted_model, api_key="x") as server:
        agent = make_agent(server.base_url, "memorykit-fake-chat",
                           memorykit_pre_model_hook(policy, BUDGET), [])
        for text in TURNS[:3]:
            agent.invoke({"messages": [HumanMessage(text)]}, config)
        before = agent.get_state(config).values["messages"]
        server.behave(Behaviour.error(500))  # the model endpoint fails once
        with pytest.raises(Exception, match="500|simulated failure"):
            agent.invoke({"messages": [HumanMessage(TURNS[3])]}, config)
        policy.broken = True  # then the policy fails once: raised, not hidden
        with pytest.raises(RuntimeError, match="policy broke"):
            agent.invoke({"messages": [HumanMessage(TURNS[4])]}, config)
        policy.broken = False
        state = agent.invoke({"messages": [HumanMessage(TURNS[-1])]}, config)
        sent = server.requests_to("/chat/completions")[-1].body["messages"]
    messages = state["messages"]
    assert messages[:len(before)] == before  # every message held before the faults is kept
    humans = [m.content for m in messages if type(m) is HumanMessage]
    assert humans[:3] == TURNS[:3] and humans[-1] == TURNS[-1]
    assert len(sent) >= 3 and sent[-1]["content"] == TURNS[-1]
    validate_wire(wire(sent))
