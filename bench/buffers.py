"""The conversation-buffer benchmark: memorykit against the floor, the seeds and the peers.

Workload (the same texts for every runner): a seeded conversation from
``bench.textgen`` of n messages (one system message, then user/assistant,
5-400 words). For each message a runner creates its message record, adds it to
a buffer bounded by ``budget`` billed tokens, and reads the window, every turn.

Runners:

* ``floor``: ``len(enc.encode_ordinary(text))`` for every text, nothing else.
  No buffer can do less than counting each message's tokens once.
* ``memorykit-{fifo,importance,hybrid}``: ``MessageFactory.message`` (the one
  tiktoken count), ``buffer.add(msg)``, ``buffer.messages()``.
* ``seed-{fifo,importance,hybrid}``: the seeds' own approach (seed 001's
  ``ShortTermMemoryBuffer`` / ``AdvancedMemoryBuffer``): a list, ``pop(0)``/
  ``pop(i)``, a linear scan for the minimum importance, ``get_context()``
  building dicts. Transcribed in ``SeedBuffer`` below.
* ``langchain-trim_messages``: the history kept in full (as LangGraph state
  does) and ``trim_messages(strategy="last")`` over it every turn, with a
  memoised per-message tiktoken counter.
* ``llamaindex-Memory``: ``llama_index.core.memory.Memory`` with the same
  tiktoken encoding, ``put`` then ``get`` every turn.

Peers are optional (``pip install memorykit[bench]``) and quadratic, so they
run only up to ``peer_max_n`` messages and under a time limit.
"""

from __future__ import annotations

import gc
import json
import os
import platform
import subprocess
import sys
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any, Callable

from bench.textgen import Turn, conversation, describe

ENCODING = "cl100k_base"
DEFAULT_SIZES = (1_000, 10_000, 100_000)
QUICK_SIZES = (200, 1_000)
DEFAULT_BUDGETS = (2_000, 128_000)
SEED_POLICIES = ("fifo", "importance", "hybrid")
"""The policies seed 001 sketches (its list-based version is benchmarked beside ours)."""
IMPORTANCE_THRESHOLD = 0.5
# Billed-token framing, as memorykit.tokens.ChatFormat: 3 per message + 1 for the role;
# 3 more prime the reply, once per prompt.
PER_MESSAGE = 4
REPLY_PRIMER = 3

# The targets the issue sets.
TARGET_RATIO = 1.3
TARGET_FLAT = 1.15  # per-message cost at the largest n over the cost at 1/10 of it
# A long-running agent bounds its trace; these runs show what the unbounded default costs.
BOUNDED_TRACE = 1_000


class Timeout(Exception):
    """A runner passed its time limit; ``done`` messages were processed."""

    def __init__(self, done: int, seconds: float) -> None:
        super().__init__(f"stopped after {done} messages, {seconds:.1f} s")
        self.done = done
        self.seconds = seconds


@dataclass
class RunResult:
    seconds: float
    window_messages: int
    window_tokens: int | None = None
    exact: bool | None = None
    """memorykit only: the buffer's token total equals an independent recount of the window."""
    second_half: float | None = None
    """Seconds spent on the second half of the messages: the steady state, window full."""


@dataclass
class Runner:
    key: str
    label: str
    group: str  # floor | memorykit | seed | peer
    policy: str | None
    run: Callable[[list[Turn], int, float], RunResult]
    smallest_budget_only: bool = False  # peers: quadratic in n whatever the budget
    max_n: int | None = None
    available: str | None = None  # None if runnable, else why not
    version: str | None = None
    note: str = ""


# --------------------------------------------------------------------------- floor
def _encoder():
    from memorykit.tokens import load_encoding

    return load_encoding(ENCODING)


def run_floor(turns: list[Turn], budget: int, deadline: float) -> RunResult:
    encode = _encoder().encode_ordinary
    texts = [t.text for t in turns]
    half = len(texts) // 2
    start = time.perf_counter()
    for text in texts[:half]:
        len(encode(text))
    mid = time.perf_counter()
    for text in texts[half:]:
        len(encode(text))
    end = time.perf_counter()
    return RunResult(end - start, 0, second_half=end - mid)


# ----------------------------------------------------------------------- memorykit
def memorykit_runner(policy: str, trace_limit: int | None = None
                     ) -> Callable[[list[Turn], int, float], RunResult]:
    def run(turns: list[Turn], budget: int, deadline: float) -> RunResult:
        from memorykit.buffers.registry import policy as registered
        from memorykit.messages import MessageFactory
        from memorykit.tokens import Tokenizer, count_chat_tokens
        from memorykit.trace import Trace

        tokenizer = Tokenizer(ENCODING)
        factory = MessageFactory(tokenizer)
        buffer = registered(policy).build(budget, trace=Trace(max_events=trace_limit))
        work = [(t.role, t.text, t.importance) for t in turns]
        make, add, read = factory.message, buffer.add, buffer.messages
        half = len(work) // 2
        start = time.perf_counter()
        for role, text, importance in work[:half]:
            add(make(role, text, importance=importance))
            read()
        mid = time.perf_counter()
        for role, text, importance in work[half:]:
            add(make(role, text, importance=importance))
            read()
        end = time.perf_counter()
        seconds = end - start
        window = buffer.messages()
        recount = count_chat_tokens(buffer.to_openai(), tokenizer)
        exact = recount == buffer.tokens and (buffer.tokens <= budget or buffer.over_budget)
        # Every eviction here removes one message (no tool calls in this workload).
        evicted = buffer.trace.counts.get("eviction", 0)
        if trace_limit is None and len(buffer.trace.evicted_ids()) != evicted:
            raise AssertionError(f"memorykit-{policy}: trace and its counts disagree")
        if evicted + len(window) != len(turns) or window[0].role != "system":
            raise AssertionError(f"memorykit-{policy}: lost messages or the system message")
        return RunResult(seconds, len(window), buffer.tokens, exact, second_half=end - mid)

    return run


def buffer_only_runner(policy: str) -> Callable[[list[Turn], int, float], RunResult]:
    """Diagnostic: the same buffer work with every message built (and counted) beforehand."""

    def run(turns: list[Turn], budget: int, deadline: float) -> RunResult:
        from memorykit.buffers.registry import policy as registered
        from memorykit.messages import MessageFactory
        from memorykit.tokens import Tokenizer

        factory = MessageFactory(Tokenizer(ENCODING))
        messages = [factory.message(t.role, t.text, importance=t.importance) for t in turns]
        buffer = registered(policy).build(budget)
        add, read = buffer.add, buffer.messages
        # The pre-built messages are not the buffer's doing: keep them out of the collector.
        gc.collect()
        gc.freeze()
        try:
            start = time.perf_counter()
            for message in messages:
                add(message)
                read()
            seconds = time.perf_counter() - start
        finally:
            gc.unfreeze()
        return RunResult(seconds, len(buffer), buffer.tokens)

    return run


# ---------------------------------------------------------------------------- seeds
class SeedEntry:
    """Seed 001's ``MemoryEntry``: counts its tokens with tiktoken when created.

    (The seed calls ``tiktoken.encoding_for_model("gpt-4")`` in ``__post_init__``;
    here the encoding is loaded once, offline, which only makes the seed faster.)
    """

    __slots__ = ("role", "content", "timestamp", "token_count", "importance")
    encode: Callable[[str], list[int]] | None = None

    def __init__(self, role: str, content: str, importance: float = 1.0) -> None:
        self.role = role
        self.content = content
        self.timestamp = datetime.now()
        self.importance = importance
        # Billed tokens (content + framing) so the budget means what it means for memorykit.
        self.token_count = len(SeedEntry.encode(content)) + PER_MESSAGE  # type: ignore[misc]


class SeedBuffer:
    """Seed 001's ``AdvancedMemoryBuffer``, transcribed: a list, pop(i), linear scans."""

    def __init__(self, max_tokens: int, strategy: str, importance_threshold: float = 0.5):
        self.max_tokens = max_tokens
        self.strategy = strategy
        self.importance_threshold = importance_threshold
        self.entries: list[SeedEntry] = []
        self._total_tokens = REPLY_PRIMER

    def add(self, role: str, content: str, importance: float = 1.0) -> None:
        entry = SeedEntry(role, content, importance)
        self.entries.append(entry)
        self._total_tokens += entry.token_count
        if self.strategy == "fifo":
            self._fifo_prune()
        elif self.strategy == "importance":
            self._importance_prune()
        else:
            self._hybrid_prune()

    def _fifo_prune(self) -> None:
        while self._total_tokens > self.max_tokens and len(self.entries) > 1:
            # Always keep system messages
            for i, entry in enumerate(self.entries):
                if entry.role != "system":
                    removed = self.entries.pop(i)
                    self._total_tokens -= removed.token_count
                    break

    def _importance_prune(self) -> None:
        while self._total_tokens > self.max_tokens and len(self.entries) > 1:
            min_importance = float("inf")
            min_index = -1
            for i, entry in enumerate(self.entries):
                if entry.role != "system" and entry.importance < min_importance:
                    min_importance = entry.importance
                    min_index = i
            if min_index >= 0:
                removed = self.entries.pop(min_index)
                self._total_tokens -= removed.token_count

    def _hybrid_prune(self) -> None:
        while self._total_tokens > self.max_tokens and len(self.entries) > 1:
            candidates = [
                (i, e)
                for i, e in enumerate(self.entries)
                if e.role != "system" and e.importance < self.importance_threshold
            ]
            if candidates:
                idx, entry = candidates[0]
                self.entries.pop(idx)
                self._total_tokens -= entry.token_count
            else:
                self._fifo_prune()
                break

    def get_context(self) -> list[dict]:
        return [{"role": e.role, "content": e.content} for e in self.entries]


def seed_runner(policy: str) -> Callable[[list[Turn], int, float], RunResult]:
    def run(turns: list[Turn], budget: int, deadline: float) -> RunResult:
        SeedEntry.encode = _encoder().encode_ordinary
        buffer = SeedBuffer(budget, policy, IMPORTANCE_THRESHOLD)
        work = [(t.role, t.text, t.importance) for t in turns]
        add, read = buffer.add, buffer.get_context
        half = len(work) // 2
        start = mid = time.perf_counter()
        for i, (role, text, importance) in enumerate(work):
            if i == half:
                mid = time.perf_counter()
            add(role, text, importance)
            read()
            if not i & 1023 and time.perf_counter() > deadline:
                raise Timeout(i + 1, time.perf_counter() - start)
        end = time.perf_counter()
        return RunResult(end - start, len(buffer.entries), buffer._total_tokens,
                         second_half=end - mid)

    return run


# ---------------------------------------------------------------------------- peers
def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def _importable(module: str) -> bool:
    try:
        __import__(module)
    except Exception:
        return False
    return True


def run_langchain(turns: list[Turn], budget: int, deadline: float) -> RunResult:
    from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
    from langchain_core.messages import trim_messages

    encode = _encoder().encode_ordinary
    memo: dict[int, int] = {}

    def count(message: BaseMessage) -> int:
        key = id(message)  # every message stays alive in the history, so ids are stable
        n = memo.get(key)
        if n is None:
            n = memo[key] = len(encode(message.content)) + PER_MESSAGE
        return n

    # trim_messages treats a counter whose first parameter is annotated BaseMessage as
    # per-message (and sums it over lists); postponed annotations are strings, so set it.
    count.__annotations__ = {"message": BaseMessage, "return": int}
    kinds = {"system": SystemMessage, "user": HumanMessage, "assistant": AIMessage}
    work = [(kinds[t.role], t.text) for t in turns]
    history: list[BaseMessage] = []
    window: list[BaseMessage] = []
    start = time.perf_counter()
    for i, (kind, text) in enumerate(work):
        history.append(kind(content=text))
        window = trim_messages(
            history,
            max_tokens=budget - REPLY_PRIMER,
            token_counter=count,
            strategy="last",
            include_system=True,
            start_on="human",
        )
        if not i & 63 and time.perf_counter() > deadline:
            raise Timeout(i + 1, time.perf_counter() - start)
    seconds = time.perf_counter() - start
    return RunResult(seconds, len(window), sum(count(m) for m in window) + REPLY_PRIMER)


def run_llamaindex(turns: list[Turn], budget: int, deadline: float) -> RunResult:
    import logging

    from llama_index.core.llms import ChatMessage
    from llama_index.core.memory import Memory

    logging.getLogger("llama_index").setLevel(logging.ERROR)
    encode = _encoder().encode_ordinary
    # The whole budget for chat history (the default keeps 30% for memory blocks).
    memory = Memory.from_defaults(
        token_limit=budget, tokenizer_fn=encode, chat_history_token_ratio=1.0
    )
    work = [(t.role, t.text) for t in turns]
    window: list[Any] = []
    start = time.perf_counter()
    for i, (role, text) in enumerate(work):
        memory.put(ChatMessage(role=role, content=text))
        window = memory.get()
        if not i & 15 and time.perf_counter() > deadline:
            raise Timeout(i + 1, time.perf_counter() - start)
    seconds = time.perf_counter() - start
    return RunResult(seconds, len(window))


def runners(peer_max_n: int = 10_000) -> list[Runner]:
    from memorykit.buffers.registry import policies

    out = [Runner("floor", "floor: tiktoken count per message", "floor", None, run_floor)]
    # every pruning policy of the registry; a newly registered one is benchmarked too
    names = {s.name: s.factory.__name__ for s in policies("pruning")}
    pruning = tuple(names)
    for policy in pruning:
        out.append(
            Runner(f"memorykit-{policy}", f"memorykit {names[policy]}", "memorykit", policy,
                   memorykit_runner(policy))
        )
    for policy in pruning:
        out.append(
            Runner(f"memorykit-{policy}-bounded",
                   f"memorykit {names[policy]}, Trace(max_events={BOUNDED_TRACE:,})", "memorykit",
                   policy, memorykit_runner(policy, BOUNDED_TRACE),
                   note="the trace keeps only its newest events, so it stops growing with n")
        )
    for policy in pruning:
        out.append(
            Runner(f"buffer-only-{policy}", f"diagnostic: {names[policy]} add + read only",
                   "diagnostic", policy, buffer_only_runner(policy),
                   note="messages built beforehand: the buffer's own cost, tokenizer excluded")
        )
    for policy in SEED_POLICIES:
        out.append(
            Runner(f"seed-{policy}", f"seed-style list ({policy})", "seed", policy,
                   seed_runner(policy),
                   note="seed 001 transcribed: list, pop(i), linear scans, get_context() dicts")
        )
    lc_missing = None if _importable("langchain_core.messages") else "skipped (install memorykit[bench])"
    out.append(
        Runner("langchain-trim_messages", "LangChain trim_messages (memoised counter)", "peer",
               "fifo", run_langchain, smallest_budget_only=True, max_n=peer_max_n, available=lc_missing,
               version=_version("langchain-core"),
               note="full history trimmed every turn, as LangGraph does; quadratic")
    )
    li_missing = None if _importable("llama_index.core.memory") else "skipped (install memorykit[bench])"
    out.append(
        Runner("llamaindex-Memory", "LlamaIndex Memory (put + get)", "peer", "fifo",
               run_llamaindex, smallest_budget_only=True, max_n=peer_max_n, available=li_missing,
               version=_version("llama-index-core"),
               note="in-memory SQLite chat store; re-counts the active queue every put and get")
    )
    return out


# ---------------------------------------------------------------------------- suite
def machine_info() -> dict[str, Any]:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    commit = None
    try:
        root = Path(__file__).resolve().parent.parent
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True,
            timeout=5,
        ).stdout.strip() or None
    except Exception:
        pass
    return {
        "platform": platform.platform(),
        "cpu": cpu,
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "tiktoken": _version("tiktoken"),
        "langchain-core": _version("langchain-core"),
        "llama-index-core": _version("llama-index-core"),
        "git_commit": commit,
        "load_average_1m": round(os.getloadavg()[0], 2) if hasattr(os, "getloadavg") else None,
    }


@dataclass
class Config:
    sizes: tuple[int, ...] = DEFAULT_SIZES
    budgets: tuple[int, ...] = DEFAULT_BUDGETS
    repeat: int = 3
    seed: int = 0
    peer_max_n: int = 10_000
    time_limit: float = 180.0
    """Seconds one run of a seed-style or peer runner may take before it is stopped."""
    peers: bool = True
    only: tuple[str, ...] = ()
    quiet: bool = False
    extra: dict[str, Any] = field(default_factory=dict)


def _applies(runner: Runner, n: int, budget: int, config: Config) -> str | None:
    """None if the runner runs here, else the status to record."""
    if runner.available is not None:
        return runner.available
    if runner.group == "peer" and not config.peers:
        return "skipped (--no-peers)"
    if runner.max_n is not None and n > runner.max_n:
        return f"not run: capped at n <= {runner.max_n:,} (too slow beyond)"
    return None


def run_suite(config: Config, log: Callable[[str], None] = print) -> dict[str, Any]:
    all_runners = runners(config.peer_max_n)
    if config.only:
        all_runners = [r for r in all_runners if r.key == "floor" or r.key in config.only]
    load_start = round(os.getloadavg()[0], 2) if hasattr(os, "getloadavg") else None
    turns_all = conversation(max(config.sizes), config.seed)
    results: list[dict[str, Any]] = []
    # Warm up: imports, pydantic schemas, tiktoken's caches; nothing here is timed.
    for runner in all_runners:
        if _applies(runner, 2, config.budgets[0], config) is None:
            runner.run(turns_all[:100], min(config.budgets), time.perf_counter() + 60)
    for n in sorted(config.sizes):
        turns = turns_all[:n]
        plan: list[tuple[Runner, int]] = []
        for runner in all_runners:
            if runner.group == "floor" or runner.smallest_budget_only:
                budgets: tuple[int, ...] = (min(config.budgets),)
            else:
                budgets = config.budgets
            for budget in budgets:
                plan.append((runner, budget))
        best: dict[tuple[str, int], dict[str, Any]] = {}
        for rep in range(config.repeat):
            for runner, budget in plan:
                key = (runner.key, budget)
                row = best.get(key)
                if row is None:
                    row = best[key] = {
                        "key": runner.key, "label": runner.label, "group": runner.group,
                        "policy": runner.policy, "n": n,
                        "budget": None if runner.group == "floor" else budget,
                        "status": "ok", "seconds": [], "note": runner.note,
                        "version": runner.version,
                    }
                    status = _applies(runner, n, budget, config)
                    if status is not None:
                        row["status"] = status
                if row["status"] != "ok" or row.get("single"):
                    continue
                gc.collect()
                deadline = time.perf_counter() + config.time_limit
                try:
                    res = runner.run(turns, budget, deadline)
                except Timeout as stop:
                    row["status"] = (
                        f"stopped at the {config.time_limit:.0f} s limit after "
                        f"{stop.done:,} of {n:,} messages"
                    )
                    row["partial_us_per_msg"] = stop.seconds / stop.done * 1e6
                    row["partial_done"] = stop.done
                    if not config.quiet:
                        log(f"  n={n:>7,} {runner.key:<26} budget={budget:>7,}: {row['status']}")
                    continue
                row["seconds"].append(res.seconds)
                if res.second_half is not None:
                    row.setdefault("second_half_seconds", []).append(res.second_half)
                row["window_messages"] = res.window_messages
                row["window_tokens"] = res.window_tokens
                if res.exact is not None:
                    row["exact_billed_tokens"] = res.exact
                # A run that takes long is not repeated: its noise is small against its size.
                if res.seconds > 20:
                    row["single"] = True
                if not config.quiet:
                    log(f"  n={n:>7,} {runner.key:<26} budget={budget:>7,} rep {rep + 1}: "
                        f"{res.seconds / n * 1e6:9.2f} us/msg")
        floor_row = best[("floor", min(config.budgets))]
        floor_us = min(floor_row["seconds"]) / n * 1e6
        for row in best.values():
            row.pop("single", None)
            if row["seconds"]:
                row["us_per_msg"] = min(row["seconds"]) / n * 1e6
                row["ratio_to_floor"] = row["us_per_msg"] / floor_us
                if row.get("second_half_seconds"):
                    row["steady_us_per_msg"] = min(row["second_half_seconds"]) / (n - n // 2) * 1e6
            elif "partial_us_per_msg" in row:
                row["partial_ratio_to_floor"] = row["partial_us_per_msg"] / floor_us
            results.append(row)
    report = {
        "benchmark": "conversation buffers",
        "command": config.extra.get("command", "python -m bench"),
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": {**machine_info(), "load_average_1m_at_start": load_start},
        "config": {
            "sizes": list(config.sizes), "budgets": list(config.budgets),
            "repeat": config.repeat, "seed": config.seed, "peer_max_n": config.peer_max_n,
            "time_limit_s": config.time_limit, "encoding": ENCODING,
            "importance_threshold": IMPORTANCE_THRESHOLD,
        },
        "workload": describe(turns_all),
        "results": results,
    }
    report["targets"] = check_targets(report)
    return report


# -------------------------------------------------------------------------- targets
def _row(report: dict[str, Any], key: str, n: int, budget: int | None) -> dict[str, Any] | None:
    for row in report["results"]:
        if row["key"] == key and row["n"] == n and (budget is None or row["budget"] == budget):
            return row
    return None


def check_targets(report: dict[str, Any]) -> list[dict[str, Any]]:
    sizes = sorted(report["config"]["sizes"])
    budgets = report["config"]["budgets"]
    big = sizes[-1]
    small_budget = min(budgets)
    out: list[dict[str, Any]] = []
    ratios = {}
    policies = sorted({row["key"].removeprefix("memorykit-") for row in report["results"]
                       if row["group"] == "memorykit" and not row["key"].endswith("-bounded")})
    for policy in policies:
        row = _row(report, f"memorykit-{policy}", big, small_budget)
        if row and "ratio_to_floor" in row:
            ratios[policy] = row["ratio_to_floor"]
    if ratios:
        worst = max(ratios.values())
        out.append({
            "target": f"every buffer within {TARGET_RATIO}x of the floor at n={big:,}, "
                      f"budget {small_budget:,}",
            "met": worst <= TARGET_RATIO,
            "measured": {k: round(v, 3) for k, v in ratios.items()},
        })
    exact = [row.get("exact_billed_tokens") for row in report["results"]
             if row["group"] == "memorykit" and row["status"] == "ok"]
    if exact:
        out.append({
            "target": "billed (chat-format) tokens counted exactly (buffer total == independent "
                      "count_chat_tokens recount of the final window, within budget)",
            "met": all(exact),
            "measured": f"{sum(bool(e) for e in exact)}/{len(exact)} runs exact",
        })
    prev = [s for s in sizes if s <= big // 10]
    if prev:
        small = prev[-1]
        for budget in budgets:
            for suffix, label in (("", ""), ("-bounded", f", Trace(max_events={BOUNDED_TRACE:,})")):
                growth = {}
                for policy in ("importance", "hybrid"):
                    a = _row(report, f"memorykit-{policy}{suffix}", small, budget)
                    b = _row(report, f"memorykit-{policy}{suffix}", big, budget)
                    if a and b and "steady_us_per_msg" in a and "steady_us_per_msg" in b:
                        growth[policy] = b["steady_us_per_msg"] / a["steady_us_per_msg"]
                if growth:
                    out.append({
                        "target": f"flat per-message cost from n={small:,} to n={big:,} "
                                  f"(budget {budget:,}{label}; steady state = second half of "
                                  f"each run, window full): growth <= {TARGET_FLAT}x",
                        "met": max(growth.values()) <= TARGET_FLAT,
                        "measured": {k: round(v, 3) for k, v in growth.items()},
                    })
    return out


# --------------------------------------------------------------------------- output
def _fmt_n(n: int) -> str:
    return f"{n // 1000}k" if n >= 1000 and n % 1000 == 0 else str(n)


def _cell(row: dict[str, Any] | None, markdown: bool) -> str:
    if row is None:
        return ""
    if "us_per_msg" in row:
        us = row["us_per_msg"]
        us_s = f"{us:,.1f}" if us < 1000 else f"{us:,.0f}"
        return f"{row['ratio_to_floor']:.2f}x ({us_s} µs)"
    if "partial_us_per_msg" in row:
        return (f"stopped after {row['partial_done']:,}: "
                f"{row['partial_ratio_to_floor']:.0f}x ({row['partial_us_per_msg']:,.0f} µs)")
    status = row["status"]
    if status.startswith("not run: capped"):
        return "not run (capped: " + status.split("capped at ", 1)[1].split(" (")[0] + ")"
    return status


def table_rows(report: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    sizes = sorted(report["config"]["sizes"])
    header = ["implementation", "budget"] + [f"n = {_fmt_n(n)}" for n in sizes]
    seen: list[tuple[str, int | None]] = []
    labels: dict[str, str] = {}
    for row in report["results"]:
        key = (row["key"], row["budget"])
        if key not in seen:
            seen.append(key)
            labels[row["key"]] = row["label"]
    order = {"floor": 0, "memorykit": 1, "diagnostic": 2, "seed": 3, "peer": 4}
    groups = {row["key"]: row["group"] for row in report["results"]}
    seen.sort(key=lambda kb: (order[groups[kb[0]]], kb[1] or 0))
    rows = []
    for key, budget in seen:
        cells = [labels[key], "-" if budget is None else f"{budget:,}"]
        for n in sizes:
            cells.append(_cell(_row(report, key, n, budget), markdown=False))
        rows.append(cells)
    return header, rows


def steady_rows(report: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """Second-half (window full) µs per message for the floor, memorykit and the seeds."""
    sizes = sorted(report["config"]["sizes"])
    header = ["implementation", "budget"] + [f"n = {_fmt_n(n)}" for n in sizes]
    rows = []
    for hrow in table_rows(report)[1]:
        label, budget = hrow[0], hrow[1]
        cells = [label, budget]
        found = False
        for n in sizes:
            match = [r for r in report["results"] if r["label"] == label and r["n"] == n
                     and ("-" if r["budget"] is None else f"{r['budget']:,}") == budget]
            if match and "steady_us_per_msg" in match[0]:
                cells.append(f"{match[0]['steady_us_per_msg']:,.1f} µs")
                found = True
            else:
                cells.append("")
        if found:
            rows.append(cells)
    return header, rows


def format_text(report: dict[str, Any]) -> str:
    header, rows = table_rows(report)
    widths = [max(len(r[i]) for r in [header] + rows) for i in range(len(header))]
    line = lambda cells: "  ".join(c.ljust(w) for c, w in zip(cells, widths))  # noqa: E731
    out = [line(header), line(["-" * w for w in widths])] + [line(r) for r in rows]
    out.append("")
    out.append("cells: per-message time as a ratio to the floor (per-message µs)")
    header, rows = steady_rows(report)
    out.append("")
    out.append("steady state: µs per message over the second half of each run (window full)")
    out += [line(r[:len(header)]) for r in rows]
    for t in report["targets"]:
        out.append(f"{'MET   ' if t['met'] else 'MISSED'} {t['target']}: {t['measured']}")
    return "\n".join(out)


def format_markdown(report: dict[str, Any]) -> str:
    header, rows = table_rows(report)
    m = report["machine"]
    w = report["workload"]
    out = [
        f"Command: `{report['command']}` — {report['date']}, git {m.get('git_commit')}",
        "",
        f"Machine: {m['cpu']}, {m['cores']} cores, {m['platform']}; {m['implementation']} "
        f"{m['python']}, tiktoken {m['tiktoken']}, langchain-core {m['langchain-core']}, "
        f"llama-index-core {m['llama-index-core']}; 1-minute load average "
        f"{m.get('load_average_1m_at_start')} at the start, {m.get('load_average_1m')} at the end.",
        "",
        f"Workload: seed {report['config']['seed']}, {report['config']['encoding']}, words per "
        f"message mean {w['words_mean']:.0f} / median {w['words_median']} / p90 {w['words_p90']} "
        f"(range {w['words_min']}-{w['words_max']}); best of {report['config']['repeat']} "
        "interleaved runs (runs over 20 s run once).",
        "",
        "| " + " | ".join(header) + " |",
        "|" + "|".join("---" for _ in header) + "|",
    ]
    for r in rows:
        out.append("| " + " | ".join(c.replace("|", "/") for c in r) + " |")
    out.append("")
    out.append("Cells: time per message (create + add + read the window) as a ratio to the "
               "floor, with µs per message in brackets.")
    header, rows = steady_rows(report)
    out += ["", "Steady state: µs per message over the second half of each run (the window is "
            "full there, so this is the cost of every later message):", "",
            "| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    out.append("")
    for t in report["targets"]:
        out.append(f"- **{'Met' if t['met'] else 'Missed'}**: {t['target']} — measured "
                   f"{t['measured']}")
    return "\n".join(out)


def write_json(report: dict[str, Any], path: str | os.PathLike[str]) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(report, indent=2) + "\n")
    tmp.replace(path)
    return path


def main_argv() -> str:
    return " ".join(["python -m bench", *sys.argv[1:]])
