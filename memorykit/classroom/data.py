"""The notebooks' default scenario, loaded once per process.

``default_conversation()`` reads ``data/conversations/default_500.jsonl`` (500
turns, seed 7: see ``data/README.md``) when the repository's data directory is
present, else simulates the same conversation with ``simulate_conversation``
(identical by construction: the file is generated from it). Used by
``notebooks/01_tokens_and_budgets.ipynb`` to ``03_summary_buffer.ipynb``. Also the small
fixed scripts lessons share (``GYM_SESSIONS``) and lesson 12's dataset (``load_tuning_data``).
"""

from __future__ import annotations

import os
from memorykit.classroom.memo import memo
from pathlib import Path
from typing import Any

from memorykit.classroom.scenarios.conversation import SimulatedConversation, load_conversation, simulate_conversation

DATA_DIR = Path(__file__).resolve().parent.parent.parent / "data" / "conversations"
LOCOMO_FIXTURE = DATA_DIR.parent / "locomo_style" / "locomo_style.json"
"""The bundled LoCoMo-schema fixture (invented text; see ``data/locomo_style/README.md``)."""
CHAT_EXAMPLE = (DATA_DIR.parent / "chat_logs" / "support_chats.jsonl",
                DATA_DIR.parent / "chat_logs" / "support_questions.jsonl")
"""Synthetic OpenAI-format agent logs and questions about them (``data/chat_logs/generate.py``)."""
LOCOMO_ENV = "MEMORYKIT_LOCOMO"
"""Environment variable naming a local copy of LoCoMo's ``locomo10.json`` (file or directory)."""

# (n_turns, simulate_conversation keyword arguments) of each shipped scenario.
SCENARIOS: dict[str, tuple[int, dict]] = {
    "default_500": (500, {"seed": 7}),
    "short_60": (60, {"seed": 7, "fact_every": 5, "tool_call_rate": 0.1}),
    "long_2000": (2000, {"seed": 7}),
}


GYM_SESSIONS: dict[str, tuple[tuple[str, str], ...]] = {
    "alice": (
        ("user", "My locker code at the gym is 4721."),
        ("assistant", "Got it, locker code 4721."),
        ("user", "I want to train for a half marathon in the spring."),
        ("assistant", "A sixteen-week plan with three runs a week works well for most people."),
        ("user", "My knees hurt after long runs on asphalt."),
        ("assistant", "Try softer surfaces, shorter strides and a rest day after every long run."),
        ("user", "Which running shoes suit heavy mileage?"),
        ("assistant", "Cushioned trainers with a firm heel counter; replace them every 700 km."),
        ("user", "Should I stretch before or after running?"),
        ("assistant", "Dynamic warm-ups before, gentle static stretches after."),
    ),
    "bob": (
        ("user", "I just joined the gym near the station."),
        ("assistant", "Welcome! Do you have a training goal?"),
        ("user", "Mostly swimming, three mornings a week."),
    ),
}
"""Lesson 09's two sessions of one memory service: Alice states her locker code, then talks
until her working memory has summarized it away; Bob, in another session, talks about his gym."""


@memo(maxsize=None)
def default_conversation(name: str = "default_500") -> SimulatedConversation:
    """A shipped scenario by name (``default_500``, ``short_60``, ``long_2000``)."""
    if name not in SCENARIOS:
        raise ValueError(f"name must be one of {', '.join(SCENARIOS)}, got {name!r}")
    path = DATA_DIR / f"{name}.jsonl"
    if path.is_file():
        return load_conversation(path)
    n_turns, kwargs = SCENARIOS[name]
    return simulate_conversation(n_turns, **kwargs)


def load_tuning_data(path: Any = None) -> tuple[Any, str]:
    """Lesson 12's dataset and a sentence naming it (no absolute paths: it is printed).

    A local LoCoMo copy when ``path`` is given or ``MEMORYKIT_LOCOMO`` names one (checked
    against its published sha256); otherwise the bundled LoCoMo-*schema* fixture (invented
    people and text, written by ``data/locomo_style/generate.py``: LoCoMo itself is CC BY-NC
    and never shipped); without the repository's data directory, a simulated conversation.
    """
    from memorykit.evaluation.dataset import EvalDataset
    from memorykit.evaluation.locomo import load_locomo
    from memorykit.classroom.scenarios.conversation import from_simulated

    if path is None and os.environ.get(LOCOMO_ENV):
        path = os.environ[LOCOMO_ENV]
    if path is not None:
        data = load_locomo(Path(path))
        return data, (f"LoCoMo (local copy, sha256 verified): {len(data)} conversations, "
                      f"{data.n_messages:,} turns, {data.n_questions:,} questions")
    if LOCOMO_FIXTURE.is_file():
        data = load_locomo(LOCOMO_FIXTURE, verify=False)
        return data, (f"bundled LoCoMo-style fixture data/locomo_style/locomo_style.json (invented "
                      f"text, LoCoMo's schema): {len(data)} conversations, {data.n_messages:,} "
                      f"turns, {data.n_questions:,} questions")
    data = EvalDataset("simulated", (from_simulated(default_conversation("short_60")),))
    return data, (f"simulated conversation short_60 (the fixture file is missing): "
                  f"{data.n_messages:,} messages, {data.n_questions:,} questions")
