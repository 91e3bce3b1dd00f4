"""Benchmarks for memorykit; figures and commands are recorded in ``BENCHMARKS.md``.

* ``python -m bench``: conversation buffers (``bench.buffers``) against the
  tokenizer floor, the seeds' list implementation and the peers (LangChain,
  LlamaIndex); ``--quick`` for a smoke run, ``--markdown`` for the table.
  The workload comes from ``bench.textgen``.
* ``python -m bench.entities``: entity working memory.
* ``python -m bench.workspace``: the three-column working memory.
* ``python -m bench.simulate``: the conversation simulator and ``data/generate.py``.
"""
