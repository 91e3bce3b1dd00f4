"""Throw wrong values at every numeric and flag parameter of memorykit's public API.

The API is enumerated, not listed: every class and function (memoized ones included) named
in the ``__all__`` of a ``memorykit`` module (``inspect.signature`` of the function, or of the
class's constructor). Required parameters get valid values from ``BASELINE`` or, by their
annotation, from ``_by_annotation``; a callable neither fills is reported as without a baseline.
A parameter is probed when its annotation is a number or a flag (``int``, ``float``,
``bool``, optionally ``| None``). Each probe sets that one parameter to a bad value, the
others to a valid baseline, calls, and is classified:

* ``clear``: TypeError or ValueError whose message names the parameter or the value (also
  as a float: 10**30 is reported as 1e+30); for a lesson checker, whose contract is to answer
  every input with a ``Verdict``, a failing Verdict whose reason names them;
* ``accepted``: the call returned and ``ACCEPTED`` says why that value is fine there (or it
  passed the checks and then stopped at the import of an optional extra not installed);
* ``other``: anything else (another exception, an error naming neither, a hang past
  ``PROBE_SECONDS``, or a silent acceptance). The test requires 0.

Run ``python tests/api_sweep.py`` for the counts (``-v`` lists every non-clear probe).
"""

from __future__ import annotations

import functools
import importlib
import inspect
import io
import json
import math
import pkgutil
import signal
import sys
import tempfile
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
    "memorykit.longterm.events.Superseded",
    "memorykit.workspace.events.NoteEscalation", "memorykit.workspace.events.NoteExpiry",
    "memorykit.workspace.events.NoteSurfacing", "memorykit.workspace.events.TaskAdmission",
    "memorykit.workspace.events.TaskDemotion", "memorykit.workspace.events.TaskPromotion",
    "memorykit.workspace.events.TaskTransition", "memorykit.entities.records.EntityEviction",
    "memorykit.buffers.summary_buffer.TokenSample", "memorykit.buffers.summary_buffer.SummarizingNotice",
    # results and reports
    "memorykit.entities.records.EntityState", "memorykit.entities.health.HealthMetric",
    "memorykit.entities.store.Lookup", "memorykit.entities.resolution.Reference",
    "memorykit.entities.resolution.Resolution", "memorykit.evaluation.harness.EvalResult",
    "memorykit.evaluation.harness.QuestionResult", "memorykit.evaluation.locomo.LocomoReport",
    "memorykit.evaluation.sweep.SweepResult", "memorykit.evaluation.dataset.Session",
    "memorykit.evaluation.tune.TuneResult", "memorykit.entities.records.EntityUpdate",
    "memorykit.facts.audit.StoreAudit", "memorykit.facts.timeline.Version",
    "memorykit.classroom.replays.buffer_replay.BufferReplay",
    "memorykit.classroom.replays.recall_curves.Curve", "memorykit.classroom.replays.recall_curves.Probe",
    "memorykit.classroom.replays.service_loop.FailureCase", "memorykit.classroom.replays.service_loop.LoopProbe",
    "memorykit.classroom.replays.service_loop.LoopResult", "memorykit.classroom.replays.summary_replay.Round",
    "memorykit.classroom.replays.summary_replay.SummaryRun", "memorykit.classroom.contracts.verdict.Verdict",
    "memorykit.classroom.contracts.runner.Contract",
    "memorykit.classroom.contracts.llm.RecordedReply",
    "memorykit.classroom.lesson11.LoopbackReport", "memorykit.classroom.lesson11.ReflectResult",
    "memorykit.classroom.lesson12_deploy.DeployReport",
    "memorykit.llm.chat.Usage", "memorykit.classroom.doubles.openai_server.RecordedRequest",
    "memorykit.longterm.episodic.EpisodeScore", "memorykit.longterm.vectorstore.Hit",
    "memorykit.longterm.semantic.Recollection", "memorykit.summary.ScoredSentence",
    "memorykit.classroom.replays.episode_probes.ProbeEpisode",
    "memorykit.llm.calibration.Calibration", "memorykit.llm.calibration.CalibrationRow",
    "memorykit.workspace.memory.TurnReport", "memorykit.buffers.attention.AttentionSelection",
    "memorykit.availability.Availability",
    # what the seeded generators produce (they are probed: their inputs are the knobs)
    "memorykit.classroom.scenarios.cms.CMSScenario", "memorykit.classroom.scenarios.cms.LabelledReference",
    "memorykit.classroom.scenarios.cms.Mention", "memorykit.classroom.scenarios.cms.ScenarioTurn",
    "memorykit.classroom.scenarios.conversation.SimulatedConversation",
    "memorykit.classroom.scenarios.probes.ProbeConversation",
):
    EXCLUDED[_name] = _RECORD
# memorykit.classroom.course: grades read back from nbgrader's gradebook
for _name in ("memorykit.classroom.course.grading.CellGrade", "memorykit.classroom.course.grading.LessonGrade",
              "memorykit.classroom.course.grading.Grades"):
    EXCLUDED[_name] = _RECORD
for _name in ("Above", "Cutoff", "EvidenceMiss", "Miss"):  # what explain_misses reports
    EXCLUDED[f"memorykit.evaluation.explain.{_name}"] = _RECORD


def _is_widget(qualname: str) -> bool:
    return qualname.startswith("memorykit.classroom.") and qualname.endswith("Explorer")


def public_callables() -> dict[str, Any]:
    """Every class and function in a memorykit module's ``__all__``, by qualified name."""
    found: dict[str, Any] = {}
    names = [m.name for m in pkgutil.walk_packages(memorykit.__path__, "memorykit.")]
    for module_name in sorted(names):
        module = importlib.import_module(module_name)
        for attr in getattr(module, "__all__", ()):
            obj = getattr(module, attr)
            # a memoized function (functools.lru_cache) is a function behind a wrapper
            if inspect.isclass(obj) or inspect.isfunction(inspect.unwrap(obj)):
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


@functools.lru_cache(maxsize=1)
def _chat_explorer() -> Any:
    from memorykit.classroom.data import CHAT_EXAMPLE
    from memorykit.classroom.lesson12 import explore_file

    return explore_file(*CHAT_EXAMPLE)


def _fixed_policy(name: str) -> Any:
    from memorykit.evaluation.toolkit import fixed_policy

    return fixed_policy(name)


def _human_message(text: str) -> Any:
    from langchain_core.messages import HumanMessage

    return HumanMessage(text)


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
        "Clock": StepClock, "TokenCounter": Tokenizer, "MessageBuffer": _buffer,
        "EntityMemory": _entity_memory, "KnowledgeGraph": _graph,
        "SimulatedConversation": _simulated, "Summarizer": _summarizer,
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
_LOCOMO_FIXTURE = Path(__file__).resolve().parent / "fixtures" / "locomo_mini.json"


def _buffer() -> Any:
    from memorykit.buffers import FIFOBuffer

    return FIFOBuffer(400)


def _entity_memory() -> Any:
    from memorykit.entities import RelevanceMemory

    return RelevanceMemory(5)


def _entity_memory_for_clock(clock: Any) -> Any:
    from memorykit.entities import RelevanceMemory

    return RelevanceMemory(5, clock=clock)


def _entity_store() -> Any:
    from memorykit.entities.store import InMemoryStore

    return InMemoryStore()


def _cms_scenario() -> Any:
    from data.entities.generate import generate_cms_scenario

    return generate_cms_scenario(n_turns=6)


def _simulated() -> Any:
    from memorykit.classroom.scenarios.conversation import simulate_conversation

    return simulate_conversation(n_turns=4)


def _probe_conversation() -> Any:
    from memorykit.classroom.scenarios.probes import probe_conversation

    return probe_conversation(0, n_facts=1)


def _summarizer() -> Any:
    from memorykit.summary import ExtractiveSummarizer

    return ExtractiveSummarizer()


def _selective() -> Any:
    from memorykit.buffers.compression import SelectiveCompressor

    return SelectiveCompressor()


def _backend() -> Any:
    from memorykit.llm.backend import offline_backend

    return offline_backend()


def _salience_inputs() -> Any:
    from memorykit.workspace.memory import salience_inputs

    return salience_inputs(_graph(), [["maya"]], [["maya"]], [[]], [0.0])


def _graph() -> Any:
    from memorykit.workspace.graph import KnowledgeGraph
    from memorykit.workspace.objects import WorkspaceObject

    return KnowledgeGraph([WorkspaceObject("maya", "person", "Maya")])


def _last_messages(**config: Any) -> Any:
    from memorykit.evaluation.baselines import LastMessages

    return LastMessages(**config)


def _policy() -> Any:
    return _last_messages(n=4)


def _locomo() -> Any:
    from memorykit.evaluation.locomo import load_locomo

    return load_locomo(_LOCOMO_FIXTURE, verify=False)


def _covered_evidence_args() -> dict[str, Any]:
    from memorykit.context import Context, ContextItem

    m = _locomo().conversations[0].messages[0]
    ctx = Context((ContextItem("system", m.content, 10, (m.id,), "summary"),), 100, "sweep")
    return {"ctx": ctx, "evidence_ids": (m.id,), "messages": {m.id: m}, "min_overlap": 0.5}


def _episode_fields() -> dict[str, Any]:
    return {"id": "ep0001", "start_time": 0.0, "end_time": 60.0, "summary": "Ada's code is 4721.",
            "keywords": ("code", "4721"), "participants": ("user",),
            "source_message_ids": ("m1",)}


def _episodic_settings() -> Any:
    from memorykit.longterm.episodic import EpisodicSettings

    return EpisodicSettings()


def _episode_score() -> Any:
    from memorykit.longterm.episodic import Episode, EpisodeScore

    return EpisodeScore(Episode(**_episode_fields()), overlap=0.5, matched=("code",),
                        age_seconds=60.0, score=0.7, recalled=False)


_SCRATCH: list[tempfile.TemporaryDirectory[str]] = []


def _scratch() -> Path:
    """A directory removed when the sweep's process ends (download probes write into it)."""
    if not _SCRATCH:
        _SCRATCH.append(tempfile.TemporaryDirectory(prefix="memorykit-sweep-"))
    return Path(_SCRATCH[0].name)


def _local_opener(url: str, timeout: float) -> Any:
    """Stands in for urlopen: an empty LoCoMo list, no network."""
    return io.BytesIO(b"[]")


def _memory_search_call() -> dict[str, Any]:
    from memorykit.longterm.service import MemoryService
    from memorykit.messages import ToolCall

    svc = MemoryService()
    f = _message_factory()
    svc.add("s", f.user("My locker code is 4721."))
    return {"service": svc, "session_id": "s", "factory": f,
            "call": ToolCall("c1", "search", '{"query": "locker code", "type": "memory"}')}


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
    "memorykit.facts.detect.LLMUpdateDetector": lambda: {"model": _scripted()},
    "memorykit.llm.summarizer.OpenAISummarizer": lambda: {"chat_model": _scripted()},
    "memorykit.classroom.doubles.transcript.request_key": {
        "messages": [{"role": "user", "content": "hi"}], "max_tokens": None},
    "memorykit.classroom.doubles.transcript.replay_or_live": lambda: {
        "path": Path(__file__).resolve().parent.parent / "data" / "transcripts"
        / "lesson11_smollm2.json", "env": {}},
    "memorykit.llm.client.resolve_client": lambda: {
        "client": _client(), "timeout": 1.0, "max_retries": 0, "needs": "chat"},
    "memorykit.evaluation.sweep.random_search": lambda: {"param_space": {"a": [1, 2]}, "n": 2},
    "memorykit.classroom.lesson10.curve": {"letter": "A"},
    "memorykit.summary.check_summary_text": {"text": "a summary", "summarizer": None},
    # a course of no lesson is refused after the arguments are checked: nothing is built
    "memorykit.classroom.course.release.build_course": lambda: {
        "out": Path(tempfile.gettempdir()) / "memorykit-sweep-no-course", "lessons": []},
    "memorykit.workspace.objects.WorkspaceObject": {"id": "maya", "kind": "person", "name": "Maya"},
    "memorykit.llm.critic.parse_rules": {"reply": '{"rules": []}'},
    "memorykit.llm.critic.Rule": {"id": "rule-1", "text": "say less", "source_message_ids": ("m1",)},
    "memorykit.llm.chat.ScriptRule": {"pattern": "hello", "reply": "hi"},
    "memorykit.longterm.episodic.Episode": lambda: _episode_fields(),
    "memorykit.longterm.episodic.explain": lambda: {
        "score": _episode_score(), "settings": _episodic_settings()},
    "memorykit.longterm.episodic.episode_scores": {"overlap": 0.5, "age_seconds": 60.0},
    "memorykit.longterm.episodic.overlap_needed": {
        "age_seconds": 60.0, "alpha": 0.6, "beta": 0.4, "tau_seconds": 3600.0, "threshold": 0.7},
    "memorykit.buffers.compression.CompressionPipeline": lambda: {
        "buffer": _buffer(), "compressors": [_selective()]},
    "memorykit.entities.prompt.prompt_token_series": lambda: {
        "scenario": _cms_scenario(), "make_memory": _entity_memory_for_clock},
    "memorykit.entities.store.ReadThroughMemory": lambda: {
        "memory": _entity_memory(), "store": _entity_store()},
    "memorykit.evaluation.dataset.EvalQuestion": {
        "id": "q1", "question": "Where?", "answer": "Boston", "evidence_ids": ("D1:1",),
        "category": "single-hop"},
    "memorykit.evaluation.harness.evaluate": lambda: {
        "policy": _policy(), "dataset": _locomo(), "budget": 200},
    "memorykit.evaluation.scoring.covered_evidence": lambda: _covered_evidence_args(),
    "memorykit.evaluation.scoring.staleness": lambda: {
        **_covered_evidence_args(), "superseded_ids": []},
    "memorykit.evaluation.explain.explain_misses": lambda: {
        "policy": _policy(), "dataset": _locomo(), "budget": 200},
    "memorykit.evaluation.harness.compare_policies": lambda: {
        "policies": [_policy()], "dataset": _locomo(), "budget": 200},
    "memorykit.evaluation.harness.comparison_notes": lambda: {
        "results": {"a": "same", "b": "same"}, "policies": {}, "data": _locomo(), "budget": 200,
        "units": "billed"},
    "memorykit.evaluation.sweep.run_sweep": lambda: {
        "make_policy": _last_messages, "configurations": [{"n": 4}],
        "dataset": _locomo(), "budgets": 200, "progress": False},
    "memorykit.evaluation.tune.tune": lambda: {
        "dataset": _locomo(), "budgets": [200], "policies": ["last-20-messages"]},
    "memorykit.evaluation.export.export_policy": lambda: {"result": _tune_result()},
    "memorykit.evaluation.export.TunedPolicy": {
        "policy": "bm25", "params": {"k1": 0.3, "b": 0.25}, "budget": 300},
    "memorykit.evaluation.export.EarnedRecall": {
        "recall": 0.5, "recall_ci": (0.25, 0.75), "questions": 4, "split": "holdout"},
    "memorykit.evaluation.export.TuningData": {
        "name": "chats", "files": ("chats.jsonl",), "conversations": 2, "messages": 10,
        "questions": 4, "seed": 0},
    # lesson 12's deploy step: every bad value is refused before a server starts
    "memorykit.classroom.lesson12_deploy.deploy_demo": lambda: {
        "explorer": _chat_explorer(), "budget": 1000, "conversation": 0},
    # issue 28's adapters: a fixed policy and a budget, or a framework message to convert
    "memorykit.adapters.openai_agents.TunedContextFilter": lambda: {
        "policy": _fixed_policy("recency"), "budget": 100},
    "memorykit.adapters.langgraph.MemorykitPreModelHook": lambda: {
        "policy": _fixed_policy("recency"), "budget": 100},
    "memorykit.adapters.langgraph.memorykit_pre_model_hook": lambda: {
        "policy": _fixed_policy("recency"), "budget": 100},
    "memorykit.adapters.langgraph.message_to_memorykit": lambda: {
        "message": _human_message("hi"), "position": 0, "factory": _message_factory()},
    "memorykit.evaluation.locomo.download_locomo": lambda: {
        "dest": _scratch() / "locomo10.json", "expected_sha256": None, "opener": _local_opener},
    "memorykit.evaluation.locomo.load_locomo": lambda: {"path": _LOCOMO_FIXTURE, "verify": False},
    "memorykit.evaluation.locomo.parse_locomo": lambda: {
        "data": json.loads(_LOCOMO_FIXTURE.read_text())},
    "memorykit.evaluation.heldout.bootstrap_ci": {"sums": [1.0, 2.0, 3.0], "counts": [2, 3, 4]},
    "memorykit.evaluation.pareto.cheapest_reaching": {
        "rows": [{"tokens": 100, "recall": 0.5}, {"tokens": 300, "recall": 0.9}], "recall": 0.8},
    "memorykit.classroom.replays.service_loop.make_service": lambda: {
        "summarizer": _summarizer(), "budget": 400, "threshold": 0.8, "recall_limit": 2},
    "memorykit.classroom.replays.service_loop.probe": lambda: {
        "service": _service_loop_service(), "session": "probes", "conv": _probe_conversation(),
        "chat": None},
    "memorykit.classroom.replays.service_loop.run_loop": lambda: {
        "backend": _backend(), "conv": _probe_conversation(), "budget": 400, "threshold": 0.8,
        "recall_limit": 2},
    "memorykit.workspace.memory.salience_inputs": lambda: {
        "graph": _graph(), "mentions": [["maya"]], "task_entities": [[]], "note_entities": [[]],
        "times": [0.0]},
    "memorykit.workspace.objects.relevant_patterns": lambda: {"inputs": _salience_inputs()},
    "memorykit.workspace.render.render_columns": {"tasks": [], "notes": [], "objects": [],
                                                  "now": 0.0},
    # lesson checkers: an answer the exercise accepts (the checker's whole path runs)
    "memorykit.classroom.lesson01_checks.check_budget": {"budget": 5000},
    "memorykit.classroom.lesson02_checks.check_pruning_choice": {"policy": "fifo"},
    "memorykit.classroom.lesson03_checks.check_summary_settings": {
        "threshold": 0.9, "target": 0.5, "min_recent": 4},
    "memorykit.classroom.lesson03_checks.check_attention_window": {
        "window_tokens": 500, "neighbours": 0},
    "memorykit.classroom.verdict.report": lambda: {
        "verdict": __import__("memorykit.classroom.contracts.verdict", fromlist=["x"]).Verdict(
            "probe", True, "a passing verdict"), "show": False},
    # build-it-yourself checkers: the library's own implementation as the student's code
    "memorykit.classroom.lesson01_checks.check_billed_tokens": lambda: {
        "billed_tokens": __import__("memorykit.tokens", fromlist=["x"]).count_chat_tokens},
    "memorykit.classroom.lesson02_checks.check_victim_choice": lambda: {
        "buffer_class": __import__("memorykit.buffers.policies",
                                   fromlist=["x"]).ImportanceBuffer},
    "memorykit.classroom.lesson03_checks.check_summarizer": lambda: {
        "summarizer_class": __import__("memorykit.summary", fromlist=["x"]).ExtractiveSummarizer},
    "memorykit.classroom.lesson04_checks.check_entity_capacity": {"max_size": 20},
    "memorykit.classroom.lesson04_checks.check_entity_ttl": {"ttl_minutes": 30},
    "memorykit.classroom.lesson04_checks.check_relevance_score": lambda: {
        "relevance": _library_score()},
    "memorykit.classroom.lesson05_checks.check_admission_rule": lambda: {
        "slots_class": _rebuilt_slots()},
    "memorykit.classroom.lesson09_checks.check_episodic_score": lambda: {
        "score_function": __import__("memorykit.classroom.contracts.longterm", fromlist=["x"])
        .library_episodic_score},
    "memorykit.classroom.lesson10_checks.check_recall_rule": lambda: {
        "rule": __import__("memorykit.longterm.semantic", fromlist=["x"]).select_recalled},
    "memorykit.classroom.lesson09_checks.check_episodic_tau": {"tau_hours": 35},
    "memorykit.classroom.lesson11_checks.check_loop_settings": {
        "budget": 600, "threshold": 0.8, "recall_limit": 3},
    "memorykit.classroom.lesson11_checks.check_recall_limit": {
        "answer": {"recall_limit": 3, "tokens_per_call": 577.0}},
    "memorykit.classroom.lesson11_checks.check_reply_judge": lambda: {
        "judge": lambda reply, finish_reason, messages, cap: None},
    "memorykit.classroom.lesson10_checks.check_semantic_best": {
        "answer": {"threshold": 0.5, "recall": 0.5}},
    "memorykit.classroom.lesson09_checks.check_semantic_threshold": {
        "answer": {"threshold": 0.5, "wrong_recalls": 1}},
    "memorykit.classroom.lesson10_checks.check_window_size": {"window": 20},
    "memorykit.classroom.lesson12_checks.check_beats_bm25": {"config": {"policy": "bm25"}},
    "memorykit.classroom.lesson12_checks.check_retrieval_policy": lambda: {
        "policy_class": __import__("memorykit.evaluation.scored",
                                   fromlist=["x"]).TermOverlapRetrieval},
    "memorykit.classroom.lesson08_checks.check_column_limits": {"top_notes": 8, "max_objects": 20},
    "memorykit.classroom.lesson06_checks.check_escalation": {
        "warn_fraction": 0.4, "warn_multiplier": 1.5, "critical_fraction": 0.3,
        "critical_multiplier": 2.0},
    # The build-it-yourself checkers take the student's function; the library's own passes.
    "memorykit.classroom.lesson06_checks.check_escalated_priority": lambda: {
        "escalated_priority": importlib.import_module(
            "memorykit.classroom.contracts.workspace").library_escalated_priority},
    "memorykit.classroom.lesson07_checks.check_object_salience": lambda: {
        "object_salience": importlib.import_module(
            "memorykit.classroom.contracts.workspace").library_object_salience},
    "memorykit.classroom.lesson08_checks.check_three_columns": lambda: {
        "three_columns": importlib.import_module(
            "memorykit.workspace.render").three_column_lines},
    "memorykit.classroom.lesson06_checks.check_min_shared_entities": {"min_shared_entities": 2},
    "memorykit.classroom.lesson05_checks.check_preemption_ratio": {"preemption_ratio": 1.3},
    "memorykit.classroom.lesson07_checks.check_salience_weights": {
        "weights": {"belief_strength": 0.5}},
    "memorykit.longterm.search_tool.answer_memory_search": lambda: _memory_search_call(),
    # an empty list of lessons grades nothing (fast); the probes reach the worker count
    "memorykit.classroom.course.grading.autograde": lambda: {
        "course": _course(), "student": "sweep", "lessons": []},
}
"""Valid arguments for callables whose required parameters no annotation can fill, or
whose defaults are slow (the probes call with these). Keys: qualified names."""


def _library_score() -> Any:
    from memorykit.classroom.contracts.entities import library_score
    return library_score


def _rebuilt_slots() -> Any:
    """A TaskSlots subclass whose decide is the library's, called through the override."""
    from memorykit.workspace import TaskSlots

    class Rebuilt(TaskSlots):
        def decide(self, priority: float, active: tuple[float, ...]) -> tuple[str, int | None]:
            return TaskSlots.decide(self, priority, active)

    return Rebuilt


def _course() -> Any:
    from memorykit.classroom.course import Course

    return Course(Path(tempfile.gettempdir()) / "memorykit-sweep-no-course", ())


@functools.lru_cache(maxsize=1)
def _tune_result() -> Any:
    """One small tuning run, shared by the probes of ``export_policy``."""
    from memorykit.evaluation.tune import tune

    return tune(_locomo(), [200], ["last-20-messages"])


def _service_loop_service() -> Any:
    from memorykit.classroom.replays import service_loop
    return service_loop.make_service(_summarizer(), budget=400, threshold=0.8, recall_limit=2)


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
    "max_tokens", "max_entries", "budget", "window_size", "max_size",
    "max_payload_chars", "maxsize", "cache_size", "top_k", "recall_limit", "batch_size",
    "max_rules", "max_keywords", "summary_max_tokens", "stm_limit", "max_objects", "max_slots",
    "quote_chars", "max_retries", "min_recent", "critic_window", "summary_max_tokens",
    "max_tokens_per_context", "n", "n_messages", "working_tokens", "max_notes", "top_notes",
    "summarize_every", "reflect_every", "recency_turns", "min_shared_entities", "min_messages",
    "sentences", "tokens_per_sentence", "neighbours", "fact_every",
    "window_tokens", "chunksize", "arrived", "count",
)
for _name in _CAPS:
    ACCEPTED[(_name, "huge int")] = (
        "a limit or count with no natural maximum: one beyond any stream never binds, and "
        "the work it costs is bounded by the stream, not by the value")
ACCEPTED[("memorykit.longterm.search_tool.answer_memory_search.limit", "huge int")] = (
    ACCEPTED[("recall_limit", "huge int")])  # the same cap, given per call
_SPANS = (
    "timeout", "ttl_minutes", "ttl", "tau_hours", "tau_seconds", "half_life_minutes",
    "created_at", "started_at", "active_from", "active_until", "start_time",
    "surface_cooldown_hours", "delay", "latency_target_ms", "latency_alert_ms", "retry_after_ms",
    "access_latency_ms", "memory_latency_ms", "turn_gap_seconds", "end_time", "now",
    "updated_at", "recent_update_seconds", "startup_timeout", "at",
)
for _name in _SPANS:
    ACCEPTED[(_name, "huge int")] = (
        "a time or a duration: a huge finite one is a date far ahead or a wait that never "
        "ends, both meaningful; only NaN and inf are nonsense")
_COSINE = "a cosine threshold: -1 is in its range [-1, 1]"
for _qual in ("memorykit.longterm.semantic.SemanticSettings.threshold",
              "memorykit.longterm.service.LongTermSettings.min_score",
              "memorykit.classroom.lesson09_semantic.semantic_recall.threshold",
              "memorykit.classroom.lesson09_semantic.embedder_comparison.threshold",
              "memorykit.classroom.lesson10.curve.semantic_threshold",
              "memorykit.classroom.lesson10.curves.semantic_threshold",
              "memorykit.classroom.lesson10.embedder_comparison.threshold",
              "memorykit.classroom.replays.reproduction.ReproductionSettings.threshold"):
    ACCEPTED[(_qual, "negative")] = _COSINE
ACCEPTED[("memorykit.evaluation.baselines.BM25Retrieval.min_score", "huge int")] = (
    "a BM25 score has no upper bound: a huge minimum keeps nothing, which is well defined")
for _name in ("start_time", "created_at", "started_at", "active_from", "active_until", "now", "updated_at",
              "at"):
    ACCEPTED[(_name, "negative")] = "a clock may start at any finite time, also before 0"
for _clock in ("StepClock", "TurnClock"):
    for _label in ("negative", "huge int"):
        ACCEPTED[(f"memorykit.clock.{_clock}.start", _label)] = (
            "a clock may start at any finite time, before 0 or far ahead")
ACCEPTED[("seconds_per_turn", "huge int")] = (
    "a turn may stand for any positive duration: a day a turn is well defined")
ACCEPTED[("seconds_per_message", "huge int")] = ACCEPTED[("seconds_per_turn", "huge int")]
for _fn in ("dropped_keys", "reader_misses"):
    ACCEPTED[(f"memorykit.classroom.lesson10_reproduction.{_fn}.limit", "huge int")] = (
        "a cap on rows shown: one beyond the result's rows shows them all")
for _kind, _line in (("Uniform", "real line"), ("RandInt", "integers")):
    for _name, _label in (("low", "negative"), ("high", "huge int")):
        ACCEPTED[(f"memorykit.evaluation.sweep.{_kind}.{_name}", _label)] = (
            f"a search range may lie anywhere on the {_line}")
ACCEPTED[("memorykit.evaluation.sweep.LogUniform.high", "huge int")] = (
    "a log-uniform range may span any positive interval")
ACCEPTED[("memorykit.classroom.course.grading.autograde.workers", "huge int")] = (
    "a cap on lessons graded at once: the pool never grows past the lessons to grade")
ACCEPTED[("age_minutes", "list")] = "ages may be given as a sequence (one weight per age)"
ACCEPTED[("age_minutes", "huge int")] = "an age is a duration: a huge one weighs ~0, well defined"
for _name in ("seed",):
    ACCEPTED[(_name, "huge int")] = "seeds are arbitrary non-negative ints (random.Random, numpy)"
for _name in ("decay_rate", "decay_per_minute", "k1", "frequency_cap", "consolidation_factor",
              "preemption_ratio", "critical_multiplier",
              "urgency_multiplier", "bigram_weight", "importance_weight", "fact_bonus",
              "w_recency", "w_frequency", "recent_mention", "active_task_link", "note_link",
              "relationship", "belief_strength"):
    ACCEPTED[(_name, "huge int")] = (
        "a rate, weight or factor with no upper bound in its formula: a huge one is extreme "
        "(everything decays at once, one term dominates) but well defined")
for _name in ("link_hops", "neighbourhood_depth"):
    ACCEPTED[(_name, "huge int")] = (
        "a hop limit: a breadth-first walk ends when the graph is exhausted, so a limit past "
        "its diameter means 'everything connected' and costs what the graph costs")
for _fn in ("curve", "curves"):
    _qual = f"memorykit.classroom.lesson10.{_fn}"
    ACCEPTED[(f"{_qual}.factor", "huge int")] = ACCEPTED[("consolidation_factor", "huge int")]
ACCEPTED[("memorykit.evaluation.dataset.EvalQuestion.position", "huge int")] = (
    "a question's position is checked against its conversation's length where one holds it "
    "(EvalConversation refuses a position past the end); alone it has nothing to exceed")
ACCEPTED[("memorykit.workspace.memory.salience_inputs.first_turn", "huge int")] = (
    "a turn number: only differences between turns enter salience (turns since a mention), "
    "so a huge first turn shifts every turn alike")
_SCORES = "memorykit.entities.scoring.relevance_scores"
for _name in ("ages_minutes", "access_counts"):
    ACCEPTED[(f"{_SCORES}.{_name}", "list")] = "an array parameter: a list of numbers is an array"
    ACCEPTED[(f"{_SCORES}.{_name}", "nan")] = (
        "NaN marks a heatmap cell with no entity in memory and gives a NaN score (documented "
        "and tested: test_vectorized_scores_match_scalar_and_propagate_nan)")


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


def _names(text: str, param: str, value: Any) -> bool:
    if param in text or repr(value) in text or str(value) in text:
        return True
    # checked as a float first: 10**30 is reported as 1e+30
    return type(value) is int and repr(float(value)) in text


def _is_refusal(result: Any, param: str, value: Any) -> bool:
    """A lesson checker answers every input with a Verdict: a failing one naming the
    parameter or the value is its clear error (the student reads it in the notebook)."""
    from memorykit.classroom.contracts.verdict import Verdict

    return isinstance(result, Verdict) and not result.passed and _names(result.reason, param, value)


def _call(fn: Any, kwargs: dict[str, Any]) -> tuple[str, Any]:
    """("returned", result), ("hang", None) or ("raised", the exception)."""
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, PROBE_SECONDS)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return "returned", fn(**kwargs)
    except _Hang:
        return "hang", None
    except Exception as exc:  # noqa: BLE001 - classifying every failure is the point
        return "raised", exc
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def probe(qualname: str, fn: Any, param: str, label: str, value: Any,
          kwargs: dict[str, Any]) -> Outcome:
    how, got = _call(fn, {**kwargs, param: value})
    if how == "raised" and isinstance(got, (TypeError, ValueError)) and _names(str(got), param, value):
        return Outcome(qualname, param, label, "clear", f"{type(got).__name__}: {got}")
    if how == "returned" and _is_refusal(got, param, value):
        return Outcome(qualname, param, label, "clear", f"Verdict: {got.reason}")
    if how == "raised" and isinstance(got, ImportError):
        # an optional extra is not installed: the value passed the checks made before the
        # import (a bad one is a clear error above); fine only if the allow-list says so
        reason = accepted_reason(qualname, param, label)
        if reason is not None:
            return Outcome(qualname, param, label, "accepted", f"{reason} (then: {got})")
    if how == "returned":
        reason = accepted_reason(qualname, param, label)
        if reason is not None:
            return Outcome(qualname, param, label, "accepted", reason)
        return Outcome(qualname, param, label, "other", "accepted silently")
    if how == "hang":
        return Outcome(qualname, param, label, "other", f"still running after {PROBE_SECONDS} s")
    return Outcome(qualname, param, label, "other", f"{type(got).__name__}: {got}"[:300])


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
