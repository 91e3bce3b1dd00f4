"""Column 3: objects (ambient context) and their salience.

Objects are what the agent knows about the world around its work: people
(with a relationship value and relationship beliefs such as "prefers detailed
explanations"), entities (vendors, projects, accounts), beliefs (with a
strength), knowledge (policies, rules), goals, temporal context (month-end,
with an urgency multiplier) and patterns (recurring workflows).

Only the salient ones reach the prompt. D2's salience is a sum of five
terms, every weight a parameter of ``SalienceWeights``::

    0.3 * [mentioned in the last 5 turns]
  + 0.4 * [linked to an active task]
  + 0.2 * [linked to a note]
  + 0.3 * relationship_value            (people)
  + 0.3 * strength                      (beliefs)

``salience_matrix`` computes it for every object at every turn in one numpy
pass and keeps each term separately (for stacked bars and heatmaps); a
``WorkingMemory`` computes its single current column with the same function,
so the notebook's picture and the live memory cannot disagree.

Where D2's code and text differ, this module follows the text:

* "linked to an active task": the seed's code tests ``obj.id in
  task.dependencies``, but its text (section 5) says tasks carry no pointers
  and mention entities in natural language. Here an object is linked to a task
  when the extractor finds it in the task's description, current step,
  blocking reason or dependencies: the object itself, as the seed's membership
  test (``link_hops=0``, the default). ``link_hops=1`` is memorykit's
  graph-neighbour variant: an object one hop from such an entity counts too, so
  a belief about a vendor a task names earns the task's +0.4 (a 0.88 belief
  linked to a note and mentioned 9 turns ago: 0.464 by the seed, 0.864 so).
* "linked to a note": the code tests ``obj.id in note.context``; the text
  extracts entities from the note's content. Both are used (their union).
* Candidates are the 2-hop graph neighbourhood of the entities of active
  tasks, notes and recent mentions (the text lists recency as a salience
  source, so recently mentioned entities seed the query too).
* "Recently updated beliefs (changed in last 7 days)": a belief whose
  ``updated_at`` is at most ``SalienceWeights.recent_update_seconds`` (7 days)
  before now is a candidate wherever it sits in the graph, then ranked by its
  salience like every candidate (the seed lists it beside "linked to active
  tasks or notes" as a reason to load a belief, not as a score). Inclusive: a
  belief changed exactly 7 days ago still counts.
* Temporal objects active now are always shown (the seed's code adds them
  outside the ranking); here they take their places inside ``max_objects``.
* Patterns: the seed fills them by ``get_relevant_patterns(active_tasks)``,
  beside the ranking too. ``relevant_patterns`` is that rule: a pattern an
  active task names, or up to ``hops`` graph hops from an entity it names
  (1: "Globex sends credit notes after disputes" for a task about Globex).
  By default (``SalienceWeights.pattern_hops=1``, the seed's example) they are
  pinned like the current period; ``pattern_hops=None`` is the named option
  that ranks patterns by salience like any object, compared in lesson 07.

Taught in ``notebooks/07_objects_salience.ipynb``.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

from memorykit._validate import require_choice, require_int, require_non_negative, require_optional_int
from memorykit._validate import require_positive
from memorykit._validate import require_real, require_str, require_unit_interval

OBJECT_KINDS = ("person", "entity", "belief", "knowledge", "goal", "temporal", "pattern")
"""The seven categories of D2's Objects column, in rendering order."""


@dataclass(frozen=True, slots=True)
class WorkspaceObject:
    """One node of the knowledge graph. Build them with ``person()``, ``belief()``, ...."""

    id: str
    kind: str
    """One of ``OBJECT_KINDS``."""
    name: str
    """How the object is written in text; the extractor matches it (and the aliases)."""
    description: str = ""
    """What the prompt says about it (a belief's statement, a policy's rule...)."""
    aliases: tuple[str, ...] = ()
    relationship_value: float = 0.0
    """People only: how much the relationship matters, in [0, 1]."""
    relationship_beliefs: tuple[str, ...] = ()
    """People only: preferences, communication style, authority."""
    strength: float = 0.0
    """Beliefs only: confidence in [0, 1]."""
    urgency_multiplier: float = 1.0
    """Temporal only: how much more urgent work is in this period (month-end 1.5)."""
    active_from: float | None = None
    """Temporal only: clock time the period starts (None: always)."""
    active_until: float | None = None
    """Temporal only: clock time the period ends, exclusive (None: never)."""
    updated_at: float | None = None
    """Beliefs only: clock time the belief last changed (None: not since the memory began)."""

    def __post_init__(self) -> None:
        require_str("id", self.id, non_empty=True)
        require_choice("kind", self.kind, OBJECT_KINDS)
        require_str("name", self.name, non_empty=True)
        require_str("description", self.description)
        if not isinstance(self.aliases, tuple):
            raise TypeError(f"aliases must be a tuple of str, got {self.aliases!r}")
        for alias in self.aliases:
            require_str("alias", alias, non_empty=True)
        require_unit_interval("relationship_value", self.relationship_value)
        require_unit_interval("strength", self.strength)
        require_positive("urgency_multiplier", self.urgency_multiplier)
        if self.relationship_value and self.kind != "person":
            raise ValueError(f"relationship_value is for people, but {self.id!r} is a {self.kind}")
        if self.strength and self.kind != "belief":
            raise ValueError(f"strength is for beliefs, but {self.id!r} is a {self.kind}")
        if self.active_from is not None:
            require_real("active_from", self.active_from)
        if self.active_until is not None:
            require_real("active_until", self.active_until)
        if self.updated_at is not None:
            require_real("updated_at", self.updated_at)
            if self.kind != "belief":
                raise ValueError(f"updated_at is for beliefs, but {self.id!r} is a {self.kind}")
        if (
            self.active_from is not None
            and self.active_until is not None
            and self.active_until <= self.active_from
        ):
            raise ValueError(
                f"active_until must be after active_from for {self.id!r}, got "
                f"{self.active_from} .. {self.active_until}"
            )

    def is_current(self, now: float) -> bool:
        """Temporal objects: is the period on at ``now``? Other kinds: always False."""
        if self.kind != "temporal":
            return False
        after_start = self.active_from is None or now >= self.active_from
        before_end = self.active_until is None or now < self.active_until
        return after_start and before_end


def person(id: str, name: str, relationship_value: float, beliefs=(), aliases=(), description="") -> WorkspaceObject:
    return WorkspaceObject(id, "person", name, description, tuple(aliases), relationship_value, tuple(beliefs))


def entity(id: str, name: str, description: str = "", aliases=()) -> WorkspaceObject:
    return WorkspaceObject(id, "entity", name, description, tuple(aliases))


def belief(id: str, statement: str, strength: float, updated_at: float | None = None) -> WorkspaceObject:
    return WorkspaceObject(id, "belief", statement, statement, strength=strength, updated_at=updated_at)


def knowledge(id: str, name: str, rule: str) -> WorkspaceObject:
    return WorkspaceObject(id, "knowledge", name, rule)


def goal(id: str, name: str, description: str = "") -> WorkspaceObject:
    return WorkspaceObject(id, "goal", name, description)


def temporal(id: str, name: str, urgency_multiplier: float, active_from=None, active_until=None, aliases=()) -> WorkspaceObject:
    return WorkspaceObject(
        id, "temporal", name, "", tuple(aliases),
        urgency_multiplier=urgency_multiplier, active_from=active_from, active_until=active_until,
    )


def pattern(id: str, name: str, description: str = "") -> WorkspaceObject:
    return WorkspaceObject(id, "pattern", name, description)


@dataclass(frozen=True)
class SalienceWeights:
    """D2's salience weights and the windows they look through."""

    recent_mention: float = 0.3
    """Added when the object was mentioned in the last ``recency_turns`` turns."""
    active_task_link: float = 0.4
    """Added when the object is linked to an active task."""
    note_link: float = 0.2
    """Added when the object is linked to a live note."""
    relationship: float = 0.3
    """Times a person's relationship_value."""
    belief_strength: float = 0.3
    """Times a belief's strength."""
    recency_turns: int = 5
    """'Recent' means mentioned this turn or in the previous recency_turns - 1 (seed: last 5)."""
    link_hops: int = 0
    """Graph hops within which an object counts as linked to a task or note: 0 (D2) means
    named in it; 1 also counts the graph neighbours of what it names (memorykit's variant)."""
    neighbourhood_depth: int = 2
    """Hops of the knowledge-graph query that proposes candidates (seed: 2-hop)."""
    max_objects: int = 20
    """How many objects the Objects column holds (seed: top 20)."""
    pattern_hops: int | None = 1
    """Pin the patterns within this many hops of an active task's entities, as the seed's
    ``get_relevant_patterns(active_tasks)`` (``relevant_patterns``; 1: a pattern linked to an
    entity the task names, the seed's example); None ranks them by salience like any object."""
    recent_update_seconds: float = 7 * 86_400.0
    """A belief changed at most this long ago is a candidate wherever it is in the graph
    (D2: "recently updated beliefs (changed in last 7 days)")."""

    def __post_init__(self) -> None:
        for name in ("recent_mention", "active_task_link", "note_link", "relationship", "belief_strength"):
            require_non_negative(name, getattr(self, name))
        require_int("recency_turns", self.recency_turns, minimum=1)
        require_int("link_hops", self.link_hops, minimum=0)
        require_int("neighbourhood_depth", self.neighbourhood_depth, minimum=0)
        require_int("max_objects", self.max_objects, minimum=1)
        require_non_negative("recent_update_seconds", self.recent_update_seconds)
        require_optional_int("pattern_hops", self.pattern_hops, minimum=0, maximum=1_000)


SALIENCE_COMPONENTS = ("recent_mention", "active_task_link", "note_link", "relationship", "belief_strength")


@dataclass(frozen=True)
class SalienceInputs:
    """What salience needs, for N objects over T turns, independent of the weights.

    Distances are in graph hops (``inf`` when nothing relevant is reachable),
    so link and neighbourhood thresholds can move without re-walking the graph.
    """

    ids: tuple[str, ...]
    kinds: tuple[str, ...]
    relationship_value: np.ndarray
    """(N,) people's relationship values, 0 for other kinds."""
    strength: np.ndarray
    """(N,) beliefs' strengths, 0 for other kinds."""
    turns_since_mention: np.ndarray
    """(N, T) turns since the object was last named (0: this turn; inf: never)."""
    task_hops: np.ndarray
    """(N, T) hops to the nearest entity named by an active task."""
    note_hops: np.ndarray
    """(N, T) hops to the nearest entity named by a live note."""
    hop_matrix: np.ndarray
    """(N, N) all-pairs graph distance, used to reach out from recent mentions."""
    temporal_current: np.ndarray
    """(N, T) temporal objects whose period is on: always shown."""
    seconds_since_update: np.ndarray
    """(N, T) seconds since a belief last changed (inf: never, not yet, or not a belief)."""

    @property
    def shape(self) -> tuple[int, int]:
        return self.turns_since_mention.shape


@dataclass(frozen=True)
class SalienceMatrix:
    """Salience of N objects over T turns, its parts, and which objects were shown."""

    ids: tuple[str, ...]
    components: dict[str, np.ndarray]
    """Each term's weighted contribution, (N, T); they add up to ``total``."""
    total: np.ndarray
    candidate: np.ndarray
    """(N, T) inside the neighbourhood query (or a current temporal object)."""
    selected: np.ndarray
    """(N, T) the objects the Objects column shows."""
    rank: np.ndarray
    """(N, T) position in that turn's ordering (0 = most salient; shown objects first)."""
    pinned: np.ndarray
    """(N, T) shown beside the ranking: the current period, and the active tasks' patterns
    when ``pattern_hops`` is set."""


def relevant_patterns(inputs: SalienceInputs, hops: int = 1) -> np.ndarray:
    """(N, T) D2's ``get_relevant_patterns(active_tasks)``: the pattern objects an active
    task names (0 hops) or that sit within ``hops`` of an entity it names."""
    require_int("hops", hops, minimum=0, maximum=1_000)
    is_pattern = np.array([k == "pattern" for k in inputs.kinds], dtype=bool)[:, None]
    return is_pattern & (inputs.task_hops <= hops)


def _hops_to_recent(inputs: SalienceInputs, recency_turns: int) -> np.ndarray:
    """(N, T) hops from each object to the nearest object mentioned recently."""
    recent = inputs.turns_since_mention < recency_turns  # (N, T)
    if not recent.any():
        return np.full(inputs.shape, np.inf)
    # min over j of hop[i, j] where j is recent at t: one broadcast, N*N*T cells.
    masked = np.where(recent[None, :, :], inputs.hop_matrix[:, :, None], np.inf)
    return masked.min(axis=1)


def salience_matrix(inputs: SalienceInputs, weights: SalienceWeights = SalienceWeights()) -> SalienceMatrix:
    """Salience of every object at every turn, its components, and the top ``max_objects``.

    Ties are broken by the objects' order in ``inputs.ids`` (stable sort), so
    the selection is deterministic.
    """
    if not isinstance(weights, SalienceWeights):
        raise TypeError(f"weights must be SalienceWeights, got {weights!r}")
    n, t = inputs.shape
    recent = inputs.turns_since_mention < weights.recency_turns
    task_link = inputs.task_hops <= weights.link_hops
    note_link = inputs.note_hops <= weights.link_hops
    components = {
        "recent_mention": weights.recent_mention * recent,
        "active_task_link": weights.active_task_link * task_link,
        "note_link": weights.note_link * note_link,
        "relationship": np.broadcast_to(
            (weights.relationship * inputs.relationship_value)[:, None], (n, t)
        ),
        "belief_strength": np.broadcast_to(
            (weights.belief_strength * inputs.strength)[:, None], (n, t)
        ),
    }
    total = (
        components["recent_mention"]
        + components["active_task_link"]
        + components["note_link"]
        + components["relationship"]
        + components["belief_strength"]
    )
    depth = weights.neighbourhood_depth
    seed_hops = np.minimum(np.minimum(inputs.task_hops, inputs.note_hops), _hops_to_recent(inputs, weights.recency_turns))
    pinned = inputs.temporal_current
    if weights.pattern_hops is not None:
        pinned = pinned | relevant_patterns(inputs, weights.pattern_hops)
    recently_updated = inputs.seconds_since_update <= weights.recent_update_seconds
    candidate = (seed_hops <= depth) | pinned | recently_updated
    # Order: pinned first, then candidates with positive salience by salience,
    # then the rest; the stable sort keeps object order among equals.
    eligible = candidate & (total > 0)
    key = np.where(pinned, -np.inf, np.where(eligible, -total, np.inf))
    order = np.argsort(key, axis=0, kind="stable")
    rank = np.empty_like(order)
    np.put_along_axis(rank, order, np.arange(n)[:, None].repeat(t, axis=1), axis=0)
    selected = (pinned | eligible) & (rank < weights.max_objects)
    return SalienceMatrix(inputs.ids, components, total, candidate, selected, rank, pinned)


def object_arrays(objects) -> tuple[tuple[str, ...], tuple[str, ...], np.ndarray, np.ndarray]:
    """ids, kinds, relationship values and strengths of a sequence of objects."""
    objects = list(objects)
    return (
        tuple(o.id for o in objects),
        tuple(o.kind for o in objects),
        np.array([o.relationship_value for o in objects], dtype=float),
        np.array([o.strength for o in objects], dtype=float),
    )


def salience_field_names() -> tuple[str, ...]:
    return tuple(f.name for f in fields(SalienceWeights))
