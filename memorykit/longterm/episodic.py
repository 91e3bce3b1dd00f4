"""Episodic memory (D3, architecture B): consolidate the overflow into episodes, score them.

Short-term memory (STM) holds the most recent messages. When it holds more
than ``consolidation_factor x stm_limit`` messages (strictly more: 31 with the
defaults 1.5 x 20), the oldest ones beyond ``stm_limit`` are summarized into an
**episode** and leave STM, which is back to ``stm_limit`` messages. An episode
keeps ``{id, start_time, end_time, summary, keywords, participants,
source_message_ids}``: D3's consolidation schema plus the ids of the
messages it stands for, so a recalled episode can be scored against evidence.

An episode is recalled for a query by D3's hybrid relevance score::

    S(e | q) = alpha * |K_e & T_q| / |T_q|  +  beta * exp(-dt / tau)

* ``K_e``: the episode's keywords: its content words ranked by frequency (the
  top ``max_keywords``), plus **every** token containing a digit (numbers and
  codes such as "4721" or "PAY-1234" are what a summary tends to lose);
* ``T_q``: the query's tokens: by default (``query_tokens="all"``) every
  distinct lowercased word of the query, as D3 defines it ("tokens in
  query"), stop words included. So "what refund policy" against the keywords
  {refund, policy, ticket} 24 h later scores 0.6 x 2/3 + 0.4 x e^-1 = 0.547,
  not recalled at 0.7. memorykit's variant, ``query_tokens="content"``, keeps
  only content words: keywords never contain stop words, so with them counted
  the keyword term of a long question stays small ("What is the locker code at
  the gym?" has 7 distinct words but 3 content words: overlap at most 3/7, S at
  most 0.6 x 3/7 + 0.4 = 0.657, below 0.7, never recalled); without them the same
  refund query scores 0.6 x 1 + 0.147 = 0.747 and is recalled. A query with no
  term has a keyword term of 0;
* ``dt = now - episode end time`` (clamped at 0), ``tau`` 24 hours;
* alpha 0.6, beta 0.4; an episode is injected when ``S > threshold`` (0.7),
  strictly, as D3's retrieval diagram says ("Score > 0.7").

Words are lowercased runs of letters/digits (``memorykit._text``); a content
word is not a stop word and has more than two characters or a digit.

D3 calls the summarizer an LLM; here it is injected, and the default is
the offline ``ExtractiveSummarizer`` (which copies sentences, favouring ones
with numbers and names). Episode ids are ``ep0001, ep0002, ...`` rather than
the seed's uuid4, so runs are reproducible. Times are seconds on the memory's
clock (the seed's schema uses ISO-8601 strings).

``episode_scores`` is the formula as a pure, vectorized function, for the
notebook's scoring surface (keyword overlap x age).

Taught in ``notebooks/09_long_term_memory.ipynb`` (the scoring surface) and
``notebooks/10_architectures.ipynb`` (architecture B).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from memorykit._text import STOPWORDS, has_digit, words
from memorykit._validate import (
    require_between,
    require_bool,
    require_choice,
    require_int,
    require_positive,
    require_real,
    require_str,
    require_unit_interval,
)
from memorykit.messages import Message
from memorykit.summary import ExtractiveSummarizer, Summarizer
from memorykit.tokens import TokenCounter, Tokenizer
from memorykit.trace import Summarization, Trace

HOUR = 3600.0


# ----------------------------------------------------------------- the formula


def content_words(text: str) -> list[str]:
    """Lowercased content words of ``text`` in order (stop words and 1-2 letter words out)."""
    out = []
    for w in words(text):
        lw = w.lower()
        if lw not in STOPWORDS and (len(lw) > 2 or has_digit(lw)):
            out.append(lw)
    return out


QUERY_TOKENS = ("all", "content")
"""What ``T_q`` is made of: every word (D3) or content words only (memorykit's variant)."""


def query_terms(query: str, query_tokens: str = "all") -> frozenset[str]:
    """T_q: the distinct lowercased words of a query ("all", the seed) or its content words
    ("content"); see the module docstring for what each does to recall."""
    require_str("query", query)
    require_choice("query_tokens", query_tokens, QUERY_TOKENS)
    if query_tokens == "content":
        return frozenset(content_words(query))
    return frozenset(w.lower() for w in words(query))


def extract_keywords(texts: Iterable[str], max_keywords: int = 12) -> tuple[str, ...]:
    """K_e: the ``max_keywords`` most frequent content words, then every token with a digit.

    Frequency ties go to the word seen first. Tokens with digits beyond the
    top ``max_keywords`` are appended in order of appearance.
    """
    require_int("max_keywords", max_keywords, minimum=0)
    counts: Counter[str] = Counter()
    first: dict[str, int] = {}
    for text in texts:
        for w in content_words(require_str("texts[]", text)):
            counts[w] += 1
            first.setdefault(w, len(first))
    ranked = sorted(counts, key=lambda w: (-counts[w], first[w]))
    top = ranked[:max_keywords]
    chosen = set(top)
    codes = [w for w in sorted(first, key=first.__getitem__) if has_digit(w) and w not in chosen]
    return tuple(top + codes)


def keyword_overlap(keywords: Iterable[str], terms: frozenset[str]) -> float:
    """|K_e & T_q| / |T_q|, or 0.0 for a query without terms."""
    if not terms:
        return 0.0
    return len(terms & set(keywords)) / len(terms)


S_MAX = 2.0
"""The most S can be: alpha + beta with both weights in [0, 1]. A threshold lies in [0, S_MAX]."""


def episode_scores(
    overlap: Any,
    age_seconds: Any,
    *,
    alpha: float = 0.6,
    beta: float = 0.4,
    tau_seconds: float = 24 * HOUR,
) -> np.ndarray:
    """S = alpha * overlap + beta * exp(-age / tau), elementwise with numpy broadcasting.

    ``overlap`` in [0, 1] and ``age_seconds`` >= 0 may be scalars or arrays;
    pass ``overlap[:, None]`` and ``age[None, :]`` for a grid.
    """
    alpha = require_unit_interval("alpha", alpha)
    beta = require_unit_interval("beta", beta)
    tau = require_positive("tau_seconds", tau_seconds)
    o = np.asarray(overlap, dtype=np.float64)
    a = np.asarray(age_seconds, dtype=np.float64)
    if not np.all(np.isfinite(o)) or np.any((o < 0) | (o > 1)):
        raise ValueError(f"overlap must be in [0, 1], got {overlap!r}")
    if not np.all(np.isfinite(a)) or np.any(a < 0):
        raise ValueError(f"age_seconds must be finite and >= 0, got {age_seconds!r}")
    return alpha * o + beta * np.exp(-a / tau)


def overlap_needed(age_seconds: Any, *, alpha: float, beta: float, tau_seconds: float,
                   threshold: float) -> np.ndarray:
    """The keyword overlap at which S equals ``threshold`` at each age (an episode is recalled
    when its overlap is strictly above it): the threshold's contour, solved for overlap.

    Values above 1 mean no overlap is enough; below 0, any overlap is (even none). With
    ``alpha`` 0 the keyword term cannot help: -inf where recency alone passes, +inf elsewhere.
    """
    alpha = require_unit_interval("alpha", alpha)
    beta = require_unit_interval("beta", beta)
    tau = require_positive("tau_seconds", tau_seconds)
    threshold = require_between("threshold", threshold, 0, S_MAX)
    decay = beta * np.exp(-np.asarray(age_seconds, dtype=np.float64) / tau)
    if alpha == 0:
        return np.where(decay > threshold, -np.inf, np.inf)
    return (threshold - decay) / alpha


def full_match_horizon_seconds(*, alpha: float, beta: float, tau_seconds: float,
                               threshold: float) -> float | None:
    """The age up to which an episode sharing every query keyword (overlap 1) is recalled.

    ``math.inf``: at any age (``alpha`` alone passes the threshold); None: never.
    """
    alpha = require_unit_interval("alpha", alpha)
    beta = require_unit_interval("beta", beta)
    tau = require_positive("tau_seconds", tau_seconds)
    threshold = require_between("threshold", threshold, 0, S_MAX)
    if alpha > threshold or (alpha == threshold and beta > 0):
        return math.inf
    if beta <= 0 or alpha + beta <= threshold:
        return None
    return -tau * math.log((threshold - alpha) / beta)


# ------------------------------------------------------------------- settings


@dataclass(frozen=True)
class EpisodicSettings:
    """Every parameter of episodic memory (D3 defaults)."""

    stm_limit: int = 20
    """Messages short-term memory keeps after a consolidation (instructions not counted)."""
    consolidation_factor: float = 1.5
    """Consolidate when STM holds more than factor x stm_limit messages (strictly more)."""
    alpha: float = 0.6
    """Weight of the keyword-match term, in [0, 1] (the weights are relative: any pair
    scales into [0, 1] with the threshold, so the range loses no setting)."""
    beta: float = 0.4
    """Weight of the time-decay term, in [0, 1]."""
    tau_hours: float = 24.0
    """Decay constant of the time term, in hours (e^-1 after tau)."""
    threshold: float = 0.7
    """An episode is recalled when its score is strictly greater than this; in [0, 2], the
    range of S (at most alpha + beta)."""
    max_keywords: int = 12
    """Most frequent content words kept as keywords (tokens with digits are always kept)."""
    summary_max_tokens: int = 120
    """Token cap on one episode's summary (passed to the summarizer)."""
    recall_limit: int = 3
    """At most this many episodes (the best) are injected per request."""
    query_tokens: str = "all"
    """T_q: "all" words of the query (D3) or "content" words only (stop words and
    1-2 letter words dropped: memorykit's variant, under which long questions can be recalled)."""

    def __post_init__(self) -> None:
        require_int("stm_limit", self.stm_limit, minimum=1)
        factor = require_real("consolidation_factor", self.consolidation_factor)
        if factor < 1:
            raise ValueError(f"consolidation_factor must be >= 1, got {self.consolidation_factor!r}")
        require_unit_interval("alpha", self.alpha)
        require_unit_interval("beta", self.beta)
        require_positive("tau_hours", self.tau_hours)
        require_between("threshold", self.threshold, 0, S_MAX)
        require_int("max_keywords", self.max_keywords, minimum=0)
        require_int("summary_max_tokens", self.summary_max_tokens, minimum=1)
        require_int("recall_limit", self.recall_limit, minimum=0)
        require_choice("query_tokens", self.query_tokens, QUERY_TOKENS)

    @property
    def trigger(self) -> float:
        """The STM size that must be exceeded to consolidate (30.0 with the defaults)."""
        return self.consolidation_factor * self.stm_limit


# ------------------------------------------------------------------ episodes


@dataclass(frozen=True)
class Episode:
    """A consolidated stretch of conversation."""

    id: str
    start_time: float
    """Creation time of its first message (seconds on the memory's clock)."""
    end_time: float
    """Creation time of its last message; the age in the score is measured from here."""
    summary: str
    keywords: tuple[str, ...]
    participants: tuple[str, ...]
    """Roles that spoke in it, in order of first appearance."""
    source_message_ids: tuple[str, ...]
    """The original messages it stands for (provenance)."""
    summarizer: str = "?"
    """Name of what wrote the summary (is it an LLM? the name says)."""

    def __post_init__(self) -> None:
        # the score's age is measured from end_time: a NaN there would make S NaN, never recalled
        if require_real("end_time", self.end_time) < require_real("start_time", self.start_time):
            raise ValueError(f"end_time must be >= start_time, got {self.end_time!r} < "
                             f"{self.start_time!r}")

    def to_record(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class EpisodeScore:
    """One episode scored against one query, with the parts of the score."""

    episode: Episode
    overlap: float
    """|K_e & T_q| / |T_q|."""
    matched: tuple[str, ...]
    """The query terms found among the keywords."""
    age_seconds: float
    score: float
    recalled: bool


@dataclass
class EpisodicMemory:
    """Short-term memory that consolidates its overflow into scored episodes.

    ``add(message)`` puts a message in STM and consolidates when the trigger is
    exceeded; ``score(query, now)`` scores every episode; ``recall(query, now)``
    returns the recalled ones, best first. System instructions are kept apart
    (``instructions``): they are never consolidated and do not count toward STM.
    """

    settings: EpisodicSettings = field(default_factory=EpisodicSettings)
    summarizer: Summarizer | None = None
    counter: TokenCounter | None = None
    id_prefix: str = "ep"

    def __post_init__(self) -> None:
        if not isinstance(self.settings, EpisodicSettings):
            raise TypeError(f"settings must be EpisodicSettings, got {self.settings!r}")
        if self.counter is None:
            self.counter = Tokenizer()
        if self.summarizer is None:
            self.summarizer = ExtractiveSummarizer(self.counter)
        elif not callable(getattr(self.summarizer, "summarize", None)):
            raise TypeError(
                f"summarizer must have a summarize(messages, max_tokens) method, "
                f"got {self.summarizer!r}"
            )
        require_str("id_prefix", self.id_prefix, non_empty=True)
        self.instructions: list[Message] = []
        self.stm: list[Message] = []
        self.episodes: list[Episode] = []
        self.trace = Trace()

    def reset(self) -> None:
        self.instructions.clear()
        self.stm.clear()
        self.episodes.clear()
        self.trace = Trace()

    # ---------------------------------------------------------------- writing
    def add(self, message: Message) -> Episode | None:
        """Add a message; returns the episode it triggered, if any."""
        if type(message) is not Message:
            raise TypeError(f"message must be a Message, got {message!r}")
        if message.pinned:
            self.instructions.append(message)
            return None
        self.stm.append(message)
        if len(self.stm) > self.settings.trigger:
            return self._consolidate(message)
        return None

    def _consolidate(self, trigger: Message) -> Episode:
        s = self.settings
        before_n = len(self.stm)
        cut = len(self.stm) - s.stm_limit
        # Never leave a tool result in STM without the call that asked for it.
        while cut < len(self.stm) - 1 and self.stm[cut].role == "tool":
            cut += 1
        overflow, self.stm = self.stm[:cut], self.stm[cut:]
        text = self.summarizer.summarize(overflow, s.summary_max_tokens)  # type: ignore[union-attr]
        if not isinstance(text, str):
            raise TypeError(f"summarizer returned {text!r}, expected a str")
        sources = tuple(i for m in overflow for i in m.covers)
        roles = tuple(dict.fromkeys(m.role for m in overflow))
        episode = Episode(
            f"{self.id_prefix}{len(self.episodes) + 1:04d}",
            overflow[0].created_at,
            overflow[-1].created_at,
            text,
            extract_keywords((m.content for m in overflow), s.max_keywords),
            roles,
            sources,
            getattr(self.summarizer, "name", type(self.summarizer).__name__),
        )
        self.episodes.append(episode)
        tokens_before = sum(m.billed_tokens for m in overflow) + sum(m.billed_tokens for m in self.stm)
        self.trace.append(
            Summarization(
                tuple(m.id for m in overflow),
                episode.id,
                sources,
                1,
                "episodic-consolidation",
                f"STM held {before_n} messages > {s.consolidation_factor:g} x stm_limit "
                f"{s.stm_limit} = {s.trigger:g}: the oldest {len(overflow)} became episode "
                f"{episode.id} ({len(episode.keywords)} keywords); STM keeps {len(self.stm)}",
                tokens_before,
                sum(m.billed_tokens for m in self.stm),
                None,
                trigger.created_at,
                trigger.turn,
            )
        )
        return episode

    # ---------------------------------------------------------------- reading
    def score(self, query: str, now: float) -> list[EpisodeScore]:
        """Every episode scored against ``query`` at time ``now``, in episode order."""
        terms = query_terms(query, self.settings.query_tokens)
        now = require_real("now", now)
        if not self.episodes:
            return []
        s = self.settings
        overlaps = np.array([keyword_overlap(e.keywords, terms) for e in self.episodes])
        ages = np.array([max(0.0, now - e.end_time) for e in self.episodes])
        scores = episode_scores(overlaps, ages, alpha=s.alpha, beta=s.beta,
                                tau_seconds=s.tau_hours * HOUR)
        return [
            EpisodeScore(
                e, float(o), tuple(sorted(terms & set(e.keywords))), float(a), float(sc),
                bool(sc > s.threshold),
            )
            for e, o, a, sc in zip(self.episodes, overlaps, ages, scores)
        ]

    def recall(self, query: str, now: float) -> list[EpisodeScore]:
        """Episodes scoring above the threshold, best first (ties: newer first), at most recall_limit."""
        return self.select(self.score(query, now))

    def select(self, scores: Sequence[EpisodeScore], threshold: float | None = None) -> list[EpisodeScore]:
        """The recalled ones among ``scores``: strictly above ``threshold`` (default: the
        settings'), best first (ties: newer first), at most recall_limit. Scores do not depend
        on the threshold, so a lesson can score once and select for many thresholds."""
        thr = (self.settings.threshold if threshold is None
               else require_between("threshold", threshold, 0, S_MAX))
        above = [s for s in scores if s.score > thr]
        above.sort(key=lambda s: (-s.score, -s.episode.end_time))
        return above[: self.settings.recall_limit]


def explain(score: EpisodeScore, settings: EpisodicSettings, chosen: bool) -> str:
    """One sentence with the numbers behind an episode's score."""
    require_bool("chosen", chosen)
    s = settings
    decay = math.exp(-score.age_seconds / (s.tau_hours * HOUR))
    verdict = "recalled" if chosen else (
        "above the threshold but beyond recall_limit" if score.recalled else "not recalled"
    )
    return (
        f"S = {s.alpha:g} x {score.overlap:.3f} (matched {list(score.matched)}) + {s.beta:g} x "
        f"exp(-{score.age_seconds / HOUR:.2f} h / {s.tau_hours:g} h) = {s.alpha * score.overlap:.3f}"
        f" + {s.beta * decay:.3f} = {score.score:.4f} {'>' if score.recalled else '<='} "
        f"{s.threshold:g}: {verdict}"
    )


__all__ = [
    "Episode",
    "EpisodeScore",
    "EpisodicMemory",
    "EpisodicSettings",
    "QUERY_TOKENS",
    "content_words",
    "episode_scores",
    "full_match_horizon_seconds",
    "overlap_needed",
    "explain",
    "extract_keywords",
    "keyword_overlap",
    "query_terms",
]
