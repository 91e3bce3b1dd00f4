"""Regenerate the professional-workflow scenario byte-identically.

    python data/workflow/generate.py          # write the file
    python data/workflow/generate.py --check  # exit 1 if the file differs from what the generator makes

File: ``workflow_30d.jsonl`` (seed 2, 30 days x 20 turns). See
``memorykit/classroom/scenarios/workflow.py`` for the format and the labelling rule.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))

from memorykit.classroom.scenarios.workflow import generate_workflow_scenario  # noqa: E402

SCENARIOS = {"workflow_30d.jsonl": dict(seed=2, days=30, name="workflow-30d")}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare instead of writing")
    parser.add_argument("--out", type=Path, default=HERE, help="directory to write to")
    args = parser.parse_args(argv)
    status = 0
    for filename, params in SCENARIOS.items():
        text = generate_workflow_scenario(**params).to_jsonl()
        path = args.out / filename
        if args.check:
            same = path.exists() and path.read_text(encoding="utf-8") == text
            print(f"{filename}: {'ok' if same else 'DIFFERS'}")
            status |= 0 if same else 1
        else:
            path.write_text(text, encoding="utf-8")
            print(f"{filename}: wrote {len(text.splitlines())} lines")
    return status


if __name__ == "__main__":
    raise SystemExit(main())
