"""Where seed 003's probe episodes sit on the episodic score's surface, under each query rule.

``probe_episodes()`` runs seed 003's probe conversation (its facts among distractor turns)
through an ``EpisodicMemory`` with the seed's defaults and, for each probe question, reports the
episode holding its fact: keyword overlap with the question, age, whether the episode's summary
kept the fact's key, and the episode's keywords and the question's words (so another score
function, a student's, can score the same episodes). ``query_tokens_comparison()`` scores the
same episodes with seed 003's query tokens (every word of the question) and memorykit's variant
(content words only), so a lesson can show what the choice changes. Taught in
``notebooks/09_long_term_memory.ipynb``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from memorykit._validate import require_int
from memorykit.classroom.memo import memo
from memorykit.longterm.episodic import (HOUR, EpisodicMemory, EpisodicSettings, episode_scores,
                                         query_terms)
from memorykit.classroom.scenarios.probes import probe_conversation


@dataclass(frozen=True)
class ProbeEpisode:
    question: str
    key: str
    episode: str
    overlap: float
    age_hours: float
    key_in_summary: bool
    keywords: tuple[str, ...] = ()
    """The episode's keywords K_e."""
    query_words: frozenset[str] = frozenset()
    """The question's words T_q (as the settings' ``query_tokens`` make them)."""


def probe_episodes(distractors: int = 50, query_tokens: str = "all") -> tuple[ProbeEpisode, ...]:
    """For each probe question: the episode holding its fact (seed defaults, window 20)."""
    settings = EpisodicSettings(query_tokens=query_tokens)  # checked before hashing
    return _probe_episodes(require_int("distractors", distractors, minimum=0), settings)


@memo(maxsize=4)
def _probe_episodes(distractors: int, settings: EpisodicSettings) -> tuple[ProbeEpisode, ...]:
    conv = probe_conversation(distractors)
    mem = EpisodicMemory(settings)
    for m in conv.messages:
        mem.add(m)
    now = conv.messages[-1].created_at
    out = []
    for f in conv.facts:
        terms = query_terms(f.question, settings.query_tokens)
        for s in mem.score(f.question, now):
            if f.message_id in s.episode.source_message_ids:
                out.append(ProbeEpisode(f.question, f.key, s.episode.id, s.overlap,
                                        s.age_seconds / HOUR, f.key in s.episode.summary,
                                        s.episode.keywords, terms))
    return tuple(out)


def query_tokens_comparison() -> list[dict[str, Any]]:
    """Each probe episode scored with seed 003's T_q (every word) and memorykit's content words."""
    rows, threshold = [], EpisodicSettings().threshold
    for a, c in zip(probe_episodes(), probe_episodes(query_tokens="content")):
        s = episode_scores([a.overlap, c.overlap], a.age_hours * HOUR)
        won = [name for name, v in zip(("all", "content"), s) if v > threshold]
        rows.append({"question": a.question, "age h": f"{a.age_hours:.1f}", "all: overlap": f"{a.overlap:.3f}",
                     "all: S": f"{s[0]:.3f}", "content: overlap": f"{c.overlap:.3f}", "content: S": f"{s[1]:.3f}",
                     f"recalled (S > {threshold:g})": ", ".join(won) or "neither"})
    return rows


__all__ = ["ProbeEpisode", "probe_episodes", "query_tokens_comparison"]
