"""Write ``data/changing_facts/``: conversations whose facts change, and questions about them.

The two files are what ``memorykit.classroom.scenarios.changing_facts`` writes from its default
seed (byte-identical on every run): ``changing_facts.jsonl`` (one conversation per line, the
OpenAI chat format ``python -m memorykit tune`` reads) and ``changing_facts_questions.jsonl``
(one question per line, with ``evidence``, ``superseded`` and ``metadata.gap``). Counts by
category are printed on every run. See README.md beside this file.

    .venv/bin/python data/changing_facts/generate.py            # rewrite
    .venv/bin/python data/changing_facts/generate.py --check    # exit 1 if a file would change
    .venv/bin/python data/changing_facts/generate.py --out DIR  # write elsewhere
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
if str(ROOT) not in sys.path:  # run as a script: make the package importable
    sys.path.insert(0, str(ROOT))

from memorykit.classroom.scenarios.changing_facts import changing_facts_files  # noqa: E402

FILES = ("changing_facts.jsonl", "changing_facts_questions.jsonl")


def render() -> dict[str, str]:
    """Each file's text, from the default seed."""
    return dict(zip(FILES, changing_facts_files()))


def summary(files: dict[str, str]) -> str:
    """Conversations, messages and questions by category: the README's numbers."""
    chats = [json.loads(line) for line in files[FILES[0]].splitlines()]
    questions = [json.loads(line) for line in files[FILES[1]].splitlines()]
    by = Counter(q["category"] for q in questions)
    n_messages = [len(c["messages"]) for c in chats]
    gaps = sorted(q["metadata"]["gap"] for q in questions if "superseded" in q)
    by_assistant = sum(q["metadata"]["by"] == "assistant" for q in questions if "superseded" in q)
    distractors = Counter(d["kind"] for c in chats for d in c["distractors"])
    return (f"{len(chats)} conversations, {sum(n_messages)} messages "
            f"({min(n_messages)}-{max(n_messages)} each), {len(questions)} questions: "
            + ", ".join(f"{k} {v}" for k, v in sorted(by.items()))
            + f"; {sum('position' in q for q in questions)} asked between two changes"
            + f"; gaps {gaps[0]}-{gaps[-1]} messages (median {gaps[len(gaps) // 2]})"
            + f"; {by_assistant} changes stated by the assistant"
            + "; distractors: " + ", ".join(f"{k} {v}" for k, v in sorted(distractors.items())))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 if a file is missing or would change")
    parser.add_argument("--out", type=Path, default=HERE, help="output directory")
    args = parser.parse_args(argv)
    files = render()
    stale = []
    for name, text in files.items():
        path = args.out / name
        if args.check:
            if not path.is_file() or path.read_bytes() != text.encode("utf-8"):
                stale.append(name)
        else:
            args.out.mkdir(parents=True, exist_ok=True)
            path.write_bytes(text.encode("utf-8"))
    if stale:
        print(f"out of date: {', '.join(stale)} (run python data/changing_facts/generate.py)",
              file=sys.stderr)
        return 1
    print(summary(files))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
