"""Lesson 11's explorer: tokens per call under the sliders, and the student's reply judge in
the loop beside the library's.

* ``_offline_loop(budget, threshold, recall_limit, distractor_turns, seed)``: ``run_loop``
  (``memorykit.classroom.lesson11``) on the offline components, memoized; the components
  (``_explorer_components``) are built once, with per-text memos (summaries, vectors, token
  counts), so a slider move replays the conversation cheaply.
* ``judged_loop(judge, second, budget=, threshold=, ...)``: the same loop with the summarizer
  of the lesson's real-model section, ``FallbackSummarizer(OpenAISummarizer(chat,
  min_overlap=0.3))``, except that ``judge(reply, finish_reason, messages, cap)`` decides which
  of the model's replies to trust (``JudgedSummarizer``; the library's judge is ``refusal``)
  and ``second``, when given, judges every reply too without deciding anything. Offline and
  deterministic: the "model" is ``InOrderReplies``, SmolLM2's recorded summary replies handed
  out in the order it gave them (**not a model**). At the recording's settings (budget 600,
  threshold 0.8) with the library's judge, every request is the one SmolLM2 answered; at
  other settings its replies answer other requests, failing the ways it failed.
* ``LoopExplorer``: budget, threshold and ``recall_limit`` sliders; tokens per probe, split
  into recalled entries, working memory and the current input. Always offline: a slider never
  calls a model. ``yours=refusal_reason`` adds a panel: each summary request of the library's
  run, the library's verdict and yours on the same reply, and, in the summary, the loop your
  judge ran.

Taught in ``notebooks/11_llm_in_the_loop.ipynb``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from memorykit._validate import require_int
from memorykit.classroom.explorer import Implementation, LessonExplorer, _go, yours_name
from memorykit.classroom.figure import legend_below
from memorykit.classroom.lesson11 import (DEFAULTS, SETTINGS, library_judge, offline_backend,
                                          recorded_replies, run_loop)
from memorykit.classroom.memo import memo
from memorykit.classroom.replays.service_loop import LoopResult
from memorykit.embeddings import MemoEmbedder
from memorykit.llm.backend import Backend
from memorykit.llm.summarizer import OpenAISummarizer
from memorykit.messages import Message
from memorykit.summary import ExtractiveSummarizer, MemoSummarizer
from memorykit.tokens import MemoCounter

_BARS = (("recalled", "recalled_tokens"), ("working memory", "working_tokens"),
         ("current input", "current_tokens"))
"""The explorer's stacked bars: trace name, the probe's token count it shows."""
VERDICTS = ("accepted", "empty", "cut off", "too long", "off-topic")
"""A judge's verdicts on a reply, as the panel's rows (None, the reply kept, is "accepted")."""
JUDGE = Implementation("a reply judge: a function (reply, finish_reason, messages, cap) "
                       "returning a reason or None", parameters=("reply", "finish_reason",
                                                                 "messages", "cap"))


@memo(maxsize=1)
def _explorer_components() -> tuple[Backend, MemoEmbedder, MemoCounter]:
    """The explorer's offline backend, embedder and counter, built once: a slider move replays
    the conversation, the memos (summaries, vectors, token counts) make that cheap."""
    base, counter = offline_backend(), MemoCounter()
    summarizer = MemoSummarizer(ExtractiveSummarizer(counter))
    return (Backend(base.kind, base.description, base.chat, summarizer, base.critic, base.actor),
            MemoEmbedder(), counter)


@memo(maxsize=64)
def _offline_loop(budget: int, threshold: float, recall_limit: int, distractor_turns: int,
                  seed: int) -> LoopResult:
    backend, embedder, counter = _explorer_components()
    return run_loop(backend, budget=budget, threshold=threshold, recall_limit=recall_limit,
                    distractor_turns=distractor_turns, seed=seed, embedder=embedder,
                    counter=counter)


# ------------------------------------------------------------- a judge in the loop
class InOrderReplies:
    """NOT a model: SmolLM2's recorded summary replies, the k-th (with its ``finish_reason``)
    for the k-th request whatever it asks, from the first again after the last."""

    is_scripted = True
    name = "SmolLM2's recorded summary replies, in order (not a model)"

    def __init__(self, replies: Sequence[tuple[str, str | None]]) -> None:
        self.replies = tuple(replies)
        self.calls = 0
        self.last_finish_reason: str | None = None

    def complete(self, messages: Any, *, max_tokens: int | None = None) -> str:
        reply, self.last_finish_reason = self.replies[self.calls % len(self.replies)]
        self.calls += 1
        return reply


@dataclass(frozen=True)
class JudgedReply:
    """One summary request of a judged loop: the reply, and what each judge said of it."""

    request: int
    """1 for the loop's first summary request."""
    cap: int
    finish_reason: str | None
    reply: str
    verdict: str
    """The deciding judge's: "accepted" (the reply became the summary) or its reason."""
    second: str | None
    """The other judge's verdict on the same reply (None: no other judge)."""


def _verdict(judge: Callable[..., Any], reply: str, finish: str | None,
             messages: Sequence[Message], cap: int) -> str:
    said = judge(reply, finish, messages, cap)
    if said is not None and not isinstance(said, str):
        raise TypeError(f"{getattr(judge, '__name__', judge)} must return a reason (a str) or "
                        f"None, got {said!r} for a reply with finish_reason {finish!r}")
    return "accepted" if said is None else said


class JudgedSummarizer:
    """``FallbackSummarizer(OpenAISummarizer(chat, min_overlap=0.3))`` with its judge as a
    parameter: the model's reply is the summary when ``judge`` returns None, else ``fallback``
    writes it. Every reply is recorded in ``judged``, with ``second``'s verdict when given."""

    is_llm = False

    def __init__(self, chat: Any, judge: Callable[..., Any], second: Callable[..., Any] | None,
                 fallback: Any) -> None:
        self.model = OpenAISummarizer(chat)  # builds the request exactly as the library does
        self.judge, self.second, self.fallback = judge, second, fallback
        self.name = f"{chat.name} judged by {getattr(judge, '__name__', 'a judge')}"
        self.judged: list[JudgedReply] = []
        self.error: Exception | None = None
        """The first failure of a judge (a summary buffer never raises for its summarizer)."""

    def summarize(self, messages: Sequence[Message], max_tokens: int) -> str:
        if max_tokens == 0 or not messages:
            return ""
        chat = self.model.chat_model
        reply = chat.complete(self.model.request(messages, max_tokens), max_tokens=max_tokens)
        finish = chat.last_finish_reason
        try:
            verdict = _verdict(self.judge, reply, finish, messages, max_tokens)
            second = None if self.second is None else \
                _verdict(self.second, reply, finish, messages, max_tokens)
        except Exception as exc:  # the buffer would evict instead: kept for judged_loop to raise
            exc.add_note(f"(a judge failed on summary request {len(self.judged) + 1})")
            self.error = self.error or exc
            raise
        self.judged.append(JudgedReply(len(self.judged) + 1, max_tokens, finish, reply, verdict,
                                       second))
        return reply.strip() if verdict == "accepted" else \
            self.fallback.summarize(messages, max_tokens)


@dataclass(frozen=True)
class JudgedRun:
    loop: LoopResult
    replies: tuple[JudgedReply, ...]

    def verdicts(self, second: bool = False) -> dict[str, int]:
        """How many replies got each verdict (the deciding judge's, or ``second``'s)."""
        said = Counter(r.second if second else r.verdict for r in self.replies)
        return {v: said[v] for v in (*VERDICTS, *sorted(set(said) - set(VERDICTS))) if said[v]}

    def line(self) -> str:
        """The loop this judge ran, in one line."""
        s = self.loop.summary()
        return (f"{self.verdicts().get('accepted', 0)} of {len(self.replies)} replies kept; "
                f"first summaries kept {s['facts_kept_by_summary']}/{s['facts_summarized']} "
                f"facts; {s['facts_in_context']}/{s['probes']} facts in the context at "
                f"{s['mean_tokens_per_call']} tokens per call")


@memo(maxsize=64)
def judged_loop(judge: Callable[..., Any], second: Callable[..., Any] | None = None, *,
                budget: int = DEFAULTS["budget"], threshold: float = DEFAULTS["threshold"],
                recall_limit: int = DEFAULTS["recall_limit"],
                distractor_turns: int = DEFAULTS["distractor_turns"],
                seed: int = DEFAULTS["seed"]) -> JudgedRun:
    """The lesson's loop with ``judge`` deciding which of SmolLM2's recorded replies become
    summaries (see the module docstring); the memory reader answers the probes."""
    judge = JUDGE.check("judge", judge)
    second = None if second is None else JUDGE.check("second", second)
    base, embedder, counter = _explorer_components()
    replies = tuple((r.reply, r.finish_reason) for r in recorded_replies())
    summarizer = JudgedSummarizer(InOrderReplies(replies), judge, second, base.summarizer)
    backend = Backend("offline", "SmolLM2's recorded summaries, judged", base.chat, summarizer,
                      base.critic, base.actor)
    loop = run_loop(backend, budget=budget, threshold=threshold, recall_limit=recall_limit,
                    distractor_turns=distractor_turns, seed=seed, embedder=embedder,
                    counter=counter)
    if summarizer.error is not None:
        raise summarizer.error
    return JudgedRun(loop, tuple(summarizer.judged))


# ---------------------------------------------------------------- explorer
@dataclass(frozen=True)
class LoopView:
    loop: LoopResult
    """The offline loop the bars show."""
    judged: dict[str, tuple[JudgedRun, JudgedRun]]
    """Per student's judge: the library's run (``second``: that judge) and the student's own."""


class LoopExplorer(LessonExplorer):
    """Working-memory budget, summary threshold and recall_limit vs tokens sent per probe;
    ``yours=`` a reply judge adds its verdicts on SmolLM2's summaries beside the library's.

    Always the offline components (a slider never calls a model).
    """

    title = "Tokens sent per call"
    settings = SETTINGS
    implementation = JUDGE

    def __init__(self, distractor_turns: int = DEFAULTS["distractor_turns"],
                 seed: int = DEFAULTS["seed"], yours: Any = None, **params: Any) -> None:
        self.distractor_turns = require_int("distractor_turns", distractor_turns, minimum=0)
        self.seed = require_int("seed", seed, minimum=0)
        super().__init__(yours=yours, **params)

    def _make_figure(self) -> Any:
        go = _go()
        if not self.yours:
            fig = go.Figure()
            self._bars(fig, {})
            fig.update_layout(barmode="stack", height=360, title=self.title,
                              xaxis_title="probe (✓ fact in the context)",
                              yaxis_title="prompt tokens sent", margin=dict(t=50, b=40))
            return fig
        from plotly.subplots import make_subplots

        fig = make_subplots(rows=2, cols=1, row_heights=[0.45, 0.55], vertical_spacing=0.2,
                            subplot_titles=(f"{self.title} (offline components)",
                                            "SmolLM2's summary replies, judged: the library's "
                                            "verdict and yours on each"))
        self._bars(fig, {"row": 1, "col": 1})
        hover = "%{text}<extra>%{fullData.name}: %{y}</extra>"
        fig.add_scatter(name="library: refusal", x=[], y=[], text=[], mode="markers",
                        marker=dict(symbol="circle-open", size=15, color="#1f77b4",
                                    line=dict(width=2)), hovertemplate=hover, row=2, col=1)
        for name in self.yours:  # the student's verdicts: black crosses in the library's circles
            fig.add_scatter(name=yours_name(name), x=[], y=[], text=[], mode="markers",
                            marker=dict(symbol="x-thin-open", size=10, color="black",
                                        line=dict(width=2)), hovertemplate=hover, row=2, col=1)
        fig.update_layout(barmode="stack", height=720, margin=dict(l=70, r=10, t=40, b=40),
                          legend=legend_below())
        fig.update_xaxes(title_text="probe (✓ fact in the context)", row=1, col=1)
        fig.update_yaxes(title_text="prompt tokens sent", row=1, col=1)
        fig.update_xaxes(title_text="summary request of the library's run (hover: the reply)",
                         rangemode="tozero", row=2, col=1)
        fig.update_yaxes(title_text="verdict", type="category", categoryorder="array",
                         categoryarray=list(VERDICTS), range=[-0.5, len(VERDICTS) - 0.5],
                         row=2, col=1)
        return fig

    @staticmethod
    def _bars(fig: Any, where: dict[str, int]) -> None:
        for (name, _), color in zip(_BARS, ("#d62728", "#1f77b4", "#7f7f7f")):
            fig.add_bar(name=name, x=[], y=[], marker_color=color, **where)

    def _compute(self, budget: int, threshold: float, recall_limit: int) -> LoopView:
        settings = dict(budget=int(budget), threshold=float(threshold),
                        recall_limit=int(recall_limit), distractor_turns=self.distractor_turns,
                        seed=self.seed)
        return LoopView(_offline_loop(*settings.values()),
                        {name: (judged_loop(library_judge, judge, **settings),
                                judged_loop(judge, **settings))
                         for name, judge in self.yours.items()})

    def _draw(self, result: LoopView) -> None:
        x = [f"{p.fact_id} {'✓' if p.fact_in_context else '✗'}" for p in result.loop.probes]
        for name, attr in _BARS:
            bars = self.trace(name)
            bars.x, bars.y = x, [getattr(p, attr) for p in result.loop.probes]
        if self.yours and self.moved("budget", "threshold"):  # recall_limit asks no summary
            for i, (name, (library, _)) in enumerate(result.judged.items()):
                text = [f"request {r.request}, cap {r.cap} tokens, finish_reason "
                        f"{r.finish_reason!r}: {' '.join(r.reply.split())[:90]}..."
                        for r in library.replies]
                x = [r.request for r in library.replies]
                if i == 0:
                    mine = self.trace("library: refusal")
                    mine.x, mine.y, mine.text = x, [r.verdict for r in library.replies], text
                theirs = self.trace(yours_name(name))
                theirs.x, theirs.y, theirs.text = x, [r.second for r in library.replies], text

    def summary(self) -> dict[str, Any]:
        s = self.result.loop.summary()
        out = {**self.params, **{k: s[k] for k in ("summarizations", "facts_in_context",
                                                   "facts_recalled", "answered",
                                                   "mean_tokens_per_call")}}
        for i, (name, (library, own)) in enumerate(self.result.judged.items()):
            if i == 0:
                out["library_verdicts"] = _counts(library.verdicts())
                out["library_judge_loop"] = library.line()
            agree = sum(r.verdict == r.second for r in library.replies)
            out[f"{yours_name(name)}_verdicts"] = _counts(library.verdicts(second=True))
            out[f"{yours_name(name)}_agrees_on"] = f"{agree}/{len(library.replies)} replies"
            out[f"{yours_name(name)}_loop"] = own.line()
        return out


def _counts(verdicts: dict[str, int]) -> str:
    return ", ".join(f"{v} {n}" for v, n in verdicts.items()) or "no summary requested"
