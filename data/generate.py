"""Regenerate the simulated conversations in ``data/conversations``, byte for byte.

Usage, from the repository root::

    .venv/bin/python data/generate.py            # (re)write every file
    .venv/bin/python data/generate.py --check    # exit 1 if any file would change
    .venv/bin/python data/generate.py --out DIR  # write somewhere else

Each scenario is one call to ``memorykit.classroom.scenarios.conversation.simulate_conversation``; the
file is ``SimulatedConversation.to_jsonl()``: a header line (format, simulator
version, seed, parameters, encoding, counts), then one line per message, then
one line per planted fact. Read one back with
``memorykit.classroom.scenarios.conversation.load_conversation(path)``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
if str(ROOT) not in sys.path:  # run as a script: make the package importable
    sys.path.insert(0, str(ROOT))

from memorykit.classroom.scenarios.conversation import simulate_conversation  # noqa: E402
from memorykit.tokens import Tokenizer  # noqa: E402

OUT_DIR = HERE / "conversations"

# file name -> simulate_conversation arguments. Changing any of these (or the
# simulator) changes the files: regenerate and commit them together.
SCENARIOS: dict[str, dict[str, Any]] = {
    # The notebooks' default scenario.
    "default_500.jsonl": {"n_turns": 500, "seed": 7},
    # Small and dense (a fact every 5 turns, more tool calls): for fast tests.
    "short_60.jsonl": {"n_turns": 60, "seed": 7, "fact_every": 5, "tool_call_rate": 0.1},
    # Long enough that every buffer overflows many times.
    "long_2000.jsonl": {"n_turns": 2000, "seed": 7},
}
ENCODING = "cl100k_base"


def render_all() -> dict[str, bytes]:
    """Every scenario file's exact bytes, keyed by file name."""
    counter = Tokenizer(ENCODING)
    return {
        name: simulate_conversation(counter=counter, **kwargs).to_jsonl().encode("utf-8")
        for name, kwargs in SCENARIOS.items()
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 if any file is missing or would change")
    parser.add_argument("--out", type=Path, default=OUT_DIR,
                        help=f"output directory (default: {OUT_DIR.relative_to(ROOT)})")
    args = parser.parse_args(argv)
    files = render_all()
    if args.check:
        stale = []
        for name, data in files.items():
            path = args.out / name
            if not path.is_file():
                stale.append(f"{path}: missing")
            elif path.read_bytes() != data:
                stale.append(f"{path}: differs from what the generator writes")
        for line in stale:
            print(line, file=sys.stderr)
        if stale:
            print("run `python data/generate.py` and commit the result", file=sys.stderr)
            return 1
        print(f"{len(files)} files up to date in {args.out}")
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        path = args.out / name
        if path.is_file() and path.read_bytes() == data:
            print(f"unchanged {path} ({len(data):,} bytes)")
            continue
        path.write_bytes(data)
        print(f"wrote     {path} ({len(data):,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
