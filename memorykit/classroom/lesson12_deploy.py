"""Lesson 12's last step: the tuned policy exported, loaded and driving a real agent (issue 28).

``deploy_demo(explorer)`` takes the pick ``explore_file`` tuned on the bundled support logs at one
budget, writes it with ``export_policy`` to a file (what ``python -m memorykit tune ...
--export best.json`` writes) and reads it back with ``memorykit.load_policy``. Then an OpenAI
Agents SDK agent answers a question about one support chat, with the whole chat in its session
and ``TunedContextFilter`` (``memorykit.adapters.openai_agents``) before its model call: the
model reads the instructions, the tuned policy's context of the chat and the question.

The model is SmolLM2 (``memorykit.llm.local_server``) when the local model is installed (``./run
test`` installs it), else a scripted stand-in that says so. Either sits behind a loopback recorder
(``FakeOpenAIServer``), so ``print_received`` prints the request exactly as it arrived: that part
depends only on the policy, not on the model.
"""

from __future__ import annotations

import asyncio
import json
import socket
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memorykit._validate import require_int
from memorykit.classroom.doubles.openai_server import FAKE_API_KEY, FakeOpenAIServer
from memorykit.evaluation.export import TunedPolicy, export_policy, load_policy

__all__ = ["DeployReport", "INSTRUCTIONS", "deploy_demo"]

INSTRUCTIONS = "You are a support agent. Answer the customer's question in one short sentence."
"""The demo agent's instructions (sent in full beside the policy's context)."""

REPLY_TOKENS = 40
"""Cap on the model's reply: the demo is about what the model reads, not what it writes."""


@dataclass(frozen=True)
class DeployReport:
    """What ``deploy_demo`` did: the exported file, the question, what the model got and said."""

    tuned: TunedPolicy
    """The policy as ``load_policy`` read it back from the exported file."""
    exported: dict[str, Any]
    """The exported file's content (JSON)."""
    conversation: str
    question: str
    evidence: tuple[str, ...]
    """The texts of the messages that hold the question's answer (from the questions file)."""
    received: tuple[dict[str, Any], ...]
    """The chat messages the model received, as the request carried them."""
    context_messages: int
    context_tokens: int
    """Tokens of the policy's context (memorykit's count, what the budget bounds)."""
    history_messages: int
    """Messages of the chat in the agent's session (every one stays stored)."""
    history_tokens: int
    model: str
    reply: str

    def print_received(self, listing: bool = True) -> None:
        """The exported decision and what the model received, one line per message (without
        ``listing``, the counts alone: which of two identical turns a near tie of scores picks can
        move with the last bits of the embeddings, which depend on the batch that computed them)."""
        t, earned = self.tuned, self.tuned.earned
        settings = ", ".join(f"{k}={v}" for k, v in t.params.items()) or "defaults"
        print(f"exported and loaded: {t.policy} ({settings}) at {t.budget} tokens, "
              f"{self.exported['encoding']}"
              + ("" if earned is None else f"; held-out recall {earned.recall:.3f} on "
                 f"{earned.questions} questions ({earned.split})"))
        print(f"question about {self.conversation} (the session holds all {self.history_messages} "
              f"messages, {self.history_tokens} tokens): {self.question}")
        print(f"the model received {len(self.received)} messages: the instructions, the "
              f"policy's context ({self.context_messages} messages, {self.context_tokens} of "
              f"{t.budget} tokens) and the question")
        for m in self.received if listing else ():
            text = " ".join(str(m.get("content") or "").split())
            mark = " [evidence]" if m.get("content") in self.evidence else ""
            calls = f" (+{len(m['tool_calls'])} tool call)" if m.get("tool_calls") else ""
            print(f"  {m['role']:<9} {text[:64]}{'...' if len(text) > 64 else ''}{calls}{mark}")
        found = sum(any(m.get("content") == e for m in self.received) for e in self.evidence)
        print(f"evidence messages the model received: {found} of {len(self.evidence)}")


def _forward_to(base_url: str, model: str) -> Any:
    """A chat function for the recorder: the request's messages, answered by the real model."""
    import openai

    client = openai.OpenAI(base_url=base_url, api_key="no-key-needed", max_retries=0, timeout=120)

    def answer(messages: Any) -> str:
        reply = client.chat.completions.create(model=model, messages=messages, temperature=0,
                                               max_tokens=REPLY_TOKENS)
        return reply.choices[0].message.content or ""

    return answer


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _run_agent(base_url: str, tuned: Any, items: list[dict[str, Any]], question: str) -> str:
    """``question`` asked of an SDK agent on ``base_url`` whose session holds ``items``, through
    the filter ``tuned`` (a ``TunedContextFilter``)."""
    from agents import Agent, ModelSettings, OpenAIChatCompletionsModel, RunConfig, Runner
    from agents import SQLiteSession, set_tracing_disabled
    from openai import AsyncOpenAI

    set_tracing_disabled(True)  # the SDK's traces would go to OpenAI's servers

    async def run() -> str:
        client = AsyncOpenAI(base_url=base_url, api_key=FAKE_API_KEY, max_retries=0, timeout=180)
        agent = Agent(name="support", instructions=INSTRUCTIONS,
                      model=OpenAIChatCompletionsModel("memorykit-fake-chat", client),
                      model_settings=ModelSettings(temperature=0, max_tokens=REPLY_TOKENS))
        session = SQLiteSession("support-chat")  # in memory; keeps every item
        await session.add_items(items)
        result = await Runner.run(agent, question, session=session,
                                  run_config=RunConfig(call_model_input_filter=tuned))
        return str(result.final_output)

    # a notebook's kernel already runs an event loop: the agent gets its own, in a thread
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, run()).result()


def deploy_demo(explorer: Any, budget: int = 1000, conversation: int = 0) -> DeployReport:
    """Export ``explorer``'s pick at ``budget``, load it, and let an agent answer the last
    question about conversation number ``conversation`` through it (module docstring)."""
    from memorykit.adapters.openai_agents import TunedContextFilter, messages_to_items
    from memorykit.llm.local_server import LocalModelServer, local_model_available

    require_int("budget", budget, minimum=1)  # None would mean the run's largest: say one
    tuned_run = getattr(getattr(explorer, "sweeps", None), "tuned", None)
    if tuned_run is None:
        raise TypeError(f"explorer must be explore_file(...)'s TuningExplorer, got {explorer!r:.80}")
    data = explorer.sweeps.dataset
    index = require_int("conversation", conversation, minimum=0, maximum=len(data) - 1)
    chat = data.conversations[index]
    # the question asked after the most history (where the budget bites), the most evidence first
    question = max(chat.questions, key=lambda q: (len(chat.messages) if q.position is None
                                                  else q.position, len(q.evidence_ids)))
    history = chat.messages if question.position is None else chat.messages[:question.position]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "best.json"
        export_policy(tuned_run, budget).save(path)
        exported = json.loads(path.read_text(encoding="utf-8"))
        tuned = load_policy(path)
    by_id = {m.id: m.content for m in chat.messages}
    items = messages_to_items(list(history))
    available, tuned_filter = local_model_available(), TunedContextFilter(tuned)
    if available:
        with LocalModelServer(_free_port(), n_threads=2) as local, \
                FakeOpenAIServer(chat=_forward_to(local.base_url, local.model)) as recorder:
            reply = _run_agent(recorder.base_url, tuned_filter, items, question.question)
            model = f"SmolLM2-135M-Instruct on llama.cpp ({local.model})"
    else:
        with FakeOpenAIServer() as recorder:
            reply = _run_agent(recorder.base_url, tuned_filter, items, question.question)
            model = f"a scripted stand-in ({available.reason})"
    received = tuple(recorder.requests[-1].body["messages"])
    context = tuned_filter.last_context
    assert context is not None  # the filter ran before the model call the recorder holds
    report = DeployReport(tuned, exported, chat.id, question.question,
                          tuple(by_id[i] for i in question.evidence_ids), received,
                          len(context), context.tokens, len(history),
                          sum(m.billed_tokens for m in tuned_filter.history_messages(items)),
                          model, reply)
    print(f"model: {model}")
    print(f"reply: {reply}")
    return report
