"""Parameter sweeps: every configuration of a policy through the same harness, in one table.

``grid(space)`` lists every combination of a parameter space;
``random_search(space, n, seed)`` draws ``n`` configurations (a list of values
is sampled uniformly, ``Uniform`` / ``LogUniform`` / ``RandInt`` ranges are
drawn from). ``run_sweep(make_policy, configurations, dataset, budgets)``
evaluates ``make_policy(**config)`` at each budget and returns a tidy
``SweepResult``: one row per configuration and budget with its parameters,
overall recall, strict recall, recall per category, tokens and time.

Long sweeps show a ``tqdm`` progress bar (it renders in notebooks and
terminals). Pass any ``concurrent.futures.Executor`` to run configurations in
parallel: a ``ProcessPoolExecutor`` locally (``make_policy`` must then be
picklable: a class or a module-level function, not a lambda), or a Dask
cluster's ``distributed.Client(...).get_executor()``. Rows come back in
configuration order whatever finishes first, so a parallel sweep gives the
same table as a serial one (apart from the timings).

Taught in ``notebooks/12_parameter_tuning.ipynb``.
"""

from __future__ import annotations

import itertools
import math
import random
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Executor, as_completed
from dataclasses import dataclass
from typing import Any

import numpy as np

from memorykit._validate import require_bool, require_int, require_real
from memorykit.evaluation.dataset import EvalDataset, as_dataset
from memorykit.evaluation.harness import EvalResult, HarnessSettings, comparison_notes, evaluate
from memorykit.evaluation.pareto import cheapest_reaching, pareto_front
from memorykit.evaluation.scoring import units_note
from memorykit.evaluation.table import Table

__all__ = ["MAX_CONFIGURATIONS", "LogUniform", "RandInt", "SweepResult", "Uniform", "grid", "random_search", "run_sweep"]


@dataclass(frozen=True)
class Uniform:
    """A float drawn uniformly from [low, high]."""

    low: float
    high: float

    def __post_init__(self) -> None:
        if require_real("low", self.low) > require_real("high", self.high):
            raise ValueError(f"low must be <= high ({self.high!r}), got {self.low!r}")

    def sample(self, rng: random.Random) -> float:
        return self.low + (self.high - self.low) * rng.random()


@dataclass(frozen=True)
class LogUniform:
    """A float whose logarithm is uniform on [log low, log high] (for scales like budgets)."""

    low: float
    high: float

    def __post_init__(self) -> None:
        if require_real("low", self.low) <= 0:
            raise ValueError(f"low must be > 0, got {self.low!r}")
        if self.low > require_real("high", self.high):
            raise ValueError(f"low must be <= high ({self.high!r}), got {self.low!r}")

    def sample(self, rng: random.Random) -> float:
        return math.exp(math.log(self.low) + (math.log(self.high) - math.log(self.low)) * rng.random())


@dataclass(frozen=True)
class RandInt:
    """An integer drawn uniformly from low..high, both included."""

    low: int
    high: int

    def __post_init__(self) -> None:
        if require_int("low", self.low) > require_int("high", self.high):
            raise ValueError(f"low must be <= high ({self.high!r}), got {self.low!r}")

    def sample(self, rng: random.Random) -> int:
        return self.low + int(rng.random() * (self.high - self.low + 1))


def _check_space(space: Any) -> dict[str, Any]:
    if not isinstance(space, Mapping):
        raise TypeError(f"param_space must be a mapping of parameter names to values, got {space!r}")
    for key in space:
        if not isinstance(key, str) or not key:
            raise TypeError(f"param_space keys must be parameter names, got {key!r}")
    return dict(space)


def _choices(name: str, values: Any) -> list[Any]:
    if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
        return [values]  # a fixed value
    if not values:
        raise ValueError(f"param_space[{name!r}] must list at least one value, got {values!r}")
    return list(values)


def grid(param_space: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every combination, the last parameter varying fastest. A non-list value is held fixed."""
    space = _check_space(param_space)
    for name, values in space.items():
        if hasattr(values, "sample"):
            raise TypeError(f"param_space[{name!r}] is a range ({values!r}): grid needs a list of values")
    names = list(space)
    lists = [_choices(n, space[n]) for n in names]
    return [dict(zip(names, combo)) for combo in itertools.product(*lists)]


MAX_CONFIGURATIONS = 1_000_000
"""The most configurations ``random_search`` draws: each is evaluated on every budget, so
more than a million is a typo (10**30 would never end), not a sweep."""


def random_search(param_space: Mapping[str, Any], n: int, seed: int = 0) -> list[dict[str, Any]]:
    """``n`` configurations drawn independently (a list: uniform choice; a range: its sample)."""
    space = _check_space(param_space)
    n = require_int("n", n, minimum=1, maximum=MAX_CONFIGURATIONS)
    seed = require_int("seed", seed, minimum=0)
    rng = random.Random(seed)
    samplers: list[tuple[str, Callable[[], Any]]] = []
    for name, values in space.items():
        if hasattr(values, "sample"):
            samplers.append((name, lambda v=values: v.sample(rng)))
        else:
            choices = _choices(name, values)
            samplers.append((name, lambda c=choices: c[int(rng.random() * len(c))]))
    return [{name: draw() for name, draw in samplers} for _ in range(n)]


_RESERVED = frozenset({
    "config_id", "policy", "budget", "units", "questions", "recall", "strict_recall",
    "answer_recall", "tokens",
    "max_tokens", "over_budget", "seconds_per_question", "prepare_seconds", "wall_seconds",
    "changed_questions", "stale_only", "both", "both_unclear", "marked_current",
})


def _run_chunk(make_policy: Callable[..., Any], chunk: list[tuple[int, dict[str, Any], int]],
               dataset: EvalDataset, settings: HarnessSettings, held: list[Any] | None = None
               ) -> list[tuple[int, dict, list, str]]:
    """Evaluate (job_id, config, budget) jobs; module level so process pools can pickle it.
    Each job returns its summary, its rows per category, its results' fingerprint and its
    outcomes per question (``question_outcomes``).
    Consecutive jobs with the same parameters (a configuration's budgets) share one policy
    object and its prepared conversations (``evaluate(prepared=...)``): an index or a
    conversation's embeddings are built once per configuration, not once per budget.
    ``held`` carries [parameters, policy, prepared] from one chunk to the next (serial runs)."""
    out = []
    held = [None, None, {}] if held is None else held
    for job_id, config, budget in chunk:
        params = {k: v for k, v in config.items() if k != "budget"}
        if held[0] != params or held[1] is None:
            held[:] = [params, make_policy(**params), {}]
        result = evaluate(held[1], dataset, budget, settings=settings, prepared=held[2])
        out.append((job_id, result.summary(), result.by_category().to_records(),
                    result.fingerprint(), question_outcomes(result)))
    return out


OUTCOMES = ("recall", "strict", "answer_recall", "tokens", "over_budget", "stale_only", "both",
            "both_unclear", "marked_current")
"""The columns of ``question_outcomes``."""


def _or_nan(value: float | bool | None) -> float:
    return np.nan if value is None else float(value)


def question_outcomes(result: EvalResult) -> np.ndarray:
    """One row per question of ``result`` (the dataset's order), the columns of ``OUTCOMES``;
    a question without an answer string has NaN as its answer_recall, one naming no superseded
    message NaN as its stale_only, both and both_unclear. Held-out figures and intervals are
    computed from these, on any subset of the conversations."""
    return np.array([(q.recall, q.strict, _or_nan(q.answer_recall), q.tokens, float(q.over_budget),
                      _or_nan(q.stale_only), _or_nan(q.both), _or_nan(q.both_unclear),
                      float(q.marked_current))
                     for q in result.questions], dtype=np.float64).reshape(-1, len(OUTCOMES))


class SweepResult:
    """One row per configuration and budget; ``by_category()`` the long form per category."""

    def __init__(self, rows: list[dict[str, Any]], category_rows: list[dict[str, Any]],
                 parameters: list[str], wall_seconds: float, units: str = "billed",
                 fingerprints: Sequence[str] = (), outcomes: Sequence[np.ndarray] = ()) -> None:
        self.table = Table(rows, notes=(units_note(units),))
        self.units = units
        """The tokens' unit of every row (``HarnessSettings.units``)."""
        self.fingerprints = tuple(fingerprints)
        """Each row's ``EvalResult.fingerprint()``, in row order (``coinciding_policies`` reads
        them: policies that coincide on every question are found without evaluating again)."""
        self.outcomes = tuple(outcomes)
        """Each row's ``question_outcomes`` array, in row order."""
        self.category_table = Table(category_rows, notes=self.table.notes)
        self.parameters = parameters
        """The configuration's parameter names (columns of the table)."""
        self.wall_seconds = wall_seconds
        """Time of the whole sweep."""

    def to_records(self) -> list[dict[str, Any]]:
        return self.table.to_records()

    def by_category(self) -> Table:
        return self.category_table

    def __len__(self) -> int:
        return len(self.table)

    def __iter__(self) -> Any:
        return iter(self.table)

    @property
    def evaluations_per_second(self) -> float:
        return len(self.table) / self.wall_seconds if self.wall_seconds > 0 else float("inf")

    def pareto_front(self, x: str = "tokens", y: str = "recall") -> list[dict[str, Any]]:
        return pareto_front(self.table, x=x, y=y)

    def cheapest_reaching(self, recall: float, x: str = "tokens", y: str = "recall") -> dict[str, Any] | None:
        return cheapest_reaching(self.table, recall, x=x, y=y)

    def grid_arrays(self, axes: Mapping[str, Sequence[Any]], budgets: Sequence[int],
                    columns: Sequence[str] = ("recall", "tokens")) -> dict[str, np.ndarray]:
        """Each column as an array indexed (first axis value, second..., budget), for a sweep
        over the grid ``axes`` (parameter name -> its values, in order). A cell the sweep has
        no row for, or whose value is None (a category without questions), is NaN."""
        names = list(axes)
        unknown = [n for n in names if n not in self.parameters]
        if unknown:
            raise ValueError(f"axes must name the sweep's parameters {self.parameters}, got {unknown}")
        index = [{v: i for i, v in enumerate(axes[n])} for n in names]
        where = {b: i for i, b in enumerate(budgets)}
        shape = (*(len(axes[n]) for n in names), len(budgets))
        out = {c: np.full(shape, np.nan) for c in columns}
        for row in self.table:
            try:
                cell = (*(ix[row[n]] for ix, n in zip(index, names)), where[row["budget"]])
            except KeyError:
                continue  # a configuration or budget outside the grid asked for
            for c in columns:
                value = row.get(c)
                if value is not None:
                    out[c][cell] = value
        return out

    def comparison_notes(self, label: str, policies: Mapping[str, Any],
                         data: EvalDataset) -> dict[int, list[str]]:
        """Per budget, the notes of comparing the rows named by their ``label`` column (a sweep
        over policies by name): the unit and the policies that coincide on every question,
        read from the fingerprints (``harness.comparison_notes``), nothing evaluated again."""
        prints: dict[int, dict[str, str]] = {}
        for row, fingerprint in zip(self.table, self.fingerprints):
            prints.setdefault(row["budget"], {})[str(row[label])] = fingerprint
        return {b: comparison_notes(f, policies, data, b, self.units) for b, f in prints.items()}

    def __repr__(self) -> str:
        return f"SweepResult({len(self)} rows, parameters={self.parameters}, {self.wall_seconds:.2f} s)"


def run_sweep(
    make_policy: Callable[..., Any],
    configurations: Sequence[Mapping[str, Any]],
    dataset: Any,
    budgets: int | Sequence[int] | None = None,
    *,
    executor: Executor | None = None,
    progress: bool = True,
    settings: HarnessSettings | None = None,
    chunksize: int = 1,
) -> SweepResult:
    """Evaluate ``make_policy(**config)`` for every configuration at every budget.

    ``budgets`` is one budget, a list, or None when every configuration
    carries its own ``"budget"`` (then budget is a swept parameter like any
    other, not passed to ``make_policy``). ``executor`` runs ``chunksize``
    evaluations per task (None: in this process). ``progress`` shows a bar.
    """
    if not callable(make_policy):
        raise TypeError(f"make_policy must be callable, got {make_policy!r}")
    if isinstance(configurations, Mapping) or not isinstance(configurations, Sequence):
        raise TypeError(f"configurations must be a list of dicts, got {configurations!r:.80}")
    if not configurations:
        raise ValueError("configurations must hold at least one configuration, got []")
    data = as_dataset(dataset)
    settings = settings if settings is not None else HarnessSettings()
    chunksize = require_int("chunksize", chunksize, minimum=1)
    require_bool("progress", progress)
    if executor is not None and not callable(getattr(executor, "submit", None)):
        raise TypeError(f"executor must be a concurrent.futures.Executor, got {executor!r}")
    if budgets is None:
        budget_list: list[int | None] = [None]
    elif isinstance(budgets, int) and not isinstance(budgets, bool):
        budget_list = [require_int("budgets", budgets, minimum=1)]
    elif isinstance(budgets, Sequence) and budgets:
        budget_list = [require_int("budgets[]", b, minimum=1) for b in budgets]
    else:
        raise ValueError(f"budgets must be an int, a non-empty list of ints or None, got {budgets!r}")
    parameters: list[str] = []
    jobs: list[tuple[int, dict[str, Any], int]] = []
    configs: list[dict[str, Any]] = []
    config_index: list[int] = []
    for i, config in enumerate(configurations):
        if not isinstance(config, Mapping):
            raise TypeError(f"configurations[{i}] must be a dict, got {config!r}")
        config = dict(config)
        for key in config:
            if key in _RESERVED - {"budget"}:
                raise ValueError(f"configurations[{i}] uses the reserved column name {key!r}")
            if key not in parameters:
                parameters.append(key)
        for budget in budget_list:
            if budget is None:
                if "budget" not in config:
                    raise ValueError(f"configurations[{i}] has no 'budget' and budgets is None: {config!r}")
                b = require_int(f"configurations[{i}]['budget']", config["budget"], minimum=1)
            else:
                if "budget" in config:
                    raise ValueError(f"configurations[{i}] sets 'budget' and budgets={budgets!r} too")
                b = budget
            jobs.append((len(configs), config, b))
            configs.append(config)
            config_index.append(i)
    chunks = [jobs[i:i + chunksize] for i in range(0, len(jobs), chunksize)]
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(jobs), desc="sweep", unit="config")
    started = time.perf_counter()
    results: dict[int, tuple[dict, list, str, np.ndarray]] = {}
    try:
        if executor is None:
            held: list[Any] = [None, None, {}]
            for chunk in chunks:
                for job_id, *outcome in _run_chunk(make_policy, chunk, data, settings, held):
                    results[job_id] = tuple(outcome)  # type: ignore[assignment]
                if bar is not None:
                    bar.update(len(chunk))
        else:
            futures = {executor.submit(_run_chunk, make_policy, chunk, data, settings): len(chunk)
                       for chunk in chunks}
            for future in as_completed(futures):
                for job_id, *outcome in future.result():
                    results[job_id] = tuple(outcome)  # type: ignore[assignment]
                if bar is not None:
                    bar.update(futures[future])
    finally:
        if bar is not None:
            bar.close()
    wall = time.perf_counter() - started
    rows, category_rows, fingerprints, outcomes = [], [], [], []
    for job_id in range(len(jobs)):
        summary, cats, fingerprint, outcome = results[job_id]
        fingerprints.append(fingerprint)
        outcomes.append(outcome)
        params = {k: v for k, v in configs[job_id].items() if k != "budget"}
        config_id = config_index[job_id]
        row: dict[str, Any] = {"config_id": config_id, **params}
        row.update(summary)
        for cat in cats:
            row[f"recall:{cat['category']}"] = cat["recall"]
        rows.append(row)
        for cat in cats:
            category_rows.append({"config_id": config_id, **params, **cat})
    return SweepResult(rows, category_rows, parameters, wall, settings.units, fingerprints,
                       outcomes)
