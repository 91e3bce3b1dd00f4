"""The billing contract: how many prompt tokens a chat request costs, message by message.

The subject is a ``BilledCounter``, ``(messages, counter) -> int``: OpenAI-style message dicts
(``role``, ``content``, optionally ``name`` and ``tool_calls``) and a ``TokenCounter``. The test
suite runs these contracts over the library's ``memorykit.tokens.count_chat_tokens``
(``tests/test_tokens.py``); lesson 01's build-it-yourself exercise runs them over the student's
``billed_tokens`` (``memorykit.classroom.lesson01_checks.check_billed_tokens``), plus "agrees with the
library's count" on random requests.

The accounting (``memorykit.tokens.ChatFormat``'s defaults): every message costs its content,
3 framing tokens and 1 for its role; a ``name`` adds 1 plus the name's tokens; each tool call
adds 3 plus its function name's and arguments' tokens; the reply primer adds 3 per request.

Taught in ``notebooks/01_tokens_and_budgets.ipynb``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memorykit.classroom.contracts.runner import Contract
from memorykit.messages import MessageFactory, ToolCall
from memorykit.tokens import ChatFormat, TokenCounter, Tokenizer

BilledCounter = Callable[[list[dict[str, Any]], TokenCounter], int]

FORMAT = ChatFormat()
_PROPERTY = settings(max_examples=60, deadline=None, derandomize=True, database=None,
                     report_multiple_bugs=False,
                     suppress_health_check=[HealthCheck.too_slow])

# Text where tokenizers differ: words, digits, code, JSON, accents, CJK and emoji.
TEXT = st.text(alphabet=st.sampled_from(list("abc xyz 0123 .,:{}\"_-/éßñ東京語🧠👍\n")),
               max_size=40)
ROLE = st.sampled_from(["system", "user", "assistant", "tool"])
NAME = st.text(alphabet=st.sampled_from(list("abcdefgh_xyz")), min_size=1, max_size=8)
CALL = st.fixed_dictionaries({
    "id": st.just("c"), "type": st.just("function"),
    "function": st.fixed_dictionaries({
        "name": NAME,
        "arguments": st.dictionaries(NAME, st.integers(-99, 999), max_size=3).map(json.dumps)}),
})


@st.composite
def chat_message(draw: Any) -> dict[str, Any]:
    """One OpenAI-style message: any role, maybe a name; an assistant maybe calling tools
    (its content then possibly None)."""
    role = draw(ROLE)
    message: dict[str, Any] = {"role": role, "content": draw(TEXT)}
    if role in ("user", "system") and draw(st.booleans()):
        message["name"] = draw(NAME)
    if role == "assistant" and draw(st.booleans()):
        message["tool_calls"] = draw(st.lists(CALL, min_size=1, max_size=3))
        if draw(st.booleans()):
            message["content"] = None
    return message


CHAT = st.lists(chat_message(), max_size=8)


def _count(subject: BilledCounter, messages: list[dict[str, Any]], counter: TokenCounter) -> int:
    value = subject(messages, counter)
    assert isinstance(value, int) and not isinstance(value, bool), (
        f"the count must be an int number of tokens, got {value!r}")
    return value


def _primer(subject: BilledCounter) -> None:
    got = _count(subject, [], Tokenizer())
    assert got == FORMAT.reply_primer, (
        f"an empty request costs only the reply primer, {FORMAT.reply_primer} tokens, you count "
        f"{got}")


def _one_message(subject: BilledCounter) -> None:
    counter = Tokenizer()

    @_PROPERTY
    @given(role=ROLE, content=TEXT)
    def check(role: str, content: str) -> None:
        got = _count(subject, [{"role": role, "content": content}], counter)
        want = FORMAT.reply_primer + FORMAT.tokens_per_message + 1 + counter.count(content)
        assert got == want, (
            f"one {role} message of {counter.count(content)} content tokens bills {want} "
            f"(content + {FORMAT.tokens_per_message} framing + 1 role + "
            f"{FORMAT.reply_primer} primer), you count {got}")

    check()


def _name(subject: BilledCounter) -> None:
    counter = Tokenizer()

    @_PROPERTY
    @given(content=TEXT, name=NAME)
    def check(content: str, name: str) -> None:
        plain = _count(subject, [{"role": "user", "content": content}], counter)
        named = _count(subject, [{"role": "user", "content": content, "name": name}], counter)
        want = FORMAT.tokens_per_name + counter.count(name)
        assert named - plain == want, (
            f"the name {name!r} must add {FORMAT.tokens_per_name} + its {counter.count(name)} "
            f"tokens = {want}, you add {named - plain}")

    check()


def _tool_calls(subject: BilledCounter) -> None:
    counter = Tokenizer()

    @_PROPERTY
    @given(content=TEXT, calls=st.lists(CALL, min_size=1, max_size=3))
    def check(content: str, calls: list[dict[str, Any]]) -> None:
        plain = _count(subject, [{"role": "assistant", "content": content}], counter)
        calling = _count(subject, [{"role": "assistant", "content": content,
                                    "tool_calls": calls}], counter)
        want = sum(FORMAT.tool_call_tokens(counter, c["function"]["name"],
                                           c["function"]["arguments"]) for c in calls)
        assert calling - plain == want, (
            f"{len(calls)} tool call(s) must add {want} tokens ({FORMAT.tokens_per_tool_call} "
            f"framing per call + each function name's and arguments' tokens), you add "
            f"{calling - plain}")
        empty = _count(subject, [{"role": "assistant", "content": None, "tool_calls": calls}],
                       counter)
        assert empty == calling - counter.count(content), (
            "content None (an assistant message that only calls tools) counts as empty text")

    check()


def _additive(subject: BilledCounter) -> None:
    counter = Tokenizer()

    @_PROPERTY
    @given(first=CHAT, second=CHAT)
    def check(first: list[dict[str, Any]], second: list[dict[str, Any]]) -> None:
        both = _count(subject, first + second, counter)
        parts = _count(subject, first, counter) + _count(subject, second, counter)
        assert both == parts - FORMAT.reply_primer, (
            f"each message is billed on its own and the primer once per request: {len(first)} + "
            f"{len(second)} messages together should cost {parts - FORMAT.reply_primer}, "
            f"you count {both}")

    check()


def _matches_stored_counts(subject: BilledCounter) -> None:
    """What a request costs equals the billed tokens ``MessageFactory`` stored on its messages
    (plus the primer): a buffer's token total is the price of the request it sends."""
    counter = Tokenizer()

    @_PROPERTY
    @given(steps=st.lists(st.tuples(st.sampled_from(["user", "assistant", "call"]), TEXT),
                          max_size=6))
    def check(steps: list[tuple[str, str]]) -> None:
        factory = MessageFactory(counter)
        messages = [factory.message("system", "You are a helpful assistant.")]
        for n, (kind, text) in enumerate(steps):
            if kind == "call":
                messages.append(factory.assistant(text, tool_calls=(
                    ToolCall(f"c{n}", "lookup", json.dumps({"q": text[:5]})),)))
                messages.append(factory.tool(text, call_id=f"c{n}"))
            else:
                messages.append(factory.message(kind, text))
        got = _count(subject, [m.to_openai() for m in messages], counter)
        want = sum(m.billed_tokens for m in messages) + FORMAT.reply_primer
        assert got == want, (
            f"the request of {len(messages)} messages costs {want} by the billed_tokens stored "
            f"on them (+ {FORMAT.reply_primer} primer), you count {got}")

    check()


TOKEN_CONTRACTS: tuple[Contract[BilledCounter], ...] = (
    Contract("an empty request costs the 3-token reply primer", _primer),
    Contract("one message costs its content + 3 framing + 1 role token (+ the primer)",
             _one_message),
    Contract("a name adds 1 token + the name's tokens", _name),
    Contract("each tool call adds 3 tokens + its function name and arguments", _tool_calls),
    Contract("messages are billed one by one and the primer once per request", _additive),
    Contract("a request costs the billed_tokens stored on its messages + the primer",
             _matches_stored_counts),
)


def agrees_with_counter(reference: BilledCounter, what: str) -> Contract[BilledCounter]:
    """The subject counts exactly what ``reference`` counts on random requests, in both
    encodings: a build-it-yourself exercise checks the student's count against the library's."""

    def check(subject: BilledCounter) -> None:
        counters = (Tokenizer("cl100k_base"), Tokenizer("o200k_base"))

        @_PROPERTY
        @given(chat=CHAT, which=st.sampled_from([0, 1]))
        def same(chat: list[dict[str, Any]], which: int) -> None:
            counter = counters[which]
            got, want = _count(subject, chat, counter), reference(chat, counter)
            assert got == want, (f"this request bills {want} tokens in {counter.encoding} by "
                                 f"{what}, you count {got}")

        same()

    return Contract(f"it counts what {what} counts", check)
