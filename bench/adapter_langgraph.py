"""``python -m bench.adapter_langgraph``: per-turn cost of memorykit's LangGraph hook against
LangGraph's own trimming, at histories of 1,000 and 10,000 messages, as ratios from one run.

    python -m bench.adapter_langgraph                    # 1k and 10k messages, 5 turns each
    python -m bench.adapter_langgraph --sizes 1000 --turns 3 --markdown /tmp/table.md

The history: ``data/conversations/long_2000.jsonl`` (4,153 simulated messages: 2,000 turns on
five topics, 5% of them with tool calls), repeated until it holds N messages, each copy with
fresh message and tool-call ids (the texts repeat verbatim; the pairs stay valid), converted to
langchain messages; its system message stays first. A turn appends a new HumanMessage whose
text occurs nowhere before, calls each pre-model hook on the same state, then appends a new
AIMessage reply, as the agent would.

Compared, on the same states, turn by turn (the order alternating):

* memorykit's hook (``memorykit_pre_model_hook``) with a tuned bm25 and a tuned
  hybrid-retrieval (``TunedPolicy``, budget 1,000 tokens); hybrid embeds with MiniLM behind its
  disk cache. Before timing, one call on the whole history warms the caches (a real agent has
  called the hook at every earlier turn); per turn, the embedder's underlying model is counted,
  so the table shows how many texts a turn really embeds (only the new ones should be);
* LangGraph's trimming as its docs show it in a ``pre_model_hook``: ``trim_messages(messages,
  strategy="last", max_tokens=1000, start_on="human", end_on=("human", "tool"),
  include_system=True)`` with ``count_tokens_approximately`` (the docs' counter) and with an
  exact tiktoken counter (cl100k_base, content + 4 framing tokens per message).

What a figure includes: one call of the hook function on the state (memorykit: converting the
messages not seen before, the policy's ``build_context`` over the whole history (BM25 index and
scores, MiniLM lookups), converting the context back; trim: its token counting and cutting). Not
included: the model call, LangGraph's graph step and checkpointer (the same for every hook).
The ratio is the median per-turn time of the hook over the median of the trimmer's. "Of which
conversion" times ``hook.convert`` alone on the same state right after the call (every message
already converted once): what the adapter adds beyond the policy's own work.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.messages.utils import count_tokens_approximately, trim_messages

from bench.buffers import machine_info
from memorykit.adapters.langgraph import from_memorykit, memorykit_pre_model_hook
from memorykit.classroom.scenarios.conversation import load_conversation
from memorykit.evaluation.export import TunedPolicy
from memorykit.messages import Message, ToolCall
from memorykit.tokens import Tokenizer

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "data" / "conversations" / "long_2000.jsonl"
RESULTS = ROOT / "bench" / "results" / "adapter-langgraph.json"
BUDGET = 1000
POLICIES = {"bm25": {"k1": 1.2, "b": 0.75},
            "hybrid-retrieval": {"lexical_weight": 0.25, "neighbours": 0}}


def _renamed(message: Message, copy: int) -> Message:
    """``message`` with ids (its own and its tool calls') unique to copy ``copy``."""
    calls = tuple(ToolCall(f"c{copy}-{c.id}", c.name, c.arguments) for c in message.tool_calls)
    call_id = None if message.tool_call_id is None else f"c{copy}-{message.tool_call_id}"
    return Message(f"c{copy}-{message.id}", message.role, message.content,
                   message.content_tokens, message.billed_tokens, tool_calls=calls,
                   tool_call_id=call_id)


def history(n: int) -> list[BaseMessage]:
    """The system message, then ``n - 1`` messages of the source repeated, ending before a
    user message (so the next turn opens cleanly; a call is never cut from its results)."""
    source = load_conversation(SOURCE).messages
    system, body = source[0], [m for m in source[1:] if m.role != "system"]
    out: list[Message] = [system]
    copy = 0
    while len(out) < n:
        out.extend(_renamed(m, copy) for m in body)
        copy += 1
    cut = n
    while out[cut].role != "user":  # back up to a turn boundary
        cut -= 1
    return from_memorykit(out[:cut])


def tiktoken_counter() -> Callable[[list[BaseMessage]], int]:
    """Exact cl100k_base counts: each message's content plus 4 framing tokens."""
    count = Tokenizer().count

    def count_messages(messages: list[BaseMessage]) -> int:
        return sum(count(m.content if isinstance(m.content, str) else str(m.content)) + 4
                   for m in messages)

    return count_messages


def trim_hook(counter: Any) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """LangGraph's trimming in a pre_model_hook, as its docs write it."""
    def hook(state: dict[str, Any]) -> dict[str, Any]:
        return {"llm_input_messages": trim_messages(
            state["messages"], strategy="last", token_counter=counter, max_tokens=BUDGET,
            start_on="human", end_on=("human", "tool"), include_system=True)}
    return hook


class CountingEmbedder:
    """Wraps the model behind the MiniLM memo and disk cache: counts the texts it embeds."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.texts = inner, 0
        self.name, self.dimension = getattr(inner, "name", None), getattr(inner, "dimension", 0)

    def embed(self, texts: Any) -> Any:
        self.texts += len(texts)
        return self.inner.embed(texts)


def run(sizes: tuple[int, ...], turns: int,
        policies: tuple[str, ...] = tuple(POLICIES)) -> dict[str, Any]:
    """Time every hook on the same growing states; ``policies``: which of ``POLICIES``."""
    unknown = [p for p in policies if p not in POLICIES]
    if unknown:
        raise ValueError(f"policies must be among {', '.join(POLICIES)}, got {unknown!r}")
    counting = CountingEmbedder(None)
    if "hybrid-retrieval" in policies:
        from memorykit.evaluation.hybrid import shared_minilm

        memo = shared_minilm()
        counting = CountingEmbedder(memo.embedder)
        memo.embedder = counting  # count what the model itself computes, past memo and disk
    hooks: dict[str, Callable[[dict[str, Any]], Any]] = {
        name: memorykit_pre_model_hook(TunedPolicy(name, POLICIES[name], budget=BUDGET))
        for name in policies}
    hooks["trim (approximate counter)"] = trim_hook(count_tokens_approximately)
    hooks["trim (tiktoken counter)"] = trim_hook(tiktoken_counter())
    rows = []
    # New texts must be new to the disk cache too, run after run: each carries this run's mark.
    run_mark = f"{time.time_ns():x}"
    for n in sizes:
        messages = history(n)
        question = HumanMessage(f"warm-up question {run_mark} for {n} messages")
        state = {"messages": [*messages, question]}
        warm: dict[str, dict[str, float]] = {}
        for name, hook in hooks.items():  # what every earlier turn would have cached
            before, t0 = counting.texts, time.perf_counter()
            hook(state)
            warm[name] = {"seconds": time.perf_counter() - t0,
                          "embedded": counting.texts - before}
        state["messages"].append(AIMessage(f"warm-up reply {run_mark} at {n}", id=f"warm-{n}"))
        times: dict[str, list[float]] = {name: [] for name in hooks}
        embedded: dict[str, list[int]] = {name: [] for name in hooks}
        convert: dict[str, list[float]] = {name: [] for name in hooks}
        for t in range(turns):
            state["messages"].append(HumanMessage(
                f"Turn {t} at {n} ({run_mark}): what did we settle about the budget and the "
                "trip dates?",
                id=f"q-{n}-{t}"))
            order = list(hooks) if t % 2 == 0 else list(reversed(hooks))
            for name in order:
                before, t0 = counting.texts, time.perf_counter()
                out = hooks[name](state)
                times[name].append(time.perf_counter() - t0)
                embedded[name].append(counting.texts - before)
                assert out["llm_input_messages"], name
                if hasattr(hooks[name], "convert"):  # the conversion alone, every message seen
                    t0 = time.perf_counter()
                    hooks[name].convert(state["messages"])
                    convert[name].append(time.perf_counter() - t0)
            state["messages"].append(AIMessage(f"Reply {t} at {n} ({run_mark}): noted.",
                                               id=f"r-{n}-{t}"))
        context_tokens = {name: getattr(h, "last_context").tokens for name, h in hooks.items()
                          if hasattr(h, "last_context")}
        rows.append({"messages": len(messages), "turns": turns, "warm_up": warm,
                     "median_s": {k: statistics.median(v) for k, v in times.items()},
                     "convert_median_s": {k: statistics.median(v) for k, v in convert.items()
                                          if v},
                     "all_s": times, "embedded_per_turn": embedded,
                     "context_tokens": context_tokens})
        print(f"{len(messages)} messages: " + ", ".join(
            f"{k} {statistics.median(v) * 1000:.1f} ms" for k, v in times.items()), flush=True)
    return {"command": " ".join(["python -m bench.adapter_langgraph", *sys.argv[1:]]),
            "budget": BUDGET, "policies": {name: POLICIES[name] for name in policies},
            "source": str(SOURCE.relative_to(ROOT)),
            "machine": {**machine_info(), "load_average_1m_at_end": round(os.getloadavg()[0], 2)},
            "rows": rows}


def markdown(result: dict[str, Any]) -> str:
    m = result["machine"]
    trims = ["trim (approximate counter)", "trim (tiktoken counter)"]
    lines = [
        f"Machine: {m['cpu']}, {m['cores']} cores, Python {m['python']}, commit {m['git_commit']}, "
        f"load average {m.get('load_average_1m')} at the start, "
        f"{m['load_average_1m_at_end']} at the end.",
        f"Command: `{result['command']}` (budget {result['budget']} tokens; history: "
        f"`{result['source']}` repeated with fresh ids).", "",
        "| messages | hook | median ms / turn | of which conversion ms | x trim (approx.) "
        "| x trim (tiktoken) | texts embedded / turn | warm-up s (texts embedded) |",
        "|---:|---|---:|---:|---:|---:|---:|---:|"]
    for row in result["rows"]:
        med = row["median_s"]
        for name, seconds in med.items():
            ratios = [f"{seconds / med[t]:.2f}" for t in trims]
            emb = row["embedded_per_turn"][name]
            warm = row["warm_up"][name]
            conv = row["convert_median_s"].get(name)
            conv_ms = "-" if conv is None else f"{conv * 1000:.1f}"
            lines.append(f"| {row['messages']:,} | {name} | {seconds * 1000:.1f} | {conv_ms} "
                         f"| {ratios[0]} "
                         f"| {ratios[1]} | {min(emb)}-{max(emb)} | {warm['seconds']:.1f} "
                         f"({warm['embedded']:.0f}) |")
    lines += ["", "Each figure is one call of the pre-model hook on the agent's state, the median "
              f"of {result['rows'][0]['turns']} turns (a new human message each, the reply of "
              "the turn before appended): for memorykit, converting the messages not seen "
              "before, the policy's build_context over the whole history and converting the "
              "context back; for trim_messages, its counting and cutting. The model call and "
              "LangGraph's own step are not included (the same for every hook). Ratios divide "
              "by trim_messages' median in the same run. 'Texts embedded' counts what MiniLM "
              "computed past its memo and disk cache; the warm-up call (the hook on the whole "
              "history, as every earlier turn would have made it) is not timed per turn."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--turns", type=int, default=5)
    parser.add_argument("--markdown", type=Path, default=None,
                        help="also write the markdown table to this file")
    parser.add_argument("--json", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    sizes = tuple(int(s) for s in args.sizes.split(","))
    if any(s < 10 for s in sizes) or args.turns < 1:
        parser.error(f"sizes must be >= 10 and turns >= 1, got {args.sizes!r}, {args.turns}")
    result = run(sizes, args.turns)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    table = markdown(result)
    print(table)
    if args.markdown is not None:
        args.markdown.write_text(table, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
