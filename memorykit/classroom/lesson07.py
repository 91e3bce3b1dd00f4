"""Lesson 07: which objects are salient, turn by turn, and why (seed 002's salience).

* ``salience_lesson_data``: the committed 30-day workflow (``default_workflow``)
  replayed once through ``WorkingMemory`` (``run_workflow``): its weight-independent
  ``SalienceInputs`` (45 objects x 600 turns), display labels, and a seeded layout of
  its knowledge graph (``spring_layout``). ``SalienceLessonData.view(turn, weights)``
  reads one turn (``memorykit.classroom.replays.salience``: the shown objects with their five
  weighted components, hops to the turn's context).

Explorer: ``SalienceExplorer`` (turn, max_objects, recency window and the
five weights): a heatmap of salience over objects x turns with the shown
objects in colour, the components of the shown objects at the chosen turn as
stacked bars, and the knowledge graph with the turn's 2-hop neighbourhood.
Taught in ``notebooks/07_objects_salience.ipynb``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

import numpy as np

from memorykit.classroom.explorer import LessonExplorer, Setting, _go
from memorykit.classroom.figure import heat_grid, legend_below, typed_spec
from memorykit.classroom.scenarios.workflow import default_workflow, run_workflow
from memorykit.workspace import KnowledgeGraph, SalienceInputs, SalienceMatrix, SalienceWeights, salience_matrix
from memorykit.workspace.graph import spring_layout
from memorykit.workspace.objects import OBJECT_KINDS, SALIENCE_COMPONENTS
from memorykit.classroom.replays.salience import COMPONENT_SHORT, SalienceView, object_rank, salience_view, shown_by_kind

DAY = 86400.0

COMPONENT_LABELS = {
    "recent_mention": "recently mentioned",
    "active_task_link": "linked to an active task",
    "note_link": "linked to a note",
    "relationship": "relationship value",
    "belief_strength": "belief strength",
}
COMPONENT_COLORS = {
    "recent_mention": "#636efa",
    "active_task_link": "#ef553b",
    "note_link": "#00cc96",
    "relationship": "#ab63fa",
    "belief_strength": "#ffa15a",
}
HOP_COLORSCALE = [[0.0, "#d62728"], [0.25, "#d62728"], [0.25, "#ff7f0e"], [0.5, "#ff7f0e"],
                  [0.5, "#ffd166"], [0.75, "#ffd166"], [0.75, "#e0e0e0"], [1.0, "#e0e0e0"]]
"""Node colour by hops to the turn's context (cmin -0.5, cmax 3.5): 0 red, 1 orange, 2 yellow,
3 or more (outside the 2-hop neighbourhood) grey."""


# ------------------------------------------------------------------ data
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

    def view(self, turn: int, weights: SalienceWeights, matrix: SalienceMatrix | None = None) -> SalienceView:
        """The Objects column at ``turn`` (1-based) under ``weights`` (or the given ``matrix``)."""
        return salience_view(self.inputs, turn, weights, matrix=matrix, names=self.names)


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


LINK_RULES = {0: "named in it (D2)", 1: "or one hop from what it names"}
"""What ``SalienceWeights.link_hops`` makes "linked to an active task or note" mean."""


def link_hops_comparison(data: SalienceLessonData, turn: int, object_ids: tuple[str, ...]) -> list[dict[str, Any]]:
    """Seed 002's direct links (``link_hops=0``) against memorykit's graph-neighbour variant (1),
    other weights at the seed's: objects carrying the task link, the column's beliefs and people
    per turn over the month, and the rank of ``object_ids`` at ``turn`` (0 = not shown)."""
    rows = []
    for hops, rule in LINK_RULES.items():
        w = SalienceWeights(link_hops=hops)
        m = salience_matrix(data.inputs, w)
        kinds = shown_by_kind(m, data.inputs.kinds)
        row: dict[str, Any] = {
            "link_hops": hops,
            "linked when": rule,
            "task-linked per turn": round(float((m.components["active_task_link"] > 0).sum(axis=0).mean()), 2),
            "beliefs shown": round(kinds["belief"], 2),
            "people shown": round(kinds["person"], 2),
        }
        view = data.view(turn, w, m)
        for oid in object_ids:
            row[f"#{oid} @{turn}"] = object_rank(view, oid) or 0
        rows.append(row)
    return rows


# ---------------------------------------------------------------- explorer
GRAPH_LABELS = 10
"""How many of the shown objects the knowledge-graph panel names (the most salient)."""
_SEED = SalienceWeights()


class SalienceExplorer(LessonExplorer):
    """Heatmap of salience (objects x turns), the chosen turn's components, the 2-hop graph."""

    title = "Salience of the Objects column"
    settings = (
        # the turn and max_objects ranges are the default workflow's (600 turns, 45 objects);
        # an explorer of other data takes its own (see __init__)
        Setting("turn", "turn", 510, 1, 600, 1),
        Setting("max_objects", "max objects", _SEED.max_objects, 1, 45, 1),
        Setting("recency_turns", "recency window (turns)", _SEED.recency_turns, 1, 30, 1),
        *(Setting(c, f"w {COMPONENT_LABELS[c]}", getattr(_SEED, c), 0.0, 1.0, 0.05) for c in SALIENCE_COMPONENTS),
    )

    def __init__(self, data: SalienceLessonData | None = None, **params: Any) -> None:
        self.data = data or salience_lesson_data()
        limits = {"turn": self.data.n_turns, "max_objects": len(self.data.inputs.ids)}
        self.settings = tuple(replace(s, high=limits[s.name]) if s.name in limits else s
                              for s in type(self).settings)
        self._cache_key: tuple | None = None
        self._cache_matrix: SalienceMatrix | None = None
        self._drawn_matrix: SalienceMatrix | None = None
        self._drawn_graph: tuple | None = None
        super().__init__(**params)

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
        w = SalienceWeights(recency_turns=recency_turns, max_objects=max_objects, **weights)
        key = (max_objects, recency_turns, *sorted(weights.items()))
        if key != self._cache_key:
            self._cache_matrix = salience_matrix(self.data.inputs, w)
            self._cache_key = key
        return self.data.view(turn, w, self._cache_matrix)

    def _draw(self, view: SalienceView) -> None:
        m = view.matrix
        if m is not self._drawn_matrix:
            # Sent as base64 typed arrays: a 45 x 600 list of lists costs ~100 ms in
            # ipywidgets' message encoding, the packed float32 bytes well under 1 ms.
            self.trace("not shown").z = heat_grid(m.total, ~m.selected)
            self.trace("shown").z = heat_grid(m.total, m.selected)
            self._drawn_matrix = m
        self.trace("chosen turn").x = [view.turn, view.turn]
        names = [r.name for r in view.top]
        for c in SALIENCE_COMPONENTS:
            bars = self.trace(COMPONENT_LABELS[c])
            bars.y = names
            bars.x = [r.components[c] for r in view.top]
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
        for name, mask in (("other edges", ~hot), ("edges inside the neighbourhood", hot)):
            trace = self.trace(name)
            sel = e[mask]
            gap = np.full(len(sel), np.nan)
            trace.x = typed_spec(np.column_stack([xy[sel[:, 0], 0], xy[sel[:, 1], 0], gap]).ravel())
            trace.y = typed_spec(np.column_stack([xy[sel[:, 0], 1], xy[sel[:, 1], 1], gap]).ravel())
        nodes = self.trace("objects")
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
