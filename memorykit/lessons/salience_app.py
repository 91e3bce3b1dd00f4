"""Lesson 07: which objects are salient, turn by turn, and why (seed 002's salience).

Pure computation (tested, benchmarked):

* ``default_workflow`` / ``salience_lesson_data``: the committed 30-day
  workflow scenario (``data/workflow/workflow_30d.jsonl``, regenerated with
  seed 2 when the file is absent), replayed once through ``WorkingMemory``;
  its weight-independent ``SalienceInputs`` (45 objects x 600 turns) and a
  deterministic layout of its knowledge graph.
* ``salience_weights``: slider values -> ``SalienceWeights`` (validated).
* ``spring_layout``: a seeded Fruchterman-Reingold layout in numpy (no
  networkx needed), so the graph is drawn the same way every time.
* ``context_hops``: hops from every object to the context of one turn (the
  entities of active tasks, live notes and recent mentions): the 2-hop
  neighbourhood the Objects column is drawn from.
* ``top_objects`` / ``format_top_objects``: the objects shown at a turn, best
  first, with the five weighted components of their salience.
* ``salience_view``: all of the above for one set of slider values.

Explorer: ``SalienceExplorer`` (turn, max_objects, recency window and the
five weights): a heatmap of salience over objects x turns with the shown
objects in colour, the components of the shown objects at the chosen turn as
stacked bars, and the knowledge graph with the turn's 2-hop neighbourhood.
Taught in ``notebooks/07_objects_salience.ipynb``.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from memorykit._validate import require_int
from memorykit.lessons._app import LessonExplorer, _go, float_slider, int_slider
from memorykit.lessons._figure import heat_grid, legend_below, typed_spec
from memorykit.scenarios.workflow import (
    WorkflowScenario,
    generate_workflow_scenario,
    load_workflow,
    run_workflow,
)
from memorykit.workspace import KnowledgeGraph, SalienceInputs, SalienceMatrix, SalienceWeights, salience_matrix
from memorykit.workspace.objects import OBJECT_KINDS, SALIENCE_COMPONENTS

DATA_FILE = Path(__file__).resolve().parent.parent.parent / "data" / "workflow" / "workflow_30d.jsonl"
DAY = 86400.0

COMPONENT_LABELS = {
    "recent_mention": "recently mentioned",
    "active_task_link": "linked to an active task",
    "note_link": "linked to a note",
    "relationship": "relationship value",
    "belief_strength": "belief strength",
}
COMPONENT_SHORT = {
    "recent_mention": "recent",
    "active_task_link": "task",
    "note_link": "note",
    "relationship": "rel",
    "belief_strength": "belief",
}
COMPONENT_COLORS = {
    "recent_mention": "#636efa",
    "active_task_link": "#ef553b",
    "note_link": "#00cc96",
    "relationship": "#ab63fa",
    "belief_strength": "#ffa15a",
}
KIND_COLORS = {
    "person": "#ab63fa", "entity": "#636efa", "belief": "#ffa15a", "knowledge": "#19d3f3",
    "goal": "#00cc96", "temporal": "#ef553b", "pattern": "#b6e880",
}
HOP_COLORSCALE = [[0.0, "#d62728"], [0.25, "#d62728"], [0.25, "#ff7f0e"], [0.5, "#ff7f0e"],
                  [0.5, "#ffd166"], [0.75, "#ffd166"], [0.75, "#e0e0e0"], [1.0, "#e0e0e0"]]
"""Node colour by hops to the turn's context (cmin -0.5, cmax 3.5): 0 red, 1 orange, 2 yellow,
3 or more (outside the 2-hop neighbourhood) grey."""
WEIGHT_DEFAULTS = {name: getattr(SalienceWeights(), name) for name in SALIENCE_COMPONENTS}


# ------------------------------------------------------------------ data
@lru_cache(maxsize=1)
def default_workflow() -> WorkflowScenario:
    """The committed 30-day workflow scenario (or the same scenario regenerated, seed 2)."""
    if DATA_FILE.is_file():
        return load_workflow(DATA_FILE)
    return generate_workflow_scenario(seed=2, days=30, name="workflow-30d")


@dataclass(frozen=True)
class SalienceLessonData:
    """Everything lesson 07 needs that does not depend on the sliders."""

    inputs: SalienceInputs
    times: np.ndarray
    """(T,) clock time of each turn, seconds from the start of day 0."""
    graph: KnowledgeGraph
    names: tuple[str, ...]
    """Short display label of each object (same order as ``inputs.ids``)."""
    layout: np.ndarray
    """(N, 2) node positions of the knowledge-graph drawing."""
    edges: np.ndarray
    """(E, 2) object indices of the graph's edges."""

    @property
    def n_turns(self) -> int:
        return int(self.times.size)


def short_label(obj: Any, width: int = 30) -> str:
    """A display label: the object's name, cut to ``width`` characters."""
    name = obj.name
    return name if len(name) <= width else name[: width - 1] + "…"


@lru_cache(maxsize=1)
def salience_lesson_data() -> SalienceLessonData:
    """Replay the default workflow once (no token counting) and keep the salience inputs."""
    run = run_workflow(default_workflow(), count_tokens=False)
    graph = run.memory.graph
    ids = run.inputs.ids
    index = {oid: i for i, oid in enumerate(ids)}
    edges = np.array([(index[a], index[b]) for a, b, _ in graph.edges()], dtype=int).reshape(-1, 2)
    layout = spring_layout(len(ids), edges, seed=0)
    names = tuple(short_label(graph.get(oid)) for oid in ids)
    return SalienceLessonData(run.inputs, run.times, graph, names, layout, edges)


# ---------------------------------------------------------------- layout
def spring_layout(n: int, edges: np.ndarray, *, seed: int = 0, iterations: int = 300,
                  gravity: float = 4.0) -> np.ndarray:
    """Fruchterman-Reingold positions of ``n`` nodes, scaled into [-1, 1]; seeded, deterministic.

    Every pair of nodes repels with k^2 / d, every edge attracts with d^2 / k
    (k = sqrt(1 / n)), and ``gravity * k * distance`` pulls every node to the
    centre (without it a few far-flung nodes squeeze the rest together once
    scaled); each step moves a node at most by a temperature that cools
    linearly to zero.
    """
    require_int("n", n, minimum=1)
    require_int("iterations", iterations, minimum=1)
    edges = np.asarray(edges, dtype=int).reshape(-1, 2)
    if edges.size and (edges.min() < 0 or edges.max() >= n):
        raise ValueError(f"edges must index nodes 0..{n - 1}, got indices {edges.min()}..{edges.max()}")
    rng = np.random.default_rng(seed)
    pos = rng.uniform(-1.0, 1.0, size=(n, 2))
    if n == 1:
        return np.zeros((1, 2))
    adj = np.zeros((n, n))
    adj[edges[:, 0], edges[:, 1]] = 1.0
    adj[edges[:, 1], edges[:, 0]] = 1.0
    k = np.sqrt(1.0 / n)
    temps = np.linspace(0.1, 0.0, iterations, endpoint=False)
    for temp in temps:
        delta = pos[:, None, :] - pos[None, :, :]
        dist = np.maximum(np.sqrt((delta**2).sum(axis=-1)), 0.01)
        # repulsion k^2/d minus attraction d^2/k along edges, both along delta/d
        mag = k * k / dist - adj * dist * dist / k
        np.fill_diagonal(mag, 0.0)
        disp = (delta / dist[:, :, None] * mag[:, :, None]).sum(axis=1) - gravity * k * pos
        length = np.maximum(np.sqrt((disp**2).sum(axis=1)), 0.01)
        pos += disp / length[:, None] * np.minimum(length, temp)[:, None]
    pos -= pos.mean(axis=0)
    scale = np.abs(pos).max()
    return pos / scale if scale > 0 else pos


# ---------------------------------------------------------------- salience
def salience_weights(
    *,
    recent_mention: float = WEIGHT_DEFAULTS["recent_mention"],
    active_task_link: float = WEIGHT_DEFAULTS["active_task_link"],
    note_link: float = WEIGHT_DEFAULTS["note_link"],
    relationship: float = WEIGHT_DEFAULTS["relationship"],
    belief_strength: float = WEIGHT_DEFAULTS["belief_strength"],
    recency_turns: int = 5,
    max_objects: int = 20,
) -> SalienceWeights:
    """Slider values as ``SalienceWeights`` (link_hops 1, 2-hop neighbourhood as in the library)."""
    return SalienceWeights(
        recent_mention=recent_mention, active_task_link=active_task_link, note_link=note_link,
        relationship=relationship, belief_strength=belief_strength, recency_turns=recency_turns,
        max_objects=max_objects,
    )


def _turn_index(data: SalienceLessonData, turn: int) -> int:
    require_int("turn", turn, minimum=1)
    if turn > data.n_turns:
        raise ValueError(f"turn must be in 1..{data.n_turns}, got {turn}")
    return turn - 1


def context_hops(inputs: SalienceInputs, t: int, recency_turns: int) -> np.ndarray:
    """(N,) hops from each object to the context at turn index ``t``.

    The context is what seeds the neighbourhood query: entities named by active
    tasks, by live notes, and objects mentioned in the last ``recency_turns``
    turns. 0 = part of the context; ``inf`` = unreachable.
    """
    recent = np.flatnonzero(inputs.turns_since_mention[:, t] < recency_turns)
    to_recent = inputs.hop_matrix[:, recent].min(axis=1) if recent.size else np.full(len(inputs.ids), np.inf)
    return np.minimum(np.minimum(inputs.task_hops[:, t], inputs.note_hops[:, t]), to_recent)


@dataclass(frozen=True)
class ObjectScore:
    """One object's salience at one turn, split into its weighted components."""

    id: str
    name: str
    kind: str
    rank: int
    """0 = first in the Objects column."""
    total: float
    components: dict[str, float]
    pinned: bool
    """A temporal object whose period is on: always shown, whatever its score."""

    def line(self) -> str:
        parts = " + ".join(f"{COMPONENT_SHORT[c]} {v:.2f}" for c, v in self.components.items() if v > 0)
        why = "pinned: current period" if self.pinned else (parts or "no component")
        return f"{self.rank + 1:>2}. {self.name} [{self.kind}] {self.total:.2f} = {why}"


def top_objects(
    matrix: SalienceMatrix, data: SalienceLessonData, turn: int, n: int | None = None
) -> list[ObjectScore]:
    """The objects the column shows at ``turn`` (1-based), best first; ``n`` cuts the list."""
    t = _turn_index(data, turn)
    shown = np.flatnonzero(matrix.selected[:, t])
    shown = shown[np.argsort(matrix.rank[shown, t], kind="stable")]
    if n is not None:
        shown = shown[: require_int("n", n, minimum=0)]
    inputs = data.inputs
    return [
        ObjectScore(
            inputs.ids[i], data.names[i], inputs.kinds[i], int(matrix.rank[i, t]),
            round(float(matrix.total[i, t]), 4),
            {c: round(float(matrix.components[c][i, t]), 4) for c in SALIENCE_COMPONENTS},
            bool(inputs.temporal_current[i, t]),
        )
        for i in shown
    ]


def format_top_objects(rows: Sequence[ObjectScore]) -> str:
    """One line per object: rank, name, kind, total = its non-zero components (2 decimals)."""
    return "\n".join(r.line() for r in rows) if rows else "(no object is shown)"


@dataclass(frozen=True)
class SalienceView:
    """Lesson 07's picture for one set of slider values."""

    turn: int
    weights: SalienceWeights
    matrix: SalienceMatrix
    hops: np.ndarray
    """(N,) hops to the context at ``turn``."""
    top: list[ObjectScore]


def salience_view(data: SalienceLessonData, turn: int, weights: SalienceWeights,
                  matrix: SalienceMatrix | None = None) -> SalienceView:
    """Salience over all turns under ``weights`` (or the given ``matrix``) and the turn's details."""
    if matrix is None:
        matrix = salience_matrix(data.inputs, weights)
    t = _turn_index(data, turn)
    hops = context_hops(data.inputs, t, weights.recency_turns)
    return SalienceView(turn, weights, matrix, hops, top_objects(matrix, data, turn))


def shown_by_kind(matrix: SalienceMatrix, data: SalienceLessonData) -> dict[str, float]:
    """Mean number of objects of each kind the column shows per turn (kinds in rendering order)."""
    kinds = np.array(data.inputs.kinds)
    per_turn = matrix.selected.sum(axis=0)
    out = {k: round(float(matrix.selected[kinds == k].sum(axis=0).mean()), 2) for k in OBJECT_KINDS}
    out["all"] = round(float(per_turn.mean()), 2)
    return out


def object_rank(view: SalienceView, object_id: str) -> int | None:
    """1-based place of an object in the column at the view's turn, or None if not shown."""
    for row in view.top:
        if row.id == object_id:
            return row.rank + 1
    return None


# ---------------------------------------------------------------- explorer
GRAPH_LABELS = 10
"""How many of the shown objects the knowledge-graph panel names (the most salient)."""


class SalienceExplorer(LessonExplorer):
    """Heatmap of salience (objects x turns), the chosen turn's components, the 2-hop graph."""

    title = "Salience of the Objects column"

    def __init__(self, data: SalienceLessonData | None = None, *, turn: int = 510, max_objects: int = 20,
                 recency_turns: int = 5, **weights: float) -> None:
        self.data = data or salience_lesson_data()
        self._cache_key: tuple | None = None
        self._cache_matrix: SalienceMatrix | None = None
        self._drawn_matrix: SalienceMatrix | None = None
        self._drawn_graph: tuple | None = None
        params = {**WEIGHT_DEFAULTS, **weights}
        super().__init__(turn=turn, max_objects=max_objects, recency_turns=recency_turns, **params)

    def _make_sliders(self, params: dict[str, Any]) -> dict[str, Any]:
        n_obj = len(self.data.inputs.ids)
        sliders = {
            "turn": int_slider("turn", params["turn"], 1, self.data.n_turns, 1),
            "max_objects": int_slider("max objects", params["max_objects"], 1, n_obj, 1),
            "recency_turns": int_slider("recency window (turns)", params["recency_turns"], 1, 30, 1),
        }
        for name in SALIENCE_COMPONENTS:
            sliders[name] = float_slider(f"w {COMPONENT_LABELS[name]}", params[name], 0.0, 1.0, 0.05)
        return sliders

    def _make_figure(self) -> Any:
        from plotly.subplots import make_subplots

        go = _go()
        data = self.data
        n = len(data.inputs.ids)
        turns = np.arange(1, data.n_turns + 1)
        base = make_subplots(
            rows=2, cols=2, specs=[[{"colspan": 2}, None], [{}, {}]], row_heights=[0.56, 0.44],
            column_widths=[0.5, 0.5], vertical_spacing=0.1, horizontal_spacing=0.2,
            subplot_titles=("salience per object and turn (colour: shown, grey: not shown)",
                            "salience components of the shown objects",
                            "knowledge graph, 2 hops"),
        )
        fig = go.FigureWidget(base)
        names = list(data.names)
        fig.add_heatmap(x=turns, y=names, z=typed_spec(np.zeros((n, turns.size))), colorscale="Greys",
                        zmin=0, zmax=1.5, showscale=False, name="not shown",
                        hovertemplate="turn %{x}<br>%{y}<br>salience %{z:.2f} (not shown)<extra></extra>",
                        row=1, col=1)
        fig.add_heatmap(x=turns, y=names, z=typed_spec(np.zeros((n, turns.size))), colorscale="Viridis",
                        zmin=0, zmax=1.5, name="shown",
                        colorbar=dict(title=dict(text="salience", side="top"), len=0.42,
                                      y=1.0, yanchor="top", thickness=12),
                        hovertemplate="turn %{x}<br>%{y}<br>salience %{z:.2f} (shown)<extra></extra>",
                        row=1, col=1)
        # The chosen turn: a line across every row (y in the subplot's domain, 0 to 1)
        fig.add_scatter(x=[0, 0], y=[0, 1], mode="lines", line=dict(color="red", width=2),
                        name="chosen turn", showlegend=False, hoverinfo="skip", yaxis="y9",
                        xaxis="x")
        for c in SALIENCE_COMPONENTS:
            fig.add_bar(x=[], y=[], orientation="h", name=COMPONENT_LABELS[c],
                        marker_color=COMPONENT_COLORS[c], legendgroup="components", row=2, col=1)
        fig.add_scatter(x=[], y=[], mode="lines", line=dict(color="#d0d0d0", width=1), hoverinfo="skip",
                        name="other edges", showlegend=False, row=2, col=2)
        fig.add_scatter(x=[], y=[], mode="lines", line=dict(color="#ef553b", width=2), hoverinfo="skip",
                        name="edges inside the neighbourhood", showlegend=False, row=2, col=2)
        xy = data.layout
        fig.add_scatter(x=xy[:, 0], y=xy[:, 1], mode="markers+text", name="objects", showlegend=False,
                        textposition="top center", textfont=dict(size=8), hovertext=names,
                        hoverinfo="text", cliponaxis=False,
                        marker=dict(size=10, line=dict(width=1, color="black"), cmin=-0.5, cmax=3.5,
                                    colorscale=HOP_COLORSCALE, color=np.zeros(n)),
                        row=2, col=2)
        # an overlay axis spanning the heat map's height, for the chosen-turn line
        fig.update_layout(yaxis9=dict(domain=fig.layout.yaxis.domain, range=[0, 1], visible=False,
                                      overlaying="y", fixedrange=True))
        fig.update_layout(height=1120, barmode="stack", margin=dict(l=40, r=10, t=70, b=40),
                          legend=legend_below(), title=self.title)
        # every row named (plotly would label only every other one of 45)
        fig.update_yaxes(autorange="reversed", tickfont=dict(size=8), tickmode="array",
                         tickvals=names, row=1, col=1)
        fig.update_xaxes(title_text="turn", row=1, col=1)
        fig.update_xaxes(title_text="weighted salience", row=2, col=1)
        fig.update_yaxes(autorange="reversed", tickfont=dict(size=9), automargin=True, row=2, col=1)
        fig.update_xaxes(visible=False, row=2, col=2)
        fig.update_yaxes(visible=False, row=2, col=2)
        return fig

    def _compute(self, turn: int, max_objects: int, recency_turns: int, **weights: float) -> SalienceView:
        w = salience_weights(recency_turns=recency_turns, max_objects=max_objects, **weights)
        key = (max_objects, recency_turns, *sorted(weights.items()))
        if key != self._cache_key:
            self._cache_matrix = salience_matrix(self.data.inputs, w)
            self._cache_key = key
        return salience_view(self.data, turn, w, self._cache_matrix)

    def _draw(self, view: SalienceView) -> None:
        fig = self.fig
        m = view.matrix
        if m is not self._drawn_matrix:
            # Sent as base64 typed arrays: a 45 x 600 list of lists costs ~100 ms in
            # ipywidgets' message encoding, the packed float32 bytes well under 1 ms.
            fig.data[0].z = heat_grid(m.total, ~m.selected)
            fig.data[1].z = heat_grid(m.total, m.selected)
            self._drawn_matrix = m
        fig.data[2].x = [view.turn, view.turn]
        names = [r.name for r in view.top]
        for trace, c in zip(fig.data[3:8], SALIENCE_COMPONENTS):
            trace.y = names
            trace.x = [r.components[c] for r in view.top]
        data = self.data
        depth = view.weights.neighbourhood_depth
        inside = view.hops <= depth
        shown = m.selected[:, view.turn - 1]
        # names of the ten most salient shown objects only: more labels overlap unreadably
        labelled = {r.name for r in view.top[:GRAPH_LABELS]}
        # The graph changes only when the neighbourhood, the shown set or the labelled names
        # do: skip re-sending identical arrays (plotly validates every element it is given).
        graph_key = (view.hops.tobytes(), shown.tobytes(), tuple(sorted(labelled)))
        if graph_key == self._drawn_graph:
            return
        self._drawn_graph = graph_key
        xy = data.layout
        e = data.edges
        hot = inside[e[:, 0]] & inside[e[:, 1]]
        for trace, mask in ((fig.data[8], ~hot), (fig.data[9], hot)):
            sel = e[mask]
            gap = np.full(len(sel), np.nan)
            trace.x = typed_spec(np.column_stack([xy[sel[:, 0], 0], xy[sel[:, 1], 0], gap]).ravel())
            trace.y = typed_spec(np.column_stack([xy[sel[:, 0], 1], xy[sel[:, 1], 1], gap]).ravel())
        nodes = fig.data[10]
        nodes.marker.color = np.minimum(view.hops, 3.0)
        nodes.marker.size = np.where(shown, 16, 8)
        nodes.text = [name if name in labelled else "" for name in data.names]
        hop_text = ["context" if h == 0 else (f"{int(h)} hops" if np.isfinite(h) else "unreachable")
                    for h in view.hops]
        nodes.hovertext = [f"{name}: {h}{', shown' if s else ''}"
                           for name, h, s in zip(data.names, hop_text, shown)]

    def summary(self) -> dict[str, Any]:
        view: SalienceView = self.result
        m = view.matrix
        t = view.turn - 1
        depth = view.weights.neighbourhood_depth
        kinds = {}
        for r in view.top:
            kinds[r.kind] = kinds.get(r.kind, 0) + 1
        out: dict[str, Any] = {
            "turn": view.turn,
            "day": int(self.data.times[t] // DAY) + 1,
            "weights": " ".join(f"{COMPONENT_SHORT[c]}={getattr(view.weights, c):.2f}" for c in SALIENCE_COMPONENTS),
            "recency_turns": view.weights.recency_turns,
            "max_objects": view.weights.max_objects,
            "context_objects": int((view.hops == 0).sum()),
            "in_2hop_neighbourhood": int((view.hops <= depth).sum()),
            "candidates": int(m.candidate[:, t].sum()),
            "shown": len(view.top),
            "shown_by_kind": ", ".join(f"{k} {kinds[k]}" for k in OBJECT_KINDS if k in kinds),
            "mean_shown_per_turn": round(float(m.selected.sum(axis=0).mean()), 2),
        }
        for i, r in enumerate(view.top[:5], start=1):
            out[f"top_{i}"] = r.line()[4:]
        return out
