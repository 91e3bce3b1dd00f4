"""Lesson 11: the same memory driving a model over the OpenAI API, or the offline stand-ins.

* ``choose_backend(env)``: the OpenAI components when OPENAI_API_KEY or OPENAI_BASE_URL is
  set, else ``offline_backend()``: the scripted memory reader (**not a language model**),
  the ``ExtractiveSummarizer`` and the scripted booking critic and actor of D3.
* ``run_loop(backend)``: D3's inject / distract / probe conversation through D4's
  memory service (``memorykit.classroom.replays.service_loop``); ``reflect_demo(backend)``:
  architecture D's critic on the booking mistake, and the actor's next reply.
* ``loopback_demo()``: the real ``openai`` client against memorykit's scripted loopback
  server (``FakeOpenAIServer``: a script, not a model), failures injected.
* ``local_model_demo(env)``: the same on SmolLM2-135M-Instruct, live on a local llama.cpp
  server when OPENAI_BASE_URL is set, else replayed from its recorded transcript
  (``TRANSCRIPT``): real summaries (refused when cut off, empty or off-topic, the
  extractive fallback writing them then), what they lose, its critic and its calibration.
  ``recorded_replies()``: every summary reply of that recording, with the library's verdict
  (``library_judge``: ``refusal`` in the shape of exercise 3's function).
* The explorer, ``LoopExplorer``, and the student's reply judge in the loop live in
  ``memorykit.classroom.lesson11_explorer``.

Taught in ``notebooks/11_llm_in_the_loop.ipynb``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from dataclasses import dataclass, replace
from typing import Any

from memorykit._validate import require_bool, require_fraction, require_int
from memorykit.embeddings import Embedder
import memorykit.classroom.replays.service_loop as service_loop
from memorykit.classroom.replays.service_loop import (
    FailureCase,
    LoopResult,
    failure_case,
    loopback_responder,
)
from memorykit.classroom.explorer import Setting, defaults
from memorykit.classroom.memo import memo
import memorykit.llm.backend as backends
from memorykit.llm.backend import Backend, openai_backend
from memorykit.llm.calibration import Calibration, calibrate, calibration_requests
from memorykit.classroom.scenarios.conversation import simulate_conversation
from memorykit.longterm.reflection import ReflectionMemory
from memorykit.classroom.scenarios.probes import (
    ProbeConversation,
    adaptability_scenario,
    asks_for_confirmation,
    booking_actor,
    booking_critic,
    probe_conversation,
)
from memorykit.classroom.data import DATA_DIR
from memorykit.llm.client import LLMError
from memorykit.llm.critic import OpenAICritic
from memorykit.llm.summarizer import FallbackSummarizer, OpenAISummarizer, refusal
from memorykit.classroom.doubles.transcript import replay_or_live
from memorykit.tokens import TokenCounter

SESSION = "lesson-11"
LOOPBACK_MODEL = "memorykit-fake-chat"
SETTINGS = (
    Setting("budget", "working-memory budget", 600, 300, 2000, 100),
    Setting("threshold", "summary threshold", 0.8, 0.5, 0.95, 0.05),
    Setting("recall_limit", "recall_limit", 3, 0, 8, 1),
)
"""The explorer's sliders, at the lesson's default scenario."""
DEFAULTS = {**defaults(SETTINGS), "distractor_turns": 30, "seed": 0}
"""The lesson's default scenario (the explorer starts here)."""
REPLY_TOKENS = 64
"""Cap on a probe's answer and the actor's reply (uncapped, a 135M model rambles for minutes)."""


def offline_backend() -> Backend:
    """The deterministic offline components, with D3's scripted booking critic and
    actor (no network, no key, no language model)."""
    return backends.offline_backend(critic=booking_critic(), actor=booking_actor())


def choose_backend(env: Mapping[str, str] | None = None, **client: Any) -> Backend:
    """The OpenAI backend when OPENAI_API_KEY or OPENAI_BASE_URL is set in ``env`` (default
    the environment), else ``offline_backend()``; ``client``: ``timeout``, ``max_retries``.
    An endpoint that cannot say which model it serves gives the offline one, saying why."""
    try:
        return backends.choose_backend(env, offline=offline_backend, **client)
    except LLMError as exc:
        return replace(offline_backend(), description=f"offline, because {exc}")


def _check_params(budget: int, threshold: float, recall_limit: int, distractor_turns: int,
                  seed: int) -> None:
    """The lesson's ranges (the library's classes accept wider ones)."""
    require_int("budget", budget, minimum=100)
    require_fraction("threshold", threshold)
    if not 0.3 <= threshold <= 0.95:
        raise ValueError(f"threshold must be in [0.3, 0.95], got {threshold!r}")
    require_int("recall_limit", recall_limit, minimum=0)
    require_int("distractor_turns", distractor_turns, minimum=0)
    require_int("seed", seed, minimum=0)


@memo(maxsize=8)
def _conversation(distractor_turns: int, seed: int) -> ProbeConversation:
    return probe_conversation(distractor_turns, n_facts=4, seed=seed)


def run_loop(backend: Backend | None = None, *, budget: int = DEFAULTS["budget"],
             threshold: float = DEFAULTS["threshold"], recall_limit: int = DEFAULTS["recall_limit"],
             distractor_turns: int = DEFAULTS["distractor_turns"],
             seed: int = DEFAULTS["seed"], embedder: Embedder | None = None,
             counter: TokenCounter | None = None) -> LoopResult:
    """Replay the conversation through the memory service and send every probe to ``backend``
    (``embedder``, ``counter`` None: the service's ``LexicalHashingEmbedder()``, ``Tokenizer()``)."""
    backend = backend if backend is not None else offline_backend()
    _check_params(budget, threshold, recall_limit, distractor_turns, seed)
    return service_loop.run_loop(backend, _conversation(distractor_turns, seed), budget=budget,
                                 threshold=threshold, recall_limit=recall_limit,
                                 embedder=embedder, counter=counter, session=SESSION,
                                 reply_tokens=REPLY_TOKENS)


@dataclass(frozen=True)
class ReflectResult:
    rules: tuple[str, ...]
    cited: tuple[tuple[str, ...], ...]
    mistake_ids: tuple[str, ...]
    reply: str
    asks_first: bool
    error: str | None = None
    """How the critic or the actor failed (None: neither did); shown, never raised."""

    def summary(self) -> dict[str, Any]:
        out = {"rules_learned": len(self.rules),
               "rules_cite_the_mistake": all(set(c) & set(self.mistake_ids) for c in self.cited)
               if self.cited else False,
               "next_reply_asks_first": self.asks_first}
        return out if self.error is None else {**out, "failed": self.error}


def reflect_demo(backend: Backend | None = None, *, distractor_turns: int = 6) -> ReflectResult:
    """D's critic reads the booking mistake; the actor answers the next request with the rule."""
    backend = backend if backend is not None else offline_backend()
    scenario = adaptability_scenario(distractor_turns)
    memory = ReflectionMemory(backend.critic)
    rules, reply, error = [], "", None
    try:  # a real model's critique may be unparseable, an endpoint may be down: show it
        rules = memory.reflect(scenario.messages, scenario.messages[-1].created_at)
        prompt = [scenario.messages[0].to_openai()]
        prompt += [{"role": "system", "content": memory.render(r)} for r in memory.active()]
        prompt.append({"role": "user", "content": scenario.second_request})
        reply = backend.actor.complete(prompt, max_tokens=REPLY_TOKENS)
    except LLMError as exc:
        error = f"{type(exc).__name__}: {exc}"[:300]
    return ReflectResult(tuple(r.text for r in rules), tuple(r.source_message_ids for r in rules),
                         scenario.mistake_ids, reply, asks_for_confirmation(reply), error)


@dataclass(frozen=True)
class LoopbackReport:
    loop: LoopResult
    reflect: ReflectResult
    requests: dict[str, int]
    """Requests the server received, by endpoint (recorded server-side)."""
    embedding_shape: tuple[int, int]
    embeddings_match: bool
    streamed_pieces: int
    streamed_equals_complete: bool
    failures: tuple[FailureCase, ...]

    def lines(self) -> list[str]:
        out = ["server: memorykit FakeOpenAIServer on 127.0.0.1 (scripted replies, NOT a model)",
               "client: the real openai package, over HTTP"]
        out += [f"{k}: {v}" for k, v in self.loop.summary().items()]
        out += [f"requests {k}: {v}" for k, v in sorted(self.requests.items())]
        out.append(f"embeddings: shape {self.embedding_shape}, equal to the server's vectors: "
                   f"{self.embeddings_match}")
        out.append(f"streaming: {self.streamed_pieces} pieces, joined equal to the plain reply: "
                   f"{self.streamed_equals_complete}")
        out += [f"critic over HTTP: {k}: {v}" for k, v in self.reflect.summary().items()]
        return out + [f.describe() for f in self.failures]


def loopback_demo(*, budget: int = DEFAULTS["budget"], threshold: float = DEFAULTS["threshold"],
                  recall_limit: int = DEFAULTS["recall_limit"],
                  distractor_turns: int = DEFAULTS["distractor_turns"],
                  seed: int = DEFAULTS["seed"]) -> LoopbackReport:
    """Everything above through the real ``openai`` client and memorykit's loopback server."""
    import numpy as np
    from memorykit.llm.embedder import OpenAIEmbedder
    from memorykit.classroom.doubles.openai_server import Behaviour, FakeOpenAIServer

    with FakeOpenAIServer(chat=loopback_responder) as server:
        client = server.client(timeout=5.0, max_retries=0)
        backend = openai_backend(client, LOOPBACK_MODEL, where="a loopback scripted server")
        loop = run_loop(backend, budget=budget, threshold=threshold, recall_limit=recall_limit,
                        distractor_turns=distractor_turns, seed=seed)
        reflect = reflect_demo(backend)
        texts = [p.question for p in loop.probes]
        vectors = OpenAIEmbedder(LOOPBACK_MODEL.replace("chat", "embedding"), client,
                                 dimension=64).embed(texts)
        match = bool(np.allclose(vectors, server.embedder.embed(texts), atol=1e-6))
        question = [{"role": "user", "content": loop.probes[0].question}]
        plain = backend.chat.complete(question)
        pieces = list(backend.chat.stream(question))
        failures = tuple(failure_case(server, behaviour, label, model=LOOPBACK_MODEL)
                         for behaviour, label in ((Behaviour.slow(2.0), "timeout"),
                                                  (Behaviour.error(500), "HTTP 500"),
                                                  (Behaviour.malformed(), "malformed reply")))
        counts = dict(Counter(r.path.rstrip("/").rsplit("/v1/", 1)[-1] for r in server.requests))
    return LoopbackReport(loop, reflect, counts, tuple(vectors.shape), match, len(pieces),
                          "".join(pieces) == plain, failures)


def calibration_demo(model: Any = None, *, turns: int = 12, tool_call_rate: float = 0.4,
                     seed: int = DEFAULTS["seed"]) -> Calibration:
    """memorykit's billed count against ``usage.prompt_tokens`` of ``model`` (default: the
    loopback server's, through the real ``openai`` client) over growing prefixes of a
    simulated conversation with tool calls."""
    from memorykit.llm.chat import OpenAIChatModel
    from memorykit.classroom.doubles.openai_server import FakeOpenAIServer

    conversation = simulate_conversation(require_int("turns", turns, minimum=2), seed=seed,
                                         tool_call_rate=require_fraction("tool_call_rate",
                                                                         tool_call_rate))
    requests = calibration_requests(conversation.messages)
    if model is not None:
        return calibrate(model, requests)
    with FakeOpenAIServer() as server:
        return calibrate(OpenAIChatModel(LOOPBACK_MODEL, server.client(timeout=5.0,
                                                                       max_retries=0)), requests)


TRANSCRIPT = DATA_DIR.parent / "transcripts" / "lesson11_smollm2.json"
"""SmolLM2-135M-Instruct's recorded replies (``scripts/record_lesson11.py`` regenerates it)."""
MIN_OVERLAP = 0.3
"""A summary with fewer of its content words in the messages is refused as off-topic."""


@dataclass(frozen=True)
class LocalModelReport:
    mode: str
    """Live (which server) or replayed (which transcript), as one printable line."""
    loop: LoopResult
    summarizer: FallbackSummarizer
    reflect: ReflectResult
    calibration: Calibration | None
    calibration_error: str | None

    def survival(self) -> dict[str, int]:
        """Facts whose first summary the model wrote: how many it kept and lost."""
        return service_loop.survival_by_writer(self.loop, self.summarizer.writer_of)

    def calibration_lines(self) -> list[Any]:
        """The calibration's rows and fit, or the one line saying why there is none."""
        c = self.calibration
        return [self.calibration_error] if c is None else [*c.table(), c.fit_line()]


def local_model_demo(env: Mapping[str, str] | None = None, *, record: bool = False,
                     transcript: Path = TRANSCRIPT, note: str = "", **client: Any
                     ) -> LocalModelReport:
    """The loop, D's critic and the calibration on a real small model: live when
    OPENAI_BASE_URL is set, else replayed from ``transcript``; never raises for the model."""
    chat, mode = replay_or_live(transcript, env, record=require_bool("record", record), **client)
    summarizer = FallbackSummarizer(OpenAISummarizer(chat, min_overlap=MIN_OVERLAP))
    backend = Backend("openai", mode, chat, summarizer, OpenAICritic(chat), chat)
    loop, reflect = run_loop(backend), reflect_demo(backend)
    calibration, error = None, None
    try:
        calibration = calibration_demo(chat)
    except (LLMError, ValueError) as exc:  # a dead endpoint, or a server without usage
        error = f"{type(exc).__name__}: {exc}"[:300]
    if record:  # ``note``: how it was recorded, for the replay's first line
        chat.transcript.note = note
        chat.transcript.save(transcript)
    return LocalModelReport(mode, loop, summarizer, reflect, calibration, error)


def library_judge(reply: Any, finish_reason: Any, messages: Any, cap: Any) -> str | None:
    """The library's verdict on a summary reply, in the shape of exercise 3's function: the
    reason ``refusal`` refuses it for (at ``MIN_OVERLAP``), or None when it is trusted."""
    refused = refusal(reply, finish_reason, messages, cap, min_overlap=MIN_OVERLAP)
    return None if refused is None else refused[0]


@memo(maxsize=1)
def recorded_replies() -> tuple[Any, ...]:
    """Every summary reply SmolLM2 gave in the recording (``TRANSCRIPT``), in order, with the
    messages it summarized, its cap, its finish_reason and the library's verdict
    (``RecordedReply``): ``local_model_demo``'s loop replayed, never live, each reply kept.
    Exercise 3's checker compares the student's judge with the library's on them."""
    from memorykit.classroom.contracts.llm import RecordedReply

    cases: list[RecordedReply] = []

    class Keeping(OpenAISummarizer):
        def summarize(self, messages: Any, max_tokens: int) -> str:
            try:
                return super().summarize(messages, max_tokens)
            finally:
                if self.last_reply is not None:
                    error = self.last_error
                    cases.append(RecordedReply(
                        self.last_reply, getattr(self.chat_model, "last_finish_reason", None),
                        tuple(messages), max_tokens, None if error is None else error.reason))

    chat, _ = replay_or_live(TRANSCRIPT, {})  # never live: an empty environment replays
    summarizer = FallbackSummarizer(Keeping(chat, min_overlap=MIN_OVERLAP))
    run_loop(Backend("openai", "replayed", chat, summarizer, OpenAICritic(chat), chat))
    return tuple(cases)


__all__ = ["DEFAULTS", "REPLY_TOKENS", "SETTINGS", "TRANSCRIPT", "FailureCase", "LocalModelReport",
           "LoopResult", "LoopbackReport", "ReflectResult", "calibration_demo",
           "choose_backend", "local_model_demo", "loopback_demo", "loopback_responder",
           "offline_backend", "reflect_demo", "run_loop"]
