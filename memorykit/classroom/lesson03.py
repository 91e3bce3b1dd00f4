"""Lesson 03: the summary buffer's token sawtooth, summaries of summaries, surviving facts.

Pure computation (tested, benchmarked):

* ``run_summary_buffer(conv, budget=, threshold=, target=, min_recent=)``: the
  conversation replayed through ``memorykit.buffers.summary_buffer.SummaryBuffer``
  with the offline ``ExtractiveSummarizer`` (not an LLM). Returns a
  ``SummaryRun``: the token sawtooth (tokens after each message arrived, and
  once the buffer settled), every summarization round (turn, depth, messages
  taken, tokens before and after), the depth of the deepest kept summary after
  every message, and for every planted fact whether its key is still in the
  final window (``fact_alive``) and at which turn it dropped out. Memoized by
  parameters (``_replay``); every replay shares one summarizer per encoding
  (``_components``), whose memos of summaries, sentence analyses and token counts
  (``MemoSummarizer``, ``ExtractiveSummarizer``, ``MemoCounter``) make a fresh replay cheap.
* ``run_yours(conv, summarizer_class, ...)``: the same replay with a student's summarizer
  class (a fresh instance per replay), memoized the same way.
* ``compression_demo(conv, ...)``: D1's compression pipeline
  (``memorykit.buffers.compression``) over the same conversation: a FIFO
  buffer whose oldest third is compressed by the selective compressor and the
  summary compressor once it passes the compression threshold.

Explorer: ``SummaryExplorer`` (sliders for budget, threshold, target and
min_recent; the sawtooth with the threshold, target and budget lines and the
summarization rounds, the summary depth, and one lifeline per planted fact);
``yours=FactsFirstSummarizer`` adds the student's summary buffer as its own sawtooth, depth
and fact lifelines beside the library's.
Taught in ``notebooks/03_summary_buffer.ipynb``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from memorykit._validate import require_int
from memorykit.buffers.base import MessageBuffer
from memorykit.buffers.compression import (
    CompressionPipeline,
    LLMSummaryCompressor,
    SelectiveCompressor,
)
from memorykit.buffers.summary_buffer import SummaryBuffer
from memorykit.classroom.replays.summary_replay import SummaryRun, replay_summary_buffer
from memorykit.classroom.explorer import (Implementation, LessonExplorer, Setting, defaults,
                                          yours_name)
from memorykit.classroom.memo import memo
from memorykit.messages import MessageFactory
from memorykit.classroom.scenarios.conversation import SimulatedConversation
from memorykit.classroom.scenarios.facts import fact_survival
from memorykit.summary import ExtractiveSummarizer, MemoSummarizer
from memorykit.tokens import MemoCounter, Tokenizer

SETTINGS = (
    Setting("budget", "budget (tokens)", 2000, 1000, 4000, 250),
    Setting("threshold", "threshold", 0.8, 0.5, 0.95, 0.05),
    Setting("target", "target", 0.6, 0.1, 0.9, 0.05),
    Setting("min_recent", "min_recent", 3, 0, 10, 1),
)
"""The explorer's sliders, at D4's summary-buffer settings."""
DEFAULTS = defaults(SETTINGS)
"""Seed 004's summary-buffer settings."""


@memo(maxsize=None)
def _components(encoding: str) -> tuple[MemoCounter, MemoSummarizer]:
    """One counter and summarizer per encoding for every replay, so their memos serve all."""
    counter = MemoCounter(Tokenizer(encoding))
    return counter, MemoSummarizer(ExtractiveSummarizer(counter))


# --------------------------------------------------------------------- run
def run_summary_buffer(
    conv: SimulatedConversation,
    *,
    budget: int = DEFAULTS["budget"],
    threshold: float = DEFAULTS["threshold"],
    target: float = DEFAULTS["target"],
    min_recent: int = DEFAULTS["min_recent"],
) -> SummaryRun:
    """Replay ``conv`` through a ``SummaryBuffer`` (memoized by conversation and settings).

    The buffer checks the settings (a ValueError names a bad one; target must lie below
    threshold) before the memo is read.
    """
    return _replay(conv, None, *_settings(budget, threshold, target, min_recent))


def _settings(budget: Any, threshold: Any, target: Any, min_recent: Any) -> tuple:
    """The settings as a ``SummaryBuffer`` checked and stored them (the memo's key)."""
    buf = SummaryBuffer(budget, threshold, target, min_recent)
    return buf.max_tokens, round(buf.threshold, 6), round(buf.target, 6), buf.min_recent


# memorykit.summary.Summarizer is a protocol with data members, which issubclass cannot check
YOURS = Implementation("a Summarizer class (name, is_llm, summarize(messages, max_tokens)), "
                       "passed itself, not an instance", object, methods=("summarize",))


def run_yours(conv: SimulatedConversation, summarizer_class: type, *,
              budget: int = DEFAULTS["budget"], threshold: float = DEFAULTS["threshold"],
              target: float = DEFAULTS["target"], min_recent: int = DEFAULTS["min_recent"]
              ) -> SummaryRun:
    """``run_summary_buffer`` with a fresh ``summarizer_class()`` writing the summaries."""
    summarizer_class = YOURS.check("summarizer_class", summarizer_class)
    return _replay(conv, summarizer_class, *_settings(budget, threshold, target, min_recent))


@memo(maxsize=256)
def _replay(conv: SimulatedConversation, summarizer_class: type | None, budget: int,
            threshold: float, target: float, min_recent: int) -> SummaryRun:
    """One replay: the shared extractive summarizer (``None``) or a student's class."""
    counter, summarizer = _components(conv.encoding)
    if summarizer_class is not None:
        summarizer = summarizer_class()
    buf = SummaryBuffer(budget, threshold, target, min_recent, summarizer=summarizer,
                        factory=MessageFactory(counter, id_prefix="summary"))
    return replay_summary_buffer(conv, buf)


def print_fact_table(run: SummaryRun, conv: SimulatedConversation, last: int | None = None) -> None:
    """One line per planted fact (the last ``last`` ones): turn, key, kept or lost when."""
    facts = conv.facts if last is None else conv.facts[-last:]
    for f in facts:
        lost = run.fact_lost_turn[f.id]
        state = "kept" if run.fact_alive[f.id] else f"lost at turn {lost}"
        print(f"{f.id}  turn {f.turn:>3}  {f.key!r:<16} {state}")


def settings_table(conv: SimulatedConversation, settings: Sequence[dict[str, Any]]) -> None:
    """Print rounds, depth and surviving facts for several settings (budget 2,000 unless given)."""
    print(f"{'threshold':>9} {'target':>6} {'min_recent':>10} {'rounds':>6} {'depth':>5} "
          f"{'facts kept':>10}")
    for s in settings:
        run = run_summary_buffer(conv, **{"budget": DEFAULTS["budget"], **s})
        print(f"{run.threshold:>9g} {run.target:>6g} {run.min_recent:>10} "
              f"{run.n_summarizations:>6} {run.max_depth:>5} "
              f"{run.facts_alive:>4} / {len(run.fact_alive)}")


# ------------------------------------------------------------- compression
@dataclass(frozen=True)
class CompressionResult:
    max_tokens: int
    compression_threshold: float
    rounds: int
    steps: Counter
    """Compression steps by rule (``compression:selective>=0.7``, ``compression:summary[...]``)."""
    evictions: int
    final_tokens: int
    final_messages: int
    fact_alive: dict[str, bool]
    omitted_notes: int
    """"[N messages omitted]" notes in the final window."""
    example_steps: list[str]
    example_summary: str
    """The newest summary-step message in the final window ("" if none): marked as D1 marks it."""

    @property
    def facts_alive(self) -> int:
        return sum(self.fact_alive.values())


def compression_demo(
    conv: SimulatedConversation,
    *,
    max_tokens: int = 2000,
    compression_threshold: float = 0.8,
    selective_threshold: float = 0.7,
) -> CompressionResult:
    """Seed 001's pipeline over ``conv``: a FIFO buffer of ``max_tokens`` whose oldest third is
    compressed (selective, then summary) whenever it passes ``compression_threshold``."""
    require_int("max_tokens", max_tokens, minimum=1)
    counter, summarizer = _components(conv.encoding)
    factory = MessageFactory(counter, id_prefix="compressed")
    buf = MessageBuffer(max_tokens)
    pipe = CompressionPipeline(
        buf,
        [SelectiveCompressor(selective_threshold, factory=factory),
         LLMSummaryCompressor(summarizer, factory=factory)],
        compression_threshold,
    )
    rounds = 0
    for m in conv.messages:
        events = pipe.add(m)
        if any(e.kind == "summarization" for e in events):
            rounds += 1
    summ = buf.trace.summarizations()
    steps = Counter(e.rule for e in summ)
    examples = [e.reason for e in summ[:2]]
    final = list(buf)
    return CompressionResult(
        max_tokens, float(compression_threshold), rounds, steps, len(buf.trace.evictions()),
        buf.tokens, len(final), fact_survival(conv.facts, final),
        sum(1 for m in final if m.content.endswith("messages omitted]")), examples,
        next((m.content for m in reversed(final)
              if m.content.startswith(LLMSummaryCompressor.MARKER)), ""),
    )


# ---------------------------------------------------------------- explorer
class SummaryExplorer(LessonExplorer):
    """The sawtooth, the summary depth and the facts' lifelines; four sliders. With
    ``yours=``, the student's summarizer runs the same buffer: its sawtooth, depth and
    lifelines (drawn just above the library's) as thin black lines."""

    settings = SETTINGS
    implementation = YOURS

    def __init__(self, conv: SimulatedConversation, yours: Any = None, **params: Any) -> None:
        self.conv = conv
        self.facts = list(conv.facts)
        self.n_turns = conv.n_turns
        super().__init__(yours=yours, **params)

    def _make_figure(self) -> Any:
        from plotly.subplots import make_subplots

        fig = make_subplots(rows=3, cols=1, shared_xaxes=True, vertical_spacing=0.06,
                            row_heights=[0.45, 0.15, 0.40],
                            subplot_titles=("window tokens (sawtooth)", "summary depth",
                                            "planted facts: in the window until..."))
        fig.add_scatter(name="tokens", x=[], y=[], mode="lines", line=dict(width=1,
                        color="#636efa"), row=1, col=1)
        for name, color, dash in (("budget", "black", "solid"), ("threshold", "#ef553b", "dash"),
                                  ("target", "#00cc96", "dot")):
            fig.add_scatter(name=name, x=[0, self.n_turns], y=[0, 0], mode="lines",
                            line=dict(color=color, dash=dash, width=1.5), row=1, col=1)
        fig.add_scatter(name="summarization", x=[], y=[], mode="markers",
                        marker=dict(size=6, color=[], colorscale="Viridis", cmin=1, cmax=2,
                                    symbol="triangle-down"), text=[], row=1, col=1)
        fig.add_scatter(name="peak on arrival", x=[], y=[], mode="markers+text",
                        marker=dict(size=9, color="rgba(0,0,0,0)", line=dict(width=2, color="black")),
                        text=[], textposition="middle right", textfont=dict(size=11),
                        hoverinfo="skip", row=1, col=1)
        fig.add_scatter(name="depth", x=[], y=[], mode="lines", line=dict(shape="hv",
                        color="#ab63fa"), showlegend=False, row=2, col=1)
        fig.add_scatter(name="fact kept", x=[], y=[], mode="lines",
                        line=dict(color="#00cc96", width=3), row=3, col=1)
        fig.add_scatter(name="fact lost", x=[], y=[], mode="lines",
                        line=dict(color="#ef553b", width=3), row=3, col=1)
        fig.add_scatter(name="planted", x=[f.turn for f in self.facts],
                        y=list(range(len(self.facts))), mode="markers",
                        marker=dict(size=4, color="black"), hovertext=[f"{f.id} {f.key}"
                                                                        for f in self.facts],
                        showlegend=False, row=3, col=1)
        for name in self.yours:  # one legend entry shows or hides all three of its traces
            style = dict(legendgroup=yours_name(name), line=dict(color="black", width=1))
            fig.add_scatter(name=yours_name(name), x=[], y=[], mode="lines", row=1, col=1,
                            opacity=0.6, **style)
            fig.add_scatter(name=f"{yours_name(name)} depth", x=[], y=[], mode="lines",
                            line_shape="hv", showlegend=False, row=2, col=1, **style)
            fig.add_scatter(name=f"{yours_name(name)} facts", x=[], y=[], mode="lines",
                            showlegend=False, row=3, col=1,
                            **{**style, "line": dict(color="black", width=1.5)})
        fig.update_layout(height=780 if self.yours else 720, margin=dict(l=60, r=10, t=40, b=40))
        fig.update_xaxes(title_text="turn", row=3, col=1)
        fig.update_yaxes(title_text="tokens", rangemode="tozero", row=1, col=1)
        fig.update_yaxes(title_text="fact #", row=3, col=1)
        return fig

    def _compute(self, **settings: Any) -> dict[str, Any]:
        return {"run": run_summary_buffer(self.conv, **settings),
                "yours": {name: run_yours(self.conv, cls, **settings)
                          for name, cls in self.yours.items()}}

    def update(self, **params: Any) -> Any:
        """As ``LessonExplorer.update``; a target at or above the threshold is moved just under it."""
        merged = {**self.params, **{k: self.clean(k, v) for k, v in params.items()}}
        if "target" in merged and "threshold" in merged and merged["target"] >= merged["threshold"]:
            params = {**params, "target": round(merged["threshold"] - 0.05, 4)}
        return super().update(**params)

    def _draw(self, result: dict[str, Any]) -> None:
        trace, run = self.trace, result["run"]
        trace("tokens").x, trace("tokens").y = self._sawtooth(run)
        for name, level, depends in (("budget", 1.0, ("budget",)),
                                     ("threshold", run.threshold, ("budget", "threshold")),
                                     ("target", run.target, ("budget", "target"))):
            if self.moved(*depends):  # min_recent moves no line
                trace(name).y = [level * run.budget] * 2
        rounds = trace("summarization")
        rounds.x = [r.turn for r in run.rounds]
        rounds.y = [r.tokens_before for r in run.rounds]
        rounds.marker.color = [r.depth for r in run.rounds]
        rounds.marker.cmax = max(2, run.max_depth)
        rounds.text = [f"depth {r.depth}, {r.taken} messages" for r in run.rounds]
        # The window is over budget only between a message's arrival and the summary it
        # triggers: mark the highest arrival and where the buffer settled right after it.
        peak, i = trace("peak on arrival"), int(np.argmax(run.before))
        peak.x, peak.y = [run.turns[i]], [int(run.before[i])]
        peak.text = [f"{int(run.before[i])} on arrival, {int(run.after[i])} once summarized"]
        peak.textposition = ("middle left" if run.turns[i] > 0.6 * self.n_turns
                             else "middle right")
        trace("depth").x, trace("depth").y = run.turns, run.depth
        for alive, (x, y) in self._lifelines(run, 0).items():
            trace("fact kept" if alive else "fact lost").x = x
            trace("fact kept" if alive else "fact lost").y = y
        for name, mine in result["yours"].items():
            label = yours_name(name)
            trace(label).x, trace(label).y = self._sawtooth(mine)
            trace(f"{label} depth").x, trace(f"{label} depth").y = mine.turns, mine.depth
            lines = self._lifelines(mine, 0.4)  # just above the library's line of each fact
            trace(f"{label} facts").x = lines[True][0] + lines[False][0]
            trace(f"{label} facts").y = lines[True][1] + lines[False][1]

    @staticmethod
    def _sawtooth(run: SummaryRun) -> tuple[np.ndarray, np.ndarray]:
        """x, y of the token line: each message's arrival, then where the buffer settled."""
        y = np.empty(2 * len(run.turns), int)
        y[0::2], y[1::2] = run.before, run.after
        return np.repeat(run.turns, 2), y

    def _lifelines(self, run: SummaryRun, offset: float) -> dict[bool, tuple[list, list]]:
        """x, y of one line per fact, from its planting to its loss or the end, by kept/lost."""
        lines: dict[bool, tuple[list, list]] = {True: ([], []), False: ([], [])}
        for k, f in enumerate(self.facts):
            alive, lost = run.fact_alive[f.id], run.fact_lost_turn[f.id]
            end = self.n_turns if alive else (lost if lost is not None else f.turn)
            lines[alive][0].extend((f.turn, end, None))
            lines[alive][1].extend((k + offset, k + offset, None))
        return lines

    def summary(self) -> dict[str, Any]:
        run: SummaryRun = self.result["run"]
        out = {"threshold": round(run.threshold, 2), "target": round(run.target, 2),
               **run.stats()}
        for name, mine in self.result["yours"].items():
            stats = mine.stats()
            for key in ("summarizations", "peak_tokens", "final_tokens", "fallback_evictions",
                        "facts_alive"):
                out[f"{yours_name(name)}_{key}"] = stats[key]
        return out
