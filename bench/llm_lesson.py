"""Slider round trips of the lesson 11 explorer (``LoopExplorer.update``: compute + draw).

    python -m bench.llm_lesson              # 50 random slider moves
    python -m bench.llm_lesson --moves 200

Each move sets one slider (budget, threshold or recall_limit), chosen at
random, to a random value on its grid, as a student dragging sliders would,
and times ``explorer.update``: the offline replay of the probe conversation
through the memory service, the probes, and the redraw into the live figure.
Timed twice: with the explorer's per-setting memo (``_offline_loop``) cleared
before each move (cold: the first visit to a setting; the per-text memos of
the summarizer and embedder stay, as in a student's session, where the
construction has already filled most of them) and on settings already visited
(warm). A third run times the explorer as it was before those memos: every
move replays with ``offline_backend()`` (a fresh ``ExtractiveSummarizer``) and
the service's default embedder and counter. Construction of the explorer is timed too.
"""

from __future__ import annotations

import argparse
import os
import time

from bench.workspace_lessons import _line, slider_moves
from memorykit.classroom import lesson11_explorer as llm_app


def _clear() -> None:
    llm_app._offline_loop.cache_clear()


def _plain_components():
    return llm_app.offline_backend(), None, None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--moves", type=int, default=50)
    args = parser.parse_args(argv)
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    t0 = time.perf_counter()
    explorer = llm_app.LoopExplorer()
    print(f"11 LoopExplorer: construction {(time.perf_counter() - t0) * 1000:.0f} ms")
    memoized = llm_app._explorer_components
    llm_app._explorer_components = _plain_components
    try:
        bare = slider_moves(explorer, args.moves, seed=1, before=_clear)
    finally:
        llm_app._explorer_components = memoized
    cold = slider_moves(explorer, args.moves, seed=1, before=_clear)
    slider_moves(explorer, args.moves, seed=2)
    warm = slider_moves(explorer, args.moves, seed=2)
    print(_line("11 LoopExplorer, before (no per-text memos), setting memo cleared", bare))
    print(_line("11 LoopExplorer, cold (setting memo cleared before every move)", cold))
    print(_line("11 LoopExplorer, warm (settings already visited)", warm))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
