"""``python -m bench.changing_facts_store``: the memory service's long-term store under each update policy.

``MemoryService`` (D4's defaults: a 2,000-token summary buffer as working memory, every message
stored, recall of the last user message) under each ``LongTermSettings.update_policy``, on the
bundled changing-facts set (``data/changing_facts``) or another in the same format
(``--chats``/``--questions``), at ``--budget`` tokens: recall, and over the questions whose fact
changed, ``stale_only``, ``both``, ``both_unclear`` (``memorykit.evaluation.scoring.staleness``),
with the seconds each took (the update policy runs the detector before each read).
"""

from __future__ import annotations

import argparse
import platform
import time
from pathlib import Path

from memorykit.evaluation.chatlog import load_chat_logs
from memorykit.evaluation.harness import evaluate
from memorykit.longterm.service import UPDATE_POLICY_NAMES, LongTermSettings, MemoryService

DATA = Path(__file__).resolve().parents[1] / "data" / "changing_facts"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.changing_facts_store",
                                     description=__doc__.splitlines()[0].strip("`: "))
    parser.add_argument("--chats", type=Path, default=DATA / "changing_facts.jsonl")
    parser.add_argument("--questions", type=Path, default=DATA / "changing_facts_questions.jsonl")
    parser.add_argument("--budget", type=int, default=1000)
    args = parser.parse_args(argv)
    data = load_chat_logs(args.chats, args.questions)
    print(f"{data.name}: {len(data)} conversations, {data.n_questions} questions, budget "
          f"{args.budget}; MemoryService at D4's defaults; {platform.machine()}")
    print("| update_policy | recall | stale_only | both | both_unclear | seconds |")
    print("|---|---:|---:|---:|---:|---:|")
    for policy in UPDATE_POLICY_NAMES:
        started = time.perf_counter()
        service = MemoryService(settings=LongTermSettings(update_policy=policy))
        row = evaluate(service, data, args.budget).summary()
        cells = [f"{row[k]:.3f}" if row.get(k) is not None else "-"
                 for k in ("recall", "stale_only", "both", "both_unclear")]
        print(f"| {policy} | {' | '.join(cells)} | {time.perf_counter() - started:.1f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
