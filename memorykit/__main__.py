"""``python -m memorykit``: the command line (``memorykit.cli``)."""

from memorykit.cli import main

raise SystemExit(main())
