"""memorykit.llm.backend: the offline components, the memory reader, safe URLs."""

from __future__ import annotations

from memorykit.llm import Backend, ScriptedCritic, choose_backend, memory_reader, offline_backend
from memorykit.llm.backend import memory_reader_reply, safe_url
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
