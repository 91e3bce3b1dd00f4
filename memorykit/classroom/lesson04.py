"""Lesson 04: entity working memory ("which page do you mean?").

Lesson plumbing around ``memorykit.entities`` and its measurement
``memorykit.classroom.replays.entity_replay``: the seeded CMS sessions (``cms_scenario``), a
few sentences resolved against a small memory, the FIFO vs relevance table, prompt
tokens of entity ids vs the full history, read-through with the seed's SIMULATED
latencies and the health report. Explorer: ``EntityHeatmapExplorer``, every entity's
eviction score over turns (eviction events marked with their reason) under sliders for
the weights, decay, frequency cap, max_size and TTL, FIFO and relevance side by side. A
weight slider replays the relevance memory only: FIFO's membership does not depend on
the weights, so its replay is kept per max_size and TTL.
Taught in ``notebooks/04_entity_memory.ipynb``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from memorykit._validate import require_choice
from memorykit.clock import StepClock
from memorykit.entities import (
    Entity,
    InMemoryStore,
    ReadThroughMemory,
    ReferenceResolver,
    RelevanceMemory,
    SEED_TTL_MINUTES,
    RelevanceWeights,
    Resolution,
    SlidingWindowMemory,
    health_report,
    prompt_token_series,
    token_savings,
)
from memorykit.classroom.replays.entity_replay import ReplayResult, replay, replay_lookups
from memorykit.classroom.explorer import LessonExplorer, Setting, _go
from memorykit.classroom.figure import legend_below, typed_spec
from memorykit.tokens import Tokenizer

DATA_DIR = Path(__file__).resolve().parent.parent.parent / "data" / "entities"
SCENARIOS = {"small": "cms_small.jsonl", "large": "cms_large.jsonl"}


@lru_cache(maxsize=None)
def cms_scenario(name: str = "large") -> Any:
    """``data/entities/cms_<name>.jsonl`` as a ``CMSScenario`` (loaded once per process)."""
    from memorykit.classroom.scenarios import load_scenario

    require_choice("name", name, tuple(SCENARIOS))
    return load_scenario(DATA_DIR / SCENARIOS[name])


def print_scenario(scenario: Any) -> None:
    s = scenario.stats()
    print(f"scenario {scenario.name}: {s['turns']} turns over {s['minutes']:.0f} simulated minutes, "
          f"{s['entities']} entities ({s['entities_mentioned']} mentioned), {s['mentions']} mentions")
    print(f"labelled references: {s['references']} "
          + ", ".join(f"{form} {n}" for form, n in s["forms"].items()))
    print(f"references the most-recent rule gets right with unlimited memory: "
          f"{s['references_heuristic_ok']} of {s['references']}")


# ------------------------------------------------------------ resolution demo
DEMO_SENTENCES = ("Update that page's title", "Assign it to Dana", "Who wrote the previous entry?",
                  "Close that ticket")
"""Resolved in order against ``demo_memory()``; the last one has no antecedent."""


def demo_memory() -> RelevanceMemory:
    """A page, two blog entries and a user, opened one minute apart (D0's setting)."""
    clock = StepClock()
    memory = RelevanceMemory(20, clock=clock)
    for entity in (Entity("page", 42, "Pricing"), Entity("entry", 7, "Spring launch"),
                   Entity("entry", 9, "Hiring update"), Entity("user", "dana", "Dana")):
        memory.add(entity)
        clock.advance_minutes(1)
    return memory


def resolution_examples(memory: RelevanceMemory | None = None,
                        sentences: Sequence[str] = DEMO_SENTENCES) -> list[tuple[str, list[Resolution]]]:
    """Each sentence with the resolutions of the references found in it (in order)."""
    memory = demo_memory() if memory is None else memory
    resolver = ReferenceResolver()
    return [(s, resolver.resolve(s, memory)) for s in sentences]


def print_resolutions(examples: list[tuple[str, list[Resolution]]]) -> None:
    for sentence, resolutions in examples:
        print(f"{sentence!r}")
        for r in resolutions:
            target = r.entity_key if r.resolved else "UNRESOLVED"
            print(f"    {r.reference_text!r} -> {target}: {r.reason}")


# --------------------------------------------------------------- policy table
def print_policy_table(rows: Sequence[dict[str, Any]]) -> None:
    """One line per policy: resolution success and eviction rate (computed by replay)."""
    print(f"{'policy':<10}{'refs':>6}{'correct':>9}{'wrong':>7}{'unres.':>8}{'success':>9}"
          f"{'lost to eviction':>18}{'evictions/adds':>16}{'eviction rate':>15}")
    for r in rows:
        print(f"{r['policy']:<10}{r['references']:>6}{r['correct']:>9}{r['wrong']:>7}"
              f"{r['unresolved']:>8}{r['resolution_success']:>9.1%}"
              f"{r['failures_antecedent_evicted']:>18}{str(r['evictions']) + '/' + str(r['adds']):>16}"
              f"{r['eviction_rate']:>15.1%}")


# --------------------------------------------------------------- token costs
@dataclass(frozen=True)
class TokenCosts:
    turn: np.ndarray
    full_history: np.ndarray
    entity_prompt: np.ndarray
    encoding: str

    def summary(self) -> dict[str, Any]:
        return {"encoding": self.encoding, **token_savings(self.full_history, self.entity_prompt)}

    def print_summary(self) -> None:
        for k, v in self.summary().items():
            print(f"{k}: {v}")


def token_costs(scenario: Any, encoding: str = "cl100k_base", max_size: int = 20,
                top_k: int = 5) -> TokenCosts:
    """Billed prompt tokens per turn: full history vs the memory-aware system prompt."""
    series = prompt_token_series(scenario, lambda c: RelevanceMemory(max_size, clock=c),
                                 Tokenizer(encoding), top_k=top_k)
    return TokenCosts(series["turn"], series["full_history"], series["entity_prompt"], encoding)


def token_figure(costs: TokenCosts) -> Any:
    """The two token series as a static figure (log y: the full history grows linearly)."""
    go = _go()
    fig = go.Figure()
    fig.add_scatter(x=costs.turn, y=costs.full_history, name="full history + new message")
    fig.add_scatter(x=costs.turn, y=costs.entity_prompt, name="entity ids in the system prompt")
    fig.update_layout(title=f"Prompt tokens per turn ({costs.encoding})", height=360,
                      xaxis_title="turn", yaxis_title="billed prompt tokens", yaxis_type="log", yaxis_dtick=1,
                      margin=dict(l=60, r=20, t=50, b=40))
    return fig


# ------------------------------------------------------------ read-through
@dataclass(frozen=True)
class ReadThroughDemo:
    stats: dict[str, Any]
    """``ReadThroughMemory.stats()`` after the lookups (all latencies SIMULATED)."""
    memory_ms: float
    health: list[Any]


def read_through_demo(scenario: Any, max_size: int = 20, n_turns: int = 200,
                      resolution_success: float | None = None, seed: int = 0) -> ReadThroughDemo:
    """Look up every entity the first ``n_turns`` turns act on through working memory.

    Latencies are SIMULATED with the seed's figures (0.2 ms memory, 50-200 ms store):
    nothing sleeps and nothing here is a measurement of this machine.
    """
    memory = RelevanceMemory(max_size, clock=StepClock())
    rt = ReadThroughMemory(memory, InMemoryStore(scenario.entities, seed=seed))
    replay_lookups(scenario, rt, n_turns)
    stats = rt.stats()
    health = health_report(memory, resolution_success=resolution_success,
                           access_latency_ms=stats["simulated_ms_mean"])
    return ReadThroughDemo(stats, rt.memory_latency_ms, health)


def print_read_through(demo: ReadThroughDemo) -> None:
    s = demo.stats
    print("SIMULATED latency (D0's figures, no real database, nothing timed):")
    print(f"  lookups {s['lookups']}: {s['hits']} served by working memory, {s['misses']} fetched from the store")
    print(f"  one working-memory hit: {demo.memory_ms if s['hits'] else 0.0:.1f} ms (simulated)")
    print(f"  one store fetch: {s['simulated_ms_per_miss'] or 0.0:.0f} ms on average (simulated, 50-200 ms uniform)")
    print(f"  total {s['simulated_ms_total'] / 1000:.1f} s simulated; every lookup from the store: "
          f"{(s['simulated_ms_store_only'] or 0.0) / 1000:.1f} s simulated")
    print(f"  hit rate {s['hit_rate']:.1%}, mean {s['simulated_ms_mean']:.1f} ms per lookup, store fetches "
          "included (simulated)")


def print_health(metrics: Sequence[Any]) -> None:
    print(f"{'metric':<20}{'value':>10}{'target':>10}{'alert':>8}  status")
    for m in metrics:
        value = "n/a" if m.value is None else (
            f"{m.value:.1f}" if m.name.endswith("ms") else f"{m.value:.1%}")
        print(f"{m.name:<20}{value:>10}{m.target:>10}{m.alert:>8}  {m.status.upper()}")


# ------------------------------------------------------------------ explorer
@dataclass(frozen=True)
class HeatmapResult:
    relevance: ReplayResult
    fifo: ReplayResult
    score: np.ndarray
    """(entities, turns) relevance-policy scores under the slider weights, NaN where absent."""
    weights: RelevanceWeights
    max_size: int
    ttl_minutes: float | None


def _column_turns(n_turns: int, per_column: int) -> np.ndarray:
    """The last turn of each heat-map column of ``per_column`` turns."""
    return np.minimum(np.arange(per_column, n_turns + per_column, per_column), n_turns).astype(np.int32)


def _columns(score: np.ndarray, per_column: int) -> np.ndarray:
    """Mean score over each run of ``per_column`` turns (NaN where the entity was absent)."""
    pad = (-score.shape[1]) % per_column
    if pad:
        score = np.concatenate([score, np.full((score.shape[0], pad), np.nan)], axis=1)
    sums = np.zeros((score.shape[0], score.shape[1] // per_column))
    counts = np.zeros(sums.shape)
    for k in range(per_column):  # the k-th turn of every column at once (numpy's nan-sums are slower)
        turn = score[:, k::per_column]
        present = ~np.isnan(turn)
        counts += present
        sums += np.where(present, turn, 0.0)
    with np.errstate(invalid="ignore"):
        return sums / counts  # 0 / 0: NaN where the entity was absent the whole column


class EntityHeatmapExplorer(LessonExplorer):
    """Eviction-score heatmap of the relevance memory, with FIFO vs relevance beside it."""

    title = "Entity eviction scores"
    settings = (
        Setting("w_recency", "recency weight", 0.6, 0.0, 1.0, 0.05),
        Setting("w_frequency", "frequency weight", 0.4, 0.0, 1.0, 0.05),
        Setting("decay", "decay per minute", 0.1, 0.0, 1.0, 0.01),
        Setting("frequency_cap", "frequency cap", 10, 1, 30, 1),
        Setting("max_size", "max_size", 20, 2, 60, 1),
        Setting("ttl_minutes", "TTL minutes (0 = off)", SEED_TTL_MINUTES, 0, 120, 1),
    )
    cache_size = 32
    """Replays kept (a slider moved back and forth replays nothing twice)."""
    turns_per_column = 2
    """Turns per heat-map column. The plot is narrower than 1,000 pixels, so plotly.js would
    merge neighbouring turns when painting anyway; averaging pairs in the kernel halves what
    crosses to the browser and what it draws (BENCHMARKS.md, lesson 04). The readout and the
    printed summary use every turn."""

    def __init__(self, scenario: Any = None, **params: Any) -> None:
        self.scenario = cms_scenario("large") if scenario is None else scenario
        self._replay = lru_cache(maxsize=self.cache_size)(self._run_replay)
        super().__init__(**params)

    # ---------------------------------------------------------------- figure
    def _make_figure(self) -> Any:
        from plotly.subplots import make_subplots

        go = _go()
        fig = make_subplots(rows=1, cols=2, column_widths=[0.78, 0.22], horizontal_spacing=0.2,
                            subplot_titles=("relevance memory: eviction score of each entity, "
                                            "turn by turn", "FIFO vs<br>relevance"))
        # z is a 2-D grid (entities x turns) sent as one binary typed-array spec (_figure.typed_spec)
        fig.add_trace(go.Heatmap(
            x=_column_turns(len(self.scenario.turns), self.turns_per_column), y=[], z=[],
            zmin=0.0, zmax=1.0, colorscale="Viridis",
            colorbar=dict(title=dict(text="score", side="top"), x=0.635, xanchor="left",
                          thickness=12, len=0.85, y=0.5),
            hovertemplate="turns up to %{x}, row %{y}<br>mean score %{z:.3f}<extra></extra>",
            name="score"), row=1, col=1)
        for name, symbol, color in (("relevance eviction", "x-thin", "red"),
                                    ("TTL expiry", "circle-open", "white")):
            fig.add_trace(go.Scatter(
                x=[], y=[], mode="markers", name=name,
                marker=dict(symbol=symbol, size=6, color=color, line=dict(width=1.5, color=color)),
                hovertemplate="%{text}<extra></extra>", text=[]), row=1, col=1)
        for name, color in (("FIFO", "#888"), ("relevance", "#1f77b4")):
            fig.add_trace(go.Bar(x=["resolution<br>success", "eviction<br>rate"], y=[0.0, 0.0],
                                 name=name, marker_color=color, texttemplate="%{y:.0%}",
                                 textposition="outside", cliponaxis=False), row=1, col=2)
        fig.update_yaxes(title_text="entity (first mentioned at the top)", autorange="reversed",
                         tickfont=dict(size=9), zeroline=False, row=1, col=1)
        fig.update_xaxes(title_text="turn", row=1, col=1)
        fig.update_yaxes(range=[0, 1.18], tickformat=".0%", title_text="share", row=1, col=2)
        fig.update_layout(height=560, barmode="group", margin=dict(l=70, r=10, t=50, b=50),
                          legend=legend_below())
        return fig

    # ------------------------------------------------------------ computation
    def _run_replay(self, rule: str, weights: RelevanceWeights | None, max_size: int,
                    ttl: float | None) -> ReplayResult:
        if rule == "relevance":
            return replay(self.scenario, lambda c: RelevanceMemory(max_size, weights, clock=c,
                                                                   ttl_minutes=ttl), policy=rule)
        return replay(self.scenario, lambda c: SlidingWindowMemory(max_size, clock=c, ttl_minutes=ttl),
                      policy=rule)

    def _compute(self, *, w_recency: float, w_frequency: float, decay: float,
                 frequency_cap: int, max_size: int, ttl_minutes: float) -> HeatmapResult:
        if w_recency + w_frequency <= 0:
            w_recency = 0.05  # the score needs some weight; the slider pair can reach 0 + 0
        weights = RelevanceWeights(w_recency, w_frequency, decay, frequency_cap)
        ttl = None if ttl_minutes <= 0 else float(ttl_minutes)
        rel = self._replay("relevance", weights, int(max_size), ttl)
        # FIFO's decisions do not depend on the weights (they only label its evictions).
        fifo = self._replay("fifo", None, int(max_size), ttl)
        return HeatmapResult(rel, fifo, rel.score(weights), weights, int(max_size), ttl)

    def _draw(self, result: HeatmapResult) -> None:
        heat = self.trace("score")
        keys = result.relevance.keys
        if heat.y is None or len(heat.y) != len(keys):
            heat.y = np.arange(len(keys), dtype=np.int32)
            step = max(1, len(keys) // 20)
            self.fig.update_yaxes(tickvals=list(range(0, len(keys), step)),
                                  ticktext=list(keys[::step]), row=1, col=1)
        heat.z = typed_spec(_columns(result.score, self.turns_per_column))
        row = {k: i for i, k in enumerate(keys)}
        for name, rule in (("relevance eviction", "relevance"), ("TTL expiry", "ttl")):
            events = [e for e in result.relevance.evictions if e.rule == rule]
            trace = self.trace(name)
            trace.x = np.fromiter((e.turn for e in events), np.int32, len(events))
            trace.y = np.fromiter((row[e.key] for e in events), np.int32, len(events))
            # A numpy str array: plotly validates it in one step, a list item by item.
            trace.text = np.array([f"turn {e.turn}: {e.key} {e.label!r} {e.rule}<br>{e.reason}"
                                   for e in events], dtype=str)
        for name, replayed in (("FIFO", result.fifo), ("relevance", result.relevance)):
            self.trace(name).y = [replayed.resolution_success, replayed.eviction_rate]

    def summary(self) -> dict[str, Any]:
        r = self.result
        rel, fifo = r.relevance.summary(), r.fifo.summary()
        w = r.weights
        shape = r.score.shape
        return {
            "weights": f"{w.w_recency:g}*recency + {w.w_frequency:g}*frequency, decay "
                       f"{w.decay_per_minute:g}/min, cap {w.frequency_cap:g}",
            "max_size": r.max_size,
            "ttl_minutes": "off" if r.ttl_minutes is None else f"{r.ttl_minutes:g}",
            "heatmap": f"{shape[0]} entities x {shape[1]} turns",
            "mean entities in memory": round(r.relevance.mean_entities, 2),
            "mean score in memory": round(float(np.nanmean(r.score)), 3),
            "relevance evictions / expiries": f"{rel['evictions']} / {rel['expirations']}",
            "fifo evictions / expiries": f"{fifo['evictions']} / {fifo['expirations']}",
            "relevance resolution success": round(rel["resolution_success"], 3),
            "fifo resolution success": round(fifo["resolution_success"], 3),
            "relevance eviction rate": round(rel["eviction_rate"], 3),
            "fifo eviction rate": round(fifo["eviction_rate"], 3),
            "relevance lost to eviction": rel["failures_antecedent_evicted"],
            "fifo lost to eviction": fifo["failures_antecedent_evicted"],
        }
