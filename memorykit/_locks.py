"""Saving objects that hold locks: a lock cannot be pickled, and a restored copy needs its own.

Not taught by a notebook: plumbing for the thread-safe classes (the memory service, the vector
stores, ``MemoEmbedder``) and ``memorykit.state``, which saves what pickle would.
"""

from __future__ import annotations

import threading
from typing import Any

LOCK_TYPES = (type(threading.Lock()), type(threading.RLock()))


def without_locks(state: dict[str, Any]) -> dict[str, Any]:
    """An object's ``__dict__`` as it is saved: every attribute but its locks."""
    return {k: v for k, v in state.items() if not isinstance(v, LOCK_TYPES)}
