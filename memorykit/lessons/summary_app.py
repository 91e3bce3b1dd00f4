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
  parameters (a fresh replay takes ~40-120 ms; the explorer reuses earlier runs).
* ``FastExtractiveSummarizer``: the library's ``ExtractiveSummarizer`` with its
  per-sentence analysis (words, fact bonus, token count) cached across calls,
  plain tuples instead of records, and the sentences of the summaries it wrote
  remembered. A summary buffer re-scores the last summary's sentences in every
  round, so this makes a replay several times faster; the summaries are
  identical (tests compare them with the library's).
* ``compression_demo(conv, ...)``: seed 001's compression pipeline
  (``memorykit.buffers.compression``) over the same conversation: a FIFO
  buffer whose oldest third is compressed by the selective compressor and the
  summary compressor once it passes the compression threshold.

Explorer: ``SummaryExplorer`` (sliders for budget, threshold, target and
min_recent; the sawtooth with the threshold, target and budget lines and the
summarization rounds, the summary depth, and one lifeline per planted fact).
Taught in ``notebooks/03_summary_buffer.ipynb``.
"""

from __future__ import annotations

from collections import Counter, OrderedDict
from itertools import chain
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from memorykit._text import STOPWORDS, has_digit, words
from memorykit._validate import require_fraction, require_int, require_real
from memorykit.buffers.base import MessageBuffer
from memorykit.buffers.compression import (
    CompressionPipeline,
    LLMSummaryCompressor,
    SelectiveCompressor,
)
from memorykit.buffers.summary_buffer import SummaryBuffer
from memorykit.lessons._app import LessonExplorer, _go, float_slider, int_slider
from memorykit.messages import Message, MessageFactory
from memorykit.scenarios.conversation import SimulatedConversation
from memorykit.scenarios.facts import fact_survival
from memorykit.summary import _ROLE_LABEL, _SENTENCE_END, ExtractiveSummarizer, ScoredSentence
from memorykit.tokens import Tokenizer

DEFAULTS = {"budget": 2000, "threshold": 0.8, "target": 0.6, "min_recent": 3}
"""Seed 004's summary-buffer settings."""


# -------------------------------------------------------------- summarizer
class FastExtractiveSummarizer(ExtractiveSummarizer):
    """``ExtractiveSummarizer`` with each sentence's analysis cached (identical output).

    The score's relevance part depends on the whole segment and is recomputed;
    the words, content words, fact bonus and token count of a sentence depend on
    its text alone and are computed once. The sentences of a summary this
    summarizer wrote are remembered, so the next round does not split it again.
    """

    def __init__(self, counter: Any = None, **kw: Any) -> None:
        super().__init__(counter, **kw)
        # (message id, content) -> its sentences as _Sentence tuples (see _parts).
        self._split: dict[tuple[str, str], list[tuple]] = {}
        self._written: dict[str, list[tuple]] = {}

    def _parts(self, m: Message) -> list[tuple]:
        """(key, text, body, content words, fact bonus, tokens) per sentence of ``m``."""
        ck = (m.id, m.content)
        parts = self._split.get(ck)
        if parts is not None:
            return parts
        if m.is_summary:
            parts = self._written.pop(m.content, None)
        if parts is None:
            parts = []
            for raw in _SENTENCE_END.split(m.content):
                sentence = raw.strip()
                if not sentence:
                    continue
                label = _ROLE_LABEL.match(sentence)
                body = sentence[label.end():] if label else sentence
                if self.label_roles and not label and not m.is_summary:
                    sentence = f"{m.role}: {sentence}"
                parts.append(self._analyse(" ".join(body.lower().split()), sentence, body))
        self._split[ck] = parts
        return parts

    def _analyse(self, key: str, text: str, body: str) -> tuple:
        ws = words(body)
        content = tuple({
            w.lower() for w in ws
            if w.lower() not in STOPWORDS and (len(w) > 2 or has_digit(w))
        })
        n_facts = sum(1 for w in ws if has_digit(w))
        n_facts += sum(1 for j, w in enumerate(ws) if j > 0 and w[0].isupper() and w != "I")
        return (key, text, body, content, self.fact_bonus * min(3, n_facts),
                self.counter.count(text))

    def _distinct(self, messages: Sequence[Message]) -> list[tuple[Message, tuple]]:
        """(message, sentence tuple) for every distinct sentence, in order."""
        out: list[tuple[Message, tuple]] = []
        seen: set[str] = set()
        for m in messages:
            if type(m) is not Message:
                raise TypeError(f"messages must hold Message records, got {m!r}")
            for part in self._parts(m):
                if part[0] in seen:
                    continue
                seen.add(part[0])
                out.append((m, part))
        return out

    def _sentences(self, messages: Sequence[Message]) -> list[tuple[Message, str, str]]:
        """The library's ``_sentences`` (each message's split cached by id and content)."""
        return [(m, part[1], part[2]) for m, part in self._distinct(messages)]

    def score_sentences(self, messages: Sequence[Message]) -> list[ScoredSentence]:
        raw = self._distinct(messages)
        freq = Counter(chain.from_iterable([part[3] for _, part in raw]))
        top = max(freq.values(), default=1)
        get = freq.__getitem__
        out = []
        for i, (m, part) in enumerate(raw):
            content = part[3]
            relevance = (sum(map(get, content)) / len(content) / top) if content else 0.0
            out.append(ScoredSentence(i, m.id, part[1], part[5], relevance, part[4],
                                      self.importance_weight * m.importance))
        return out

    def summarize(self, messages: Sequence[Message], max_tokens: int) -> str:
        """``ExtractiveSummarizer.summarize`` on plain tuples (same choices, same text)."""
        require_int("max_tokens", max_tokens, minimum=0)
        if max_tokens == 0 or not messages:
            return ""
        raw = self._distinct(messages)
        if not raw:
            return ""
        freq = dict(Counter(chain.from_iterable([part[3] for _, part in raw])))
        top = max(freq.values(), default=1)
        get = freq.__getitem__
        weight = self.importance_weight
        # (-score, position, tokens, text), the order the library ranks sentences in.
        ranked = []
        for i, (m, part) in enumerate(raw):
            content = part[3]
            relevance = (sum(map(get, content)) / len(content) / top) if content else 0.0
            ranked.append((-(relevance + part[4] + weight * m.importance), i, part[5], part[1]))
        ranked.sort()
        chosen = []
        used = 0
        for entry in ranked:
            cost = entry[2] + (1 if chosen else 0)
            if used + cost <= max_tokens:
                chosen.append(entry)
                used += cost
        count = self.counter.count
        while chosen:
            in_order = sorted(chosen, key=_position)
            text = " ".join([e[3] for e in in_order])
            if count(text) <= max_tokens:
                self._remember(text, [raw[e[1]][1] for e in in_order])
                return text
            chosen.remove(max(chosen, key=_neg_score_position))
        return self._truncate(ranked[0][3], max_tokens)

    def _remember(self, text: str, parts: list[tuple]) -> None:
        """Record the sentences of a summary written from ``parts``, when splitting ``text``
        again would give exactly them (every sentence but the last ends a sentence). Inside
        a summary a sentence keeps its label, text, key and so its analysis."""
        if any(p[1][-1:] not in (".", "!", "?") for p in parts[:-1]):
            return
        if len(self._written) > 10_000:
            self._written.clear()
        self._written[text] = parts


def _position(entry: tuple) -> int:
    return entry[1]


def _neg_score_position(entry: tuple) -> tuple:
    # The library drops min(score, -position): the largest (-score, position).
    return (entry[0], entry[1])


class _MemoCounter:
    """A ``TokenCounter`` remembering the counts of texts it has seen (summaries are counted
    by the summarizer and again by the buffer)."""

    def __init__(self, encoding: str) -> None:
        self.encoding = encoding
        self._tokenizer = Tokenizer(encoding)
        self._counts: dict[str, int] = {}

    def count(self, text: str) -> int:
        n = self._counts.get(text)
        if n is None:
            n = self._counts[text] = self._tokenizer.count(text)
            if len(self._counts) > 200_000:
                self._counts.clear()
        return n


_SUMMARIZERS: dict[str, FastExtractiveSummarizer] = {}


def _summarizer(encoding: str) -> FastExtractiveSummarizer:
    if encoding not in _SUMMARIZERS:
        _SUMMARIZERS[encoding] = FastExtractiveSummarizer(_MemoCounter(encoding))
    return _SUMMARIZERS[encoding]


# --------------------------------------------------------------------- run
@dataclass(frozen=True)
class Round:
    """One summarization round."""

    turn: int
    index: int
    """Position of the triggering message in the replay (x of the sawtooth)."""
    depth: int
    taken: int
    """Messages (originals or the previous summary) replaced by the new summary."""
    tokens_before: int
    tokens_after: int
    rule: str


@dataclass(frozen=True)
class SummaryRun:
    budget: int
    threshold: float
    target: float
    min_recent: int
    turns: np.ndarray
    """Turn of every message added, in order."""
    before: np.ndarray
    """Window tokens right after each message arrived."""
    after: np.ndarray
    """Window tokens once the buffer settled."""
    depth: np.ndarray
    """Depth of the deepest kept summary after each message (0: no summary yet)."""
    rounds: list[Round]
    fact_alive: dict[str, bool]
    """Fact id -> is its key still in the final window (summaries included)."""
    fact_lost_turn: dict[str, int | None]
    """Fact id -> turn at which its key left the window (None: still there)."""
    fact_turn: dict[str, int]
    final_messages: int
    final_summary: str
    evictions: int
    """Fallback evictions (summarizing could not get under the hard budget)."""
    summarizer: str = field(default="")

    @property
    def n_summarizations(self) -> int:
        return len(self.rounds)

    @property
    def max_depth(self) -> int:
        """Deepest summary ever written (a summary of summaries of ... )."""
        return max((r.depth for r in self.rounds), default=0)

    @property
    def facts_alive(self) -> int:
        return sum(self.fact_alive.values())

    def stats(self) -> dict[str, Any]:
        return {
            "budget": self.budget,
            "threshold_tokens": round(self.threshold * self.budget),
            "target_tokens": round(self.target * self.budget),
            "min_recent": self.min_recent,
            "summarizations": self.n_summarizations,
            "max_depth": self.max_depth,
            "mean_tokens_freed_per_round": round(float(np.mean(
                [r.tokens_before - r.tokens_after for r in self.rounds])), 1) if self.rounds else 0.0,
            "peak_tokens": int(self.before.max()),
            "peak_tokens_settled": int(self.after.max()),
            "fallback_evictions": self.evictions,
            "final_tokens": int(self.after[-1]),
            "facts_alive": self.facts_alive,
            "facts_planted": len(self.fact_alive),
        }


def _validate(budget: Any, threshold: Any, target: Any, min_recent: Any) -> tuple:
    budget = require_int("budget", budget, minimum=1)
    threshold = require_fraction("threshold", threshold)
    target = require_real("target", target)
    if not 0.0 < target < threshold:
        raise ValueError(f"target must be in (0, threshold={threshold!r}), got {target!r}")
    min_recent = require_int("min_recent", min_recent, minimum=0)
    return budget, float(threshold), float(target), min_recent


_RUNS: OrderedDict[tuple, tuple[SimulatedConversation, SummaryRun]] = OrderedDict()
_RUN_CACHE_SIZE = 256


def run_summary_buffer(
    conv: SimulatedConversation,
    *,
    budget: int = 2000,
    threshold: float = 0.8,
    target: float = 0.6,
    min_recent: int = 3,
) -> SummaryRun:
    """Replay ``conv`` through a ``SummaryBuffer`` (memoized by conversation and settings).

    Raises ValueError naming the value when a setting is out of range (target must
    lie below threshold).
    """
    budget, threshold, target, min_recent = _validate(budget, threshold, target, min_recent)
    key = (id(conv), len(conv.messages), budget, round(threshold, 6), round(target, 6),
           min_recent)
    hit = _RUNS.get(key)
    if hit is not None:
        _RUNS.move_to_end(key)
        return hit[1]
    run = _replay(conv, budget, threshold, target, min_recent)
    # The entry holds the conversation itself, so its id cannot be reused while cached.
    _RUNS[key] = (conv, run)
    while len(_RUNS) > _RUN_CACHE_SIZE:
        _RUNS.popitem(last=False)
    return run


def _replay(conv: SimulatedConversation, budget: int, threshold: float, target: float,
            min_recent: int) -> SummaryRun:
    summarizer = _summarizer(conv.encoding)
    factory = MessageFactory(summarizer.counter, id_prefix="summary")
    buf = SummaryBuffer(budget, threshold, target, min_recent, summarizer=summarizer,
                        factory=factory)
    facts = conv.facts
    by_message: dict[str, list] = {}
    for f in facts:
        by_message.setdefault(f.message_id, []).append(f)
    planted: list = []
    present: dict[str, bool] = {}
    lost_turn: dict[str, int | None] = {}
    n = len(conv.messages)
    turns = np.empty(n, int)
    depth = np.zeros(n, int)
    rounds: list[Round] = []
    current_depth = 0
    for i, m in enumerate(conv.messages):
        events = buf.add(m)
        for f in by_message.get(m.id, ()):
            planted.append(f)
            present[f.id] = True
            lost_turn[f.id] = None
        if events:
            for e in events:
                if e.kind == "summarization":
                    rounds.append(Round(m.turn, i, e.depth, len(e.message_ids),
                                        e.tokens_before, e.tokens_after, e.rule))
            current_depth = buf.summary_depth()
            # A planted key occurs only in its own message (simulate's guarantee), so a fact
            # is still known while that message or a summary quoting the key is kept.
            quoted = "\x00".join(s.content for s in buf.summaries())
            for f in planted:
                if present[f.id] and f.message_id not in buf and f.key not in quoted:
                    present[f.id] = False
                    lost_turn[f.id] = m.turn
        turns[i] = m.turn
        depth[i] = current_depth
    history = buf.token_history
    before = np.fromiter((s.before for s in history), int, len(history))
    after = np.fromiter((s.after for s in history), int, len(history))
    final = fact_survival(facts, buf.messages())
    summaries = buf.summaries()
    return SummaryRun(
        budget, threshold, target, min_recent, turns, before, after, depth, rounds, final,
        {f.id: lost_turn.get(f.id) for f in facts}, {f.id: f.turn for f in facts},
        len(buf), summaries[-1].content if summaries else "", len(buf.trace.evictions()),
        summarizer.name,
    )


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
    summarizer = _summarizer(conv.encoding)
    factory = MessageFactory(summarizer.counter, id_prefix="compressed")
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
    )


# ---------------------------------------------------------------- explorer
_DEPTH_COLORS = ("#636efa", "#ef553b", "#00cc96", "#ab63fa", "#ffa15a", "#19d3f3")


class SummaryExplorer(LessonExplorer):
    """The sawtooth, the summary depth and the facts' lifelines; four sliders."""

    def __init__(self, conv: SimulatedConversation, budget: int = 2000, threshold: float = 0.8,
                 target: float = 0.6, min_recent: int = 3) -> None:
        self.conv = conv
        self.facts = list(conv.facts)
        self.n_turns = conv.n_turns
        super().__init__(budget=budget, threshold=threshold, target=target,
                         min_recent=min_recent)

    def _make_sliders(self, params: dict[str, Any]) -> dict[str, Any]:
        return {
            "budget": int_slider("budget (tokens)", params["budget"], 1000, 4000, 250),
            "threshold": float_slider("threshold", params["threshold"], 0.5, 0.95, 0.05),
            "target": float_slider("target", params["target"], 0.1, 0.9, 0.05),
            "min_recent": int_slider("min_recent", params["min_recent"], 0, 10, 1),
        }

    def _make_figure(self) -> Any:
        from plotly.subplots import make_subplots

        go = _go()
        base = make_subplots(rows=3, cols=1, shared_xaxes=True, vertical_spacing=0.06,
                             row_heights=[0.45, 0.15, 0.40],
                             subplot_titles=("window tokens (sawtooth)", "summary depth",
                                             "planted facts: in the window until..."))
        fig = go.FigureWidget(base)
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
        fig.update_layout(height=720, margin=dict(l=60, r=10, t=40, b=40))
        fig.update_xaxes(title_text="turn", row=3, col=1)
        fig.update_yaxes(title_text="tokens", rangemode="tozero", row=1, col=1)
        fig.update_yaxes(title_text="fact #", row=3, col=1)
        return fig

    def _compute(self, budget: int, threshold: float, target: float,
                 min_recent: int) -> SummaryRun:
        if target >= threshold:
            raise ValueError(f"target must be below threshold ({threshold!r}), got {target!r}")
        return run_summary_buffer(self.conv, budget=budget, threshold=threshold, target=target,
                                  min_recent=min_recent)

    def update(self, **params: Any) -> Any:
        """As ``LessonExplorer.update``; a target at or above the threshold is moved just under it."""
        merged = {**self.params, **{k: self.clean(k, v) for k, v in params.items()}}
        if "target" in merged and "threshold" in merged and merged["target"] >= merged["threshold"]:
            params = {**params, "target": round(merged["threshold"] - 0.05, 4)}
        return super().update(**params)

    def _draw(self, run: SummaryRun) -> None:
        data = self.fig.data
        n = len(run.turns)
        x = np.repeat(run.turns, 2)
        y = np.empty(2 * n, int)
        y[0::2] = run.before
        y[1::2] = run.after
        data[0].x, data[0].y = x, y
        for trace, level in zip(data[1:4], (1.0, run.threshold, run.target)):
            trace.y = [level * run.budget] * 2
        data[4].x = [r.turn for r in run.rounds]
        data[4].y = [r.tokens_before for r in run.rounds]
        data[4].marker.color = [r.depth for r in run.rounds]
        data[4].marker.cmax = max(2, run.max_depth)
        data[4].text = [f"depth {r.depth}, {r.taken} messages" for r in run.rounds]
        # The window is over budget only between a message's arrival and the summary it
        # triggers: mark the highest arrival and where the buffer settled right after it.
        peak = int(np.argmax(run.before))
        data[5].x, data[5].y = [run.turns[peak]], [int(run.before[peak])]
        data[5].text = [f"{int(run.before[peak])} on arrival, {int(run.after[peak])} once summarized"]
        data[5].textposition = "middle left" if run.turns[peak] > 0.6 * self.n_turns \
            else "middle right"
        data[6].x, data[6].y = run.turns, run.depth
        kept_x: list = []
        kept_y: list = []
        lost_x: list = []
        lost_y: list = []
        for k, f in enumerate(self.facts):
            lost = run.fact_lost_turn[f.id]
            if run.fact_alive[f.id]:
                kept_x += [f.turn, self.n_turns, None]
                kept_y += [k, k, None]
            else:
                lost_x += [f.turn, lost if lost is not None else f.turn, None]
                lost_y += [k, k, None]
        data[7].x, data[7].y = kept_x, kept_y
        data[8].x, data[8].y = lost_x, lost_y

    def summary(self) -> dict[str, Any]:
        run: SummaryRun = self.result
        return {"threshold": round(run.threshold, 2), "target": round(run.target, 2),
                **run.stats()}
