"""Lesson 07: which objects are salient, turn by turn, and why (seed 002's salience).

* ``salience_lesson_data``: the committed 30-day workflow (``default_workflow``)
  replayed once through ``WorkingMemory`` (``run_workflow``): its weight-independent
  ``SalienceInputs`` (45 objects x 600 turns), display labels, and a seeded layout of
  its knowledge graph (``spring_layout``). ``SalienceLessonData.view(turn, weights)``
  reads one turn (``memorykit.classroom.replays.salience``: the shown objects with their five
  weighted components, hops to the turn's context).
* ``salience_for(inputs, weights)``: ``salience_matrix`` memoized, so a slider moved back
  recomputes nothing; ``run_yours(object_salience, inputs, turn, weights)``: a student's
  ``object_salience`` of every object at one turn (memoized).

Explorer: ``SalienceExplorer`` (turn, max_objects, recency window and the
five weights): a heatmap of salience over objects x turns with the shown
objects in colour, the components of the shown objects at the chosen turn as
stacked bars, and the knowledge graph with the turn's 2-hop neighbourhood;
``yours=object_salience`` marks the student's salience of each shown object on its bar.
Taught in ``notebooks/07_objects_salience.ipynb``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from memorykit.classroom.explorer import Implementation, LessonExplorer, Setting, yours_name
from memorykit.classroom.figure import heat_grid, legend_below, typed_spec
from memorykit.classroom.memo import memo
from memorykit.classroom.verdict import require_number
from memorykit.classroom.scenarios.workflow import default_workflow, run_workflow
from memorykit.workspace import KnowledgeGraph, SalienceInputs, SalienceMatrix, SalienceWeights, salience_matrix
from memorykit.workspace.graph import spring_layout
from memorykit.workspace.objects import OBJECT_KINDS, SALIENCE_COMPONENTS
from memorykit.classroom.replays.salience import COMPONENT_SHORT, SalienceView, object_rank, salience_view, shown_by_kind

DAY = 86400.0

COMPONENT_LABELS = {"recent_mention": "recently mentioned", "active_task_link": "linked to an active task",
                    "note_link": "linked to a note", "relationship": "relationship value",
                    "belief_strength": "belief strength"}
COMPONENT_COLORS = {"recent_mention": "#636efa", "active_task_link": "#ef553b", "note_link": "#00cc96",
                    "relationship": "#ab63fa", "belief_strength": "#ffa15a"}
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


@memo(maxsize=1)
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


@memo(maxsize=64)
def salience_for(inputs: SalienceInputs, weights: SalienceWeights) -> SalienceMatrix:
    """``salience_matrix(inputs, weights)``, each set of weights scored once."""
    return salience_matrix(inputs, weights)


YOURS = Implementation("a function object_salience(turns_since_mention, task_hops, note_hops, "
                       "relationship_value, strength, weights)",
                       parameters=("turns_since_mention", "task_hops", "note_hops",
                                   "relationship_value", "strength", "weights"))
"""What lesson 07's exercise 3 asks for, as the explorer takes it (``yours=``)."""


@memo(maxsize=256)
def run_yours(object_salience: Any, inputs: SalienceInputs, turn: int,
              weights: SalienceWeights) -> np.ndarray:
    """(N,) a student's ``object_salience`` of every object at ``turn`` (1-based), one call per
    object with that turn's inputs as plain floats (``inf``: never named, unreachable)."""
    object_salience = YOURS.check("object_salience", object_salience)
    t = turn - 1
    out = np.empty(len(inputs.ids))
    for i in range(out.size):
        args = (float(inputs.turns_since_mention[i, t]), float(inputs.task_hops[i, t]),
                float(inputs.note_hops[i, t]), float(inputs.relationship_value[i]),
                float(inputs.strength[i]))
        out[i] = require_number(f"{object_salience.__name__}({', '.join(map(str, args))}, weights)",
                                object_salience(*args, weights), "a finite number")
    return out


# ---------------------------------------------------------------- explorer
GRAPH_LABELS = 10
"""How many of the shown objects the knowledge-graph panel names (the most salient)."""
_SEED = SalienceWeights()
ZMAX = 1.5
"""Top of the heat map's colour scale (the seed's weights add up to 1.5)."""
WEIGHTS = ("max_objects", "recency_turns", *SALIENCE_COMPONENTS)
"""The sliders the whole month's salience depends on (all but the turn)."""


@dataclass(frozen=True)
class SalienceTurn(SalienceView):
    """What the explorer draws: one turn's view, and each student implementation's salience
    of every object at that turn (by name)."""

    yours: dict[str, np.ndarray]


def _signed_colorscale() -> list[list[Any]]:
    """One scale for the heat map's two meanings: salience s of a shown object is drawn at +s
    (Viridis, upper half), of an object not shown at -s (greys, lower half, darker for more)."""
    import plotly.colors as pc

    greys = [[0.5 * (1 - f), c] for f, c in pc.get_colorscale("Greys")][::-1]
    return greys + [[0.5 + 0.5 * f, c] for f, c in pc.get_colorscale("Viridis")]


class SalienceExplorer(LessonExplorer):
    """Heatmap of salience (objects x turns), the chosen turn's components, the 2-hop graph."""

    title = "Salience of the Objects column"
    implementation = YOURS
    settings = (
        # the turn and max_objects ranges are the default workflow's (600 turns, 45 objects);
        # an explorer of other data takes its own (see __init__)
        Setting("turn", "turn", 510, 1, 600, 1),
        Setting("max_objects", "max objects", _SEED.max_objects, 1, 45, 1),
        Setting("recency_turns", "recency window (turns)", _SEED.recency_turns, 1, 30, 1),
        *(Setting(c, f"w {COMPONENT_LABELS[c]}", getattr(_SEED, c), 0.0, 1.0, 0.05) for c in SALIENCE_COMPONENTS),
    )

    def __init__(self, data: SalienceLessonData | None = None, yours: Any = None, **params: Any) -> None:
        self.data = data or salience_lesson_data()
        limits = {"turn": self.data.n_turns, "max_objects": len(self.data.inputs.ids)}
        self.settings = tuple(replace(s, high=limits[s.name]) if s.name in limits else s
                              for s in type(self).settings)
        self.index = {oid: i for i, oid in enumerate(self.data.inputs.ids)}
        super().__init__(yours=yours, **params)

    def _make_figure(self) -> Any:
        from plotly.subplots import make_subplots

        data = self.data
        turns = np.arange(1, data.n_turns + 1)
        fig = make_subplots(
            rows=2, cols=2, specs=[[{"colspan": 2}, None], [{}, {}]], row_heights=[0.56, 0.44],
            column_widths=[0.5, 0.5], vertical_spacing=0.1, horizontal_spacing=0.2,
            subplot_titles=("salience per object and turn (colour: shown, grey: not shown)",
                            "salience components of the shown objects",
                            "knowledge graph, 2 hops"),
        )
        names = list(data.names)
        # One grid for both meanings (see _signed_colorscale): half the data of two heat maps
        # on every move, and plotly.js draws one. Hover shows a value in brackets when negative.
        ticks = [-1.5, -1.0, -0.5, 0.0, 0.5, 1.0, 1.5]
        fig.add_heatmap(x=turns, y=names, z=np.zeros((len(names), turns.size)), name="salience",
                        colorscale=_signed_colorscale(), zmin=-ZMAX, zmax=ZMAX,
                        colorbar=dict(title=dict(text="salience", side="top"), len=0.42,
                                      y=1.0, yanchor="top", thickness=12, tickvals=ticks,
                                      ticktext=[f"{abs(v):g}" for v in ticks]),
                        hovertemplate="turn %{x}<br>%{y}<br>salience %{z:(.2f}"
                                      "<br>(in brackets: not shown)<extra></extra>",
                        row=1, col=1)
        fig.add_scatter(x=[0, 0], y=[0, 1], mode="lines", line=dict(color="red", width=2),
                        name="chosen turn", showlegend=False, hoverinfo="skip", yaxis="y9",
                        xaxis="x")
        for c in SALIENCE_COMPONENTS:
            fig.add_bar(x=[], y=[], orientation="h", name=COMPONENT_LABELS[c],
                        marker_color=COMPONENT_COLORS[c], legendgroup="components", row=2, col=1)
        for name in self.yours:  # the student's salience: a black diamond at the end of each bar
            fig.add_scatter(x=[], y=[], mode="markers", name=yours_name(name), row=2, col=1,
                            marker=dict(symbol="diamond", size=9, color="black",
                                        line=dict(width=1, color="white")),
                            hovertemplate="%{y}: %{x:.2f}<extra>yours</extra>")
        fig.add_scatter(x=[], y=[], mode="lines", line=dict(color="#d0d0d0", width=1), hoverinfo="skip",
                        name="other edges", showlegend=False, row=2, col=2)
        fig.add_scatter(x=[], y=[], mode="lines", line=dict(color="#ef553b", width=2), hoverinfo="skip",
                        name="edges inside the neighbourhood", showlegend=False, row=2, col=2)
        xy = data.layout
        fig.add_scatter(x=xy[:, 0], y=xy[:, 1], mode="markers", name="objects", showlegend=False,
                        hovertemplate="%{customdata}<extra></extra>", customdata=names,
                        marker=dict(size=10, line=dict(width=1, color="black"), cmin=-0.5, cmax=3.5,
                                    colorscale=HOP_COLORSCALE, color=np.zeros(len(names))),
                        row=2, col=2)
        # Names as a trace of their own, holding only the labelled nodes: an empty text of a
        # point is dropped by plotly.js for good, so labels on the nodes' trace went missing.
        fig.add_scatter(x=[], y=[], text=[], mode="text", name="labels", showlegend=False,
                        textposition="top center", textfont=dict(size=8), hoverinfo="skip",
                        cliponaxis=False, row=2, col=2)
        # the chosen turn's line spans the heat map's rows on an overlay axis (y from 0 to 1)
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

    def _compute(self, turn: int, max_objects: int, recency_turns: int, **weights: float) -> SalienceTurn:
        w = SalienceWeights(recency_turns=recency_turns, max_objects=max_objects, **weights)
        v = self.data.view(turn, w, salience_for(self.data.inputs, w))
        yours = {name: run_yours(fn, self.data.inputs, turn, w) for name, fn in self.yours.items()}
        return SalienceTurn(v.turn, v.weights, v.matrix, v.hops, v.top, yours)

    def _draw(self, view: SalienceTurn) -> None:
        m = view.matrix
        if self.moved(*WEIGHTS):  # the whole month: not the turn
            self.trace("salience").z = heat_grid(np.where(m.selected, m.total, -m.total - 1e-3), decimals=3)
        if self.moved("turn"):
            self.trace("chosen turn").x = [view.turn, view.turn]
        names = [r.name for r in view.top]
        for c in SALIENCE_COMPONENTS:
            bars = self.trace(COMPONENT_LABELS[c])
            bars.y = names
            bars.x = [r.components[c] for r in view.top]
        for name, values in view.yours.items():
            mine = self.trace(yours_name(name))
            mine.y = names
            mine.x = [round(float(values[self.index[r.id]]), 4) for r in view.top]
        self._draw_graph(view)

    def _draw_graph(self, view: SalienceView) -> None:
        data = self.data
        xy = data.layout
        inside = view.hops <= view.weights.neighbourhood_depth
        if self.moved("turn", "recency_turns"):  # the neighbourhood: the turn's context
            e = data.edges
            hot = inside[e[:, 0]] & inside[e[:, 1]]
            for name, mask in (("other edges", ~hot), ("edges inside the neighbourhood", hot)):
                trace = self.trace(name)
                sel = e[mask]
                gap = np.full(len(sel), np.nan)
                trace.x = typed_spec(np.column_stack([xy[sel[:, 0], 0], xy[sel[:, 1], 0], gap]).ravel())
                trace.y = typed_spec(np.column_stack([xy[sel[:, 0], 1], xy[sel[:, 1], 1], gap]).ravel())
            self.trace("objects").marker.color = np.minimum(view.hops, 3.0)
        shown = view.matrix.selected[:, view.turn - 1]
        nodes = self.trace("objects")
        nodes.marker.size = np.where(shown, 16, 8)
        hop_text = ["context" if h == 0 else (f"{int(h)} hops" if np.isfinite(h) else "unreachable")
                    for h in view.hops]
        nodes.customdata = [f"{name}: {h}{', shown' if s else ''}"
                            for name, h, s in zip(data.names, hop_text, shown)]
        # names of the ten most salient shown objects only: more labels overlap unreadably
        top = [self.index[r.id] for r in view.top[:GRAPH_LABELS]]
        labels = self.trace("labels")
        lift = 0.04 * float(np.ptp(xy[:, 1]))  # above its node: drawn on a shown node (16 px) it was unreadable
        labels.x, labels.y = xy[top, 0], xy[top, 1] + lift
        labels.text = [data.names[i] for i in top]

    def summary(self) -> dict[str, Any]:
        view: SalienceTurn = self.result
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
            "labelled_in_graph": f"{min(GRAPH_LABELS, len(view.top))} most salient of the {len(view.top)} shown",
            "shown_by_kind": ", ".join(f"{k} {kinds[k]}" for k in OBJECT_KINDS if k in kinds),
            "mean_shown_per_turn": round(float(m.selected.sum(axis=0).mean()), 2),
        }
        for i, r in enumerate(view.top[:5], start=1):
            out[f"top_{i}"] = r.line()[4:]
        for name, values in view.yours.items():
            gap = np.abs(values - m.total[:, t])
            bad = np.flatnonzero(gap > 1e-9)
            out[yours_name(name)] = (
                f"agrees with salience_matrix on all {gap.size} objects at turn {view.turn}"
                if not bad.size else
                f"differs on {bad.size} of {gap.size} objects at turn {view.turn} (largest gap "
                f"{gap.max():.3f}: {self.data.names[int(np.argmax(gap))]})")
        return out
