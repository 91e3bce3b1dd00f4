"""Throw wrong values at every numeric and flag parameter of memorykit's public API.

The API is enumerated, not listed: every class and function named in the ``__all__`` of a
``memorykit`` module (``inspect.signature`` of the function, or of the class's constructor).
A parameter is probed when its annotation is a number or a flag (``int``, ``float``,
``bool``, optionally ``| None``). Each probe sets that one parameter to a bad value, the
others to a valid baseline, calls, and is classified:

* ``clear``: TypeError or ValueError whose message names the parameter or the value;
* ``accepted``: the call returned and ``ACCEPTED`` says why that value is fine there;
* ``other``: anything else (another exception, an error naming neither, a hang past
  ``PROBE_SECONDS``, or a silent acceptance). The test requires 0.

Run ``python tests/api_sweep.py`` for the counts (``-v`` lists every non-clear probe).
"""

from __future__ import annotations

import importlib
import inspect
import math
import pkgutil
import signal
import sys
import warnings
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: the repository root is importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import memorykit  # noqa: E402

PROBE_SECONDS = 2.0
"""A probe that runs longer counts as a hang."""

HUGE = 10**30

# ----------------------------------------------------------------------------- what is swept

EXCLUDED: dict[str, str] = {}
"""Public callables the sweep leaves out, by qualified name, with the reason."""

_WIDGETS = "lesson widget plumbing: wires sliders to a figure; its numbers go to lesson " \
           "functions and settings the sweep probes directly"
_RECORD = "output record: the library builds it from checked inputs and hands it out " \
          "(results, events, reports); a caller never configures anything with one"
for _name in (
    # events and traces
    "memorykit.longterm.events.Recall", "memorykit.longterm.events.RuleLearned",
    "memorykit.longterm.events.Stored", "memorykit.longterm.events.Trimmed",
    "memorykit.longterm.events.StoreFailed", "memorykit.longterm.service.Session",
    "memorykit.workspace.events.NoteEscalation", "memorykit.workspace.events.NoteExpiry",
    "memorykit.workspace.events.NoteSurfacing", "memorykit.workspace.events.TaskAdmission",
    "memorykit.workspace.events.TaskDemotion", "memorykit.workspace.events.TaskPromotion",
    "memorykit.workspace.events.TaskTransition", "memorykit.entities.records.EntityEviction",
    "memorykit.buffers.summary_buffer.TokenSample",
    # results and reports
    "memorykit.entities.records.EntityState", "memorykit.entities.health.HealthMetric",
    "memorykit.entities.store.Lookup", "memorykit.entities.resolution.Reference",
    "memorykit.entities.resolution.Resolution", "memorykit.evaluation.harness.EvalResult",
    "memorykit.evaluation.harness.QuestionResult", "memorykit.evaluation.locomo.LocomoReport",
    "memorykit.evaluation.sweep.SweepResult", "memorykit.evaluation.dataset.Session",
    "memorykit.evaluation.buffer_replay.BufferReplay",
    "memorykit.evaluation.recall_curves.Curve", "memorykit.evaluation.recall_curves.Probe",
    "memorykit.evaluation.service_loop.FailureCase", "memorykit.evaluation.service_loop.LoopProbe",
    "memorykit.evaluation.service_loop.LoopResult", "memorykit.evaluation.summary_replay.Round",
    "memorykit.evaluation.summary_replay.SummaryRun", "memorykit.lessons.checks.verdict.Verdict",
    "memorykit.lessons.llm_app.LoopbackReport", "memorykit.lessons.llm_app.ReflectResult",
    "memorykit.llm.chat.Usage", "memorykit.llm.testing.RecordedRequest",
    "memorykit.longterm.episodic.EpisodeScore", "memorykit.longterm.vectorstore.Hit",
    "memorykit.longterm.semantic.Recollection", "memorykit.summary.ScoredSentence",
    "memorykit.workspace.memory.TurnReport",
    # what the seeded generators produce (they are probed: their inputs are the knobs)
    "memorykit.scenarios.cms.CMSScenario", "memorykit.scenarios.cms.LabelledReference",
    "memorykit.scenarios.cms.Mention", "memorykit.scenarios.cms.ScenarioTurn",
    "memorykit.scenarios.conversation.SimulatedConversation",
    "memorykit.scenarios.probes.ProbeConversation",
):
    EXCLUDED[_name] = _RECORD


def _is_widget(qualname: str) -> bool:
    return qualname.startswith("memorykit.lessons.") and qualname.endswith("Explorer")


def public_callables() -> dict[str, Any]:
    """Every class and function in a memorykit module's ``__all__``, by qualified name."""
    found: dict[str, Any] = {}
    names = [m.name for m in pkgutil.walk_packages(memorykit.__path__, "memorykit.")]
    for module_name in sorted(names):
        module = importlib.import_module(module_name)
        for attr in getattr(module, "__all__", ()):
            obj = getattr(module, attr)
            if inspect.isclass(obj) or inspect.isfunction(obj):
                found.setdefault(f"{obj.__module__}.{obj.__qualname__}", obj)
    return found


_SCALARS = {"int", "float", "bool"}


def param_kind(annotation: Any) -> tuple[str, bool] | None:
    """("int" | "float" | "bool", optional) for a number or flag parameter, else None."""
    text = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", "")
    parts = {p.strip() for p in str(text).split("|")}
    optional = "None" in parts
    parts.discard("None")
    parts.discard("np.ndarray")  # a number or an array of them: the number is probed
    if not parts or not parts <= _SCALARS:
        return None
    kind = "bool" if parts == {"bool"} else ("float" if "float" in parts else "int")
    return kind, optional


# ----------------------------------------------------------------------------- bad values

def bad_values(kind: str, optional: bool) -> list[tuple[str, Any]]:
    """(label, value) pairs that are wrong for a parameter of this kind."""
    wrong_types: list[tuple[str, Any]] = [("str", "1"), ("list", [1])]
    if not optional:
        wrong_types.append(("None", None))
    if kind == "bool":
        return wrong_types + [("str 'false'", "false"), ("int 1", 1), ("nan", math.nan)]
    probes = wrong_types + [
        ("nan", math.nan), ("inf", math.inf), ("-inf", -math.inf), ("bool True", True),
        ("huge int", HUGE), ("negative", -1),
    ]
    if kind == "int":
        probes.append(("float 2.5", 2.5))
    return probes


# ----------------------------------------------------------------------------- baselines

def _message_factory() -> Any:
    from memorykit.messages import MessageFactory

    return MessageFactory()


def _messages() -> list[Any]:
    f = _message_factory()
    return [f.system("be brief"), f.user("My name is Ada."), f.assistant("Hello Ada.")]


def _by_annotation(annotation: str) -> Any:
    """A valid value for a required parameter, from its annotation (None: no generic one)."""
    from memorykit.clock import StepClock
    from memorykit.embeddings import LexicalHashingEmbedder
    from memorykit.tokens import Tokenizer

    simple: dict[str, Callable[[], Any]] = {
        "int": lambda: 1, "float": lambda: 0.5, "bool": lambda: True, "str": lambda: "x",
        "float | None": lambda: 0.5, "int | None": lambda: 1, "str | None": lambda: "x",
        "Clock": StepClock, "TokenCounter": Tokenizer,
        "Sequence[Message]": _messages, "list[Message]": _messages,
        "Iterable[Message]": _messages, "Sequence[str]": lambda: ["a b", "c d"],
        "Iterable[str]": lambda: ["a b", "c d"], "list[str]": lambda: ["a b", "c d"],
        "Sequence[float]": lambda: [0.5], "Sequence[int]": lambda: [1],
        "np.ndarray | float": lambda: 1.0, "float | np.ndarray": lambda: 1.0,
        "tuple[int, int]": lambda: (0, 1),
    }
    if annotation in simple:
        return simple[annotation]()
    if annotation == "Embedder":
        return LexicalHashingEmbedder(dimension=16)
    return _NO_VALUE


_NO_VALUE = object()

def _client() -> Any:
    from memorykit.llm.client import make_client

    # nothing listens on port 9: constructing never connects, and no probe calls the model
    return make_client(api_key="sk-sweep-unused", base_url="http://127.0.0.1:9/v1")


def _scripted() -> Any:
    from memorykit.llm.chat import ScriptedChatModel

    return ScriptedChatModel()


BASELINE: dict[str, dict[str, Any] | Callable[[], dict[str, Any]]] = {
    "memorykit.llm.client.make_client": lambda: {
        "api_key": "sk-sweep-unused", "base_url": "http://127.0.0.1:9/v1"},
    "memorykit.llm.chat.OpenAIChatModel": lambda: {"model": "m", "client": _client()},
    "memorykit.llm.embedder.OpenAIEmbedder": lambda: {
        "model": "m", "client": _client(), "dimension": 8},
    "memorykit.llm.critic.OpenAICritic": lambda: {"chat_model": _scripted()},
    "memorykit.llm.summarizer.OpenAISummarizer": lambda: {"chat_model": _scripted()},
    "memorykit.llm.client.resolve_client": lambda: {
        "client": _client(), "timeout": 1.0, "max_retries": 0, "needs": "chat"},
    "memorykit.evaluation.sweep.random_search": lambda: {"param_space": {"a": [1, 2]}, "n": 2},
}
"""Valid arguments for callables whose required parameters no annotation can fill, or
whose defaults are slow (the probes call with these). Keys: qualified names."""


def baseline(qualname: str, fn: Any) -> dict[str, Any] | None:
    """Valid keyword arguments for ``fn`` (None when its required ones cannot be filled)."""
    given = BASELINE.get(qualname, {})
    kwargs = dict(given() if callable(given) else given)
    for p in inspect.signature(fn).parameters.values():
        if p.name in kwargs or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        if p.default is not p.empty:
            continue
        value = _by_annotation(str(p.annotation))
        if value is _NO_VALUE:
            return None
        kwargs[p.name] = value
    return kwargs


# ----------------------------------------------------------------------------- accepted on purpose

ACCEPTED: dict[tuple[str, str], str] = {}
"""(parameter name, probe label) -> why that value is fine for every callable taking it
(a name may be qualified, ``module.Callable.param``, to allow it in one place only)."""

_CAPS = (
    "max_tokens", "max_entries", "budget", "window", "window_size", "max_size",
    "max_payload_chars", "maxsize", "cache_size", "top_k", "recall_limit", "batch_size",
    "max_rules", "max_keywords", "summary_max_tokens", "stm_limit", "max_objects", "max_slots",
    "quote_chars", "max_retries", "min_recent", "critic_window", "summary_max_tokens",
    "max_tokens_per_context", "n", "n_messages", "working_tokens", "max_notes", "top_notes",
    "summarize_every", "reflect_every", "recency_turns", "min_shared_entities", "min_messages",
    "sentences", "tokens_per_sentence", "neighbours", "fact_every", "distractors",
)
for _name in _CAPS:
    ACCEPTED[(_name, "huge int")] = (
        "a limit or count with no natural maximum: one beyond any stream never binds, and "
        "the work it costs is bounded by the stream, not by the value")
_SPANS = (
    "timeout", "ttl_minutes", "ttl", "tau_hours", "tau_seconds", "half_life_minutes",
    "created_at", "started_at", "active_from", "active_until", "start_time", "at",
    "surface_cooldown_hours", "delay", "latency_target_ms", "latency_alert_ms",
)
for _name in _SPANS:
    ACCEPTED[(_name, "huge int")] = (
        "a time or a duration: a huge finite one is a date far ahead or a wait that never "
        "ends, both meaningful; only NaN and inf are nonsense")
for _name in ("min_score", "threshold"):
    ACCEPTED[(_name, "negative")] = "a cosine threshold: -1 is in its range [-1, 1]"
ACCEPTED[("memorykit.evaluation.baselines.BM25Retrieval.min_score", "huge int")] = (
    "a BM25 score has no upper bound: a huge minimum keeps nothing, which is well defined")
for _name in ("start_time", "created_at", "started_at"):
    ACCEPTED[(_name, "negative")] = "a clock may start at any finite time, also before 0"
for _name in ("low", "high"):
    for _label in ("negative", "huge int"):
        ACCEPTED[(f"memorykit.evaluation.sweep.Uniform.{_name}", _label)] = (
            "a search range may lie anywhere on the real line")
        ACCEPTED[(f"memorykit.evaluation.sweep.RandInt.{_name}", _label)] = (
            "a search range may lie anywhere on the integers")
ACCEPTED[("memorykit.evaluation.sweep.LogUniform.high", "huge int")] = (
    "a log-uniform range may span any positive interval")
ACCEPTED[("age_minutes", "list")] = "ages may be given as a sequence (one weight per age)"
ACCEPTED[("age_minutes", "huge int")] = "an age is a duration: a huge one weighs ~0, well defined"
for _name in ("seed",):
    ACCEPTED[(_name, "huge int")] = "seeds are arbitrary non-negative ints (random.Random, numpy)"
for _name in ("decay_rate", "decay_per_minute", "k1", "frequency_cap", "consolidation_factor",
              "preemption_ratio", "critical_multiplier", "warn_multiplier",
              "urgency_multiplier", "bigram_weight", "importance_weight", "fact_bonus"):
    ACCEPTED[(_name, "huge int")] = (
        "a rate, weight or factor with no upper bound in its formula: a huge one is extreme "
        "(everything decays at once, one term dominates) but well defined")


def accepted_reason(qualname: str, param: str, label: str) -> str | None:
    return ACCEPTED.get((f"{qualname}.{param}", label)) or ACCEPTED.get((param, label))


# ----------------------------------------------------------------------------- running

class _Hang(Exception):
    pass


def _alarm(signum: int, frame: Any) -> None:
    raise _Hang


@dataclass(frozen=True)
class Outcome:
    callable: str
    param: str
    label: str
    verdict: str
    """'clear', 'accepted' or 'other'."""
    detail: str


def _names(exc: BaseException, param: str, value: Any) -> bool:
    text = str(exc)
    return param in text or repr(value) in text or str(value) in text


def _call(fn: Any, kwargs: dict[str, Any]) -> tuple[str, BaseException | None]:
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, PROBE_SECONDS)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn(**kwargs)
        return "returned", None
    except _Hang as exc:
        return "hang", exc
    except Exception as exc:  # noqa: BLE001 - classifying every failure is the point
        return "raised", exc
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def probe(qualname: str, fn: Any, param: str, label: str, value: Any,
          kwargs: dict[str, Any]) -> Outcome:
    how, exc = _call(fn, {**kwargs, param: value})
    if how == "raised" and isinstance(exc, (TypeError, ValueError)) and _names(exc, param, value):
        return Outcome(qualname, param, label, "clear", f"{type(exc).__name__}: {exc}")
    if how == "returned":
        reason = accepted_reason(qualname, param, label)
        if reason is not None:
            return Outcome(qualname, param, label, "accepted", reason)
        return Outcome(qualname, param, label, "other", "accepted silently")
    if how == "hang":
        return Outcome(qualname, param, label, "other", f"still running after {PROBE_SECONDS} s")
    return Outcome(qualname, param, label, "other", f"{type(exc).__name__}: {exc}"[:300])


@dataclass
class Sweep:
    outcomes: list[Outcome]
    swept: list[str]
    excluded: dict[str, str]
    no_baseline: list[str]

    def counts(self) -> Counter[str]:
        return Counter(o.verdict for o in self.outcomes)

    def summary(self) -> str:
        c = self.counts()
        return (f"callables swept {len(self.swept)}, excluded {len(self.excluded)}, "
                f"without a baseline {len(self.no_baseline)}; probes {len(self.outcomes)}: "
                f"clear errors {c['clear']}, accepted on purpose {c['accepted']}, "
                f"other {c['other']}")


def targets() -> Iterator[tuple[str, Any, list[tuple[str, str, bool]]]]:
    """(qualified name, callable, [(param, kind, optional)]) for every swept callable."""
    for qualname, fn in sorted(public_callables().items()):
        try:
            params = inspect.signature(fn).parameters.values()
        except (TypeError, ValueError):  # builtin-backed (exception classes): nothing to probe
            continue
        probed = []
        for p in params:
            kind = param_kind(p.annotation)
            if kind is not None and p.kind is not p.VAR_KEYWORD:
                probed.append((p.name, *kind))
        if probed:
            yield qualname, fn, probed


def run_sweep() -> Sweep:
    sweep = Sweep([], [], {}, [])
    for qualname, fn, params in targets():
        if qualname in EXCLUDED or _is_widget(qualname):
            sweep.excluded[qualname] = EXCLUDED.get(qualname, _WIDGETS)
            continue
        kwargs = baseline(qualname, fn)
        if kwargs is None:
            sweep.no_baseline.append(qualname)
            continue
        sweep.swept.append(qualname)
        for param, kind, optional in params:
            for label, value in bad_values(kind, optional):
                sweep.outcomes.append(probe(qualname, fn, param, label, value, kwargs))
    return sweep


def main(argv: list[str]) -> int:
    sweep = run_sweep()
    if "-v" in argv:
        for o in sweep.outcomes:
            if o.verdict != "clear":
                print(f"{o.verdict:8} {o.callable}({o.param}={o.label}): {o.detail}")
        for name in sweep.no_baseline:
            print(f"no baseline: {name}")
    print(sweep.summary())
    return 0 if not sweep.counts()["other"] and not sweep.no_baseline else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
