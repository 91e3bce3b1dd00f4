"""The summary-reply contract: which replies of a real model a summarizer may trust.

The subject is a ``ReplyJudge``, ``(reply, finish_reason, messages, cap) -> reason | None``:
given the model's reply to "summarize these messages in at most ``cap`` tokens", its
``finish_reason`` and the messages, it returns why the reply cannot be trusted ("empty",
"cut off", "too long", "off-topic") or None to accept it. The test suite runs these contracts
over the library's ``memorykit.llm.summarizer.refusal`` and over ``OpenAISummarizer`` itself
(``tests/llm/test_llm_summarizer.py``); lesson 11's build-it-yourself exercise runs them over
the student's function (``memorykit.classroom.lesson11_checks.check_reply_judge``), with the replies the
real SmolLM2 model gave in the lesson's recording.

Replies are generated (Hypothesis, fixed seed): blank ones, faithful ones made of the
messages' own words, off-topic ones made of words the messages never use, with every
``finish_reason`` a server sends and caps on both sides of the reply's length.

Taught in ``notebooks/11_llm_in_the_loop.ipynb``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from memorykit.classroom.memo import memo

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memorykit.clock import StepClock
from memorykit.classroom.contracts.runner import Contract
from memorykit.messages import Message, MessageFactory

ReplyJudge = Callable[[str, "str | None", Sequence[Message], int], "str | None"]

MIN_OVERLAP = 0.3
"""The share of a reply's content words that must occur in the messages (lesson 11's)."""

_PROPERTY = settings(max_examples=60, deadline=None, derandomize=True, database=None,
                     report_multiple_bugs=False, suppress_health_check=[HealthCheck.too_slow])

ON_TOPIC = ("parcel", "house", "number", "refund", "code", "Falcon", "PIN", "support",
            "line", "5289", "callback", "phone", "flight", "Thursday", "booked")
"""Words the contract's messages use: a reply made of them is about the messages."""
OFF_TOPIC = ("weather", "Paris", "sunny", "guitar", "banana", "painting", "volcano", "poem",
             "football", "recipe", "ocean", "castle")
"""Words they never use: a reply made of them answers something else."""
FINISH = st.sampled_from(["stop", "length", None])


@memo(maxsize=1)
def contract_messages() -> tuple[Message, ...]:
    """The messages every generated reply 'summarizes'."""
    f = MessageFactory(clock=StepClock())
    return (f.user("Please send the parcel to house number 123."),
            f.user("The refund code you gave me is Blue_Falcon_80."),
            f.assistant("Noted: refund code Blue_Falcon_80, parcel to house number 123."),
            f.user("My PIN for the support line is 5289; my callback phone number follows."),
            f.assistant("Your flight is booked for Thursday."))


def _sentence(words: Sequence[str]) -> str:
    return " ".join(words) + "."


def _tokens(text: str) -> int:
    from memorykit.tokens import Tokenizer

    return Tokenizer().count(text.strip())


def _says(judge: ReplyJudge, reply: str, finish: str | None, cap: int) -> str | None:
    verdict = judge(reply, finish, contract_messages(), cap)
    assert verdict is None or isinstance(verdict, str), (
        f"your function must return a reason (a str) or None, got {verdict!r}")
    return verdict


def _expect(judge: ReplyJudge, reply: str, finish: str | None, cap: int,
            wanted: str | None) -> None:
    said = _says(judge, reply, finish, cap)
    shown = f"reply {reply[:70]!r}, finish_reason {finish!r}, cap {cap}"
    assert said == wanted, (
        f"for {shown} you return {said!r}, expected {wanted!r}"
        + ("" if wanted is None else f": {_WHY[wanted]}"))


_WHY = {
    "empty": "a reply of nothing but whitespace is no summary",
    "cut off": "finish_reason 'length' means the server stopped the model at the cap "
               "mid-summary: what was cut may be the fact the summary had to keep",
    "too long": "a summary over the cap breaks the budget it was asked to keep (count its "
                "tokens with Tokenizer())",
    "off-topic": f"under {MIN_OVERLAP:.0%} of the reply's content words occur in the messages "
                 "(topic_overlap): the model answered something else",
}


def _blank(judge: ReplyJudge) -> None:
    @_PROPERTY
    @given(reply=st.text(alphabet=" \n\t", max_size=6), finish=FINISH,
           cap=st.integers(1, 200))
    def blank(reply: str, finish: str | None, cap: int) -> None:
        _expect(judge, reply, finish, cap, "empty")

    blank()


def _cut_off(judge: ReplyJudge) -> None:
    @_PROPERTY
    @given(words=st.lists(st.sampled_from(ON_TOPIC), min_size=1, max_size=12),
           cap=st.integers(1, 200))
    def cut(words: list[str], cap: int) -> None:
        _expect(judge, _sentence(words), "length", cap, "cut off")

    cut()


def _too_long(judge: ReplyJudge) -> None:
    @_PROPERTY
    @given(words=st.lists(st.sampled_from(ON_TOPIC), min_size=2, max_size=20),
           finish=st.sampled_from(["stop", None]), short=st.integers(1, 40))
    def long(words: list[str], finish: str | None, short: int) -> None:
        reply = _sentence(words)
        cap = max(1, _tokens(reply) - short)
        if cap < _tokens(reply):
            _expect(judge, reply, finish, cap, "too long")

    long()


def _off_topic(judge: ReplyJudge) -> None:
    @_PROPERTY
    @given(words=st.lists(st.sampled_from(OFF_TOPIC), min_size=1, max_size=12),
           finish=st.sampled_from(["stop", None]))
    def off(words: list[str], finish: str | None) -> None:
        _expect(judge, _sentence(words), finish, 500, "off-topic")

    off()


def _faithful(judge: ReplyJudge) -> None:
    @_PROPERTY
    @given(words=st.lists(st.sampled_from(ON_TOPIC), min_size=1, max_size=20),
           finish=st.sampled_from(["stop", None]), spare=st.integers(0, 50))
    def faithful(words: list[str], finish: str | None, spare: int) -> None:
        reply = _sentence(words)
        _expect(judge, reply, finish, _tokens(reply) + spare, None)

    faithful()


def reply_contracts() -> tuple[Contract[ReplyJudge], ...]:
    """What every judge of summary replies keeps (with ``MIN_OVERLAP``)."""
    return (
        Contract("a blank reply is refused as 'empty', whatever the finish_reason", _blank),
        Contract("a reply the server cut off at the cap (finish_reason 'length') is refused "
                 "as 'cut off'", _cut_off),
        Contract("a reply over the cap is refused as 'too long'", _too_long),
        Contract("a reply about something else is refused as 'off-topic'", _off_topic),
        Contract("a faithful reply within the cap is accepted (None)", _faithful),
    )


REPLY_CONTRACTS = reply_contracts()


def agrees_with(reference: ReplyJudge, what: str) -> Contract[ReplyJudge]:
    """The subject gives ``reference``'s verdict on random replies: on-topic and off-topic
    words mixed, blank padding, every finish_reason, caps around the reply's length."""

    def check(judge: ReplyJudge) -> None:
        @_PROPERTY
        @given(words=st.lists(st.sampled_from(ON_TOPIC + OFF_TOPIC + ("the", "a", "is")),
                              max_size=16),
               pad=st.sampled_from(["", " ", "\n"]), finish=FINISH, cap=st.integers(1, 60))
        def mixed(words: list[str], pad: str, finish: str | None, cap: int) -> None:
            reply = pad + " ".join(words) + pad
            expected = reference(reply, finish, contract_messages(), cap)
            said = _says(judge, reply, finish, cap)
            assert said == expected, (
                f"for reply {reply[:70]!r}, finish_reason {finish!r}, cap {cap} you return "
                f"{said!r}, {what} returns {expected!r} (check the order: empty, cut off, "
                "too long, off-topic)")

        mixed()

    return Contract(f"it gives the same verdict as {what} on random replies", check)


@dataclass(frozen=True)
class RecordedReply:
    """One summary reply a real model gave, with what it was asked and the library's verdict."""

    reply: str
    finish_reason: str | None
    messages: tuple[Message, ...]
    cap: int
    verdict: str | None


def agrees_on_recorded(cases: Sequence[RecordedReply], model: str) -> Contract[ReplyJudge]:
    """The subject gives the library's verdict on each reply ``model`` really gave."""

    def check(judge: ReplyJudge) -> None:
        wrong = []
        for case in cases:
            said = judge(case.reply, case.finish_reason, case.messages, case.cap)
            if said != case.verdict:
                wrong.append((case, said))
        if wrong:
            case, said = wrong[0]
            raise AssertionError(
                f"{len(wrong)} of the {len(cases)} replies {model} gave get another verdict; "
                f"first: reply {' '.join(case.reply.split())[:80]!r} (finish_reason "
                f"{case.finish_reason!r}, cap {case.cap}) you return {said!r}, expected "
                f"{case.verdict!r}")

    return Contract(f"the {len(cases)} summaries {model} really wrote get the library's "
                    "verdicts", check)
