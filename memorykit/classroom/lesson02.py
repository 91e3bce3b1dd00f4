"""Lesson 02: pruning strategies, who leaves when under which rule, and which facts survive.

Every policy comes from the buffer registry (``memorykit.buffers.registry``, kind "pruning"):
a policy registered there appears in the explorer, table and checker. Pure computation:

* ``run_policy(conv, policy, budget=, **settings)``: the conversation replayed through one
  registered pruning buffer, as a (memoized) ``BufferReplay`` (every eviction, which planted
  facts survive); ``run_yours(conv, cls, budget=)``: the same through a student's class.
* ``compare_policies(conv, ...)``: the policies side by side; ``print_fact_fates``: per fact
  and policy, kept or when and by which rule it left; ``fact_holders``: where the facts sit.
* ``importance_curves(...)``: D1's effective importance over age for typical importances;
  ``weighted_window_rows(conv, ...)``: the recency policy's final window as
  ``weighted_context`` orders it, beside arrival order.

Explorer: ``PruningExplorer`` (budget and registered settings as sliders; facts kept, evictions,
recency curves); ``yours=LeastImportantBuffer`` adds the student's buffer beside the library's.
Taught in ``notebooks/02_pruning_strategies.ipynb``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from memorykit._validate import require_int
from memorykit.buffers.policies import effective_importance_curves, true_half_life_minutes
from memorykit.classroom.replays.buffer_replay import BufferReplay, replay_buffer
from memorykit.buffers.base import MessageBuffer
from memorykit.buffers.registry import PolicyParam, PolicySpec, policies, policy
from memorykit.buffers.registry import policy as policy_spec  # run_policy's argument is "policy"
from memorykit.classroom.explorer import Implementation, LessonExplorer, _go, setting_slider
from memorykit.classroom.explorer import yours_name
from memorykit.classroom.figure import legend_below
from memorykit.classroom.memo import memo
from memorykit.classroom.scenarios.conversation import SimulatedConversation

BUDGET = PolicyParam("budget", 1500, 500, 4000, 250, "budget (tokens)")
"""The token budget every policy runs under (lesson 02's exercise fixes 1,500)."""

CURVE_IMPORTANCES: tuple[tuple[str, float], ...] = (
    ("fact (0.9)", 0.9), ("answer (0.5)", 0.5), ("chitchat (0.15)", 0.15),
)
"""Typical importances of the simulated conversation's message kinds."""
CURVE_MINUTES = np.linspace(0.0, 240.0, 241)
DEFAULT_DECAY = policy("recency").param("decay_rate").default
DEFAULT_HALF_LIFE = policy("recency").param("half_life_minutes").default


def pruning_policies() -> tuple[PolicySpec, ...]:
    """The registered policies this lesson compares (kind "pruning"), in registry order."""
    return policies("pruning")


def policy_settings() -> tuple[PolicyParam, ...]:
    """Every setting any compared policy has, once each (the explorer's sliders)."""
    seen: dict[str, PolicyParam] = {}
    for spec in pruning_policies():
        for p in spec.params:
            seen.setdefault(p.name, p)
    return tuple(seen.values())


def _settings_for(spec: PolicySpec, settings: dict[str, Any]) -> dict[str, Any]:
    """The settings ``spec`` uses (defaults for those not given); every given one is checked by
    a policy that has it (the classes decide what is valid), whatever ``spec`` is."""
    known = {p.name: other for other in pruning_policies() for p in other.params}
    unknown = sorted(set(settings) - set(known))
    if unknown:
        raise ValueError(f"no compared policy has a setting {', '.join(map(repr, unknown))}; "
                         f"settings: {', '.join(sorted(known)) or 'none'}")
    for name, value in settings.items():
        _accepted(known[name].name, name, value)
    return {p.name: settings.get(p.name, p.default) for p in spec.params}


@memo(maxsize=None)
def _accepted(policy_name: str, name: str, value: Any) -> bool:
    """Whether ``policy_name`` accepts ``value`` for ``name`` (building a buffer checks it)."""
    policy(policy_name).build(1, **{name: value})
    return True


def run_policy(conv: SimulatedConversation, policy: str, *, budget: int = 1500,
               **settings: float) -> BufferReplay:
    """Replay ``conv`` through ``policy`` at ``budget`` billed tokens (memoized by the settings
    the policy has, e.g. ``importance_threshold`` for hybrid; all given are validated)."""
    spec = policy_spec(policy)
    if spec.kind != "pruning":
        raise ValueError(f"policy must be one of {', '.join(p.name for p in pruning_policies())}, "
                         f"got {policy!r} (a {spec.kind} policy)")
    budget = require_int("budget", budget, minimum=1)
    return _replay(conv, spec.name, budget, tuple(sorted(_settings_for(spec, settings).items())))


@memo(maxsize=512)
def _replay(conv: SimulatedConversation, name: str, budget: int,
            own: tuple[tuple[str, Any], ...]) -> BufferReplay:
    spec = policy(name)
    return replay_buffer(conv, spec.build(budget, **dict(own)), policy=name,
                         params={"budget": budget, **dict(own)})


YOURS = Implementation("a MessageBuffer subclass (a policy choosing its victim)", MessageBuffer)


@memo(maxsize=128)
def run_yours(conv: SimulatedConversation, buffer_class: type, *, budget: int = 1500
              ) -> BufferReplay:
    """Replay ``conv`` through a student's buffer class built with ``max_tokens=budget``."""
    buffer_class = YOURS.check("buffer_class", buffer_class)
    budget = require_int("budget", budget, minimum=1)
    return replay_buffer(conv, buffer_class(max_tokens=budget),
                         policy=yours_name(buffer_class.__name__), params={"budget": budget})


def compare_policies(conv: SimulatedConversation, *, budget: int = 1500,
                     recent_from_turn: int = 401, **settings: float) -> dict[str, dict[str, Any]]:
    """Rounded facts about each policy's run: evictions, rules, facts kept (all and recent)."""
    out = {}
    recent = [f for f in conv.facts if f.turn >= recent_from_turn]
    for spec in pruning_policies():
        run = run_policy(conv, spec.name, budget=budget, **settings)
        out[spec.name] = {
            "evictions": int(run.evict_turn.size),
            "rules": run.rule_counts(),
            "final_messages": run.final_messages,
            "oldest_kept_turn": run.oldest_kept_turn(),
            "facts_alive": run.facts_alive,
            "recent_facts_alive": sum(run.fact_alive[f.id] for f in recent),
            "mean_age_at_eviction": round(float(np.mean(run.evict_turn - run.victim_turn)), 1)
            if run.evict_turn.size else 0.0,
        }
    return out


def print_comparison(table: dict[str, dict[str, Any]], n_recent: int, n_facts: int) -> None:
    print(f"{'policy':<17}{'evictions':>10}{'kept':>6}{'oldest kept turn':>18}"
          f"{'mean age at eviction':>22}{'facts kept':>12}{'recent facts':>14}")
    for name, row in table.items():
        print(f"{policy(name).label:<17}{row['evictions']:>10}{row['final_messages']:>6}"
              f"{row['oldest_kept_turn']:>18}{row['mean_age_at_eviction']:>22}"
              f"{row['facts_alive']:>7} / {n_facts}{row['recent_facts_alive']:>9} / {n_recent}")


def fact_holders(conv: SimulatedConversation) -> dict[str, tuple[int, str]]:
    """Where the planted facts sit: ``{message kind: (facts it holds, those messages' role)}``."""
    held = [conv.message(f.message_id) for f in conv.facts]
    return {kind: (sum(m.metadata["kind"] == kind for m in held),
                   next(m.role for m in held if m.metadata["kind"] == kind))
            for kind in dict.fromkeys(m.metadata["kind"] for m in held)}


# ------------------------------------------------------------------ curves
def importance_curves(
    decay_rate: float = 0.1,
    half_life_minutes: float = 5.0,
    importances: Sequence[float] = tuple(v for _, v in CURVE_IMPORTANCES),
    minutes: np.ndarray = CURVE_MINUTES,
) -> np.ndarray:
    """Effective importance (rows: importances) against age in minutes (columns)."""
    zeros = np.zeros(len(importances))
    return effective_importance_curves(importances, zeros, minutes, decay_rate, half_life_minutes)


def weighted_window_rows(conv: SimulatedConversation, *, budget: int = 1500,
                         decay_rate: float = DEFAULT_DECAY,
                         half_life_minutes: float = DEFAULT_HALF_LIFE) -> list[dict[str, Any]]:
    """The recency policy's final window as ``weighted_context`` orders it, one row per message.

    ``now`` is the conversation's last message, the moment the window would be read; the
    ``arrival`` column is the message's place in the window oldest first, so a reader sees
    how far the weighted order is from the order the messages were written in.
    """
    buffer = policy("recency").build(budget, decay_rate=decay_rate,
                                     half_life_minutes=half_life_minutes)
    buffer.extend(conv.messages)
    now = conv.messages[-1].created_at
    arrival = {m.id: i for i, m in enumerate(buffer.messages())}
    return [{"rank": rank, "message": m.id, "kind": m.metadata["kind"], "turn": m.turn,
             "arrival": arrival[m.id], "importance": f"{m.importance:.2f}",
             "age (min)": f"{(now - m.created_at) / 60:.1f}",
             "effective": f"{buffer.effective_importance(m, now):.3f}"}
            for rank, m in enumerate(buffer.weighted_context(now), start=1)]


def print_fact_fates(runs: dict[str, BufferReplay], facts: Sequence[Any]) -> None:
    """One line per fact, one column per policy: kept, or the turn it left at and the rule."""
    print((f"{'fact':<6}{'planted':>8}  " + "".join(f"{policy(p).label:<37}" for p in runs))
          .rstrip())
    for f in facts:
        cells = []
        for run in runs.values():
            if run.fact_alive[f.id]:
                cells.append("kept")
            else:
                turn, rule = run.evicted_at[f.message_id]
                cells.append(f"left turn {turn}, {rule}")
        print((f"{f.id:<6}{f.turn:>8}  " + "".join(f"{c:<37}" for c in cells)).rstrip())


# ---------------------------------------------------------------- explorer
def timeline_traces() -> tuple[tuple[PolicySpec, str, str], ...]:
    """(policy, rule, trace name) of each eviction-timeline trace: one per policy and rule."""
    out = []
    for spec in pruning_policies():
        for rule in spec.rules:
            suffix = "" if len(spec.rules) == 1 else \
                f" ({rule.removeprefix(spec.name + '-').replace('-', ' ')})"
            out.append((spec, rule, spec.label + suffix))
    return tuple(out)


class PruningExplorer(LessonExplorer):
    """Every registered pruning policy on one conversation: facts kept, eviction timeline,
    recency curves. A budget slider and one slider per registered setting."""

    implementation = YOURS

    def __init__(self, conv: SimulatedConversation, recent_from_turn: int = 401,
                 yours: Any = None, **params: float) -> None:
        self.conv = conv
        self.facts = list(conv.facts)
        self.recent = [f for f in self.facts if f.turn >= recent_from_turn]
        self.recent_from_turn = recent_from_turn
        self.specs = pruning_policies()
        self.timeline = timeline_traces()
        super().__init__(yours=yours, **params)

    def _make_sliders(self, params: dict[str, Any]) -> dict[str, Any]:
        return {p.name: setting_slider(p, params.get(p.name, p.default))
                for p in (BUDGET, *policy_settings())}

    def _make_figure(self) -> Any:
        from plotly.subplots import make_subplots

        go = _go()
        fig = make_subplots(
            rows=2, cols=2, column_widths=[0.60, 0.40], row_heights=[0.45, 0.55],
            specs=[[{}, {}], [{"colspan": 2}, None]], vertical_spacing=0.16,
            horizontal_spacing=0.1,
            subplot_titles=("planted facts kept at the end",
                            "effective importance by age",
                            "eviction timeline: age of each victim when it left"))
        groups = {"facts": "planted facts", "curves": "importance x recency weight",
                  "evictions": "evictions (one mark each)"}
        fig.add_scattergl(name="kept", x=[], y=[], mode="markers", legendgroup="facts",
                          legendgrouptitle_text=groups["facts"],
                          marker=dict(symbol="circle", size=8, color="#00cc96"), row=1, col=1)
        fig.add_scattergl(name="lost", x=[], y=[], mode="markers", legendgroup="facts",
                          marker=dict(symbol="x", size=7, color="#ef553b"), text=[], row=1, col=1)
        for i, ((label, _), color) in enumerate(zip(CURVE_IMPORTANCES,
                                                    ("#ef553b", "#636efa", "#b6b6b6"))):
            fig.add_scatter(name=label, x=CURVE_MINUTES, y=np.zeros_like(CURVE_MINUTES),
                            mode="lines", line=dict(color=color), legendgroup="curves",
                            legendgrouptitle_text=groups["curves"] if i == 0 else None,
                            row=1, col=2)
        fig.add_scatter(name="weight halves", x=[0, 0], y=[0, 1], mode="lines",
                        legendgroup="curves",
                        line=dict(color="black", dash="dot", width=1), row=1, col=2)
        for i, (spec, rule, name) in enumerate(self.timeline):
            # a later rule of a policy (hybrid's FIFO fallback) reads apart: open, twice the size
            marker = dict(size=4, symbol="circle", opacity=0.6) if rule == spec.rules[0] \
                else dict(size=8, symbol="triangle-up-open", opacity=0.9)
            fig.add_scattergl(name=name, x=[], y=[], legendgroup="evictions",
                              legendgrouptitle_text=groups["evictions"] if i == 0 else None,
                              mode="markers", marker=dict(color=spec.color, **marker),
                              row=2, col=1)
        for name in self.yours:  # the student's buffer: black crosses over the library's dots
            fig.add_scattergl(name=yours_name(name), x=[], y=[], legendgroup="evictions",
                              mode="markers", marker=dict(size=5, color="black",
                                                          symbol="x-thin-open", opacity=0.8),
                              row=2, col=1)
        fig.update_layout(height=780, margin=dict(l=60, r=10, t=40, b=40),
                          legend=legend_below(groupclick="toggleitem"))
        fig.update_yaxes(categoryorder="array", categoryarray=self._rows()[::-1],
                         row=1, col=1)
        fig.update_xaxes(title_text="turn the fact was planted", row=1, col=1)
        fig.update_xaxes(title_text="age (minutes)", row=1, col=2)
        fig.update_yaxes(range=[0, 1.02], title_text="weight", row=1, col=2)
        fig.update_xaxes(title_text="turn of the eviction", row=2, col=1)
        fig.update_yaxes(title_text="1 + victim's age (turns)", type="log", dtick=1, row=2, col=1)
        return fig

    def _compute(self, budget: int, **settings: float) -> dict[str, Any]:
        runs = {s.name: run_policy(self.conv, s.name, budget=budget, **settings)
                for s in self.specs}
        for name, cls in self.yours.items():
            runs[yours_name(name)] = run_yours(self.conv, cls, budget=budget)
        d = settings.get("decay_rate", DEFAULT_DECAY)
        h = settings.get("half_life_minutes", DEFAULT_HALF_LIFE)
        return {"runs": runs, "curves": importance_curves(d, h), "decay_rate": d,
                "half_life_minutes": h}

    def _draw(self, result: dict[str, Any]) -> None:
        kx, ky, lx, ly, lt = [], [], [], [], []  # kept facts (x, y), lost ones (x, y, hover)
        for (name, run), label in zip(result["runs"].items(), self._rows()):
            for f in self.facts:
                if run.fact_alive[f.id]:
                    kx.append(f.turn)
                    ky.append(label)
                else:
                    lx.append(f.turn)
                    ly.append(label)
                    turn, rule = run.evicted_at[f.message_id]
                    lt.append(f"{f.id} left at turn {turn} ({rule})")
        kept, lost = self.trace("kept"), self.trace("lost")
        kept.x, kept.y = kx, ky
        lost.x, lost.y, lost.text = lx, ly, lt
        for (label, _), row in zip(CURVE_IMPORTANCES, result["curves"]):
            self.trace(label).y = row
        d, h = result["decay_rate"], result["half_life_minutes"]
        t = min(true_half_life_minutes(d, h), float(CURVE_MINUTES[-1])) if d > 0 \
            else float(CURVE_MINUTES[-1])
        self.trace("weight halves").x = [t, t]
        for spec, rule, name in self.timeline:
            run = result["runs"][spec.name]
            mask = run.rule_mask(rule)
            trace = self.trace(name)
            trace.x = run.evict_turn[mask]
            trace.y = np.maximum(run.evict_turn[mask] - run.victim_turn[mask], 0) + 1
        for name in self.yours:
            run = result["runs"][yours_name(name)]
            trace = self.trace(yours_name(name))
            trace.x = run.evict_turn
            trace.y = np.maximum(run.evict_turn - run.victim_turn, 0) + 1

    def _rows(self) -> list[str]:
        """The facts panel's rows: the library's policies, then the student's buffers."""
        return [s.label for s in self.specs] + [yours_name(n) for n in self.yours]

    def summary(self) -> dict[str, Any]:
        runs = self.result["runs"]
        d, h = self.result["decay_rate"], self.result["half_life_minutes"]
        out: dict[str, Any] = {"budget": self.params["budget"]}
        for p in policy_settings():
            out[p.name] = round(self.params[p.name], 3)
        out["weight_halves_after_minutes"] = round(true_half_life_minutes(d, h), 1) if d > 0 \
            else "never"
        for name, run in runs.items():
            recent = sum(run.fact_alive[f.id] for f in self.recent)
            out[f"{name}_facts_kept"] = f"{run.facts_alive}/{len(self.facts)} " \
                f"(recent {recent}/{len(self.recent)})"
        library = runs["importance"].evicted_at  # facts can agree where victims do not (ties)
        for name in self.yours:
            mine = runs[yours_name(name)].evicted_at
            same = sum(mine.get(mid) == (turn, rule) for mid, (turn, rule) in library.items())
            out[f"{yours_name(name)}_evictions_as_importance"] = f"{same}/{len(library)}"
        return out
