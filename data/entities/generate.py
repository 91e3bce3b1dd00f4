"""Regenerate the CMS scenario files byte-identically.

    python data/entities/generate.py          # write the files
    python data/entities/generate.py --check  # exit 1 if a file differs from what the generator makes

Files: ``cms_small.jsonl`` (seed 3, 120 turns, 40 entities; used by the tests)
and ``cms_large.jsonl`` (seed 7, 1,000 turns, 200 entities; the heatmap and the
FIFO-vs-relevance comparison). See ``memorykit/classroom/scenarios/cms.py`` for the format.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))

from memorykit.classroom.scenarios.cms import generate_cms_scenario  # noqa: E402

SCENARIOS = {
    "cms_small.jsonl": dict(seed=3, n_turns=120, n_entities=40, name="cms-small"),
    "cms_large.jsonl": dict(seed=7, n_turns=1000, n_entities=200, name="cms-large"),
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare instead of writing")
    args = parser.parse_args(argv)
    status = 0
    for filename, params in SCENARIOS.items():
        text = generate_cms_scenario(**params).to_jsonl()
        path = HERE / filename
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
