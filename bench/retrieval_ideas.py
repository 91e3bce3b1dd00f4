"""``python -m bench.retrieval_ideas``: each retrieval idea of issue 26 on and off, recall per category.

    python -m bench.retrieval_ideas                 # the bundled fixture and a LoCoMo-size synthetic set
    python -m bench.retrieval_ideas --locomo PATH   # a local LoCoMo copy instead of the two

Every variant is ``HybridRetrieval`` (stemmed BM25 + MiniLM) with ``HybridSettings`` fields
changed from the plain policy (the issue's measured configuration: lexical_weight 0.5, smoothing
0.5, neighbours 1, dates, no idea on): each idea alone, then on lexical_weight 0.25 and
neighbours 0; "new defaults" is lexical_weight 0.25, neighbours 0, diversity 0.5, session keys
0.6 and speaker focus 0.8 (the last two chosen on real LoCoMo's tuning part). Last, the
bundled support chats (``data/chat_logs``, another kind of conversation) at small budgets. Reciprocal rank
fusion and a per-session cap were measured at commit 3ce198c (BENCHMARKS.md) and removed, and
pseudo-relevance feedback at fb76e76 (it did not help on real LoCoMo's defaults);
session-level keys were removed there too (no consistent effect on the synthetic sets) and
brought back: on real LoCoMo they are the largest gain. Recall is the mean share of each
question's evidence in its context, over categories 1-4, at 1,000 and 2,000 billed tokens,
through ``memorykit.evaluation.harness.evaluate``; per category at 1,000 tokens. The synthetic
set is written by the fixture's generator (``data/locomo_style/generate.py``, seeded:
``--conversations 10 --events 24``) into a temporary directory. Neither is the target: the issue's
targets are on held-out real LoCoMo conversations.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import platform
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.tuning_lesson_scale import write_dataset
from memorykit.classroom.data import load_tuning_data
from memorykit.evaluation.chatlog import load_chat_logs
from memorykit.evaluation.harness import evaluate
from memorykit.evaluation.heldout import split_conversations
from memorykit.evaluation.hybrid import HybridRetrieval, HybridSettings
from memorykit.evaluation.locomo import CATEGORIES, load_locomo

PLAIN = HybridSettings(lexical_weight=0.5, smoothing=0.5, neighbours=1, dates=True,
                       diversity=0.0, session_weight=0.0, other_speakers=1.0)
"""The issue's measured configuration (the defaults before issue 26), every idea off."""

IDEAS: dict[str, dict[str, Any]] = {
    "diversity 0.5": {"diversity": 0.5},
    "diversity 1": {"diversity": 1.0},
    "session keys 0.6": {"session_weight": 0.6},
    "speaker focus 0.8": {"other_speakers": 0.8},
}
TUNED = {"lexical_weight": 0.25, "neighbours": 0}
VARIANTS: dict[str, dict[str, Any]] = {
    "plain (issue's measured configuration)": {},
    **IDEAS,
    "lexical_weight 0.25, neighbours 0": TUNED,
    **{f"lexical_weight 0.25, neighbours 0, {k}": {**TUNED, **v} for k, v in IDEAS.items()},
    "new defaults": (NEW := {**TUNED, "diversity": 0.5, "session_weight": 0.6,
                             "other_speakers": 0.8}),
    "new defaults without session keys": {**NEW, "session_weight": 0.0},
    "new defaults without speaker focus": {**NEW, "other_speakers": 1.0},
    "new defaults without diversity": {**NEW, "diversity": 0.0},
    "new defaults, smoothing 0.25": {**NEW, "smoothing": 0.25},
    "new defaults, no dates": {**NEW, "dates": False},
}
"""Variant name -> the HybridSettings fields it changes from ``PLAIN``."""

BUDGETS = (1000, 2000)
ROOT = Path(__file__).resolve().parent.parent
MAIN = [CATEGORIES[c] for c in (1, 2, 3, 4)]


def table(data: Any, label: str, variants: dict[str, dict[str, Any]]) -> None:
    print(f"\n### {label}\n")
    print("| variant | @1,000 | @2,000 | " + " | ".join(f"{c} @1,000" for c in MAIN) + " | s |")
    print("|---|---|---|" + "---|" * len(MAIN) + "---|")
    base: list[float] = []
    for name, fields in variants.items():
        policy = HybridRetrieval(dataclasses.replace(PLAIN, **fields), name=name)
        prepared: dict[str, Any] = {}
        t0 = time.perf_counter()
        results = [evaluate(policy, data, b, prepared=prepared) for b in BUDGETS]
        seconds = time.perf_counter() - t0
        overall = [r.summary()["recall"] for r in results]
        assert all(r.summary()["over_budget"] == 0 for r in results), name
        cats = {row["category"]: row["recall"] for row in results[0].by_category()}
        base = base or overall
        delta = [f"{100 * o:.1f}" + (f" ({100 * (o - b):+.1f})" if fields else "")
                 for o, b in zip(overall, base)]
        print(f"| {name} | {delta[0]} | {delta[1]} | "
              + " | ".join(f"{100 * cats[c]:.1f}" if c in cats else "-" for c in MAIN)
              + f" | {seconds:.1f} |", flush=True)


def speaker_statistics(data: Any) -> None:
    """Why speaker focus: for questions naming exactly one speaker of their conversation, how
    many of their evidence turns that speaker said, per category."""
    said: dict[str, list[int]] = {}
    for conv in data:
        names = sorted({str(m.metadata.get("speaker")) for m in conv.messages
                        if m.metadata.get("speaker")})
        by_id = {m.id: m for m in conv.messages}
        for q in conv.questions:
            named = [n for n in names if re.search(rf"(?<!\w){re.escape(n)}(?!\w)", q.question)]
            if len(named) != 1:
                continue
            counts = said.setdefault(q.category, [0, 0])
            for e in q.evidence_ids:
                if e in by_id:
                    counts[0] += by_id[e].metadata.get("speaker") == named[0]
                    counts[1] += 1
    print("\nquestions naming one speaker: evidence turns that speaker said, per category")
    for category, (own, total) in said.items():
        print(f"- {category}: {own} of {total} ({100 * own / max(1, total):.1f}%)")
    own, total = (sum(c[i] for c in said.values()) for i in (0, 1))
    print(f"- all: {own} of {total} ({100 * own / max(1, total):.1f}%)")


def support_table(variants: dict[str, dict[str, Any]]) -> None:
    """Overall recall on the bundled support chats (short conversations, tool results) at small
    budgets: a check that an idea does not only suit LoCoMo-shaped data."""
    data = load_chat_logs(ROOT / "data/chat_logs/support_chats.jsonl",
                          questions=ROOT / "data/chat_logs/support_questions.jsonl")
    budgets = (150, 250, 500, 1000)
    print(f"\n### bundled support chats: {len(data)} conversations, {data.n_messages:,} messages, "
          f"{data.n_questions} questions (overall recall)\n")
    print("| variant | " + " | ".join(f"@{b:,}" for b in budgets) + " |")
    print("|---|" + "---|" * len(budgets))
    for name, fields in variants.items():
        policy = HybridRetrieval(dataclasses.replace(PLAIN, **fields), name=name)
        prepared: dict[str, Any] = {}
        row = [evaluate(policy, data, b, prepared=prepared).summary()["recall"] for b in budgets]
        print(f"| {name} | " + " | ".join(f"{100 * r:.1f}" for r in row) + " |", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--locomo", default=None, help="a local LoCoMo copy (default: fixture + synthetic)")
    parser.add_argument("--only", default=None, help="run only variants whose name contains this")
    args = parser.parse_args(argv)
    variants = {n: f for n, f in VARIANTS.items() if not args.only or args.only in n or not f}
    print(f"# Retrieval ideas ({platform.machine()}, {os.cpu_count()} cores, Python "
          f"{platform.python_version()}, load average {os.getloadavg()[0]:.1f}, "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())})")
    print("recall over categories 1-4 in %, (difference to plain in points); per category at 1,000")
    if args.locomo:  # the ideas were chosen on the tuning part (seed 0); the test part is apart
        data, description = load_tuning_data(args.locomo)
        (split,) = split_conversations([c.id for c in data], 0.3, seed=0)
        speaker_statistics(data)
        table(data, description, variants)
        for part, ids in (("tuning part", split.tuning), ("held-out part", split.test)):
            table(data.select(conversations=list(ids)),
                  f"{part} (seed 0): {', '.join(ids)}", variants)
        return 0
    data, description = load_tuning_data(None)
    table(data, description, variants)
    with tempfile.TemporaryDirectory(prefix="memorykit-ideas-") as tmp:
        big = load_locomo(write_dataset(Path(tmp), 10, 24), verify=False)
    table(big, f"synthetic LoCoMo-size set (generate.py --conversations 10 --events 24): "
               f"{len(big)} conversations, {big.n_messages:,} turns, {big.n_questions:,} questions",
          variants)
    support_table(variants)
    return 0


if __name__ == "__main__":
    sys.exit(main())
