"""Finding "the same fact again": which later message replaces which earlier one, LLM-free.

A conversation changes its facts: "the review moved to Thursday", "sorry, it's 4712, not
4721", "cancel the dentist", or a new value simply stated ("my number is 555 0199"). A memory
that should keep only the current value must first notice that two messages are about the same
fact and say different things. ``find_updates`` does it with plain rules a student can read:

1. **Sentences and values.** Each message is cut into statements (sentences, and clauses after
   ";", a dash or ", so"); "The ticket for the refund? It's 4417." is read as one. Typed values
   are found by pattern: e-mail addresses, money, dates, times, street addresses, phone numbers,
   codes and other numbers, colours; names (capitalised words) count as values too. They are
   what changes.
2. **Keys.** What a statement is about is the content words (stemmed, minus function words and
   cue words) of the stretch around its value, openers like "For the record," left out: "the
   Apollo report is due Friday" has the key terms {report, due} and the subject Apollo. Two
   statements are about the same fact when their key terms and subjects overlap (weighted
   Jaccard, rare words counting more: idf over the messages so far).
3. **Cues.** A later statement with a change cue ("moved to", "changed to", "instead", "no
   longer", "not X but Y", "X, not Y", "actually", "cancel", "now", "went up"; a cue alone in
   its sentence carries to the next one) needs less key overlap than one without, or only to
   name part of the key ("the review moved to Thursday"). A cancellation ("is off", "'s dead",
   "fell through", "don't need to come") matches the statement it ends by key, by a name and a
   value both share ("told Coleman not to come on the 19th"), or, naming nothing ("So that
   one's off."), by the names its message gave before it. A negated value ("not 4721", "instead
   of Friday", "4721 was wrong") names the old statement outright. With no cue, the same key
   must carry a new value of the same kind ("same key, new value"). A change back ("going back
   to Stickerhaus", "they reversed it, so we stay on APA") returns to the value before the last
   change: it replaces the statement whose message named that value as the one it replaced.
4. **Guards.** A statement that only restates an earlier value, or says it did not change
   ("still Friday", "nothing changed"), replaces nothing; nor does an echo: a message giving
   only values an earlier one named, or the other speaker's reply just after a change ("Noted:
   Thursday, not Tuesday"). Hypotheticals and proposals ("what if we moved it to Friday?",
   "maybe Sunday") and questions state nothing (a condition after the value, "..., if anyone
   asks", is dropped, not the statement; a statement asked to be confirmed, "the flight is at
   7:10, isn't it?", is stated); two statements about different subjects ("the Apollo
   deadline" and "the Zephyr deadline") or owners ("my phone" and "Dana's phone") are
   different facts.
5. **Sure, or only a follow-up.** A link is an *update* when the rules are sure: the old value
   named ("not 8:00"), two key words shared, or one with a cue, or a keyless strong cue just
   after the value ("make it Saturday"), or the assistant's reply just after a user's value
   saying it looked it up and found another ("I checked the portal: it now shows the 18th").
   One shared word and no cue, or a new value of the same
   kind in words the rules do not know, is only a *follow-up* (``find_follow_ups``): good for
   pulling the later message in beside the earlier one, never for marking or dropping it.
6. **Only what is current is replaced.** Messages are read in order and an update links the new
   statement to the earlier *current* statements of the fact, the best match and any echo of
   its value (so "changed twice" makes a chain: a -> b -> c, and ``current_of`` follows it).
   Every decision reads only messages up to the later one, so the updates among a history's
   first n messages do not depend on what follows.

What it misses (the lesson shows examples): a key said in other words with no shared term ("the
hairdresser booking" / "the haircut", "the launch date" / "go-live"), a change stated with no
value and no cue ("let's not do that then"), a value with no pattern and no copula to find it
("No wait, halal."), a replacement in other words ("Raj has the pager this week" after "Lena
is on call"), a change back with no value to find ("put him back on the walker"); for a hit
they leave unlinked ``SupersedingRetrieval`` looks for the change by meaning (embeddings).
``python -m bench.changing_facts`` prints how
many superseded statements of a set it links to their current one (by updates, and by
follow-ups too), and how much current evidence it wrongly marks superseded.
``LLMUpdateDetector`` asks a model instead (optional).
Taught in ``notebooks/13_changing_facts.ipynb``.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import threading
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Protocol, runtime_checkable

import numpy as np

from memorykit._text import STOPWORDS
from memorykit._validate import require_int, require_unit_interval
from memorykit.facts.statement import UPDATE_KINDS, Statement, Update
from memorykit.messages import Message

__all__ = ["DetectionSettings", "LLMUpdateDetector", "RuleDetector", "UpdateDetector",
           "current_of", "extract_statements", "find_follow_ups", "find_updates"]


@dataclass(frozen=True)
class DetectionSettings:
    """How much two sentences must share to be "the same fact"."""

    cued_overlap: float = 0.3
    """Key overlap (idf-weighted share of the smaller sentence's key terms that the other has, in
    [0, 1]) enough to link a sentence that carries a change cue to an earlier statement."""
    plain_overlap: float = 0.5
    """Key overlap needed with no cue ("same key, new value"): higher, since two sentences about
    different facts often share a word."""
    contained: float = 0.7
    """Or: the share of one sentence's key terms (idf-weighted, in [0, 1]) that the other has,
    enough for a cued sentence when one of the two names only part of the key ("the review
    moved to Thursday" after "the design review with the client is on Tuesday at 3pm")."""
    follow_up_overlap: float = 0.15
    """Key overlap enough for a *follow-up* (``find_follow_ups``): a later statement with a new
    value of the same kind, cue or none, that may replace the earlier one. Low on purpose: a
    follow-up is only pulled in next to the earlier statement, never marks it."""
    nearby: int = 4
    """A cued sentence that names no key of its own ("make that Thursday", "sorry, I meant 4721")
    refers to the conversation just before: it may replace a statement among the ``nearby``
    previous messages whose value has the same type, whatever their overlap (0: never)."""

    def __post_init__(self) -> None:
        require_unit_interval("cued_overlap", self.cued_overlap)
        require_unit_interval("plain_overlap", self.plain_overlap)
        require_unit_interval("contained", self.contained)
        require_unit_interval("follow_up_overlap", self.follow_up_overlap)
        require_int("nearby", self.nearby, minimum=0, maximum=1000)


# --- values -------------------------------------------------------------------------------

_MONTHS = ("january february march april may june july august september october november "
           "december").split()
_MONTH = r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|" \
         r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
_DAY = r"(?:mon|tues?|wed(?:nes)?|thu(?:rs?)?|fri|sat(?:ur)?|sun)days?"
_ORD = r"\d{1,2}(?:st|nd|rd|th)?"
# Order matters: the first pattern to claim a span keeps it (a phone number is not three codes).
_VALUE_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (kind, re.compile(pattern, re.IGNORECASE)) for kind, pattern in (
        ("email", r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+"),
        ("money", r"[$€£]\s?\d[\d,]*(?:\.\d+)?(?:\s?(?:k|m|bn)\b)?|\b\d[\d,]*(?:\.\d+)?\s?"
                  r"(?:dollars|euros?|pounds|usd|eur|gbp|bucks)\b"),
        ("date", rf"\b\d{{4}}-\d{{2}}-\d{{2}}\b|\b\d{{1,2}}/\d{{1,2}}(?:/\d{{2,4}})?\b|"
                 rf"\b{_MONTH}\.?\s+{_ORD}\b(?:,?\s+\d{{4}})?|\b{_ORD}\s+(?:of\s+)?{_MONTH}\b"
                 rf"(?:,?\s+\d{{4}})?|\bthe\s+\d{{1,2}}(?:st|nd|rd|th)\b|\b{_DAY}\b|"
                 r"\b(?:tomorrow|tonight|today|next\s+(?:week|month|year))\b|"
                 r"\b(?:january|february|march|april|june|july|august|september|october|"
                 r"november|december)\b"),
        ("time", r"\b\d{1,2}(?::\d{2})?\s?(?:a\.?m\.?|p\.?m\.?)(?![a-z])|\b\d{1,2}:\d{2}\b|"
                 r"\bnoon\b|\bmidnight\b"),
        ("address", r"\b\d+[a-z]?\s+(?:[A-Z][\w'-]*\s+){1,3}(?:street|st|road|rd|avenue|ave|"
                    r"lane|ln|drive|dr|boulevard|blvd|way|place|pl|court|ct|close|crescent|"
                    r"terrace|square|sq|row|hill|park)\b\.?"),
        ("phone", r"(?<![\w-])\+?\(?\d{2,5}\)?(?:[\s.-]\d{2,6}){1,3}(?![\w-])"),
        # in lower case only: "the Red Lion" is a name
        ("colour", r"(?-i:\b(?:red|orange|yellow|green|blue|teal|navy|purple|pink|black|white|"
                   r"gr[ae]y|brown|gold|silver|maroon|turquoise|beige|burgundy|lilac)\b)"),
        ("number", r"(?<![\w-])#?[a-z]*[-/]?\d(?:[\w/-]|\.(?=\w))*"),
    ))
_WEEKDAY = re.compile(_DAY, re.IGNORECASE)


def _normal_value(kind: str, text: str) -> str:
    """One spelling per value: "#4712" and "4712", "3 PM" and "3pm", "Thursday" and "thu"."""
    t = text.lower().strip(" .,")
    if kind == "date":
        t = re.sub(r"\b(\d{1,2})(?:st|nd|rd|th)\b", r"\1", t)
        t = re.sub(r"^the\s+|\bof\s+|,", "", t)
        day = _WEEKDAY.fullmatch(t)
        return t[:3] if day else " ".join(t.split())
    if kind == "time":
        t = re.sub(r"[\s.]", "", t).replace(":00", "")
        h = re.fullmatch(r"(\d{1,2})(:\d{2})?", t)  # "19:00" is "7pm", as an echo may say it
        if h and 13 <= int(h.group(1)) <= 23:
            t = f"{int(h.group(1)) - 12}{h.group(2) or ''}pm"
        return {"noon": "12pm", "midnight": "12am"}.get(t, t)
    if kind in ("money", "number", "phone"):
        return re.sub(r"[^\w.]", "", t).rstrip(".")
    return " ".join(t.split())


def _core(value: str) -> str:
    """A value as compared across sentences: "3:30pm" and "3:30" are one time."""
    return re.sub(r"(?<=\d)(?:am|pm)$", "", value)


def _values(sentence: str) -> tuple[list[tuple[str, str, int, int]], str]:
    """The typed values of ``sentence`` as (kind, normal form, start, end), and the sentence
    with them blanked out (so their words are not key terms)."""
    found: list[tuple[str, str, int, int]] = []
    taken = [False] * len(sentence)
    for kind, pattern in _VALUE_PATTERNS:
        for m in pattern.finditer(sentence):
            a, b = m.span()
            if b - a == 0 or any(taken[a:b]):
                continue
            if kind == "number" and not any(c.isdigit() for c in m.group()):
                continue
            if kind == "phone" and sum(c.isdigit() for c in m.group()) < 7:
                continue  # "10 30" is no phone number
            found.append((kind, _normal_value(kind, m.group()), a, b))
            taken[a:b] = [True] * (b - a)
    blanked = "".join(" " if t else c for c, t in zip(sentence, taken))
    return sorted(found, key=lambda v: v[2]), blanked


# --- cues ---------------------------------------------------------------------------------

_CANCEL = re.compile(r"\b(?:cancel(?:l?ed|l?ing|s)?|call(?:ed|ing)?\s+(?:it\s+|that\s+|them\s+)?off|"
                     r"scrap(?:ped)?|fell\s+through|"
                     r"pull(?:ed|ing)?\s+the\s+plug|(?:not|n't)\s+going\s+ahead|won't\s+go\s+ahead|"
                     r"no\s+longer\s+(?:need|want|happening|on)|"
                     r"(?:is|are|'s)\s+(?:off|dead)\b(?!\s+(?!now|then|too|again|for|this|next|today|tomorrow|tonight)\w)|"
                     r"(?:(?:don't|doesn't|won't)\s+need|no\s+need\s+(?:for\s+\w+\s+)?)\s*to\s+come\b(?!\s+(?:\w+\s+)?(?:to|into|with)\b)|"
                     r"won't\s+be\s+(?:needing|going|happening)|not\s+happening|drop(?:ped)?\s+the)\b",
                     re.IGNORECASE)
"""Words that end a fact ("the demo is off", "it fell through"); "off"/"dead" ending a clause."""
_CORRECTION = re.compile(r"\b(?:sorry(?!\s+(?:about|for|to\s+hear|again|,?\s+I\s+can't))|correction|typo|mistake|misspoke|mistyped|misread|"
                         r"misheard|misspelt|misspelled|my\s+bad|i\s+meant|"
                         r"meant\s+to\s+say|wrong|mixed\s+up|scratch\s+that)\b",
                         re.IGNORECASE)
_NEGATORS = re.compile(r"\b(?:not|instead\s+of|rather\s+than|no\s+longer|isn't|wasn't|aren't|"
                       r"(?:it|that)\s+was|i\s+(?:said|wrote|gave\s+you|told\s+you)(?=\s+\w)|from)\b",
                       re.IGNORECASE)
"""Words after which a value is the *old* one ("not 4721", "instead of Friday", "from Friday
to Monday", "it was 9am", "I gave you 4721")."""
_FROM_TO = re.compile(r"(?!.*\b(?:on|at|in|by|for|with|before|after|until|during)\b)\W*.{0,30}",
                      re.IGNORECASE | re.DOTALL)
"""What may stand between "from X to" and the value replacing X: 30 characters, no preposition
starting a phrase of its own ("to our new volunteer Sam", not "to hand out on Friday")."""
_HYPOTHETICAL = re.compile(r"\b(?:what\s+if|if|suppose|supposing|imagine|maybe|perhaps|"
                           r"might|could\s+we|should\s+we|shall\s+we|can\s+we|"
                           r"would(?!\s+(?:like|prefer|rather|love))|"
                           r"thinking\s+(?:of|about)|considering|wondering|unless|in\s+case|options?|"
                           r"suggest(?:ed|ion)?|idea)\b",
                           re.IGNORECASE)
_CHANGE_WORDS = (r"(?:mov(?:e|ed|ing))(?!\s+(?:in|out|house|home)\b)|chang(?:e|ed|ing)|switch(?:ed|ing)?|push(?:ed|ing)?|"
                 r"postpon(?:e|ed|ing)|reschedul(?:e|ed|ing)|updat(?:e|ed|ing)|bump(?:ed)?|"
                 r"shift(?:ed)?|brought\s+forward|instead|no\s+longer|delay(?:ed)?|extend(?:ed)?|"
                 r"rais(?:e|ed)|lower(?:ed)?|increas(?:e|ed)|reduc(?:e|ed)|cut|revis(?:e|ed)|"
                 r"amend(?:ed)?|adjust(?:ed)?|relocat(?:e|ed)|renamed|upgraded|downgraded|"
                 r"(?:go(?:es|ing)?|went|gone)\s+(?:up|down)|turn(?:s|ed)\s+out|anymore|any\s+more|"
                 r"make\s+(?:it|that)|replac(?:e|ed|ing)")
_REVERT = re.compile(r"(?:\b(?:go(?:es|ing)?|went|gone|switch\w*|chang\w*|mov\w*|put(?:s|ting)?|"
                     r"set|is|are|were)|['’](?:s|re))\s+(?:\w+\s+)?back\s+(?:to|on)\b|"
                     r"^\W*back\s+to\b|\bback\s+to\s+(?:the\s+)?original\b|"
                     r"\b(?:revert(?:s|ed|ing)?|revers(?:e|es|ed|ing)|undo|undid|undone)\b",
                     re.IGNORECASE)
"""A change back to an earlier value ("we're going back to Stickerhaus", "put him back on the
walker", "they reversed it"): the value it names is the one before the last change."""
_STRONG = re.compile(rf"\b(?:{_CHANGE_WORDS})\b", re.IGNORECASE)
"""The update cues that say a change on their own ("now", "new", "actually" may not)."""
_UPDATE = re.compile(rf"\b(?:{_CHANGE_WORDS}|actually|now|new)\b", re.IGNORECASE)
_SENTENCE_START = re.compile(r"(?:^|[.!?:;]\s+|\n|[\"“(]\s*)(?=\w)")
_NO_NAME = frozenset(("I", "I'm", "I'd", "I'll", "I've", "I’m", "I’d", "I’ll", "I’ve",
                      "Mr", "Mrs", "Ms", "Dr", "Prof"))
"""Capitalised words that name nobody: "I" and titles ("Mr Ferraro" is Ferraro)."""
_ASKING = re.compile(r"\b(?:when|what|where|who|whom|which|how|whether|if|remind|tell|check)\b",
                     re.IGNORECASE)
_UNCHANGED = re.compile(r"\b(?:still|unchanged|nothing(?:'s|\s+has)?\s+changed|no\s+change|"
                        r"stays?|remains?|as\s+(?:planned|before)|same\s+as|"
                        r"(?:too|as\s+well)(?=[\s.!]*$))\b", re.IGNORECASE)
"""Words saying a fact did *not* change, or adds to it ("yellow ink too"): it never replaces."""
_NOT_WORDS = re.compile(r"(?:(?:^|[,;:(—–-])\s*(?:and\s+|but\s+)?not|\bnot(?=\s+\w+(?:\s+\w+)?\s+but\b)|"
                        r"\binstead\s+of|\brather\s+than)\s+", re.IGNORECASE)
_WAS_WRONG = re.compile(r"\s*(?:was|is|were|are)\s+(?:wrong|incorrect|a\s+typo|a\s+mistake|"
                        r"outdated|out\s+of\s+date|old)\b", re.IGNORECASE)
_ORDER = re.compile(r"\s+(?:the|a|an|this|that|these|those|it|me|my|us|our|your|them|him|her|"
                    r"some|any|to|for|in|on|up|out|off|down|back|over|there|here)\b", re.IGNORECASE)
"""What follows a verb giving an order ("Save this", "Book the table"): not a name's next word."""
_OPENER = re.compile(r"\s+(?:news|update|question|thing|note|problem|change)\s*(?:[:.!]|[-–—]\s)")
"""What follows the first word of an opener ("Bad news:", "Quick question:"): not a name's."""
_IT_IS = re.compile(r"\W*(?:it|that|this|they)(?:['’]s|['’]re|\s+is|\s+are|\s+was)\b", re.IGNORECASE)
_SEGMENT = re.compile(r"[,:;](?=\s)|\s[-–—]\s")
_COPULA = re.compile(r"\b(?:is|are|was|were|will\s+be|has\s+been|have\s+been|becomes?)\b|"
                     r"\b(?:it|that|he|she)['’]s\b|[:?]\s", re.IGNORECASE)
"""Where a key ends and its value starts: "is", "will be", "it's", a colon."""
_REQUEST = re.compile(r"^\W*(?:(?:can|could|would|will)\s+you|please)\b", re.IGNORECASE)
_TAG = re.compile(r",?\s+(?:right|correct|yes|yeah|no|isn['’]t\s+it|aren['’]t\s+they|wasn['’]t\s+it|"
                  r"weren['’]t\s+they|didn['’]t\s+(?:we|they|you|it)|don['’]t\s+(?:we|they)|"
                  r"doesn['’]t\s+it|won['’]t\s+it|isn['’]t\s+that\s+right|I\s+think)\s*\?\s*$",
                  re.IGNORECASE)
"""A tag that asks to confirm a statement ("that's due on the 20th, right?"): what it follows
is stated, as the speaker believes it."""
_CHECKED = re.compile(r"\bI(?:['’]ve|\s+have)?\s+(?:just\s+)?(?:checked|looked|verified|"
                      r"double[- ]checked)\b|\baccording\s+to\b", re.IGNORECASE)
"""An assistant saying it looked a value up ("I checked the portal: ...")."""
_SENTENCE = re.compile(r"(?<=[.!?])(?<!\bMr\.)(?<!\bMrs\.)(?<!\bMs\.)(?<!\bDr\.)\s+"
                       r"(?=[\"'(]?[A-Z0-9#$£€])|(?<=[a-z]{3}[.!?])\s+(?=(?:so|but|anyway|also|then)\b)|\n+|;\s+|\s+[—–]\s+|"
                       r",\s+(?=(?:so|because|since|and\s+then)\b)")
"""Where one statement ends: a sentence's end (not a title's dot; a connective may start the
next in lower case: "he's fine. so it's off"), a semicolon, a dash, ", so" and the like ("Tom
can't come, so the table is for 3 now" is two statements; "4712, not 4721" is one)."""
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")
_CUE_WORDS = frozenset(
    """actually sorry correction typo mistake misspoke meant mean wrong mixed scratch rather
    mistyped misread misheard misspelt misspelled moved move moving change raise raised lower lowered increase increased reduce reduced
    delay delayed extend extended cut revise revised amend amended adjust adjusted relocate
    relocated renamed upgraded downgraded turns turned went going goes gone change changed changing switch switched switching push pushed pushing
    postpone postponed postponing reschedule rescheduled rescheduling update updated updating
    bump bumped shift shifted brought forward instead longer now new anymore replace replaced
    cancel cancelled canceled cancelling canceling cancels scrap scrapped
    drop dropped make made note noted remember got hey hi oh ah hmm quick btw bit want need
    wait oops whoops hang back revert reverted reverse reversed undo undid
    know think let see said say says tell told fine great good sounds perfect right correct""".split())
"""Cue and chatter words: never key terms (they say a change happens, not what changed)."""


@lru_cache(maxsize=1 << 15)
def _stem(word: str) -> str:
    return str(_stemmer().stemWord(word))


@lru_cache(maxsize=1)
def _stemmer() -> Any:
    import Stemmer  # PyStemmer: the Snowball stemmer memorykit's retrieval uses too

    return Stemmer.Stemmer("english")


@dataclass
class _Clause:
    """One sentence of one message, read for facts."""

    index: int
    """Position of its message in the history."""
    message_id: str
    text: str
    values: dict[str, set[str]]
    """Typed values by kind (normal forms), the negated ones left out."""
    negated: dict[str, str]
    """Values said to be the old ones ("not 4721"), with their kinds."""
    terms: set[str]
    """Key terms (stems)."""
    subjects: set[str]
    """Names in the key (capitalised words that are not the sentence's first)."""
    owners: set[str]
    """Whose fact it is: "user", "assistant" (from my/your, by who speaks), "other" (his, her,
    their) or a name with a possessive ("dana" from "Dana's")."""
    cue: str
    """The matched change cue's text ("" when none)."""
    kind: str
    """The update kind the cue implies ("contradiction" with no cue)."""
    at: float
    strong: bool = False
    """A strong cue (moved, changed, instead, not X, cancel...), not only "now" or "new"."""
    phrase: set[str] = field(default_factory=set)
    """Key terms a cued sentence gives as the fact's new state (the words after the cue)."""
    negated_terms: set[str] = field(default_factory=set)
    """Words said to be the old state ("an aisle seat, not the window")."""
    steady: bool = False
    """It says the fact did not change ("still", "nothing changed"): it replaces nothing."""
    back_to: set[str] = field(default_factory=set)
    """The value it says the fact went back to ("going back to At Last" -> last): the first
    value after a revert cue (``_core`` form); empty with no such cue."""
    key_terms: set[str] = field(default_factory=set)
    """Key terms before its copula ("the landlord's name is Noor" -> landlord, name)."""
    value_terms: set[str] = field(default_factory=set)
    """Words after its copula (-> noor)."""
    said: set[str] = field(default_factory=set)
    """Every value its whole message names, old or new (``_core`` forms): a later sentence
    giving only values this message already named agrees with it, it does not replace it."""
    role: str = ""
    fresh: bool = False
    """Its message changed a fact: the other speaker's reply just after it acknowledges it."""
    checked: set[str] = field(default_factory=set)
    """When its message is an assistant's saying it looked the value up ("I checked the portal:
    ..."): the key terms of that whole message (else empty)."""
    current: bool = True


_POSSESSOR = re.compile(r"\b(?:(?i:my|our|your|his|her|their)|[A-Za-z]+['’]s|[A-Za-z]+s['’])(?=\s)")
_NOT_OWNERS = frozenset("it that there here he she what who let where how".split())
_OWNER = {("user", "my"): "user", ("user", "our"): "user", ("user", "your"): "assistant",
          ("assistant", "my"): "assistant", ("assistant", "our"): "assistant",
          ("assistant", "your"): "user", **{(r, p): "other" for r in ("user", "assistant")
                                             for p in ("his", "her", "their")}}


def _owners(role: str, possessors: list[str]) -> set[str]:
    """Whose fact a sentence states: the nouns with a possessive ("Dana's", "my brother's" ->
    brother, "the kids'" -> kids) or else the pronouns, read by who speaks ("my" from the
    user is the user's)."""
    nouns = {re.sub(r"['’]s?$", "", w.lower()) for w in possessors
             if (role, w.lower()) not in _OWNER} - _NOT_OWNERS  # "It's" owns nothing
    if nouns:
        return nouns
    return {_OWNER[(role, w.lower())] for w in possessors if (role, w.lower()) in _OWNER}


def _other_owner(a: set[str], b: set[str]) -> bool:
    """True when two sentences say whose fact it is and the owners cannot be the same ("my
    phone" and "Dana's phone"; "her phone" may be Dana's)."""
    if not a or not b or a & b:
        return False
    named_a, named_b = a - {"user", "assistant", "other"}, b - {"user", "assistant", "other"}
    if ("other" in a and named_b and not a - {"other"}) or ("other" in b and named_a and not b - {"other"}):
        return False
    return True


def _sentences(text: str) -> list[str]:
    """The statements of ``text``; a sentence naming a key but no value is joined to a next
    one giving a value but no key ("The ticket for the refund has changed. It's 4417 now.")."""
    parts = [s.strip() for s in _SENTENCE.split(text) if s and s.strip()]
    out: list[str] = []
    for part in parts:
        found, blanked = _values(part)
        head = _focus(blanked, found) if found else _SEGMENT.split(blanked)[0]
        # "It's 4417": the pronoun points back; or a value with no key word at all
        keyless = _IT_IS.match(part) or found and not _terms(head)
        if out and keyless and (not _values(out[-1])[0] or _NOT_WORDS.search(out[-1])) and \
                not (out[-1].endswith("?") and _ASKING.search(out[-1])):
            # also "The ticket for the refund? It's 4417.": a key asked, then its value
            out[-1] = out[-1] + " " + part
        else:
            out.append(part)
    return out


def _names_inside(text: str) -> set[str]:
    """Capitalised words of ``text`` that do not open a sentence."""
    starts = {m.start() for m in _SENTENCE_START.finditer(text)}
    return {m.group() for m in _WORD.finditer(text) if m.start() not in starts and
            m.group()[:1].isupper() and m.group() not in _NO_NAME}


def _terms(text: str) -> set[str]:
    """The key terms of ``text``: stems of its content words (no cue word, no number)."""
    return {_stem(re.sub(r"['’]s$", "", w.lower())) for w in _WORD.findall(text)
            if w.lower() not in STOPWORDS and w.lower() not in _CUE_WORDS and len(w) > 1
            and not any(c.isdigit() for c in w)}


def _focus(blanked: str, found: list[tuple[str, str, int, int]]) -> str:
    """The part of a sentence that says what its first value is about: the comma-, colon- or
    dash-separated stretch holding the value, and the one before when it names almost nothing
    ("Right, the delivery date: Monday"). Openers such as "For the record," or "By the way,"
    fall outside, so they do not count as key terms."""
    if not found:
        return blanked
    typed = [v[2] for v in found if v[0] != "name"]
    first = min(typed) if typed else min(v[2] for v in found)
    cuts = [0, *(m.end() for m in _SEGMENT.finditer(blanked)), len(blanked) + 1]
    k = max(i for i, c in enumerate(cuts[:-1]) if c <= first)
    start, end = cuts[k], cuts[k + 1]
    if k > 0 and not _terms(" ".join(w for w in _WORD.findall(blanked[start:end])
                                     if not w[:1].isupper())):
        start = cuts[k - 1]
    return blanked[start:end]


def _content_words(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if w not in STOPWORDS and w not in _CUE_WORDS]


def _read(message: Message, index: int, known: set[str] | frozenset[str] = frozenset(),
          lower: set[str] | frozenset[str] = frozenset()) -> list[_Clause]:
    """The sentences of ``message`` that state something (not questions, not hypotheticals).
    A capitalised word opening a sentence is a name when it was never seen in lower case
    (``lower``) and is ``known`` (met inside a sentence so far) or does not look like an order
    ("Priya reproduced the bug", not "Save this for later" nor "Pickup is at 8")."""
    if message.role not in ("user", "assistant") or message.is_summary:
        return []
    out = []
    carried: tuple[str, str, bool, set[str]] | None = None
    named_before: set[str] = set()  # the names of the message's sentences so far
    for sentence in _sentences(message.content):
        found, blanked = _values(sentence)
        # a hypothetical ("what if we moved it to Friday?", "maybe Sunday") states nothing; a
        # condition after the value does not make it one ("... is 0161 496, if anyone asks")
        # Names (capitalised words past the first) are values too: "the offsite is in Lisbon
        # now, not Porto"; they also tell subjects apart ("Apollo's deadline", "Zephyr's").
        starts = {m.start() for m in _SENTENCE_START.finditer(blanked)}
        for m in _WORD.finditer(blanked):
            w = m.group()
            if m.start() in starts and (w.lower() in lower or w not in known and (
                    _ORDER.match(blanked, m.end()) or blanked[m.end():m.end() + 1] in (",", ":")
                    or _OPENER.match(blanked, m.end()))):
                continue  # "Pickup is ..." (pickup seen in lower case), "Save this", "Wait, ...",
                # "Bad news: ..."
            if w[:1].isupper() and w not in _NO_NAME and w.lower() not in STOPWORDS and \
                    w.lower() not in _MONTHS and w.lower() not in _CUE_WORDS and \
                    re.sub(r"['’]s$", "", w.lower()) not in STOPWORDS:
                found.append(("name", re.sub(r"['’]s$", "", w.lower()), m.start(), m.end()))
        found.sort(key=lambda v: v[2])
        hypothetical = _HYPOTHETICAL.search(sentence)
        copula = _COPULA.search(sentence)
        if hypothetical and hypothetical.start() < (found[0][2] if found else
                                                    copula.end() if copula else len(sentence)):
            continue
        if hypothetical:  # "..., if anyone asks": the condition is no part of the fact
            sentence, blanked = sentence[:hypothetical.start()], blanked[:hypothetical.start()]
            found = [v for v in found if v[3] <= len(sentence)]
        # "nothing changed", "still Friday": not a change cue, whatever word they use
        plain = _UNCHANGED.sub(lambda m: " " * len(m.group()), sentence)  # same offsets
        steady = plain != sentence
        cancel = _CANCEL.search(plain)
        correction = _CORRECTION.search(plain)
        update = _UPDATE.search(plain)
        revert = _REVERT.search(plain)
        strong = cancel or correction or revert or _STRONG.search(plain)
        # A question states nothing, except a request to record something ("Can you note
        # that the agent is Yara?", "Could you change my address to ...?") or a statement
        # asked to be confirmed ("Our flight is at 7:10, isn't it?").
        if sentence.rstrip().endswith("?") and not _TAG.search(sentence) and not (
                _REQUEST.search(sentence) and (strong or not _ASKING.search(sentence))):
            continue
        # "they reversed it, so we stay on APA": after a change back, "stay" names the value
        # it went back to
        steady = steady and not strong and not (carried and carried[2])
        negated: dict[str, str] = {}
        negated_terms: set[str] = set()
        for neg in _NEGATORS.finditer(sentence):
            after = neg.end()
            # the first value within a few words after the negator is the old one
            for kind, value, a, _ in sorted(found, key=lambda v: v[2]):
                if after <= a <= after + 12:
                    to = re.search(r"\bto\b", sentence[a:])  # "from 9am to 10am", not "to hand"
                    if neg.group().lower() == "from" and not (to and any(
                            b > a + to.end() and _FROM_TO.fullmatch(sentence[a + to.end():b])
                            for _, _, b, _ in found)) \
                            and not re.search(r"\b(?:up|down)\s+$", sentence[:neg.start()]):
                        break  # so "from Jo to hand out on Friday" names none ("up from $16" does)
                    negated[value] = kind
                    break
        # words (not only typed values) named as the old state: ", not halal", "not the window
        # but the aisle", "instead of the Red Lion"; never a verb's "not" ("will not be billed")
        for neg in _NOT_WORDS.finditer(sentence):
            negated_terms |= {_stem(w.lower()) for w in _WORD.findall(sentence[neg.end():])[:2]
                              if w.lower() not in STOPWORDS and len(w) > 2 and not w.isdigit()}
        for kind, value, _, b in found:  # "5156 was wrong": the old value, named after it
            if _WAS_WRONG.match(sentence, b):
                negated[value] = kind
        values: dict[str, set[str]] = {}
        for kind, value, _, _ in found:
            if value not in negated:
                values.setdefault(kind, set()).add(value)
        subjects = values.get("name", set()) | {v for v in negated if v.isalpha()}
        # a change back carried from an opener brings the fact it names too ("They reversed
        # the font decision. We stay with Garamond."); a correction's opener names none ("I
        # gave you the wrong one.")
        terms = _terms(_focus(blanked, found)) | (carried[3] if carried and carried[2] else set())
        owners = _owners(message.role, _POSSESSOR.findall(_focus(sentence, found)))
        if cancel:
            kind, matched = "cancellation", cancel.group()
        elif correction or negated or negated_terms & terms and strong:
            kind, matched = "correction", correction.group() if correction else "not X but Y"
        elif revert:
            kind, matched = "update", revert.group()
        elif update:
            kind, matched = "update", update.group()
        elif carried and not steady:
            kind, matched = carried[:2]  # "Hang on, I gave you the wrong one. My order is ..."
        else:
            kind, matched = "contradiction", ""
        strong_cue = bool(strong) or bool(carried and kind != "contradiction" and not steady)
        # a change back returns to the first value after its cue, or after a cue carried from
        # the sentence before ("They reversed it, so we stay on APA.")
        reverts = bool(revert or carried and carried[2])
        after = [_core(v) for _, v, a, _ in found if a >= (revert.end() if revert else 0)
                 and v not in negated]
        # a cue with nothing to apply it to carries to the next sentence of the message
        carried = (kind, matched, reverts, terms) if strong and not values and not steady \
            else None
        # what a cued sentence says the fact is now: its words after the cue ("switch me to
        # the aisle seat" -> aisle, seat), or all of them when the cue ends the sentence
        tail = {_stem(w.lower()) for w in _WORD.findall(plain[strong.end():])
                if w.lower() not in STOPWORDS and w.lower() not in _CUE_WORDS} if strong else set()
        if cancel and not values and terms <= {"one"} and named_before:
            # "Ferraro broke his wrist. So that one's off.": a cancellation naming nothing
            # ends what the message named before it (its names; a cancellation matches an
            # earlier statement only when all of them are among that one's)
            subjects, terms = set(named_before), set()
        named_before |= values.get("name", set())
        if not terms and not values and not (cancel and subjects):
            continue  # nothing stated that could replace or be replaced
        # "<key> is <value>": the words on each side, for facts with no typed value
        copula = _COPULA.search(plain)
        key_terms = {_stem(w) for w in _content_words(plain[:copula.start()])} & terms \
            if copula else set()
        value_terms = {_stem(w) for w in _content_words(plain[copula.end():])
                       if not any(c.isdigit() for c in w)} if copula else set()
        # names are values (and subjects), not key terms
        terms -= {_stem(v) for v in values.get("name", ())} | {_stem(v) for v in negated}
        out.append(_Clause(index, message.id, sentence, values, negated, terms - negated_terms,
                           subjects, {re.sub(r"['’]s$", "", o) for o in owners},
                           matched.lower(), kind, float(message.created_at),
                           strong=strong_cue, phrase=(tail & terms) or terms,
                           negated_terms=negated_terms, steady=steady,
                           back_to=set(after[:1]) if reverts else set(),
                           key_terms=key_terms - {_stem(v) for v in values.get("name", ())},
                           value_terms=value_terms))
    said = {_core(v) for c in out for v in [*c.negated, *(v for vs in c.values.values()
                                                          for v in vs)]}
    checked = _terms(message.content) if message.role == "assistant" and \
        _CHECKED.search(message.content) else set()
    for c in out:
        c.said, c.role, c.checked = said, message.role, checked
    return out


def _overlap(a: set[str], b: set[str], idf: Mapping[str, float]) -> float:
    """Idf-weighted share of the two key-term sets' union that both have (weighted Jaccard),
    in [0, 1]: "ticket for the billing dispute" and "ticket for the router fault" share the
    common words but not what tells them apart."""
    if not a or not b:
        return 0.0
    shared = sum(idf.get(t, 1.0) for t in a & b)
    return shared / sum(idf.get(t, 1.0) for t in a | b)


def _contained(new: set[str], old: set[str], idf: Mapping[str, float]) -> float:
    """Idf-weighted share of ``new``'s key terms that ``old`` has too, in [0, 1]."""
    if not new:
        return 0.0
    return sum(idf.get(t, 1.0) for t in new & old) / sum(idf.get(t, 1.0) for t in new)


def _differs(new: _Clause, old: _Clause) -> str | None:
    """The kind of value on which ``new`` says something ``old`` did not ("name" only when no
    typed value differs), or None: a restatement, or no value of a kind both have."""
    for kind, values in new.values.items():
        if kind != "name" and kind in old.values and \
                not {_core(v) for v in values} <= {_core(v) for v in old.values[kind]}:
            return kind
    names = new.values.get("name")
    if names and "name" in old.values and not names <= old.values["name"]:
        return "name"
    return None


def _same_key(new: _Clause, old: _Clause, idf: Mapping[str, float],
              settings: DetectionSettings) -> bool:
    """Both say "<key> is <value>" with the same key (two key terms at least, as the dietary
    requirement for the catering, not "the weather") and each value has words the other
    sentence lacks."""
    return len(new.key_terms & old.key_terms) >= 2 and \
        _overlap(new.key_terms, old.key_terms, idf) >= settings.plain_overlap and \
        bool(new.value_terms - old.terms - old.value_terms) and \
        bool(old.value_terms - new.terms - new.value_terms)


class RuleDetector:
    """The LLM-free ``UpdateDetector``: ``find_updates`` with fixed settings.

    It remembers the links of the histories it read last (at most ``REMEMBERED`` histories and
    ``REMEMBERED_LINKS`` links; thread-safe, not pickled), by its settings and a digest of all
    the rules read of each message (id, role, text, whether it is a summary): ``find`` and
    ``follow_ups`` of one history read it once, and a sweep that rebuilds a policy per setting
    around one detector (``tune``) reads each conversation once, not once per setting."""

    REMEMBERED, REMEMBERED_LINKS = 4096, 200_000

    def __init__(self, settings: DetectionSettings | None = None) -> None:
        settings = settings if settings is not None else DetectionSettings()
        if not isinstance(settings, DetectionSettings):
            raise TypeError(f"settings must be a DetectionSettings, got {settings!r}")
        self.__setstate__({"settings": settings})

    def __getstate__(self) -> dict[str, Any]:
        return {"settings": self.settings}  # a copy in another process reads afresh

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.settings = state["settings"]
        self._read: dict[tuple[DetectionSettings, bytes], tuple[list[Update], list[Update]]] = {}
        self._lock = threading.Lock()

    def _links(self, messages: Sequence[Message]) -> tuple[list[Update], list[Update]]:
        _check_messages(messages)
        parts = [t.encode("utf-8", "surrogatepass") for m in messages
                 for t in (m.id, m.role, m.content, "s" if m.is_summary else "")]
        # each part framed by its length: no two different histories give the same bytes
        digest = hashlib.blake2b(b"".join(b"%d:%s" % (len(b), b) for b in parts), digest_size=16)
        key = (self.settings, digest.digest())
        with self._lock:
            if key in self._read:
                return self._read[key]
        links = _links(messages, self.settings)
        with self._lock:
            self._read[key] = links
            while len(self._read) > self.REMEMBERED or len(self._read) > 1 and sum(
                    len(a) + len(b) for a, b in self._read.values()) > self.REMEMBERED_LINKS:
                del self._read[next(iter(self._read))]  # the oldest first
        return links

    def find(self, messages: Sequence[Message]) -> list[Update]:
        return list(self._links(messages)[0])  # a copy: the caller may change its list

    def follow_ups(self, messages: Sequence[Message]) -> list[Update]:
        return list(self._links(messages)[1])

    def __repr__(self) -> str:
        return f"RuleDetector({self.settings!r})"


def find_updates(messages: Sequence[Message], settings: DetectionSettings | None = None) -> list[Update]:
    """The updates of ``messages``: later messages that replace an earlier one's fact.

    Every (earlier message, later message) pair where the later one replaces the earlier one's
    value of a fact, in the later message's order; see the module's docstring."""
    return _links(messages, settings)[0]


def find_follow_ups(messages: Sequence[Message],
                    settings: DetectionSettings | None = None) -> list[Update]:
    """Looser links than ``find_updates``'s (none of them an update it finds): a later message
    that *may* replace an earlier one (one key word shared, a weak cue, or a new value of the
    same kind said in words the rules do not know). Good for pulling the later message in next
    to the earlier one; not for marking or dropping anything."""
    return _links(messages, settings)[1]


def _links(messages: Sequence[Message],
           settings: DetectionSettings | None) -> tuple[list[Update], list[Update]]:
    """(updates, follow-ups) of ``messages``, each in the later message's order."""
    settings = settings if settings is not None else DetectionSettings()
    if not isinstance(settings, DetectionSettings):
        raise TypeError(f"settings must be a DetectionSettings, got {settings!r}")
    _check_messages(messages)
    found: tuple[list[Update], list[Update]] = ([], [])
    linked: set[tuple[str, str]] = set()
    index_ = _Index()  # the statements so far, in order
    df: Counter[str] = Counter()
    known: set[str] = set()  # names met inside a sentence: "Priya" may then open one
    lower: set[str] = set()  # words met in lower case: "Lunch" opening a sentence is no name
    for index, message in enumerate(messages):
        known.update(_names_inside(message.content))
        lower.update(w for w in _WORD.findall(message.content) if w.islower())
        clauses = _read(message, index, known, lower)
        df.update({t for c in clauses for t in c.terms})
        n = index + 1
        idf = {t: math.log(1.0 + n / df[t]) for c in clauses for t in c.terms}
        changed = False  # a sure update: the other speaker's next reply acknowledges it
        for clause in clauses:
            for old, how, sure in _replaced(clause, index_.candidates(clause, settings), idf, df,
                                            n, settings, lower):
                old.current = old.current and not sure  # a follow-up leaves it current
                changed = changed or sure
                if (old.message_id, clause.message_id) not in linked:
                    linked.add((old.message_id, clause.message_id))
                    found[not sure].append(Update(old.message_id, clause.message_id,
                                                  _key(old.terms | clause.terms), clause.kind, how))
        for clause in clauses:
            clause.fresh = changed
            index_.add(clause)
    return found


def _check_messages(messages: Any) -> None:
    if isinstance(messages, (str, bytes)) or not isinstance(messages, Sequence):
        raise TypeError(f"messages must be a sequence of Message, got {messages!r}")
    for k, m in enumerate(messages):
        if not isinstance(m, Message):
            raise TypeError(f"messages[{k}] must be a Message, got {m!r}")


class _Index:
    """The statements read so far, found by shared word or value: a statement sharing nothing
    with a new one can only matter through the ``nearby`` rule, so the pairs compared grow
    with what is shared, not with the square of the history (same decisions as a full scan)."""

    def __init__(self) -> None:
        self.said: list[_Clause] = []
        self.by_word: dict[str, list[int]] = {}

    def add(self, clause: _Clause) -> None:
        k = len(self.said)
        self.said.append(clause)
        words = clause.terms | clause.value_terms | clause.said | \
            {v for vs in clause.values.values() for v in vs}
        for w in words:
            self.by_word.setdefault(w, []).append(k)

    def candidates(self, new: _Clause, settings: DetectionSettings) -> list[_Clause]:
        """The earlier statements ``new`` could replace under ``settings``, in order."""
        if 0 in (settings.cued_overlap, settings.plain_overlap, settings.contained,
                 settings.follow_up_overlap):
            return self.said  # every pair qualifies on overlap alone: scan them all
        keys = new.terms | set(new.negated) | new.negated_terms | new.subjects | new.back_to
        hits = {k for w in keys for k in self.by_word.get(w, ())}
        k = len(self.said) - 1
        while k >= 0 and new.index - self.said[k].index <= settings.nearby:
            hits.add(k)  # the nearby window
            k -= 1
        return [self.said[k] for k in sorted(hits)]


def _key(terms: set[str]) -> str:
    return " ".join(sorted(terms)) or "(unnamed)"


def _replaced(new: _Clause, said: list[_Clause], idf: dict[str, float], df: Counter[str],
              n: int, settings: DetectionSettings,
              lower: set[str] | frozenset[str] = frozenset()) -> list[tuple[_Clause, str, bool]]:
    """The current earlier statements ``new`` replaces, with the cue that says so, when the
    rules are sure of one (``True``); else the one it most likely follows up (``False``).
    ``lower``: the words met in lower case so far (a sentence's capitalised first word taken
    for a name, "Entries close 30 September", is no name once "entries" was met)."""
    if new.steady:
        return []
    weights = dict(idf)
    new_values = {_core(v) for vs in new.values.values() for v in vs}
    candidates: list[tuple[float, str, _Clause, str | None, bool]] = []
    for old in said:
        if not old.current or old.message_id == new.message_id:
            continue
        old_values = {v for vs in old.values.values() for v in vs}
        # a change back ("we're going back to Stickerhaus"): the old statement's message named
        # this value (as the one it replaced) but the statement itself gives another one
        back = bool(new.back_to) and new.back_to <= old.said and \
            not new.back_to & {_core(v) for v in old_values} and _differs(new, old) is not None
        if not back and (not new_values - old.said and (new_values or old.kind == "cancellation") or
                new.said and new.said <= old.said) and \
                (new.kind == "cancellation") == (old.kind == "cancellation"):
            continue  # it agrees with the earlier message (an echo, a confirmation)
        kind = _differs(new, old)
        # the assistant looked up what the user just said and reports another value ("Our
        # flight is at 7:10, isn't it?" - "I checked your booking: it now leaves at 06:25")
        # (about the same thing: a key word of it in the reply, another value of it again,
        # "LX-5521", or no key of its own, "it now leaves at 06:25")
        checked = bool(new.checked) and old.role == "user" and new.index == old.index + 1 and \
            kind not in (None, "name") and (bool(new.checked & old.terms) or len(new.terms) <= 1
                                            or any(old.values.get(k, set()) & v for k, v in
                                                   new.values.items() if k != kind))
        if old.fresh and new.index == old.index + 1 and new.role == "assistant" != old.role \
                and not new.negated.keys() & old_values and not checked:
            continue  # the reply to a change acknowledges it ("Noted: Thursday, not Tuesday")
        for t in old.terms:
            if t not in weights:
                weights[t] = math.log(1.0 + n / max(df[t], 1))
        # a name is part of what a statement is about ("Graham's coming on Friday the 13th"
        # after "Graham from Lister is coming on Tuesday the 10th")
        overlap = _overlap(new.terms | new.subjects, old.terms | old.subjects, weights)
        cued = bool(new.cue) and (overlap >= settings.cued_overlap or max(
            _contained(new.terms, old.terms, weights),
            _contained(old.terms, new.terms, weights)) >= settings.contained)
        # the old value named outright, same kind ("not 8:00"; "not 22" is not "the 22nd")
        exact = any(v in old.values.get(k, ()) for v, k in new.negated.items()) or \
            bool(new.negated_terms & old.value_terms)  # "not pescatarian"
        named = bool(new.negated.keys() & old_values) or exact or back or \
            bool(new.negated_terms & old.terms and new.strong)
        if _other_owner(new.owners, old.owners) and not named:
            continue  # my phone number is not Dana's
        subjects = {s for s in old.subjects if s not in lower}
        other_subject = bool(new.subjects and subjects and not new.subjects & subjects)
        if other_subject and kind != "name" and not named:
            continue  # different subjects: Apollo's deadline is not Zephyr's
        shared = len(new.terms & old.terms)
        if new.kind == "cancellation":  # the thing cancelled is often named by its name
            shared += len(new.subjects & old.subjects)
        found: tuple[float, str] | None = None
        if old.kind == "cancellation" and not new.cue:
            continue  # a cancelled fact comes back only with a cue ("it's back on", "now")
        if new.kind == "cancellation":
            # something to cancel: an earlier statement with a value ("Noted, I will remember
            # that" is none); by overlap, not containment: "cancel the client call" is not
            # about "the client's point of contact"
            # ... or one naming only the old thing's name ("we cancelled the Marlowe Quartet")
            # ... or, naming no thing of its own ("need to come"), by a name and a value shared
            # ("told Coleman not to come on the 19th"; not "Sam cancelled his gym on Friday")
            typed = {k: v for k, v in new.values.items() if k != "name"}
            pinned = "come" in new.cue and bool(new.subjects & old.subjects) and any(
                v & old.values.get(k, set()) for k, v in typed.items())
            same = overlap >= settings.cued_overlap or pinned or \
                not new.terms and new.subjects and new.subjects <= old.subjects
            if old.values and same and (kind is None or not new.values or
                                        old.values[kind] <= new.values[kind] or
                                        pinned and new.values[kind] <= old.values[kind]):
                found = (overlap, new.cue)  # "cancel the 3pm call", "Saturday's ... is off"
        elif named:
            found = (2.0 + overlap, f"not X but Y ({new.cue or 'negated'})")
        elif checked:
            found = (1.5 + overlap, "checked")
        elif kind == "name" and cued:
            found = (1.0 + overlap, new.cue)
        elif kind in (None, "name") and not new.cue and _same_key(new, old, weights, settings):
            # no typed value, no cue: "<key> is <value>" twice, same key, other words
            found = (1.0 + overlap, "same key, new value")
        elif kind is not None and kind != "name":
            if cued:
                found = (1.0 + overlap, new.cue)
            elif not new.cue and overlap >= settings.plain_overlap:
                found = (1.0 + overlap, "same key, new value")
            elif new.cue and len(new.terms) <= 1 and new.index - old.index <= settings.nearby:
                found = (0.5 + overlap, new.cue + " (nearby)")
        elif new.strong and not new.values and overlap >= settings.cued_overlap and \
                new.phrase - old.terms and shared >= 2:
            # no value either side can compare: a strong cue and new words ("switch me to
            # the aisle seat" after "I'd like a window seat")
            found = (1.0 + overlap, new.cue + " (new words)")
        if found is not None:
            # sure: the old value named, two key words shared, or one with a cue or nearly
            # the whole key; or "make it 8", "sorry, I meant 4721" just after the value.
            # Anything less is a follow-up.
            elliptical = new.strong and len(new.terms) <= 1 and \
                new.index - old.index <= settings.nearby
            # a change back is sure too when its message names the value it leaves ("We tried
            # Thinking Out Loud ... We're going back to At Last")
            sure = exact or elliptical or checked or shared >= 2 or \
                back and bool(old_values & new.said) or \
                shared >= 1 and (named or bool(new.cue) or overlap >= 0.75)
            candidates.append((*found, old, kind, sure))
        elif kind is not None and overlap >= settings.follow_up_overlap:
            # a new value of the same kind, said in words the rules do not know
            candidates.append((overlap, "follow-up", old, kind, False))
    sure = [c for c in candidates if c[4]]
    if not sure:
        best = max(candidates, key=lambda c: (c[0], c[2].index), default=None)
        return [] if best is None else [(best[2], best[1], False)]
    best = max(sure, key=lambda c: (c[0], c[2].index))
    # the best, and every other current statement of the same old value (an assistant's echo
    # of it): all of them stop being current
    _, _, top, kind, _ = best
    old_value = top.values.get(kind, set()) if kind else set()
    chosen = [best] + [c for c in sure if c is not best and c[3] == kind and (
        old_value and c[2].values.get(kind) == old_value or kind is None and c[0] >= 1.0 or
        new.kind == "cancellation")]  # what is called off ends every statement of it
    return [(c[2], c[1], True) for c in chosen]


def extract_statements(message: Message) -> list[Statement]:
    """The facts ``message`` states where a rule can read them: one ``Statement`` per sentence
    with a typed value (key: its key terms, sorted; value: its values, in order) or a
    cancellation (value ""). Questions and hypotheticals state nothing."""
    if not isinstance(message, Message):
        raise TypeError(f"message must be a Message, got {message!r}")
    out = []
    for clause in _read(message, 0, _names_inside(message.content),
                        {w for w in _WORD.findall(message.content) if w.islower()}):
        if not clause.terms:
            continue
        value = "" if clause.kind == "cancellation" and not clause.values else \
            ", ".join(v for kind in sorted(clause.values) for v in sorted(clause.values[kind]))
        out.append(Statement(_key(clause.terms), value, message.id, clause.at))
    return out


def current_of(updates: Sequence[Update]) -> dict[str, str]:
    """Each superseded message id -> the id of the latest message that replaces it, following
    chains (a -> b -> c gives a: c and b: c). Of two updates of one old message, the later
    one in ``updates`` wins."""
    step: dict[str, str] = {}
    for u in updates:
        if not isinstance(u, Update):
            raise TypeError(f"updates must hold Update records, got {u!r}")
        step[u.old] = u.new
    out: dict[str, str] = {}
    for old in step:
        seen, at = {old}, step[old]
        while at in step and step[at] not in seen:  # a cycle (a bad detector) stops the walk
            seen.add(at)
            at = step[at]
        out[old] = at
    return out


@runtime_checkable
class UpdateDetector(Protocol):
    """Anything that finds the updates of a history (``RuleDetector``, ``LLMUpdateDetector``)."""

    def find(self, messages: Sequence[Message]) -> list[Update]: ...


_PROMPT = """Below is a conversation, one message per line as [id] role: text.
List every later message that changes, corrects, cancels or contradicts a fact an earlier
message stated (a date, time, place, number, name, amount, choice). Ignore restatements of the
same value, hypotheticals and questions. Answer with JSON only: a list of objects
{"old": "<earlier id>", "new": "<later id>", "key": "<what the fact is about>",
"kind": "update" | "correction" | "cancellation" | "contradiction"}."""


class LLMUpdateDetector:
    """An ``UpdateDetector`` that asks a chat model (optional; a call per window of history).

    ``model`` is a chat model of the LLM layer (``memorykit.llm``: anything with
    ``complete(messages)``, e.g. ``OpenAIChatModel``) or a function from a prompt to the
    model's text; the reply must be the JSON list the prompt asks for. ``window_tokens``
    (tokens of the listed messages, cl100k) cuts a long history into windows for a model with a
    small context, one every half window, so an old statement and its change about half a
    window apart or less share one; ``None`` sends the whole history at once. ``reply_tokens``
    bounds a chat model's answer (a small one may go on until its context is full). Pairs naming
    unknown ids, a later "old" than "new", or an unknown kind are dropped (a model's mistake
    must not crash a memory); a pair two windows both find counts once."""

    def __init__(self, model: Any, *, window_tokens: int | None = None,
                 reply_tokens: int = 1000) -> None:
        self.reply_tokens = require_int("reply_tokens", reply_tokens, minimum=1, maximum=10**6)
        if callable(getattr(model, "complete", None)):  # a small model may ramble: bounded
            chat = model
            model = lambda prompt: chat.complete([{"role": "user", "content": prompt}],  # noqa: E731
                                                 max_tokens=self.reply_tokens)
        if not callable(model):
            raise TypeError(f"model must be a chat model (complete(messages)) or a function from "
                            f"a prompt to text, got {model!r}")
        self.complete = model
        self.window_tokens = None if window_tokens is None else \
            require_int("window_tokens", window_tokens, minimum=1, maximum=10**9)

    def windows(self, lines: Sequence[str]) -> list[range]:
        """The stretches of ``lines`` the calls list: one starts at every half window of tokens
        and holds what fits (one message alone over the budget is never cut)."""
        if self.window_tokens is None or not lines:
            return [range(len(lines))]
        from memorykit.tokens import Tokenizer

        count = Tokenizer().count
        before = np.cumsum([0] + [count(line) + 1 for line in lines])  # tokens before line k

        def reach(k: int, tokens: int) -> int:  # the first line not within tokens of line k
            return int(np.searchsorted(before, before[k] + tokens, "right")) - 1

        def stop(k: int) -> int:
            return max(reach(k, self.window_tokens), k + 1)

        out, start = [], 0
        while True:
            out.append(range(start, stop(start)))
            if out[-1].stop >= len(lines):
                return out
            # the next starts half a window on, or where this one stopped (no line skipped), or
            # there when a long line ahead would leave it nothing new
            start = min(out[-1].stop, max(reach(start, self.window_tokens // 2), start + 1))
            start = start if stop(start) > out[-1].stop else out[-1].stop

    def find(self, messages: Sequence[Message]) -> list[Update]:
        _check_messages(messages)
        lines = [f"[{m.id}] {m.role}: {' '.join(m.content.split())}" for m in messages]
        order = {m.id: k for k, m in enumerate(messages)}
        found: dict[tuple[str, str], Update] = {}
        for window in self.windows(lines) if lines else []:
            reply = self.complete(_PROMPT + "\n\n" + "\n".join(lines[k] for k in window))
            if not isinstance(reply, str):
                raise TypeError(f"the model must return text, got {reply!r}")
            for item in _json_list(reply):
                old, new = str(item.get("old", "")), str(item.get("new", ""))
                kind, key = item.get("kind", "update"), str(item.get("key") or "").strip()
                if old in order and new in order and order[old] < order[new] and old.strip() \
                        and new.strip() and kind in UPDATE_KINDS:
                    found.setdefault((old, new), Update(old, new, key or "(unnamed)", kind, "llm"))
        return sorted(found.values(), key=lambda u: order[u.new])


def _json_list(reply: str, tries: int = 64) -> list[dict[str, Any]]:
    """The objects of the first JSON list in ``reply`` that holds one (a model may echo "[id]"
    lines or add text around its answer), or []; at most ``tries`` "[" are tried."""
    decoder, at = json.JSONDecoder(), reply.find("[")
    for _ in range(tries):
        if at < 0:
            return []
        try:
            raw = decoder.raw_decode(reply, at)[0]
        except (ValueError, RecursionError):  # not JSON, or nested past Python's stack
            raw = None
        if isinstance(raw, list) and any(isinstance(item, dict) for item in raw):
            return [item for item in raw if isinstance(item, dict)]
        at = reply.find("[", at + 1)
    return []
