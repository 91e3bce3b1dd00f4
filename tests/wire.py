"""The ``openai`` package's own request type for one chat message, as a check.

The contract suites check every memory's output with it next to ``validate_wire``: the
package's types say what each message may hold, ``validate_wire`` the order between them.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pydantic
from openai.types.chat import ChatCompletionMessageParam

_CHAT_MESSAGE: pydantic.TypeAdapter = pydantic.TypeAdapter(ChatCompletionMessageParam)


def check_openai_types(messages: list[dict[str, Any]]) -> None:
    """Each message validated as ``openai.types.chat.ChatCompletionMessageParam``.

    pydantic checks an ``Iterable[...]`` field (an assistant message's ``tool_calls``, a
    content given as parts) only as it is consumed, so those are consumed here: without that
    ``{"tool_calls": [{"id": "c1"}]}`` would pass.
    """
    for message in messages:
        validated = _CHAT_MESSAGE.validate_python(message)
        for value in validated.values():
            if isinstance(value, Iterator):
                list(value)
