"""D4's on-demand recall: long-term memory search offered to the agent as a tool.

Auto-recall searches long-term memory before every request with the last user
message. The seed's other way is on demand: the agent keeps a ``search`` tool and
calls ``search(query="user's favorite color", type="memory")`` when it decides it
needs to remember, with a query of its own. Here that tool is

* ``memory_search_tool()``: the entry of the chat API's ``tools`` list, a function
  with a JSON-schema ``parameters`` object (``query``, and ``type`` whose one value is
  ``"memory"``);
* ``answer_memory_search(service, session_id, call, factory)``: runs the service's
  recall for the session with the model's query and returns the ``tool`` message
  answering the call, JSON the model reads (each hit's text, role, cosine and
  message ids).

Decisions the seed leaves open, made here: a call the model got wrong (no query,
a ``type`` other than ``"memory"``, unknown arguments) and a recall that fails
(store or embedder down) are *answered* with ``{"error": ...}`` rather than raised:
the chat API refuses a request whose call has no result, and the model can read
the error and try again. A call to another function is the caller's routing
mistake and raises. The caller adds the call and its answer to the session like any
other message (``service.add``), so they reach long-term memory too.

Taught in ``notebooks/09_long_term_memory.ipynb``.
"""

from __future__ import annotations

import json
from typing import Any

from memorykit._validate import require_int, require_str
from memorykit.longterm.service import MemoryService
from memorykit.messages import Message, MessageFactory, ToolCall
from memorykit.trace import error_label

MEMORY_SEARCH_TOOL = "search"
"""The function's name, as D4 names the agent's search tool."""
SEARCH_TYPES = ("memory",)
"""What the tool can search: long-term memory only (the seed's tool takes ``type``)."""
_DESCRIPTION = ("Search your long-term memory of this conversation for messages relevant to "
                "a query. Use it when the user refers to something said earlier that is no "
                "longer in view.")


def memory_search_tool(description: str = _DESCRIPTION) -> dict[str, Any]:
    """The ``tools=[...]`` entry that offers memory search to the model (a new dict each call).

    ``parameters`` is a JSON schema: ``query`` (required text the model chooses) and
    ``type`` (``"memory"``, the seed's call shape). ``description`` is what the model
    reads to decide when to call it.
    """
    require_str("description", description, non_empty=True)
    return {
        "type": "function",
        "function": {
            "name": MEMORY_SEARCH_TOOL,
            "description": description,
            "parameters": {
                "type": "object",
                "properties": {
                    "query": {"type": "string",
                              "description": "What to look for, in your own words."},
                    "type": {"type": "string", "enum": list(SEARCH_TYPES),
                             "description": "What to search: 'memory' (long-term memory)."},
                },
                "required": ["query", "type"],
                "additionalProperties": False,
            },
        },
    }


def _problem(arguments: dict[str, Any]) -> str | None:
    """What is wrong with the model's arguments, in words it can act on (None: nothing)."""
    unknown = sorted(set(arguments) - {"query", "type"})
    if unknown:
        return f"unknown argument(s) {unknown}; the arguments are 'query' and 'type'"
    query = arguments.get("query")
    if not isinstance(query, str) or not query.strip():
        return f"'query' must be non-empty text, got {query!r}"
    kind = arguments.get("type", "memory")
    if kind not in SEARCH_TYPES:
        return f"'type' must be one of {list(SEARCH_TYPES)}, got {kind!r}"
    return None


def answer_memory_search(
    service: MemoryService,
    session_id: str,
    call: ToolCall,
    factory: MessageFactory,
    *,
    limit: int | None = None,
) -> Message:
    """The ``tool`` message answering ``call``: the session's long-term recall for its query.

    ``limit`` caps the hits (None: the service's ``recall_limit``). The content is JSON:
    ``{"type", "query", "results": [{"text", "role", "score", "message_ids"}]}``, or
    ``{"type", "query", "error", "results": []}`` when the arguments are wrong or recall
    fails (see the module's docstring for why that is an answer, not an exception).
    """
    if not isinstance(service, MemoryService):
        raise TypeError(f"service must be a MemoryService, got {service!r}")
    require_str("session_id", session_id, non_empty=True)
    if type(call) is not ToolCall:
        raise TypeError(f"call must be a ToolCall, got {call!r}")
    if call.name != MEMORY_SEARCH_TOOL:
        raise ValueError(f"call {call.id!r} is to {call.name!r}, not {MEMORY_SEARCH_TOOL!r}: "
                         "route it to its own handler")
    if not isinstance(factory, MessageFactory):
        raise TypeError(f"factory must be a MessageFactory, got {factory!r}")
    if limit is not None:
        require_int("limit", limit, minimum=1)
    arguments = json.loads(call.arguments)  # ToolCall guarantees a JSON object
    query = arguments.get("query")
    answer: dict[str, Any] = {"type": arguments.get("type", "memory"), "query": query}
    error = _problem(arguments)
    if error is None:
        try:
            hits = service.recall(session_id, query, limit)
        except Exception as exc:  # long-term memory is down: the model is told, not the caller
            error = f"long-term memory is unavailable ({error_label(exc)}); try again later"
        else:
            answer["results"] = [{"text": h.text, "role": h.role, "score": round(h.score, 3),
                                  "message_ids": list(h.sources)} for h in hits]
    if error is not None:
        answer.update(error=error, results=[])
    return factory.tool(json.dumps(answer, ensure_ascii=False), call_id=call.id)


__all__ = ["MEMORY_SEARCH_TOOL", "SEARCH_TYPES", "answer_memory_search", "memory_search_tool"]
