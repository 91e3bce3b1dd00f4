"""``python -m bench.tune_log``: peak memory of reading a large log for ``memorykit tune``.

Issue 25 found a 200 MB log peaking at 1.8 GB while ``tune`` read it. This benchmark writes
a log of the chosen size into a temporary directory (never committed) by repeating the bundled
``data/chat_logs/support_chats.jsonl`` with fresh conversation and message ids (so every
copy is a distinct, valid conversation), plus one question about the first copy, then runs
``load_chat_logs`` (what ``tune`` does before its first evaluation) in a child process and
reads the child's peak resident memory (``ru_maxrss``). An empty child (Python + memorykit
imported) is measured the same way, so the table shows what reading the log itself costs.

    python -m bench.tune_log                 # 200 MB .jsonl
    python -m bench.tune_log --mb 50         # another size

The tuning itself holds every conversation as ``Message`` objects (the policies replay them
question by question), so what is bounded is the *reading*: no copy of the file's text, and no
decoded JSON beyond one line at a time. The table splits the two.
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "data" / "chat_logs" / "support_chats.jsonl"

_CHILD = """
import resource, sys, time
from memorykit.evaluation.chatlog import load_chat_logs
start = time.perf_counter()
data = None if sys.argv[1] == "-" else load_chat_logs(sys.argv[1], sys.argv[2])
seconds = time.perf_counter() - start
messages = 0 if data is None else data.n_messages
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
import gc, os
gc.collect()
with open("/proc/self/statm") as f:  # resident pages now: what the loaded dataset keeps
    held = int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024
print(peak, held, messages, round(seconds, 2))
"""


def write_log(folder: Path, megabytes: float) -> tuple[Path, Path]:
    """A ``.jsonl`` log of about ``megabytes`` MB and a one-question file about it."""
    originals = [json.loads(line) for line in SOURCE.read_text(encoding="utf-8").splitlines()]
    log, target = folder / "big_chats.jsonl", int(megabytes * 1_000_000)
    written, copy = 0, 0
    with log.open("w", encoding="utf-8") as out:
        while written < target:
            for conv in originals:
                messages = [{**m, "id": f"c{copy}-m{i}"} for i, m in enumerate(conv["messages"])]
                line = json.dumps({"id": f"{conv['id']}-{copy}", "messages": messages}) + "\n"
                out.write(line)
                written += len(line.encode("utf-8"))
            copy += 1
    questions = folder / "big_questions.jsonl"
    first = originals[0]
    questions.write_text(json.dumps({"conversation": f"{first['id']}-0", "question": "Which?",
                                     "evidence": [0]}) + "\n", encoding="utf-8")
    return log, questions


def measure(args: list[str]) -> tuple[int, int, int, float]:
    """Peak and final RSS (KiB), messages read and seconds of a child running
    ``load_chat_logs``."""
    done = subprocess.run([sys.executable, "-c", _CHILD, *args], capture_output=True, text=True,
                          cwd=ROOT, check=True)
    peak, held, messages, seconds = done.stdout.split()
    return int(peak), int(held), int(messages), float(seconds)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.tune_log", description=__doc__)
    parser.add_argument("--mb", type=float, default=200.0, help="log size in MB (default 200)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        log, questions = write_log(Path(tmp), args.mb)
        size = log.stat().st_size
        print(f"log: {size / 1e6:.1f} MB written in {time.perf_counter() - start:.1f} s")
        base, _, _, _ = measure(["-", "-"])
        peak, held, messages, seconds = measure([str(log), str(questions)])
    print(f"machine: {platform.machine()}, Python {platform.python_version()}, "
          f"{platform.system()} {platform.release()}")
    print("\n| log | messages | load s | peak RSS | RSS after loading (the dataset held) "
          "| empty child |")
    print("|---|---|---|---|---|---|")
    print(f"| {size / 1e6:.0f} MB .jsonl | {messages:,} | {seconds:.1f} | {peak / 1024:,.0f} MiB "
          f"| {held / 1024:,.0f} MiB | {base / 1024:,.0f} MiB |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
