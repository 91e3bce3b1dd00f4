"""``LLMUpdateDetector`` against the real local model: SmolLM2-135M-Instruct served on 127.0.0.1,
reached through the LLM layer's ``OpenAIChatModel`` and the real ``openai`` client.

What the model answers is not judged here (``python -m bench.llm_update_detector`` measures it:
it links nothing); the test is that a history too long for one window goes to the real server
window by window, each answer bounded by ``reply_tokens``, and that whatever comes back is taken
as data: only well-formed links between known messages, never an error. Without llama_cpp or the
model wheel the test is skipped with the reason, except under CI=true, where it fails.
"""

from __future__ import annotations

import os

import openai
import pytest
from ports import free_port

from memorykit.facts.detect import LLMUpdateDetector
from memorykit.facts.statement import Update
from memorykit.llm.chat import OpenAIChatModel
from memorykit.llm.local_server import LocalModelServer, local_model_available
from memorykit.messages import MessageFactory


def test_the_llm_detector_reads_a_history_window_by_window_from_the_real_model():
    available = local_model_available()
    if not available:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"CI must run the LLM detector against the local model, but: {available.reason}")
        pytest.skip(available.reason)
    f = MessageFactory()
    turns = ["The design review with the client is on Tuesday at 3pm.", "Noted, Tuesday at 3pm.",
             "Any good podcasts lately?", "I enjoyed one about octopuses.",
             "The review moved to Thursday.", "OK, Thursday."]
    messages = [f.user(t) if k % 2 == 0 else f.assistant(t) for k, t in enumerate(turns)]
    with LocalModelServer(free_port()) as server:
        real = OpenAIChatModel(server.model, openai.OpenAI(base_url=server.base_url, api_key="x"))
        replies, bounds = [], []

        class Counted:  # the real model, its answers kept
            def complete(self, chat_messages, *, max_tokens=None):
                bounds.append(max_tokens)
                replies.append(real.complete(chat_messages, max_tokens=max_tokens))
                return replies[-1]

        detector = LLMUpdateDetector(Counted(), window_tokens=40, reply_tokens=48)
        found = detector.find(messages)
    windows = detector.windows([f"[{m.id}] {m.role}: {m.content}" for m in messages])
    assert len(windows) >= 2 and len(replies) == len(windows) and bounds == [48] * len(windows)
    assert all(isinstance(r, str) and r.strip() for r in replies)  # the model did answer
    at = {m.id: k for k, m in enumerate(messages)}
    assert all(isinstance(u, Update) and at[u.old] < at[u.new] for u in found)
