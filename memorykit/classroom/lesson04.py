"""Lesson 04: entity working memory ("which page do you mean?").

Lesson plumbing around ``memorykit.entities`` and its measurement
``memorykit.classroom.replays.entity_replay``: the seeded CMS sessions (``cms_scenario``), a
few sentences resolved against a small memory, the FIFO vs relevance table, prompt
tokens of entity ids vs the full history, read-through with the seed's SIMULATED
latencies and the health report, and the heat map's columns (``_columns``: the mean score over
runs of turns). The explorer, ``EntityHeatmapExplorer`` (every entity's eviction score over
turns under sliders for the weights, decay, frequency cap, max_size and TTL; FIFO and
relevance side by side; ``yours=relevance`` adds the student's score), is in
``lesson04_heatmap``; the clocks section in ``lesson04_clocks``.
Taught in ``notebooks/04_entity_memory.ipynb``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
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
    Resolution,
    health_report,
    prompt_token_series,
    token_savings,
)
from memorykit.classroom.replays.entity_replay import replay_lookups
from memorykit.classroom.explorer import _go
from memorykit.classroom.memo import memo
from memorykit.tokens import Tokenizer

DATA_DIR = Path(__file__).resolve().parent.parent.parent / "data" / "entities"
SCENARIOS = {"small": "cms_small.jsonl", "large": "cms_large.jsonl"}


@memo(maxsize=None)
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


# ------------------------------------------- heat-map columns (lesson04_heatmap)
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
