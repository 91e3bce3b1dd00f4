"""Lesson 04: entity working memory ("which page do you mean?").

Pure computation and printing helpers (tested, benchmarked):

* ``cms_scenario``: the seeded CMS sessions in ``data/entities/`` (loaded once).
* ``resolution_examples``: a small memory and a few sentences resolved against it
  ("update that page's title", "assign it to Dana", one that cannot be resolved).
* ``print_policy_table``: FIFO vs relevance rows from ``compare_policies``.
* ``token_costs`` / ``token_figure``: billed prompt tokens of "entity ids in the
  prompt" vs "full history" per turn, counted with the real tokenizer.
* ``read_through_demo``: working memory in front of a store, with the seed's
  SIMULATED latencies (0.2 ms memory, 50-200 ms database), and the health report.

Explorer: ``EntityHeatmapExplorer``: every entity's eviction score over turns
(entities x turns heatmap, eviction events marked with their reason), with
sliders for the recency and frequency weights, the decay, the frequency cap,
max_size and TTL; FIFO and relevance replayed on the same session beside it
(resolution success, eviction rate). A slider that only changes weights re-runs
the relevance replay (FIFO's membership does not depend on weights: it is
cached per max_size and TTL and only re-scored).
Taught in ``notebooks/04_entity_memory.ipynb``.
"""

from __future__ import annotations

from collections import OrderedDict
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
    RelevanceWeights,
    Resolution,
    SlidingWindowMemory,
    health_report,
    prompt_token_series,
    relevance_scores,
    render_system_prompt,
)
from memorykit.evaluation.entity_replay import ReplayResult, replay
from memorykit.lessons._app import LessonExplorer, _go, float_slider, int_slider
from memorykit.lessons._figure import legend_below, typed_spec
from memorykit.tokens import Tokenizer

DATA_DIR = Path(__file__).resolve().parent.parent.parent / "data" / "entities"
SCENARIOS = {"small": "cms_small.jsonl", "large": "cms_large.jsonl"}


@lru_cache(maxsize=None)
def cms_scenario(name: str = "large") -> Any:
    """``data/entities/cms_<name>.jsonl`` as a ``CMSScenario`` (loaded once per process)."""
    from memorykit.scenarios import load_scenario

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
DEMO_SENTENCES = (
    "Update that page's title",
    "Assign it to Dana",
    "Who wrote the previous entry?",
    "Close that ticket",
)
"""Resolved in order against ``demo_memory()``; the last one has no antecedent."""


def demo_memory() -> RelevanceMemory:
    """A page, two blog entries and a user, opened one minute apart (seed 000's setting)."""
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
        n = len(self.turn)
        checkpoints = [c for c in (10, 100, n) if c <= n]
        out: dict[str, Any] = {"encoding": self.encoding, "turns": n}
        for c in checkpoints:
            out[f"turn {c}: full history"] = int(self.full_history[c - 1])
            out[f"turn {c}: entity prompt"] = int(self.entity_prompt[c - 1])
        out["entity prompt max"] = int(self.entity_prompt.max())
        out["session total: full history"] = int(self.full_history.sum())
        out["session total: entity prompt"] = int(self.entity_prompt.sum())
        out["saving (share of full history)"] = round(
            1 - float(self.entity_prompt.sum()) / float(self.full_history.sum()), 3)
        return out

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
    hit_ms: float
    miss_ms_mean: float
    all_from_store_ms: float
    health: list[Any]


def read_through_demo(scenario: Any, max_size: int = 20, n_turns: int = 200,
                      resolution_success: float | None = None, seed: int = 0) -> ReadThroughDemo:
    """Look up every entity the first ``n_turns`` turns act on through working memory.

    Latencies are SIMULATED with the seed's figures (0.2 ms memory, 50-200 ms store):
    nothing sleeps and nothing here is a measurement of this machine.
    """
    store = InMemoryStore(scenario.entities, seed=seed)
    memory = RelevanceMemory(max_size, clock=StepClock())
    rt = ReadThroughMemory(memory, store)
    for turn in scenario.turns[:n_turns]:
        memory.clock.set(turn.t_minutes * 60.0)
        keys = [e.key if hasattr(e, "key") else e.antecedent for e in turn.user_events()]
        keys += [m.key for m in turn.assistant_mentions()]
        for key in keys:
            rt.lookup(key, turn=turn.turn)
    hits = [x.simulated_ms for x in rt.lookups if x.source == "memory"]
    misses = [x.simulated_ms for x in rt.lookups if x.source != "memory"]
    stats = rt.stats()
    all_store = sum(misses) + len(hits) * float(np.mean(misses)) if misses else 0.0
    health = health_report(memory, resolution_success=resolution_success,
                           access_latency_ms=stats["simulated_ms_mean"])
    return ReadThroughDemo(stats, hits[0] if hits else 0.0,
                           float(np.mean(misses)) if misses else 0.0, all_store, health)


def print_read_through(demo: ReadThroughDemo) -> None:
    s = demo.stats
    print("SIMULATED latency (seed 000's figures, no real database, nothing timed):")
    print(f"  lookups {s['lookups']}: {s['hits']} served by working memory, {s['misses']} fetched from the store")
    print(f"  one working-memory hit: {demo.hit_ms:.1f} ms (simulated)")
    print(f"  one store fetch: {demo.miss_ms_mean:.0f} ms on average (simulated, 50-200 ms uniform)")
    print(f"  total {s['simulated_ms_total'] / 1000:.1f} s simulated; every lookup from the store: "
          f"{demo.all_from_store_ms / 1000:.1f} s simulated")
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
    n = score.shape[1]
    pad = (-n) % per_column
    if pad:
        score = np.concatenate([score, np.full((score.shape[0], pad), np.nan)], axis=1)
    blocks = score.reshape(score.shape[0], -1, per_column)
    present = ~np.isnan(blocks)
    counts = present.sum(axis=2)
    sums = np.where(present, blocks, 0.0).sum(axis=2)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)


def _ttl(ttl_minutes: float) -> float | None:
    return None if ttl_minutes <= 0 else float(ttl_minutes)


class EntityHeatmapExplorer(LessonExplorer):
    """Eviction-score heatmap of the relevance memory, with FIFO vs relevance beside it."""

    title = "Entity eviction scores"
    cache_size = 32
    turns_per_column = 2
    """Turns per heat-map column. The plot is narrower than 1,000 pixels, so plotly.js would
    merge neighbouring turns when painting anyway; averaging pairs in the kernel halves what
    crosses to the browser and what it draws (BENCHMARKS.md, lesson 04). The readout and the
    printed summary use every turn."""

    def __init__(self, scenario: Any = None, **params: Any) -> None:
        self.scenario = cms_scenario("large") if scenario is None else scenario
        self._cache: OrderedDict[tuple[Any, ...], ReplayResult] = OrderedDict()
        super().__init__(**params)

    # ---------------------------------------------------------------- widgets
    def _make_sliders(self, params: dict[str, Any]) -> dict[str, Any]:
        p = {"w_recency": 0.6, "w_frequency": 0.4, "decay": 0.1, "frequency_cap": 10,
             "max_size": 20, "ttl_minutes": 0, **params}
        return {
            "w_recency": float_slider("recency weight", p["w_recency"], 0.0, 1.0, 0.05),
            "w_frequency": float_slider("frequency weight", p["w_frequency"], 0.0, 1.0, 0.05),
            "decay": float_slider("decay per minute", p["decay"], 0.0, 1.0, 0.01),
            "frequency_cap": int_slider("frequency cap", p["frequency_cap"], 1, 30, 1),
            "max_size": int_slider("max_size", p["max_size"], 2, 60, 1),
            "ttl_minutes": int_slider("TTL minutes (0 = off)", p["ttl_minutes"], 0, 120, 1),
        }

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
    def _replay(self, rule: str, weights: RelevanceWeights, max_size: int,
                ttl: float | None) -> ReplayResult:
        # FIFO's decisions do not depend on the weights (they only label its evictions).
        key = (rule, weights if rule == "relevance" else None, max_size, ttl)
        hit = self._cache.get(key)
        if hit is not None:
            self._cache.move_to_end(key)
            return hit
        if rule == "relevance":
            result = replay(self.scenario, lambda c: RelevanceMemory(max_size, weights, clock=c,
                                                                     ttl_minutes=ttl),
                            policy="relevance")
        else:
            result = replay(self.scenario, lambda c: SlidingWindowMemory(max_size, clock=c,
                                                                         ttl_minutes=ttl),
                            policy="fifo")
        self._cache[key] = result
        while len(self._cache) > self.cache_size:
            self._cache.popitem(last=False)
        return result

    def _compute(self, *, w_recency: float, w_frequency: float, decay: float,
                 frequency_cap: int, max_size: int, ttl_minutes: float) -> HeatmapResult:
        if w_recency + w_frequency <= 0:
            w_recency = 0.05  # the score needs some weight; the slider pair can reach 0 + 0
        weights = RelevanceWeights(w_recency, w_frequency, decay, frequency_cap)
        ttl = _ttl(ttl_minutes)
        rel = self._replay("relevance", weights, int(max_size), ttl)
        fifo = self._replay("fifo", weights, int(max_size), ttl)
        # rel.scores(weights)[2] without the recency and frequency planes (not drawn).
        mask, ages, counts = rel._cells()
        score = np.full(mask.shape, np.nan)
        score[mask] = relevance_scores(ages, counts, weights)[2]
        return HeatmapResult(rel, fifo, score, weights, int(max_size), ttl)

    def _draw(self, result: HeatmapResult) -> None:
        heat, evict, expire, bar_fifo, bar_rel = self.fig.data
        keys = result.relevance.keys
        if heat.y is None or len(heat.y) != len(keys):
            heat.y = np.arange(len(keys), dtype=np.int32)
            step = max(1, len(keys) // 20)
            self.fig.update_yaxes(tickvals=list(range(0, len(keys), step)),
                                  ticktext=list(keys[::step]), row=1, col=1)
        heat.z = typed_spec(_columns(result.score, self.turns_per_column))
        row = {k: i for i, k in enumerate(keys)}
        for trace, rules in ((evict, ("relevance",)), (expire, ("ttl",))):
            events = [e for e in result.relevance.evictions if e.rule in rules]
            trace.x = np.fromiter((e.turn for e in events), np.int32, len(events))
            trace.y = np.fromiter((row[e.key] for e in events), np.int32, len(events))
            # A numpy str array: plotly validates it in one step, a list item by item.
            trace.text = np.array([f"turn {e.turn}: {e.key} {e.label!r} {e.rule}<br>{e.reason}"
                                   for e in events], dtype=str)
        bar_fifo.y = [result.fifo.resolution_success, result.fifo.eviction_rate]
        bar_rel.y = [result.relevance.resolution_success, result.relevance.eviction_rate]

    def summary(self) -> dict[str, Any]:
        r = self.result
        rel, fifo = r.relevance.summary(), r.fifo.summary()
        w = r.weights
        in_mem = r.relevance.in_memory
        return {
            "weights": f"{w.w_recency:g}*recency + {w.w_frequency:g}*frequency, decay "
                       f"{w.decay_per_minute:g}/min, cap {w.frequency_cap:g}",
            "max_size": r.max_size,
            "ttl_minutes": "off" if r.ttl_minutes is None else f"{r.ttl_minutes:g}",
            "heatmap": f"{in_mem.shape[0]} entities x {in_mem.shape[1]} turns",
            "mean entities in memory": round(float(in_mem.sum(axis=0).mean()), 2),
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
