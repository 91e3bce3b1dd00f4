"""Why not: where a policy put the evidence its context left out.

``explain_misses(policy, dataset, budget)`` evaluates ``policy`` as the harness does (the same
contexts, the same coverage rule) and, for the worst questions whose context missed evidence,
reports each missed message's rank and score under the policy's ranking, the cutoff (how far
down the ranking the budget lasted, and the tokens spent) and what filled the budget above
the best-ranked missed message. A policy ranks when it has ``ranking(prepared, position,
query) -> (order, score)`` or ``scores(...)`` (sorted best first, ties newer first) and its
prepared state holds ``.prepared``; the attention policy ranks by its window's cosines (ties
older first, as the window takes them). For any other policy (buffers, summaries, windows)
the reason says what it keeps instead. ``format_misses`` prints them (``tune --explain N``).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from memorykit._validate import require_int
from memorykit.evaluation.dataset import EvalConversation, as_dataset
from memorykit.evaluation.harness import HarnessSettings, QuestionResult, evaluate
from memorykit.evaluation.hybrid import HybridRetrieval
from memorykit.evaluation.scoring import covered_evidence
from memorykit.evaluation.toolkit import AttentionPolicy, _history_buffer

__all__ = ["Above", "Cutoff", "EvidenceMiss", "Miss", "explain_misses", "format_misses"]


@dataclass(frozen=True)
class EvidenceMiss:
    """One evidence message a context left out, and where the policy put it."""

    message_id: str
    """The evidence message's id."""
    text: str
    """Its text on one line, shortened to 80 characters."""
    tokens: int
    """Its tokens, in the harness's units."""
    rank: int | None
    """Its 1-based place in the policy's ranking; None when the policy does not rank, or does
    not rank this message (BM25 ranks only messages scoring above ``min_score``)."""
    score: float | None
    """Its score under the policy; None when the policy does not score."""
    back: int
    """Messages from it to the question (1: the last one before the question)."""
    reason: str
    """One sentence: why the context left it out."""


@dataclass(frozen=True)
class Cutoff:
    """How far down its ranking a policy got before the budget ran out: the last hit whose turn
    added a message (a policy taking neighbours of hits takes a neighbour at its hit's turn)."""

    rank: int
    """Its 1-based rank."""
    score: float
    """Its score."""
    message_id: str
    """Its id."""
    tokens: int
    """Tokens the context spent (the harness's units) when the policy stopped."""


@dataclass(frozen=True)
class Above:
    """What filled the budget ranked above the best-ranked missed evidence message."""

    count: int
    """Messages the context took before its turn (ranked above it, or beside a hit ranked
    above it; every ranked one held when it is unranked)."""
    tokens: int
    """Their tokens, in the harness's units."""
    top: tuple[tuple[str, float, int, str], ...]
    """The best three: (message id, score, tokens, shortened text)."""


@dataclass(frozen=True)
class Miss:
    """A question whose context missed evidence, and why."""

    conversation_id: str
    """The conversation it is asked about."""
    question_id: str
    """Its id."""
    question: str
    """Its text (the policy's query)."""
    category: str
    """Its category."""
    recall: float
    """The share of its evidence the context covered."""
    budget: int
    """The budget the context was built for."""
    tokens: int
    """The context's tokens, in the harness's units."""
    missed: tuple[EvidenceMiss, ...]
    """Each evidence message left out, best-ranked first (unranked last, then oldest first)."""
    cutoff: Cutoff | None
    """Where the ranking stopped; None for a policy that does not rank or took nothing ranked."""
    above: Above | None
    """What filled the budget above ``missed[0]``; None for a policy that does not rank."""

    @property
    def reason(self) -> str:
        """Why the best-ranked missed evidence message was left out."""
        return self.missed[0].reason


def explain_misses(policy: Any, dataset: Any, budget: int, *, worst: int = 5,
                   conversations: Sequence[str] | None = None,
                   settings: HarnessSettings | None = None) -> list[Miss]:
    """The ``worst`` questions whose context at ``budget`` missed evidence: lowest recall first,
    then most evidence missed, then conversation order. ``conversations`` (ids) limits the
    evaluation to those conversations; ``settings`` are the harness's, and the categories it
    reports separately (``separate``: LoCoMo's adversarial ones) are left out, as from recall."""
    worst = require_int("worst", worst, minimum=1, maximum=sys.maxsize)
    data = as_dataset(dataset)
    if conversations is not None:
        if isinstance(conversations, str) or not isinstance(conversations, Sequence):
            raise TypeError(f"conversations must be a sequence of ids, got {conversations!r}")
        known = {c.id for c in data}
        for cid in conversations:
            if cid not in known:
                raise ValueError(f"conversations names {cid!r}, which is no conversation of "
                                 f"the dataset (it has {', '.join(sorted(known)[:10])})")
        data = data.select(conversations=conversations)
    settings = settings if settings is not None else HarnessSettings()
    states: dict[str, Any] = {}
    result = evaluate(policy, data, budget, settings=settings, prepared=states)
    bad = [r for r in result.questions
           if r.n_covered < r.n_evidence and r.category not in settings.separate]
    bad.sort(key=lambda r: (r.recall, r.n_covered - r.n_evidence))  # stable: conversation order
    by_id = {c.id: c for c in data}
    return [_explain(policy, by_id[r.conversation_id], r, states, settings) for r in bad[:worst]]


def _ranking(policy: Any, state: Any, position: int, query: str, budget: int
             ) -> tuple[np.ndarray, np.ndarray] | None:
    """(order, score) as the policy ranks the first ``position`` messages, or None."""
    p = getattr(state, "prepared", None)
    if p is not None and callable(getattr(policy, "ranking", None)):
        order, score = policy.ranking(p, position, query)
        return np.asarray(order), np.asarray(score, dtype=np.float64)
    if p is not None and callable(getattr(policy, "scores", None)):
        score = np.asarray(policy.scores(p, position, query), dtype=np.float64)
        return np.lexsort((-np.arange(position), -score)), score
    if isinstance(policy, AttentionPolicy) and hasattr(state, "vectors"):
        window = policy.window(_history_buffer(state.messages[:position]), budget,
                               state.embedder, state.vectors)
        sims = window.scores(query)
        score = np.array([sims.get(m.id, 0.0) for m in state.messages[:position]])
        return np.argsort(-score, kind="stable"), score
    return None


def _explain(policy: Any, conv: EvalConversation, r: QuestionResult, states: dict[str, Any],
             settings: HarnessSettings) -> Miss:
    q = next(q for q in conv.questions if q.id == r.question_id)
    pos, budget, msgs = r.position, r.budget, conv.messages
    state = states.get(conv.id)
    if settings.use_prepare and state is not None:
        ctx = state.build_context(pos, q.question, budget)
    else:  # as the harness did; a state is made (once per conversation) to read the ranking
        ctx = policy.build_context(msgs[:pos], q.question, budget)
        if state is None and callable(getattr(policy, "prepare", None)):
            state = states[conv.id] = policy.prepare(conv)
    ranked = _ranking(policy, state, pos, q.question, budget)
    covered = set() if r.over_budget else covered_evidence(
        ctx, q.evidence_ids, {m.id: m for m in msgs}, settings.min_overlap)
    cited = {s for item in ctx.items for s in item.sources}

    def tok(i: int) -> int:
        return msgs[i].billed_tokens if settings.units == "billed" else msgs[i].content_tokens

    order, score = ranked if ranked is not None else (np.zeros(0, dtype=np.intp), None)
    rank_of = {i: k + 1 for k, i in enumerate(order.tolist())}
    held = {i for i in order.tolist() if msgs[i].id in cited}
    # A policy widening each hit by k neighbours takes a message at the first turn it is offered
    # (as the hit, or beside one): room only shrinks, so what did not fit then never fits later.
    # That turn, not a neighbour's own rank, is how far down the ranking the budget lasted.
    k, sessions = _neighbours(policy)
    key = [m.metadata.get("session") if sessions else 0 for m in msgs]
    turn: dict[int, int] = {}
    for t, hit in enumerate(order.tolist(), 1):
        if len(turn) == len(held):
            break
        for j in range(hit - k, hit + k + 1):
            if j in held and j not in turn and (j == hit or key[j] is not None
                                                and key[j] == key[hit]):
                turn[j] = t
    taken = sorted(held, key=lambda i: rank_of[i])
    last = int(order[max(turn.values()) - 1]) if held else -1
    cutoff = None if ranked is None or not held else Cutoff(
        rank_of[last], float(score[last]), msgs[last].id, r.tokens)
    missed_at = sorted((conv.index_of(e) for e in q.evidence_ids if e not in covered),
                       key=lambda i: (rank_of.get(i, len(msgs) + 1), i))
    missed = []
    for i in missed_at:
        rank, s = rank_of.get(i), None if score is None else float(score[i])
        if r.over_budget:
            why = f"the context is over budget ({r.tokens:,} > {budget:,} tokens): it scores 0"
        elif msgs[i].id in cited:
            why = "the context cites it, but no item still says it (a summary lost its words)"
        elif ranked is None:
            why = _keeps(conv, ctx, pos, r.tokens, pos - i)
        else:
            above = sum(1 for j in taken if rank is None or turn[j] < rank)
            # fit is judged as the policy packs: in billed tokens, whatever the harness's units
            why = _ranked_reason(rank, s, cutoff, above, msgs[i].billed_tokens,
                                 budget - ctx.tokens, len(order), k)
        missed.append(EvidenceMiss(msgs[i].id, _short(msgs[i].content), tok(i), rank, s, pos - i,
                                   why))
    above = None
    if ranked is not None:
        first = missed[0].rank
        filled = [j for j in taken if first is None or turn[j] < first]
        above = Above(len(filled), sum(tok(j) for j in filled), tuple(
            (msgs[j].id, float(score[j]), tok(j), _short(msgs[j].content, 60)) for j in filled[:3]))
    return Miss(conv.id, q.id, q.question, q.category, r.recall, budget, r.tokens, tuple(missed),
                cutoff, above)


def _ranked_reason(rank: int | None, score: float | None, cutoff: Cutoff | None, above: int,
                   tokens: int, left: int, ranked: int, k: int) -> str:
    if rank is None:
        return (f"not ranked at all (score {score:.2f}): the policy ranks only "
                f"{_n(ranked, 'message')} for this question, so it never competed for the budget")
    at = f"ranked {_ordinal(rank)} (score {score:.2f})"
    if cutoff is None:
        return f"{at}; the context holds no ranked message at all"
    if rank < cutoff.rank:
        return (f"{at}, above the cutoff (rank {cutoff.rank:,}), but its {tokens:,} billed "
                "tokens did not fit the room left when its turn came")
    stop = f"rank {cutoff.rank:,} (score {cutoff.score:.2f})"
    if tokens > left:
        by = "ranked above it" if not k else "taken before its turn (hits and their neighbours)"
        return (f"{at}; the budget ran out at {stop} after {cutoff.tokens:,} tokens: "
                f"{_n(above, 'message')} {by} filled it")
    return (f"{at}; the policy took nothing ranked below {stop} although {left:,} billed "
            f"tokens were left, enough for its {tokens:,}")


def _keeps(conv: EvalConversation, ctx: Any, pos: int, tokens: int, back: int) -> str:
    """What a policy that does not rank kept instead of the evidence."""
    index = {m.id: i for i, m in enumerate(conv.messages[:pos]) if not m.pinned}
    kept = sorted({index[s] for item in ctx.items for s in item.sources if s in index})
    where = f"the evidence is {_n(back, 'message')} back"
    if kept and kept == list(range(pos - len(kept), pos)):
        return f"keeps the newest {_n(len(kept), 'message')} ({tokens:,} tokens); {where}"
    if not kept:
        return f"keeps {len(ctx.items):,} items ({tokens:,} tokens) citing no message; {where}"
    return (f"keeps {len(ctx.items):,} items ({tokens:,} tokens) standing for {len(kept):,} "
            f"messages, the oldest {pos - kept[0]:,} back, not this one; {where}")


def _neighbours(policy: Any) -> tuple[int, bool]:
    """How many messages on each side of a hit the policy also takes, and whether only
    from the hit's session (``metadata["session"]``)."""
    if isinstance(policy, HybridRetrieval):
        return policy.settings.neighbours, True
    return (policy.neighbours, False) if isinstance(policy, AttentionPolicy) else (0, False)


def _n(count: int, word: str) -> str:
    return f"{count:,} {word}{'' if count == 1 else 's'}"


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n:,}{suffix}"


def _short(text: str, width: int = 80) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[:width - 1] + "…"


def format_misses(misses: Sequence[Miss]) -> str:
    """Plain text, one block per miss: what ``memorykit tune --explain N`` prints."""
    if isinstance(misses, (str, bytes)) or not isinstance(misses, Sequence) or not all(
            isinstance(m, Miss) for m in misses):
        raise TypeError(f"misses must be a sequence of Miss (explain_misses), got {misses!r:.80}")
    if not misses:
        return "No question missed any evidence."
    blocks = []
    for n, m in enumerate(misses, 1):
        lines = [f"{n}. {m.conversation_id} / {m.question_id} ({m.category}): recall "
                 f"{m.recall:.2f}, {_n(len(m.missed), 'evidence message')} missed; context "
                 f"{m.tokens:,} of {m.budget:,} tokens",
                 f"   Q: {_short(m.question, 100)}"]
        for e in m.missed:
            rank = "" if e.rank is None else f", rank {e.rank:,}"
            score = "" if e.score is None else f", score {e.score:.2f}"
            lines += [f"   missed {e.message_id} ({e.tokens:,} tokens, {e.back:,} back{rank}"
                      f"{score}): \"{e.text}\"", f"     why: {e.reason}"]
        if m.cutoff is not None:
            c = m.cutoff
            lines.append(f"   cutoff: rank {c.rank:,} ({c.message_id}, score {c.score:.2f}) "
                         f"after {c.tokens:,} tokens")
        if m.above is not None:
            lines.append(f"   above it: {_n(m.above.count, 'message')}, {m.above.tokens:,} tokens")
            lines += [f"     {mid} (score {s:.2f}, {t:,} tokens): \"{text}\""
                      for mid, s, t, text in m.above.top]
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)
