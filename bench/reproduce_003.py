"""Seed 003's comparison reproduced on real components: A-D answered by a local LLM.

    python -m bench.reproduce_003 --serve 8121 --embedder minilm   # the committed result
    python -m bench.reproduce_003 --base-url http://127.0.0.1:8765/v1 --embedder minilm
    python -m bench.reproduce_003                                  # the offline stand-ins

``--serve PORT`` starts SmolLM2-135M-Instruct (``memorykit.llm.local_server``) on
127.0.0.1:PORT for the run and stops it after; ``--base-url`` uses a server already
running (the model is the one it lists). Without either, the offline stand-ins play
the models. The protocol is ``memorykit.classroom.replays.reproduction``; this script picks
the components, runs it, writes ``bench/results/reproduce_003[-standins].json`` and
prints the table and the measured explanation of each difference from seed 003.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from contextlib import ExitStack
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from memorykit.classroom.replays.reproduction import ReproductionSettings, run_reproduction


def make_embedder(spec: str) -> Any:
    if spec == "lexical":
        return None
    if spec == "minilm":
        from memorykit.longterm.minilm import minilm_embedder

        return minilm_embedder()  # each text embedded once per machine (disk cache)
    raise SystemExit(f"--embedder must be lexical or minilm, got {spec!r}")


def make_chat(base_url: str, *, timeout: float = 120.0) -> Any:
    from memorykit.llm.chat import OpenAIChatModel
    from memorykit.llm.backend import served_model
    from memorykit.llm.client import make_client

    client = make_client(base_url=base_url, api_key="no-key-needed", timeout=timeout,
                         max_retries=0)
    model, _note = served_model(client, where=base_url)
    return OpenAIChatModel(model, client)


def machine() -> str:
    return f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.reproduce_003", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    default = ReproductionSettings()
    p.add_argument("--serve", type=int, default=None, metavar="PORT",
                   help="start the local model on 127.0.0.1:PORT for the run")
    p.add_argument("--base-url", default=None, help="an OpenAI-compatible server already running")
    p.add_argument("--embedder", default="lexical", help="lexical | minilm (C and D)")
    p.add_argument("--conversations", type=int, default=default.conversations)
    p.add_argument("--facts", type=int, default=default.n_facts)
    p.add_argument("--distractors", type=int, default=default.distractors)
    p.add_argument("--output", default=None, help="JSON path (default bench/results/"
                                                   "reproduce_003[-standins].json)")
    args = p.parse_args(argv)
    if args.serve is not None and args.base_url is not None:
        raise SystemExit("give --serve or --base-url, not both")
    settings = ReproductionSettings(conversations=args.conversations, n_facts=args.facts,
                                    distractors=args.distractors)
    command = "python -m bench.reproduce_003 " + " ".join(sys.argv[1:] if argv is None else argv)
    with ExitStack() as stack:
        base_url = args.base_url
        if args.serve is not None:
            from memorykit.llm.local_server import LocalModelServer

            base_url = stack.enter_context(LocalModelServer(args.serve)).base_url
        chat = make_chat(base_url) if base_url is not None else None
        embedder = make_embedder(args.embedder)
        start = time.perf_counter()
        result = run_reproduction(settings, chat=chat, embedder=embedder,
                                  progress=lambda line: print(line, file=sys.stderr))
        seconds = time.perf_counter() - start
    output = Path(args.output or ("bench/results/reproduce_003"
                                  + ("" if chat is not None else "-standins") + ".json"))
    output.parent.mkdir(parents=True, exist_ok=True)
    record = {"benchmark": "reproduce_003", "command": command.strip(),
              "when": datetime.now(timezone.utc).isoformat(timespec="seconds"),
              "machine": machine(), "seconds": round(seconds, 1), **result.to_json()}
    output.write_text(json.dumps(record, indent=1) + "\n")
    print(f"wrote {output} ({seconds:.1f} s)", file=sys.stderr)
    print(result.to_markdown())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
