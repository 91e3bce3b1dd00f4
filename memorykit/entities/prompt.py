"""The memory-aware system prompt, and what it saves over sending the history.

``render_system_prompt(memory)`` writes the top entities (5 by default, most
recent first, as D0's ``buildSystemPrompt``) into the system prompt with
the resolution rule. ``prompt_token_series`` measures, turn by turn over a
scenario, the billed tokens of (a) the full history plus the new user message
and (b) the memory-aware system prompt plus the new user message, counted with
a real tokenizer; ``token_savings`` sums up what the entity prompt saves.
Taught in ``notebooks/04_entity_memory.ipynb``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from memorykit._validate import require_int, require_str
from memorykit.clock import StepClock
from memorykit.entities.memory import EntityMemory
from memorykit.tokens import ChatFormat, TokenCounter, count_chat_tokens

DEFAULT_PREAMBLE = "You are a CMS assistant."
RESOLUTION_RULE = (
    'When the user says "this page" or "that entry", refer to the most recent entity of that '
    'type; "it" means the most recent entity of any type.'
)


def render_system_prompt(
    memory: EntityMemory,
    top_k: int = 5,
    *,
    by: str = "recency",
    preamble: str = DEFAULT_PREAMBLE,
    summary: str | None = None,
) -> str:
    """The system prompt with working memory's top ``top_k`` entities (not an access)."""
    require_int("top_k", top_k, minimum=0)
    require_str("preamble", preamble)
    entities = memory.top(top_k, by=by)
    lines = [preamble, ""]
    if summary:
        lines += ["## Earlier in this session", summary, ""]
    lines.append("## Working Memory")
    if entities:
        lines.append("Recently referenced entities:")
        lines += [f'- {e.type} "{e.label}" (ID: {e.id})' for e in entities]
    else:
        lines.append("No entities referenced yet.")
    lines += ["", RESOLUTION_RULE]
    return "\n".join(lines)


def prompt_token_series(
    scenario: Any,
    make_memory: Any,
    counter: TokenCounter,
    *,
    top_k: int = 5,
    chat_format: ChatFormat = ChatFormat(),
) -> dict[str, np.ndarray]:
    """Per turn: billed prompt tokens of the full history vs the entity prompt.

    ``full_history[t]``: a fixed system preamble, every earlier user and
    assistant message, and turn t's user message. ``entity_prompt[t]``: the
    memory-aware system prompt (built from memory as it stands when turn t
    arrives) and turn t's user message. The memory is fed each turn's mentions
    (explicit ones and those in answers) with ``make_memory(clock)``.
    """
    clock = StepClock()
    memory = make_memory(clock)
    entity = scenario.entity
    preamble = {"role": "system", "content": DEFAULT_PREAMBLE}
    history_tokens = count_chat_tokens([preamble], counter, chat_format)
    full, ent = [], []
    for turn in scenario.turns:
        clock.set(turn.t_minutes * 60.0)
        user = {"role": "user", "content": turn.user}
        user_tokens = count_chat_tokens([user], counter, chat_format) - chat_format.reply_primer
        full.append(history_tokens + user_tokens)
        system = {"role": "system", "content": render_system_prompt(memory, top_k)}
        ent.append(count_chat_tokens([system, user], counter, chat_format))
        for m in sorted(turn.mentions, key=lambda m: (m.where != "user", m.span[0])):
            memory.add(entity(m.key), turn=turn.turn)
        reply = {"role": "assistant", "content": turn.assistant}
        history_tokens += user_tokens + count_chat_tokens([reply], counter, chat_format) - chat_format.reply_primer
    return {"turn": np.array([t.turn for t in scenario.turns]),
            "full_history": np.array(full), "entity_prompt": np.array(ent)}


def token_savings(full_history: np.ndarray, entity_prompt: np.ndarray,
                  checkpoints: Sequence[int] = (10, 100)) -> dict[str, int | float]:
    """What the entity prompt saves over the full history, from ``prompt_token_series``:
    both counts at each checkpoint turn (1-based, and at the last turn), the entity
    prompt's largest count, both session totals and the share of the full history saved."""
    full, ent = np.asarray(full_history), np.asarray(entity_prompt)
    if full.shape != ent.shape or full.ndim != 1 or not len(full):
        raise ValueError(f"full_history and entity_prompt must be equally long non-empty series, "
                         f"got shapes {full.shape} and {ent.shape}")
    n = len(full)
    out: dict[str, int | float] = {"turns": n}
    for c in [c for c in (*checkpoints, n) if 1 <= c <= n]:
        out[f"turn {c}: full history"] = int(full[c - 1])
        out[f"turn {c}: entity prompt"] = int(ent[c - 1])
    out["entity prompt max"] = int(ent.max())
    out["session total: full history"] = int(full.sum())
    out["session total: entity prompt"] = int(ent.sum())
    out["saving (share of full history)"] = round(1 - float(ent.sum()) / float(full.sum()), 3)
    return out
