"""Exact, offline token accounting."""

from __future__ import annotations

import hashlib
import socket

import pytest

from memorykit import tokens
from memorykit.tokens import (
    ChatFormat,
    ContextBudget,
    EncodingIntegrityError,
    Tokenizer,
    count_chat_tokens,
    encoding_for_model,
    load_encoding,
)


@pytest.fixture(autouse=True)
def no_network(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("token accounting tried to use the network")

    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket.socket, "connect", refuse)


@pytest.mark.parametrize(
    "encoding, text, expected",
    [
        ("cl100k_base", "hello world", [15339, 1917]),
        ("o200k_base", "hello world", [24912, 2375]),
    ],
)
def test_official_ids(encoding, text, expected):
    assert Tokenizer(encoding).encode(text) == expected
    assert Tokenizer(encoding).count(text) == 2


def test_known_counts_and_round_trip():
    cl = Tokenizer("cl100k_base")
    assert cl.count("tiktoken is great!") == 6
    text = "Übermäßig lange Wörter, emoji 🧠 and code: def f(x): return x**2"
    assert cl.decode(cl.encode(text)) == text
    # Special-token text in user content is ordinary text, never a control token.
    assert cl.count("<|endoftext|>") > 1


def test_packaged_files_match_official_hashes():
    from importlib import resources

    for name, spec in tokens.ENCODINGS.items():
        data = (resources.files("memorykit") / "encodings" / f"{name}.tiktoken").read_bytes()
        assert hashlib.sha256(data).hexdigest() == spec.sha256


def test_corrupt_packaged_file_is_refused(monkeypatch, tmp_path):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "empty-cache"))
    bad = tokens.EncodingSpec("cl100k_base", "https://example.invalid/x", "0" * 64, "x")
    with pytest.raises(EncodingIntegrityError, match="expected 0000"):
        tokens._read_verified_bpe(bad)


def test_valid_tiktoken_cache_file_is_used(monkeypatch, tmp_path):
    spec = tokens.ENCODINGS["cl100k_base"]
    from importlib import resources

    data = (resources.files("memorykit") / "encodings" / "cl100k_base.tiktoken").read_bytes()
    cache_file = tmp_path / hashlib.sha1(spec.url.encode()).hexdigest()
    cache_file.write_bytes(data)
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    _, source = tokens._read_verified_bpe(spec)
    assert source == str(cache_file)
    cache_file.write_bytes(b"corrupt")
    _, source = tokens._read_verified_bpe(spec)
    assert source.endswith("cl100k_base.tiktoken") and source != str(cache_file)


def test_unknown_encoding_names_the_value():
    with pytest.raises(ValueError, match="got 'p50k_base'"):
        load_encoding("p50k_base")


@pytest.mark.parametrize(
    "model, encoding, approximate",
    [
        ("gpt-4o", "o200k_base", False),
        ("gpt-4o-mini-2024-07-18", "o200k_base", False),
        ("gpt-4.1-nano", "o200k_base", False),
        ("o1-preview", "o200k_base", False),
        ("o3-mini", "o200k_base", False),
        ("gpt-4", "cl100k_base", False),
        ("gpt-4-turbo", "cl100k_base", False),
        ("gpt-3.5-turbo", "cl100k_base", False),
        ("llama-3-70b", "cl100k_base", True),
        ("claude-3-5-sonnet", "cl100k_base", True),
    ],
)
def test_model_mapping(model, encoding, approximate):
    mapped = encoding_for_model(model)
    assert (mapped.encoding, mapped.approximate) == (encoding, approximate)


def test_model_mapping_rejects_empty():
    with pytest.raises(ValueError, match="model must be a non-empty string, got ''"):
        encoding_for_model("")


def test_billed_tokens_follow_openai_accounting():
    counter = Tokenizer("cl100k_base")
    chat = [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": "hello world"},
    ]
    # 3 primer + (3 + 1 role + 6 content) + (3 + 1 + 2) = 19
    assert counter.count("You are a helpful assistant.") == 6
    assert count_chat_tokens(chat, counter) == 19
    named = [{"role": "user", "content": "hello world", "name": "maya"}]
    assert count_chat_tokens(named, counter) == 3 + 3 + 1 + 2 + 1 + counter.count("maya")


def test_chat_format_validates():
    with pytest.raises(ValueError, match="tokens_per_message must be >= 0, got -1"):
        ChatFormat(tokens_per_message=-1)


def test_context_budget_picture_of_seed_004():
    budget = ContextBudget()
    assert budget.response_reserve == 121_000
    assert budget.shares()["memory"] == 2_000
    assert sum(budget.shares().values()) == 128_000
    assert budget.fractions()["response reserve"] == pytest.approx(0.9453125)
    with pytest.raises(ValueError, match="add up to 9000 tokens, more than context_window=8000"):
        ContextBudget(context_window=8000, memory=4000)


class _Counting:
    encoding = "words"

    def __init__(self):
        self.asked = []

    def count(self, text):
        self.asked.append(text)
        return len(text.split())


def test_memo_counter_counts_each_text_once_and_forgets_the_least_recent():
    inner = _Counting()
    memo = tokens.MemoCounter(inner, maxsize=2)
    assert isinstance(memo, tokens.TokenCounter) and memo.encoding == "words"
    assert [memo.count(t) for t in ("a b", "a b", "c", "a b")] == [2, 2, 1, 2]
    assert inner.asked == ["a b", "c"]
    memo.count("d e f")  # a third text: "c", the least recently used, leaves
    memo.count("c")
    assert inner.asked == ["a b", "c", "d e f", "c"]
    assert memo.cache_info().currsize == 2
    assert tokens.MemoCounter().count("hello world") == Tokenizer().count("hello world")


@pytest.mark.parametrize("make, error, message", [
    (lambda: tokens.MemoCounter(object()), TypeError, "counter must have a count"),
    (lambda: tokens.MemoCounter(maxsize=0), ValueError, "maxsize must be >= 1, got 0"),
    (lambda: tokens.MemoCounter().count(["hi"]), TypeError, r"text must be a str, got \['hi'\]"),
])
def test_memo_counter_validation_names_the_value(make, error, message):
    with pytest.raises(error, match=message):
        make()


# ------------------------------------------------------------ the billing contract
# The contract lesson 01's build-it-yourself exercise runs over the student's billed_tokens
# (memorykit.classroom.contracts.tokens): the library's own count must keep every clause of it.
from memorykit.classroom.contracts.tokens import TOKEN_CONTRACTS, agrees_with_counter  # noqa: E402


@pytest.mark.parametrize("contract", TOKEN_CONTRACTS, ids=lambda c: c.name[:50])
def test_count_chat_tokens_keeps_the_billing_contract(contract):
    contract(count_chat_tokens)


def test_agreement_contract_catches_a_count_that_differs():
    contract = agrees_with_counter(count_chat_tokens, "the library")
    contract(count_chat_tokens)
    with pytest.raises(AssertionError, match="by the library, you count"):
        contract(lambda messages, counter: count_chat_tokens(messages, counter) + 1)
