"""Lesson 09's memory-service sections: auto-recall, recall on demand as a tool, D4's settings.

Each replays ``GYM_SESSIONS`` into a ``MemoryService`` whose working memory is a small
``SummaryBuffer`` (150 tokens, so Alice's locker code is summarized early) and reports what the
library computes: ``service_demo()``, what auto-recall injects for the last user message of
two sessions sharing one store, and that nothing crosses sessions; ``search_tool_demo()``,
the tool's schema, the model's call and the answer it reads, and whether the request is one
the chat API accepts; ``settings_comparison()``, what each of ``system_memory`` /
``include_history`` puts in a request. Taught in ``notebooks/09_long_term_memory.ipynb``.
"""

from __future__ import annotations

import json
from typing import Any

from memorykit.buffers import SummaryBuffer
from memorykit.clock import StepClock
from memorykit.classroom.data import GYM_SESSIONS
from memorykit.longterm.search_tool import answer_memory_search, memory_search_tool
from memorykit.longterm.service import LongTermSettings, MemoryService, MemorySettings
from memorykit.messages import MessageFactory, ToolCall, validate_wire

QUESTION = "What is my locker code at the gym?"
"""What both users ask last."""
GYM_PROMPT = "You are a friendly gym assistant."


def _alice(settings: LongTermSettings, memory: MemorySettings | None = None,
           working_tokens: int = 150) -> tuple[MemoryService, MessageFactory, list[str]]:
    """Alice's session replayed, then her question added; the notices she was shown."""
    clock = StepClock(0.0)
    factory = MessageFactory(clock=clock)
    notices: list[str] = []
    svc = MemoryService(lambda: SummaryBuffer(working_tokens), settings, memory=memory,
                        counter=factory.counter,
                        on_summarizing=lambda sid, notice: notices.append(notice.text))
    for role, text in (*GYM_SESSIONS["alice"], ("user", QUESTION)):
        clock.advance(60)
        svc.add("alice", getattr(factory, role)(text))
    return svc, factory, notices


def service_demo(recall_limit: int = 3, working_tokens: int = 150) -> dict[str, Any]:
    """``GYM_SESSIONS`` in one ``MemoryService`` (working memory: a ``SummaryBuffer`` of
    ``working_tokens``), then both users ask for "the locker code": auto-recall, isolation."""
    clock = StepClock(0.0)
    factory = MessageFactory(clock=clock)
    svc = MemoryService(lambda: SummaryBuffer(working_tokens),
                        LongTermSettings(recall_limit=recall_limit), counter=factory.counter)
    for session, script in GYM_SESSIONS.items():
        for role, text in script:
            clock.advance(60)
            svc.add(session, getattr(factory, role)(text))
    question = QUESTION
    out: dict[str, Any] = {"stored_entries": len(svc.store), "question": question}
    # What the shared store holds closest to the question if the session filter were dropped.
    best = svc.store.search(svc.session("bob").semantic.embed_query(question), 1)[0]
    out["unfiltered_best_match"] = (f"{best.payload['text']!r} from session "
                                    f"{best.payload['session_id']!r}, cosine {best.score:.3f}")
    for sid in ("alice", "bob"):
        clock.advance(60)
        svc.add(sid, factory.user(question))
        ctx = svc.get_context(sid)
        working = list(svc.session(sid).working)
        recalled = [i for i in ctx.items if i.kind == "recalled"]
        out[sid] = {
            "recall_query": svc.last_recall_query,
            "working_memory": [f"{m.role}{' (summary)' if m.is_summary else ''}: {m.content}"
                               for m in working],
            "code_verbatim_in_working_memory": any(
                "4721" in m.content and not m.is_summary for m in working),
            "recalled": [f"{i.score:.3f}  {i.content}" for i in recalled],
            "code_in_context": any("4721" in i.content for i in ctx.items),
            "context_kinds": [i.kind for i in ctx.items],
        }
        out[sid]["recalled_ids_all_from_this_session"] = all(
            s in svc.session(sid).added for i in recalled for s in i.sources)
    return out


def search_tool_demo() -> dict[str, Any]:
    """Auto-recall off: the model reads the ``search`` tool, calls it, and reads the answer."""
    # 200 tokens: the code is summarized away, and the call and its answer still fit
    svc, factory, notices = _alice(LongTermSettings(auto_recall=False, recall_limit=2),
                                   working_tokens=200)
    before = svc.get_context("alice")
    call = ToolCall("call_1", "search", json.dumps({"query": "locker code", "type": "memory"}))
    asked = factory.assistant("", tool_calls=(call,))
    answer = answer_memory_search(svc, "alice", call, factory)
    for m in (asked, answer):
        svc.add("alice", m)
    request = svc.get_context("alice").to_openai()
    validate_wire(request)  # raises if the chat API would refuse it
    return {
        "tool": memory_search_tool()["function"],
        "notices_shown": notices,
        "recalled_before_the_call": sum(i.kind == "recalled" for i in before.items),
        "call": asked.to_openai()["tool_calls"][0],
        "call_billed_tokens": asked.billed_tokens,
        "answer": json.loads(answer.content),
        "answer_billed_tokens": answer.billed_tokens,
        "request_roles": [m["role"] for m in request],
    }


def settings_comparison() -> list[dict[str, Any]]:
    """The same question under D4's defaults, with ``system_memory`` and without history."""
    rows = []
    for name, memory in [("defaults", MemorySettings()),
                         ("system_memory", MemorySettings(system_memory=GYM_PROMPT)),
                         ("include_history=False", MemorySettings(include_history=False))]:
        svc, _, _ = _alice(LongTermSettings(recall_limit=2), memory)
        ctx = svc.get_context("alice")
        rows.append({"settings": name, "items": len(ctx.items), "tokens": ctx.tokens,
                     "first": ctx.items[0].kind,
                     "kinds": " ".join(i.kind for i in ctx.items)})
    return rows


__all__ = ["GYM_PROMPT", "QUESTION", "search_tool_demo", "service_demo", "settings_comparison"]
