"""memorykit: a Jupyter-first toolkit for how LLM agents remember.

Start with ``notebooks/00_index.ipynb``. The package is organised by concept:
``tokens`` (exact accounting), ``messages`` (the record), ``clock``, ``trace``
(explained decisions), ``buffers`` (short-term memory policies), ``summary``,
``embeddings`` and ``simulate`` (seeded conversations). Docstrings cite their sources as
D0-D4, the design documents described in ``docs/BIBLIOGRAPHY.md``.
"""

__version__ = "0.1.0"
