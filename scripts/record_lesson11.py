"""Record SmolLM2-135M-Instruct's replies for lesson 11: data/transcripts/lesson11_smollm2.json.

Starts the local model (``memorykit.llm.local_server.LocalModelServer``) on ``--port``, or uses
the server at OPENAI_BASE_URL when it is set, runs ``llm_app.local_model_demo`` live with every
exchange recorded, saves the transcript, then replays it and checks that the replay tells the
same story (same loop summary, same summaries refused and kept, same calibration). The lesson
replays this file unless OPENAI_BASE_URL is set.

    PYTHONPATH=. .venv/bin/python scripts/record_lesson11.py [--port 8111]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from memorykit.classroom import lesson11 as llm_app
from memorykit.llm.local_server import LocalModelServer

NOTE = ("SmolLM2-135M-Instruct Q4_1 served by llama-cpp-python on 127.0.0.1, temperature 0, "
        "recorded by scripts/record_lesson11.py")


def story(report: llm_app.LocalModelReport) -> tuple[object, ...]:
    """What the lesson prints from a report, to compare the live run with its replay."""
    table = report.calibration.table() if report.calibration else None
    return (report.loop.summary() | {"backend": None}, report.loop.rows(),
            [p.reply for p in report.loop.probes], report.summarizer.outcomes(),
            report.survival(), {k: v for k, v in report.reflect.summary().items() if k != "failed"},
            table)


def record(env: dict[str, str]) -> llm_app.LocalModelReport:
    t0 = time.perf_counter()
    live = llm_app.local_model_demo(env, record=True, note=NOTE, timeout=300.0, max_retries=0)
    print(f"live run: {time.perf_counter() - t0:.0f} s; {live.mode}")
    replayed = llm_app.local_model_demo({})
    if story(replayed) != story(live):
        sys.exit(f"the replay of {llm_app.TRANSCRIPT} differs from the live run:\n"
                 f"{story(live)}\n{story(replayed)}")
    print(f"saved {llm_app.TRANSCRIPT}; the replay tells the same story")
    return live


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=8111)
    args = parser.parse_args()
    if os.environ.get("OPENAI_BASE_URL"):
        record(dict(os.environ))
        return
    with LocalModelServer(args.port) as server:
        record({"OPENAI_BASE_URL": server.base_url, "OPENAI_MODEL": server.model})


if __name__ == "__main__":
    main()
