"""``python -m bench.simulate``: how long the conversation simulator takes, and the data files.

    python -m bench.simulate             # best of 3 per size
    python -m bench.simulate --repeat 1  # one run each

The simulator builds the lessons' conversations (``memorykit.classroom.data`` falls back to it
when ``data/conversations`` is absent) and every file ``data/generate.py`` writes, so its speed
is what a student or a contributor waits for. Sizes: the notebooks' default (500 turns), the
longest shipped file (2,000) and 2,500 turns (the former unit-test target: under 3 s). Then
the full regeneration of ``data/conversations`` into a temporary directory (former target:
under 20 s). Best of ``--repeat`` runs, one shared cl100k_base tokenizer (as generate.py does).
"""

from __future__ import annotations

import argparse
import importlib.util
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

from memorykit.classroom.scenarios.conversation import simulate_conversation
from memorykit.tokens import Tokenizer

ROOT = Path(__file__).resolve().parent.parent
SIZES = (500, 2000, 2500)
"""Turns per simulated conversation (see the module docstring for why these)."""


def best_of(repeat: int, run: Callable[[], Any]) -> tuple[float, Any]:
    """Fastest of ``repeat`` runs in seconds, with the last run's result."""
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        result = run()
        best = min(best, time.perf_counter() - start)
    return best, result


def _generator() -> Any:
    spec = importlib.util.spec_from_file_location("memorykit_data_generate", ROOT / "data" / "generate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.simulate", description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement, best kept (default 3)")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error(f"--repeat must be >= 1, got {args.repeat}")
    counter = Tokenizer("cl100k_base")
    counter.count("warm the encoding up")
    print(f"# simulator ({platform.machine()}, Python {platform.python_version()}), best of {args.repeat}")
    for n_turns in SIZES:
        seconds, conv = best_of(args.repeat, lambda: simulate_conversation(n_turns, seed=1, counter=counter))
        print(f"simulate_conversation({n_turns}): {len(conv.messages)} messages in {seconds:.2f} s "
              f"({seconds / len(conv.messages) * 1e6:.0f} us per message)")
    gen = _generator()
    with tempfile.TemporaryDirectory() as out:
        seconds, code = best_of(args.repeat, lambda: gen.main(["--out", out]))
    if code != 0:
        print(f"data/generate.py exited with {code}", file=sys.stderr)
        return 1
    print(f"data/generate.py ({len(gen.SCENARIOS)} files): {seconds:.2f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
