"""The loopback server itself: routes, auth, recording, clean shutdown."""

from __future__ import annotations

import threading

import pytest

from memorykit.llm.client import LLMCallFailed
from memorykit.llm.chat import OpenAIChatModel
from memorykit.classroom.doubles.openai_server import Behaviour, FakeOpenAIServer


def test_models_endpoint_and_base_url(server):
    assert server.base_url.startswith("http://127.0.0.1:") and server.base_url.endswith("/v1")
    ids = [m.id for m in server.client().models.list()]
    assert ids == ["memorykit-fake-chat", "memorykit-fake-embedding"]


def test_wrong_key_is_401_and_redacted(server):
    from memorykit.llm.client import make_client

    client = make_client(base_url=server.base_url, api_key="sk-wrong", max_retries=0, timeout=2)
    with pytest.raises(LLMCallFailed) as info:
        OpenAIChatModel("m", client).complete([{"role": "user", "content": "x"}])
    assert info.value.kind == "http 401"
    (req,) = server.requests
    assert req.auth_ok is False and req.headers["authorization"] == "Bearer <redacted>"


def test_unknown_path_is_404(server):
    import openai

    with pytest.raises(openai.NotFoundError):
        server.client().completions.create(model="m", prompt="x")


def test_behaviour_queue_then_default(server):
    model = OpenAIChatModel("m", server.client(max_retries=0))
    server.behave(Behaviour.error(500), Behaviour.normal())
    msgs = [{"role": "user", "content": "x"}]
    with pytest.raises(LLMCallFailed):
        model.complete(msgs)
    model.complete(msgs)
    server.default = Behaviour.error(503)
    with pytest.raises(LLMCallFailed, match="http 503"):
        model.complete(msgs)
    assert [r.behaviour for r in server.requests] == ["error", "normal", "error"]


def test_unknown_behaviour_is_rejected():
    with pytest.raises(ValueError, match="kind"):
        Behaviour("explode")


def test_close_wakes_a_delayed_handler_and_joins_every_thread():
    before = set(threading.enumerate())
    srv = FakeOpenAIServer().start()
    srv.behave(Behaviour.slow(120.0))
    model = OpenAIChatModel("m", srv.client(timeout=0.2, max_retries=0))
    with pytest.raises(LLMCallFailed, match="timeout"):
        model.complete([{"role": "user", "content": "x"}])
    # The handler is still inside its 120 s delay. close() must wake it rather than wait it out;
    # the join timeout only keeps a regression from hanging the suite (not a speed limit).
    closer = threading.Thread(target=srv.close, daemon=True)
    closer.start()
    closer.join(timeout=60)
    assert not closer.is_alive(), "close() waited for the delayed handler instead of waking it"
    assert [t for t in threading.enumerate() if t not in before] == []
    assert not srv.running
    srv.close()  # idempotent
    with pytest.raises(RuntimeError, match="not running"):
        srv.base_url


def test_env_helper(server):
    env = server.env()
    assert env["OPENAI_BASE_URL"] == server.base_url and env["OPENAI_API_KEY"]
