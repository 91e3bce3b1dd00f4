"""Client construction, env configuration, secrecy of the key, the optional import."""

from __future__ import annotations

import pickle
import sys

import pytest

from memorykit.llm.embedder import EmbeddingFailed, OpenAIEmbedder
from memorykit.llm.client import (
    LLMCallFailed,
    LLMNotConfigured,
    configured,
    describe_backend,
    make_client,
)
from memorykit.llm.chat import OpenAIChatModel
from memorykit.llm.summarizer import OpenAISummarizer, SummarizationFailed
from memorykit.llm.client import redact, require_openai
from memorykit.classroom.doubles.openai_server import FakeOpenAIServer
from memorykit.messages import MessageFactory

SECRET = "sk-test-SECRET-0123456789abcdef"


def test_not_configured_without_key():
    assert configured() is False
    assert "api key missing" in describe_backend()
    with pytest.raises(LLMNotConfigured, match="OPENAI_API_KEY"):
        make_client()
    with pytest.raises(LLMNotConfigured):
        OpenAIChatModel("gpt-4o-mini")  # builds its client from the (empty) environment


def test_base_url_alone_is_not_enough(monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    assert configured() is False
    with pytest.raises(LLMNotConfigured):
        make_client()


def test_blank_key_is_no_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "   ")
    assert configured() is False


def test_configured_from_env_or_argument(monkeypatch):
    assert configured(api_key=SECRET) is True
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    assert configured() is True
    assert configured(env={}) is False  # an explicit mapping replaces os.environ


def test_env_vars_configure_a_working_client(monkeypatch):
    with FakeOpenAIServer(api_key=SECRET) as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", SECRET)
        assert configured()
        model = OpenAIChatModel("memorykit-fake-chat", timeout=2, max_retries=0)
        assert model.complete([{"role": "user", "content": "ping"}]) == "Scripted reply to: ping"
        (req,) = srv.requests
        assert req.auth_ok and req.path == "/v1/chat/completions"
        assert str(model.client.base_url).startswith(srv.base_url)


def test_explicit_arguments_beat_env(monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # nothing listens there
    monkeypatch.setenv("OPENAI_API_KEY", "sk-wrong")
    with FakeOpenAIServer(api_key=SECRET) as srv:
        client = make_client(base_url=srv.base_url, api_key=SECRET, timeout=2, max_retries=0)
        assert client.timeout == 2 and client.max_retries == 0
        reply = OpenAIChatModel("m", client).complete([{"role": "user", "content": "hi"}])
        assert reply == "Scripted reply to: hi"
        assert srv.requests[0].auth_ok


def test_bad_arguments_name_the_parameter_but_not_the_value():
    with pytest.raises(TypeError, match="api_key") as info:
        make_client(api_key=12345678, base_url="http://127.0.0.1:9/v1")
    assert "12345678" not in str(info.value)
    with pytest.raises(ValueError, match="timeout"):
        make_client(api_key=SECRET, timeout=0)
    with pytest.raises(ValueError, match="max_retries"):
        make_client(api_key=SECRET, max_retries=-1)


def test_key_never_appears_in_repr_str_or_errors(monkeypatch):
    with FakeOpenAIServer(api_key="sk-the-server-expects-another-key") as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", SECRET)
        client = make_client(timeout=2, max_retries=0)
        chat = OpenAIChatModel("memorykit-fake-chat", client)
        embedder = OpenAIEmbedder("memorykit-fake-embedding", client, dimension=64)
        summarizer = OpenAISummarizer(chat)
        texts = [repr(client), str(client), repr(chat), str(chat), repr(embedder),
                 repr(summarizer), summarizer.name, chat.name, embedder.name, describe_backend()]
        with pytest.raises(LLMCallFailed) as info:  # 401: wrong key
            chat.complete([{"role": "user", "content": "hi"}])
        assert info.value.kind == "http 401"
        # Like OpenAI, the server echoes a masked key (first 3 + last 4 characters): our
        # message redacts even that, and so does the original error kept as the cause.
        masked = SECRET[:3] + "*" * (len(SECRET) - 7) + SECRET[-4:]
        assert masked not in str(info.value.cause) and "401" in str(info.value.cause)
        assert masked not in str(info.value) and "<redacted key>" in str(info.value)
        with pytest.raises(SummarizationFailed) as failed:
            summarizer.summarize([MessageFactory().user("hello")], 20)
        assert masked not in str(failed.value)
        texts += [str(info.value), repr(info.value), str(info.value.cause), str(failed.value)]
        texts += [repr(r) for r in srv.requests]
        for text in texts:
            assert SECRET not in text, text
        assert "api key set" in describe_backend()


def test_missing_openai_package_gives_install_hint(monkeypatch):
    monkeypatch.setitem(sys.modules, "openai", None)  # makes `import openai` fail
    with pytest.raises(ImportError, match=r"memorykit\[llm\]"):
        require_openai()
    assert configured(api_key=SECRET) is False
    with pytest.raises(ImportError, match=r"memorykit\[llm\]"):
        make_client(api_key=SECRET)


def test_package_import_does_not_import_openai():
    import subprocess

    code = "import sys, memorykit.llm; print('openai' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_redact_hides_key_shapes():
    from memorykit.llm.client import redact

    text = redact("Incorrect API key provided: sk-proj-abc*****wxyz. Also key-12345678 and sk_live_99999")
    assert "abc" not in text and "wxyz" not in text and "12345678" not in text and "99999" not in text
    assert redact("a skipped step-by-step task") == "a skipped step-by-step task"


SENTINEL = "SENTINELKEY0123456789"
_KEYED_URLS = (
    f"http://user:{SENTINEL}@127.0.0.1:9/v1",
    f"http://127.0.0.1:9/v1?api-key={SENTINEL}",
)


@pytest.mark.parametrize("url", _KEYED_URLS)
def test_a_key_inside_the_base_url_never_shows(monkeypatch, url):
    monkeypatch.setenv("OPENAI_BASE_URL", url)
    client = make_client(api_key=SECRET, timeout=2, max_retries=0)
    chat = OpenAIChatModel("m", client)
    embedder = OpenAIEmbedder("m", client, dimension=8)
    with pytest.raises(LLMCallFailed) as chat_failed:  # nothing listens on port 9
        chat.complete([{"role": "user", "content": "hi"}])
    with pytest.raises(EmbeddingFailed) as embed_failed:
        embedder.embed(["hi"])
    assert chat_failed.value.kind == embed_failed.value.kind == "connection"
    texts = [repr(chat), repr(embedder), describe_backend(), str(chat_failed.value),
             str(embed_failed.value), repr(chat_failed.value)]
    assert "127.0.0.1:9/v1" in texts[0] and "127.0.0.1:9/v1" in texts[2]
    for text in texts:
        assert SENTINEL not in text, text


@pytest.mark.parametrize("text", [
    f"api_key: {SENTINEL}", f"api_key={SENTINEL}", f"API-KEY = '{SENTINEL}'",
    f"Bearer {SENTINEL}", f"Authorization: Basic {SENTINEL}", f"authorization: {SENTINEL}",
    f"see https://u:{SENTINEL}@host/v1", f"https://host/v1?x=1&token={SENTINEL}",
    f'{{"api_key": "{SENTINEL}"}}',
])
def test_redact_catches_key_fields_bearer_and_url_userinfo(text):
    assert SENTINEL not in redact(text)
    assert "<redacted" in redact(text)


def test_redact_keeps_ordinary_text():
    for text in ("max_tokens=5 and tokens: 12", "a skipped step-by-step task",
                 "pass api_key=... or set OPENAI_API_KEY", "https://example.test/v1"):
        assert redact(text) == text


def test_failures_pickle_without_the_key_or_the_request():
    """A 401 carries the request (its Authorization header) in the openai error: the failure
    keeps the error's type and status but not the request, and pickles without the key."""
    with FakeOpenAIServer(api_key="sk-the-server-expects-another-key") as srv:
        client = make_client(base_url=srv.base_url, api_key=SENTINEL, timeout=2, max_retries=0)
        chat = OpenAIChatModel("memorykit-fake-chat", client)
        with pytest.raises(LLMCallFailed) as info:
            chat.complete([{"role": "user", "content": "hi"}])
        with pytest.raises(SummarizationFailed) as failed:
            OpenAISummarizer(chat).summarize([MessageFactory().user("hello")], 20)
        with pytest.raises(EmbeddingFailed) as embed:
            OpenAIEmbedder("memorykit-fake-embedding", client, dimension=64).embed(["x"])
    error = info.value
    assert error.cause.status_code == 401
    assert error.cause.request is None and error.cause.response is None
    for original in (error, failed.value, embed.value):
        data = pickle.dumps(original)
        assert SENTINEL.encode() not in data
        copy = pickle.loads(data)
        assert type(copy) is type(original) and str(copy) == str(original)
        assert getattr(copy, "kind", None) == getattr(original, "kind", None)
        assert "401" in str(copy.cause)
    assert pickle.loads(pickle.dumps(failed.value)).cause.kind == "http 401"


def test_errors_without_a_cause_round_trip():
    for error in (LLMCallFailed("m", kind="cut off"), EmbeddingFailed("m", kind="timeout"),
                  LLMNotConfigured("no key")):
        copy = pickle.loads(pickle.dumps(error))
        assert type(copy) is type(error) and copy.args == error.args and copy.cause is None


@pytest.mark.parametrize("value", [-5, -0.01, 2.5, float("nan"), float("inf")])
def test_temperature_outside_openais_range_is_refused(value):
    with pytest.raises(ValueError, match="temperature"):
        OpenAIChatModel("m", make_client(api_key=SECRET), temperature=value)
