"""``python -m memorykit``: the command line (``memorykit.cli``)."""

from memorykit.cli import main

if __name__ == "__main__":  # importing the package's modules (docs, API sweeps) runs nothing
    raise SystemExit(main())
