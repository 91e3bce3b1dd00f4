"""What a context earns for one question: scoring rules a reader can check by hand.

The harness (``memorykit.evaluation.harness``) scores every context with these rules,
so no policy can earn credit that its text does not carry:

* **Over budget scores nothing.** A context whose tokens exceed the budget covers no
  evidence and contains no answer at that budget, whichever policy built it (full
  context and window policies included). It is reported as over, with its tokens.
* **Evidence credit follows the text.** An evidence message counts as covered when some
  item cites it in its ``sources`` *and* that item still says it: the item's text holds
  the message's text verbatim, or at least ``min_overlap`` of the message's *salient
  terms* (``salient_terms``: its distinct lower-cased words, common function words left
  out). A message kept as it is passes trivially; a summary, episode or rule that lost a
  fact's words is not credited with the turn it condensed. A message with no salient
  term needs the verbatim match.
* **Answer containment.** Beside evidence recall, each answered question scores 1 when
  the context's text, normalised (``normalize_answer``), contains the reference answer,
  normalised the same way, as whole words; questions without a reference answer (LoCoMo's
  adversarial ones) get None. An answer the conversation paraphrases ("yesterday" for a
  date) is not contained: the figure is a floor, not a judge.
* **Staleness.** A question may name *superseded* messages: earlier statements its evidence
  replaces (``EvalQuestion.superseded_ids``). Covered by the same rule as evidence, they give
  ``stale_only`` (the context holds a superseded message and none of the evidence: the reader
  would answer with the old value), ``both`` (it holds both: the reader must tell which is
  current) and ``both_unclear`` (``both``, and some item holding a superseded message is
  neither marked as such, ``ContextItem.kind == "superseded"``, nor placed before every item
  holding the evidence: nothing tells the reader which is current). An item holding both, a
  summary say, counts as unclear: the rule does not read its prose. And the opposite mistake,
  for any question: ``marked_current``, an item holding the evidence is marked superseded (a
  detector took the current statement for a replaced one).
* **Units.** Tokens are ``billed`` (``Context.tokens``: content, chat framing and the
  reply primer, what the API charges) or ``content`` (``content_tokens``: the items'
  text alone, as published LoCoMo figures count). The chosen unit is used for the tokens
  reported and for the budget check alike; the policy is still handed the budget to pack
  in its own (billed) accounting, so a content-unit figure never exceeds what the policy
  was given.

Taught in ``notebooks/12_parameter_tuning.ipynb``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from memorykit._validate import require_choice, require_fraction
from memorykit.context import Context, ContextItem
from memorykit.evaluation.baselines import analyze
from memorykit.messages import Message

__all__ = ["UNITS", "answer_contained", "answer_in", "content_tokens", "context_tokens",
           "covered_evidence", "normalize_answer", "salient_terms", "searchable_text", "staleness",
           "units_note"]

UNITS: tuple[str, ...] = ("billed", "content")
"""How tokens are counted: what the API charges, or the items' text alone."""

_NON_WORD = re.compile(r"[^0-9a-z]+")
_ARTICLES = frozenset({"a", "an", "the"})
_ROLE_TOKENS = 1  # every role a Message can carry is one token (memorykit.tokens.role_tokens)


def salient_terms(text: str) -> frozenset[str]:
    """The distinct terms of ``text`` that carry its content (``baselines.analyze``)."""
    return frozenset(analyze(text))


def normalize_answer(text: str) -> str:
    """Lower case, punctuation to spaces, articles dropped, single spaces (SQuAD's rule)."""
    words = _NON_WORD.sub(" ", text.lower()).split()
    return " ".join(w for w in words if w not in _ARTICLES)


def searchable_text(context: Context, normalized: dict[str, str] | None = None) -> str:
    """``context``'s text, normalised and padded, for ``answer_in``. Normalising is word by
    word, so items are normalised one at a time; ``normalized`` caches them by content (one
    conversation's contexts share most items)."""
    memo = normalized if normalized is not None else {}
    parts = []
    for item in context.items:
        text = memo.get(item.content)
        if text is None:
            text = memo[item.content] = normalize_answer(item.content)
        if text:
            parts.append(text)
    return f" {' '.join(parts)} "


def answer_in(searchable: str, answer: str) -> bool:
    """``answer``, normalised, occurs as whole words in ``searchable`` (``searchable_text``); an
    answer that normalises to nothing (punctuation only) is never contained."""
    needle = normalize_answer(answer)
    return bool(needle) and f" {needle} " in searchable


def answer_contained(context_text: str, answer: str) -> bool:
    """``answer`` occurs in ``context_text`` as whole words, both normalised."""
    return answer_in(f" {normalize_answer(context_text)} ", answer)


def _says(item: ContextItem, message: Message, item_terms: dict[int, frozenset[str]],
          message_terms: dict[str, frozenset[str]], min_overlap: float) -> bool:
    if message.content in item.content:
        return True
    terms = message_terms.get(message.id)
    if terms is None:
        terms = message_terms[message.id] = salient_terms(message.content)
    if not terms:
        return False
    have = item_terms.get(id(item))
    if have is None:
        have = item_terms[id(item)] = salient_terms(item.content)
    return len(terms & have) >= min_overlap * len(terms)


def covered_evidence(ctx: Context, evidence_ids: Sequence[str], messages: Mapping[str, Message],
                     min_overlap: float, message_terms: dict[str, frozenset[str]] | None = None
                     ) -> frozenset[str]:
    """The evidence ids ``ctx`` covers under the rule of the module docstring.

    ``messages`` maps an id to the original message; ``message_terms`` is an optional cache
    of salient terms by message id, shared across questions of one conversation.
    """
    require_fraction("min_overlap", min_overlap)
    wanted = set(evidence_ids)
    cache = message_terms if message_terms is not None else {}
    item_terms: dict[int, frozenset[str]] = {}
    covered: set[str] = set()
    for item in ctx.items:
        for source in item.sources:
            if source in wanted and source not in covered and _says(
                    item, messages[source], item_terms, cache, min_overlap):
                covered.add(source)
    return frozenset(covered)


def staleness(ctx: Context, evidence_ids: Sequence[str], superseded_ids: Sequence[str],
              messages: Mapping[str, Message], min_overlap: float,
              message_terms: dict[str, frozenset[str]] | None = None
              ) -> tuple[bool, bool, bool, bool]:
    """(``stale_only``, ``both``, ``both_unclear``, ``marked_current``) of ``ctx`` under the
    rules of the module docstring; the first three are False when ``superseded_ids`` is empty."""
    require_fraction("min_overlap", min_overlap)
    old, current = set(superseded_ids), set(evidence_ids)
    if not old and all(item.kind != "superseded" for item in ctx.items):
        return False, False, False, False
    cache = message_terms if message_terms is not None else {}
    item_terms: dict[int, frozenset[str]] = {}
    first_current: int | None = None
    holding_old: list[int] = []
    marked_current = False
    for i, item in enumerate(ctx.items):
        said = {s for s in item.sources if (s in old or s in current)
                and _says(item, messages[s], item_terms, cache, min_overlap)}
        if said & current:
            first_current = i if first_current is None else first_current
            marked_current = marked_current or item.kind == "superseded"
        if said & old:
            holding_old.append(i)
    if not holding_old:
        return False, False, False, marked_current
    if first_current is None:
        return True, False, False, marked_current
    unclear = any(ctx.items[i].kind != "superseded" and i >= first_current for i in holding_old)
    return False, True, unclear, marked_current


def content_tokens(ctx: Context) -> int:
    """Tokens of the items' text: billed tokens less each item's chat framing (per-message
    framing, its role, the framing around each tool call) and the reply primer."""
    fmt = ctx.chat_format
    per_item = fmt.tokens_per_message + _ROLE_TOKENS
    return sum(max(0, item.tokens - per_item - fmt.tokens_per_tool_call * len(item.tool_calls))
               for item in ctx.items)


def context_tokens(ctx: Context, units: str) -> int:
    """``ctx``'s size in ``units`` (one of ``UNITS``)."""
    require_choice("units", units, UNITS)
    return ctx.tokens if units == "billed" else content_tokens(ctx)


def units_note(units: str) -> str:
    """The line every comparison table prints about its tokens."""
    if require_choice("units", units, UNITS) == "billed":
        return ("tokens and budgets are billed tokens: content plus chat framing and the reply "
                "primer (HarnessSettings(units='content') counts the text alone)")
    return ("tokens and budgets are content tokens: the items' text alone, without chat framing "
            "(policies still pack their budget in billed tokens)")
