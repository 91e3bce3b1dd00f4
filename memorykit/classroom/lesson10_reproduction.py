"""Lesson 10's last table: D3's comparison reproduced on real components.

The run itself takes minutes on a small local model, so the lesson does not repeat it: it
loads the committed result of ``python -m bench.reproduce_003 --serve 8121 --embedder minilm``
(``RESULTS``: SmolLM2-135M-Instruct as reader, summarizer and critic, all-MiniLM-L6-v2 for C
and D) and runs the same protocol live with the offline stand-ins (``standins()``: lexical
embedder, extractive summarizer, scripted critic and reader; under a second), so the two sit
beside D3's figures (``side_by_side``) and the differences are read from the data
(``ReproductionResult.explain``). The protocol is ``memorykit.classroom.replays.reproduction``.
The record and the stand-ins' run are memoized (``memo``): read and run once per process.
Taught in ``notebooks/10_architectures.ipynb``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from memorykit._validate import require_int
from memorykit.classroom.memo import memo
from memorykit.classroom.replays.reproduction import (
    ReproductionResult,
    ReproductionSettings,
    run_reproduction,
)

RESULTS = Path(__file__).resolve().parents[2] / "bench" / "results" / "reproduce_003.json"
"""The committed result of the real-model run (in a checkout of the repository)."""


@memo(maxsize=1)
def _record() -> dict[str, Any]:
    if not RESULTS.is_file():
        raise FileNotFoundError(
            f"{RESULTS} is missing: it is committed with the repository; regenerate it with "
            "python -m bench.reproduce_003 --serve 8121 --embedder minilm")
    data: dict[str, Any] = json.loads(RESULTS.read_text())
    return data


def reproduced() -> ReproductionResult:
    """The committed real-model result."""
    return ReproductionResult.from_json(_record())


def provenance() -> dict[str, Any]:
    """How the committed result was made: command, machine, run time, components."""
    r = _record()
    c = r["config"]
    return {"command": r["command"], "when": r["when"], "machine": r["machine"],
            "run time (s)": r["seconds"], "reader, summarizer, critic": c["reader"],
            "embedder (C, D)": c["embedder"], "model calls": c["model_calls"]}


@memo(maxsize=1)
def standins() -> ReproductionResult:
    """The same protocol, live, with the offline stand-ins in every model's place."""
    return run_reproduction(_record_settings())


def _record_settings() -> ReproductionSettings:
    """The settings the committed run used (so the stand-ins answer the same probes)."""
    saved = dict(_record()["config"]["settings"])
    saved["distractor_words"] = tuple(saved["distractor_words"])
    return ReproductionSettings(**saved)


def side_by_side() -> list[dict[str, Any]]:
    """Per architecture: D3's recall, the stand-ins' and the real components', each
    with its Wilson 95% interval and the share of probes whose key was in the context."""
    def cell(row: dict[str, Any]) -> str:
        lo, hi = row["interval"]
        return f"{row['correct']}/{row['probes']} = {row['recall']:.0%} [{lo:.0%}, {hi:.0%}]"

    real, stand = reproduced(), standins()
    out = []
    for r, s in zip(real.rows, stand.rows):
        out.append({"arch": r["architecture"], "D3": f"{r['seed_003']:.0%}",
                    "stand-ins": cell(s), "key in ctx (stand-ins)": f"{s['key_in_context']:.0%}",
                    "real models": cell(r), "key in ctx (real)": f"{r['key_in_context']:.0%}",
                    "tokens/probe (real)": round(r["tokens_per_probe"])})
    out.append({"arch": "control (fact in context)", "D3": "-",
                "stand-ins": cell(stand.control), "key in ctx (stand-ins)": "100%",
                "real models": cell(real.control), "key in ctx (real)": "100%",
                "tokens/probe (real)": round(real.control["tokens_per_probe"])})
    return out


def dropped_keys(limit: int = 6) -> list[dict[str, Any]]:
    """B's episodes in the real run whose summary lost the fact's key (at most ``limit``)."""
    require_int("limit", limit, minimum=1)
    lost = [e for e in reproduced().episodes if e["episode"] and not e["summary_kept_key"]]
    return [{"key": e["key"], "fact": e["fact"], "summary": e["summary"]} for e in lost[:limit]]


def reader_misses(limit: int = 6) -> list[dict[str, Any]]:
    """Real-run probes answered wrong although the key was in the context (at most ``limit``)."""
    require_int("limit", limit, minimum=1)
    return [{"arch": p["architecture"], "question": p["question"], "key": p["key"],
             "answer": p["answer"]}
            for p in reproduced().probes if p["key_in_context"] and not p["correct"]][:limit]


__all__ = ["RESULTS", "dropped_keys", "reader_misses", "provenance", "reproduced", "side_by_side",
           "standins"]
