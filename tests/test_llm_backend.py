"""memorykit.llm.backend: the offline components, the memory reader, safe URLs, and asking a
server which model it serves when OPENAI_MODEL is unset."""

from __future__ import annotations


import pytest
from ports import free_port

from memorykit.llm.backend import Backend, choose_backend, memory_reader, offline_backend
from memorykit.llm.client import LLMCallFailed
from memorykit.llm.critic import ScriptedCritic
from memorykit.llm.backend import DEFAULT_MODEL, memory_reader_reply, safe_url
from memorykit.classroom.doubles.openai_server import FAKE_API_KEY, Behaviour, FakeOpenAIServer
from memorykit.summary import ExtractiveSummarizer


def test_offline_backend_defaults_and_overrides():
    b = offline_backend()
    assert isinstance(b, Backend) and b.kind == "offline" and b.actor is b.chat
    assert isinstance(b.summarizer, ExtractiveSummarizer) and isinstance(b.critic, ScriptedCritic)
    actor = memory_reader()
    assert offline_backend(actor=actor).actor is actor
    assert choose_backend({}).kind == "offline"
    chosen = []
    assert choose_backend({}, offline=lambda: chosen.append(1) or b) is b and chosen == [1]


def test_memory_reader_quotes_only_what_it_was_sent():
    context = [{"role": "system", "content": "Notes. The locker code is 4417. Bring a towel."},
               {"role": "user", "content": "What is the locker code?"}]
    assert memory_reader_reply(context).endswith("From the context: The locker code is 4417.")
    assert "cannot find" in memory_reader_reply(context[1:])
    assert memory_reader().complete(context) == memory_reader_reply(context)


def test_safe_url_drops_credentials_query_and_fragment():
    url = "https://user:secret@example.test:8443/v1?key=sk-abcdefghijklmnopqrstuvwx#frag"
    assert safe_url(url) == "https://example.test:8443/v1"


# ------------------------------------------------------------------ model discovery
def _backend_at(server, **env):
    return choose_backend({"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": FAKE_API_KEY,
                           **env}, timeout=5.0, max_retries=0)


def test_without_openai_model_a_server_is_asked_which_model_it_serves():
    with FakeOpenAIServer(models=("smollm2",)) as server:
        backend = _backend_at(server)
        assert backend.chat.model == "smollm2"
        assert "the one the server lists" in backend.description
        assert [r.path for r in server.requests] == ["/v1/models"]
        # OPENAI_MODEL set: nothing is asked, the name is used as given
        assert _backend_at(server, OPENAI_MODEL="other").chat.model == "other"
        assert len(server.requests) == 1
    with FakeOpenAIServer(models=("a", "b", "c")) as server:
        backend = _backend_at(server)
        assert backend.chat.model == "a"
        assert "first of the 3 the server lists: a, b, c" in backend.description


def test_a_server_serving_no_model_or_none_at_all_fails_naming_the_url():
    with FakeOpenAIServer(models=()) as server:
        with pytest.raises(LLMCallFailed, match="serves no model") as info:
            _backend_at(server)
        assert info.value.kind == "empty reply" and server.base_url in str(info.value)
        server.behave(Behaviour.error(500))
        with pytest.raises(LLMCallFailed, match="could not ask") as info:
            _backend_at(server)
        assert info.value.kind == "http 500"
    url = f"http://127.0.0.1:{free_port()}/v1"  # a port nobody listens on
    with pytest.raises(LLMCallFailed, match="is the server running") as info:
        choose_backend({"OPENAI_BASE_URL": url}, timeout=5.0, max_retries=0)
    assert info.value.kind == "connection" and url in str(info.value)


def test_api_openai_com_keeps_the_default_model_without_asking():
    backend = choose_backend({"OPENAI_API_KEY": "sk-test-not-a-real-key-123"})
    assert backend.chat.model == DEFAULT_MODEL
    explicit = choose_backend({"OPENAI_API_KEY": "sk-test-not-a-real-key-123",
                               "OPENAI_BASE_URL": "https://api.openai.com/v1"})
    assert explicit.chat.model == DEFAULT_MODEL
