"""Evaluation: how much of the evidence does a memory's context hold, at what cost?

Datasets (simulated conversations with planted facts, LoCoMo from a local
copy, your own OpenAI-format chat logs with questions), the evidence-recall
harness over any ``ContextPolicy``, baselines (last N messages, last B
tokens, BM25, full context), the scoring rules (``scoring``: over-budget
contexts and lost text earn nothing, answer containment, billed or content
tokens), parameter sweeps
(grid/random, progress bar, any ``concurrent.futures.Executor``) and the
Pareto front of recall against tokens; ``tune`` sweeps every policy at once
(``python -m memorykit tune`` on the command line).
Taught in ``notebooks/12_parameter_tuning.ipynb``.

Import each name from the module that defines it; the ones a user needs first are also
in the front door, ``import memorykit`` (``docs/API.md``).
"""
