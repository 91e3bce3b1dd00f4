"""Shared pytest setup for memorykit's suite.

- The repository root is importable (``bench``, ``data`` helpers) even without an install;
  ``memorykit`` itself comes from the editable install that ``./run test`` makes.
- Hypothesis runs without per-example deadlines: CI machines are slow and noisy, and a
  deadline failure there says nothing about correctness. Examples stay random locally; under
  ``CI=true`` they are derandomized so a CI run is reproducible.
- Nothing here touches the network: tiktoken encodings ship inside the package.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

try:
    from hypothesis import HealthCheck, settings
except ImportError:  # hypothesis is a dev dependency; unit tests still run without it
    pass
else:
    settings.register_profile("memorykit", deadline=None,
                              suppress_health_check=[HealthCheck.too_slow])
    settings.register_profile("memorykit-ci", parent=settings.get_profile("memorykit"),
                              derandomize=True)
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE")
                          or ("memorykit-ci" if os.environ.get("CI", "").lower() == "true"
                              else "memorykit"))
