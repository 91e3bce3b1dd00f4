"""``python -m bench.adapter_openai_agents``: what the memorykit adapter costs per turn in the
OpenAI Agents SDK, beside the SDK's own trimming, at 1,000 and 10,000 items of history.

    python -m bench.adapter_openai_agents                      # 1k and 10k items, 5 turns each
    python -m bench.adapter_openai_agents --markdown --out-md /tmp/table.md
    python -m bench.adapter_openai_agents --quick              # smoke: 200 items, bm25 only

One conversation is measured under four set-ups, each a real ``agents.Runner`` with an ``Agent``
on ``OpenAIChatCompletionsModel`` and the real ``AsyncOpenAI`` client against the loopback
``FakeOpenAIServer`` (tracing off), an in-memory ``SQLiteSession`` filled beforehand:

* ``sdk-limit``: the SDK's own trimming, ``SessionSettings(limit=N)``: the newest N items, N
  chosen so they hold about the budget's tokens on average (budget / mean tokens per item);
* ``sdk-all``: no trimming (the whole history is sent): what the SDK costs with everything;
* ``memorykit-bm25`` / ``memorykit-hybrid``: no limit, ``TunedContextFilter`` with BM25
  (k1 1.2, b 0.75) or hybrid retrieval (lexical weight 0.25, no neighbours; MiniLM with its disk
  cache) at the budget.

The history is data/conversations/long_2000.jsonl (4,153 messages, 5% with tool calls) as the SDK
stores it (assistant replies as output messages, calls as function_call / function_call_output
items), repeated (call ids renamed) to the size; each turn asks one of the file's fact questions.
Per turn, after one warm-up turn: ``prepare`` is the time from ``Runner.run`` being called to the
loopback server holding the request (the session read, the SDK's input preparation, the filter,
the SDK's conversion to chat messages, the client's request and the server parsing its body:
everything but the model's answer); ``filter`` the adapter's own share of it; ``turn`` the whole
``Runner.run`` (with the loopback answer and the SDK saving the turn). Medians over the turns, and
the ratio of each set-up's ``prepare`` to ``sdk-limit``'s at the same size, in the same run.
For the hybrid, the texts new to the process (not in the memo) and those MiniLM itself computed
(not on disk either) are counted per measured turn: only new messages should be paid for. Each
size asks its own questions, so its new texts are its own.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import time
from importlib import metadata
from pathlib import Path
from typing import Any

from bench.buffers import machine_info

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "data" / "conversations" / "long_2000.jsonl"
RESULTS = Path(__file__).resolve().parent / "results" / "adapter-openai-agents.json"
INSTRUCTIONS = ("You are a helpful personal assistant. Answer clearly and briefly, and remember "
                "what the user tells you about their plans.")
SETUPS = ("sdk-limit", "sdk-all", "memorykit-bm25", "memorykit-hybrid")


def _records() -> tuple[list[dict[str, Any]], list[str]]:
    messages, questions = [], []
    with DATA.open(encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            if row.get("type") == "message" and row["role"] != "system":
                messages.append(row)
            elif row.get("type") == "fact":
                questions.append(row["question"])
    return messages, questions


def _as_items(row: dict[str, Any], suffix: str) -> list[dict[str, Any]]:
    """One message of the data file as the items the SDK stores for it."""
    role, content = row["role"], row["content"]
    if role == "user":
        return [{"role": "user", "content": content}]
    if role == "tool":
        return [{"type": "function_call_output", "call_id": row["tool_call_id"] + suffix,
                 "output": content}]
    items: list[dict[str, Any]] = [{
        "id": "__fake_id__", "type": "message", "role": "assistant", "status": "completed",
        "content": [{"type": "output_text", "text": content, "annotations": [], "logprobs": []}]}]
    for call in row.get("tool_calls") or ():
        items.append({"type": "function_call", "call_id": call["id"] + suffix,
                      "name": call["name"], "arguments": call["arguments"],
                      "id": "__fake_id__"})
    return items


def history(size: int) -> list[dict[str, Any]]:
    """``size`` items of the data file's conversation as SDK items, repeated as needed (call ids
    renamed per repeat so each stays unique), cut so no call waits for its result."""
    rows, _ = _records()
    out: list[dict[str, Any]] = []
    repeat = 0
    while len(out) < size:
        for row in rows:
            out.extend(_as_items(row, f"-r{repeat}" if repeat else ""))
            if len(out) >= size:
                break
        repeat += 1
    out = out[:size]
    while out and out[-1].get("type") == "function_call":  # never end on an unanswered call
        out.pop()
    return out


class _Counting:
    """Counts, around the hybrid's memo embedder, the texts new to this process (not in the
    memo's memory: looked up on disk or computed) and the texts MiniLM itself computes."""

    def __init__(self, memo: Any) -> None:
        self.memo, self.inner, self.new, self.texts = memo, memo.embedder, 0, 0
        self.name, self.dimension = self.inner.name, self.inner.dimension
        self.memo_embed = memo.embed
        memo.embedder, memo.embed = self, self._memo_embed

    def _memo_embed(self, texts: Any) -> Any:
        self.new += len({t for t in texts if t not in self.memo._rows})
        return self.memo_embed(texts)

    def embed(self, texts: Any) -> Any:
        self.texts += len(texts)
        return self.inner.embed(texts)


class _TimedFilter:
    def __init__(self, tuned: Any) -> None:
        self.tuned, self.seconds = tuned, 0.0

    def __call__(self, data: Any) -> Any:
        start = time.perf_counter()
        try:
            return self.tuned(data)
        finally:
            self.seconds += time.perf_counter() - start


def _policy(setup: str) -> Any:
    from memorykit.evaluation.toolkit import TUNABLE

    if setup == "memorykit-bm25":
        return TUNABLE["bm25"].make(k1=1.2, b=0.75)
    return TUNABLE["hybrid-retrieval"].make(lexical_weight=0.25, neighbours=0)


async def _measure(setup: str, items: list[dict[str, Any]], questions: list[str], turns: int,
                   budget: int, limit: int, counter: _Counting | None) -> dict[str, Any]:
    from agents import (Agent, OpenAIChatCompletionsModel, RunConfig, Runner, SessionSettings,
                        SQLiteSession)
    from openai import AsyncOpenAI

    from memorykit.adapters.openai_agents import TunedContextFilter
    from memorykit.classroom.doubles.openai_server import FAKE_API_KEY, FakeOpenAIServer

    session = SQLiteSession(f"bench-{setup}")  # in memory
    await session.add_items(items)
    timed = None
    config = RunConfig(tracing_disabled=True)
    if setup == "sdk-limit":
        config = RunConfig(tracing_disabled=True, session_settings=SessionSettings(limit=limit))
    elif setup.startswith("memorykit"):
        timed = _TimedFilter(TunedContextFilter(_policy(setup), budget))
        config = RunConfig(tracing_disabled=True, call_model_input_filter=timed)
    rows: list[dict[str, float]] = []
    with FakeOpenAIServer() as server:
        client = AsyncOpenAI(base_url=server.base_url, api_key=FAKE_API_KEY, max_retries=0,
                             timeout=60)
        agent = Agent(name="assistant", instructions=INSTRUCTIONS,
                      model=OpenAIChatCompletionsModel("memorykit-fake-chat", client))
        for turn in range(turns + 1):  # turn 0 warms up (first index, first embeddings)
            before = (counter.new, counter.texts) if counter is not None else (0, 0)
            if timed is not None:
                timed.seconds = 0.0
            start = time.monotonic()
            await Runner.run(agent, questions[turn % len(questions)], session=session,
                             run_config=config)
            end = time.monotonic()
            request = server.requests_to("/chat/completions")[-1]
            if turn == 0:
                continue
            rows.append({"prepare_s": request.at - start, "turn_s": end - start,
                         "filter_s": timed.seconds if timed is not None else 0.0,
                         "prompt_tokens": _prompt_tokens(request.body["messages"]),
                         "new_texts": counter.new - before[0] if counter else 0,
                         "embedded": counter.texts - before[1] if counter else 0})
        stored = len(await session.get_items())
    session.close()
    out = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
    out["new_texts_max"] = max(r["new_texts"] for r in rows)
    out["embedded_max"] = max(r["embedded"] for r in rows)
    out["stored_items"] = stored
    return out


def _prompt_tokens(messages: list[dict[str, Any]]) -> int:
    from memorykit.classroom.doubles.openai_server import billed_prompt_tokens
    from memorykit.tokens import Tokenizer

    return billed_prompt_tokens(messages, Tokenizer().encode)


def run(sizes: tuple[int, ...], turns: int, budget: int, setups: tuple[str, ...]) -> dict[str, Any]:
    from agents import set_tracing_disabled

    set_tracing_disabled(True)
    _, questions = _records()
    counter = None
    warm_up = {}
    if "memorykit-hybrid" in setups:
        from memorykit.evaluation.hybrid import shared_minilm

        memo = shared_minilm()
        counter = _Counting(memo)
        # one-time: every text of the largest history, through the memo and the disk cache
        texts = sorted({m["content"] for m in _records()[0]})
        start = time.perf_counter()
        memo.embed(texts)
        warm_up = {"texts": len(texts), "computed": counter.texts,
                   "seconds": time.perf_counter() - start}
    from memorykit.adapters.openai_agents import items_to_messages

    results: dict[str, Any] = {"sizes": {}, "load_before": os.getloadavg()[0]}
    for index, size in enumerate(sizes):
        asked = questions[index * (turns + 1):] + questions[:index * (turns + 1)]
        items = history(size)
        messages = items_to_messages(items)
        per_item = sum(m.billed_tokens for m in messages) / len(items)
        limit = max(1, round(budget / per_item))
        cell: dict[str, Any] = {"items": len(items), "limit": limit,
                                "tokens_per_item": per_item, "setups": {}}
        for setup in setups:
            cell["setups"][setup] = asyncio.run(
                _measure(setup, items, asked, turns, budget, limit, counter))
            prepare_ms = cell["setups"][setup]["prepare_s"] * 1e3
            print(f"{size:>6} {setup:<17} prepare {prepare_ms:8.1f} ms", flush=True)
        base = cell["setups"].get("sdk-limit", {}).get("prepare_s")
        for row in cell["setups"].values():
            row["prepare_vs_sdk_limit"] = row["prepare_s"] / base if base else None
        results["sizes"][str(size)] = cell
    results["load_after"] = os.getloadavg()[0]
    versions = {name: metadata.version(name) for name in ("openai-agents", "openai")}
    return {"machine": machine_info(), "versions": versions, "budget": budget, "turns": turns,
            "minilm_warm_up": warm_up, **results}


def format_markdown(report: dict[str, Any], command: str) -> str:
    m = report["machine"]
    commit = f" (commit {m['commit']})" if m.get("commit") else ""
    lines = [f"Machine: {m['cpu']}, {m['cores']} cores, Python {m['python']}, openai-agents "
             f"{report['versions']['openai-agents']}, openai {report['versions']['openai']}"
             f"{commit}. "
             f"Command: `{command}`. Budget {report['budget']} "
             f"tokens; medians of {report['turns']} turns after one warm-up; load average "
             f"{report['load_before']:.2f} before, {report['load_after']:.2f} after.", "",
             "| history | set-up | prepare (ms) | x sdk-limit | filter (ms) | turn (ms) | "
             "prompt tokens | MiniLM texts per turn |", "|---|---|---|---|---|---|---|---|"]
    for size, cell in report["sizes"].items():
        for setup, row in cell["setups"].items():
            name = f"sdk-limit (N={cell['limit']})" if setup == "sdk-limit" else setup
            ratio = row["prepare_vs_sdk_limit"]
            embedded = (f"{row['new_texts']:.0f} new (max {row['new_texts_max']}), "
                        f"{row['embedded']:.0f} computed (max {row['embedded_max']})"
                        if setup == "memorykit-hybrid" else "")
            lines.append(f"| {cell['items']:,} items | {name} | {row['prepare_s'] * 1e3:.1f} | "
                         f"{'' if ratio is None else f'{ratio:.2f}'} | "
                         f"{row['filter_s'] * 1e3:.1f} | {row['turn_s'] * 1e3:.1f} | "
                         f"{row['prompt_tokens']:.0f} | {embedded} |")
    lines += ["", "prepare: from `Runner.run` called to the loopback server holding the request "
                  "(session read, the SDK's input preparation, the filter, the SDK's conversion "
                  "to chat messages, the client's request); filter: the adapter's share of it "
                  "(conversion of new items and the policy); turn: the whole `Runner.run` with "
                  "the loopback's answer and the SDK saving the turn. Prompt tokens are the "
                  "request's (instructions and question included, outside the budget). MiniLM "
                  "texts per turn: texts new to the process in a measured turn (not in the "
                  "memo: read from the disk cache or computed) and texts MiniLM computed (not "
                  "on disk either: a second run finds on disk what the first embedded)."]
    warm = report.get("minilm_warm_up")
    if warm:
        lines += ["", f"MiniLM before the runs: {warm['texts']:,} distinct texts of the history "
                      f"looked up in {warm['seconds']:.1f} s, {warm['computed']:,} computed "
                      "(the rest from the disk cache)."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.adapter_openai_agents", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sizes", default="1000,10000", help="history sizes in items")
    p.add_argument("--turns", type=int, default=5, help="measured turns per set-up (default 5)")
    p.add_argument("--budget", type=int, default=1000, help="context budget in tokens")
    p.add_argument("--setups", default=",".join(SETUPS), help="comma-separated set-ups")
    p.add_argument("--quick", action="store_true", help="smoke: 200 items, 2 turns, no hybrid")
    p.add_argument("--markdown", action="store_true", help="print the table")
    p.add_argument("--out", type=Path, default=RESULTS, help=f"JSON results (default {RESULTS})")
    p.add_argument("--out-md", type=Path, default=None, help="also write the table here")
    args = p.parse_args(argv)
    sizes = tuple(int(s) for s in args.sizes.split(","))
    setups = tuple(s for s in args.setups.split(",") if s)
    if args.quick:
        sizes, args.turns = (200,), 2
        setups = tuple(s for s in setups if s != "memorykit-hybrid")
    for name in setups:
        if name not in SETUPS:
            p.error(f"--setups: unknown set-up {name!r} (known: {', '.join(SETUPS)})")
    if args.turns < 1 or args.budget < 1 or any(s < 10 for s in sizes):
        p.error(f"--turns and --budget must be >= 1 and sizes >= 10, got {args.turns}, "
                f"{args.budget}, {sizes}")
    report = run(sizes, args.turns, args.budget, setups)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    command = "python -m bench.adapter_openai_agents" + (" " + " ".join(argv) if argv else "")
    table = format_markdown(report, command)
    if args.out_md is not None:
        args.out_md.write_text(table + "\n", encoding="utf-8")
    if args.markdown:
        print(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(__import__("sys").argv[1:]))
