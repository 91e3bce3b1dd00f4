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
"""

from memorykit.evaluation.baselines import (
    ANALYZERS,
    BM25Retrieval,
    FullContext,
    LastMessages,
    LastTokens,
    analyze,
    analyze_stemmed,
    baseline_policies,
    resolve_analyzer,
)
from memorykit.evaluation.chatlog import ChatLogError, load_chat_logs, parse_chat_logs
from memorykit.evaluation.dataset import (
    EvalConversation,
    EvalDataset,
    EvalQuestion,
    Session,
    as_dataset,
    dataset_statistics,
)
from memorykit.evaluation.harness import (
    EvalResult,
    HarnessSettings,
    PreparablePolicy,
    PreparedConversation,
    QuestionResult,
    coincidence_note,
    comparison_notes,
    coinciding_policies,
    compare_policies,
    evaluate,
    is_query_independent,
)
from memorykit.evaluation.locomo import (
    CATEGORIES,
    LOCOMO_SHA256,
    LOCOMO_URL,
    LocomoIntegrityError,
    LocomoReport,
    download_locomo,
    load_locomo,
    normalize_evidence,
    parse_locomo,
    parse_session_datetime,
)
from memorykit.evaluation.pareto import cheapest_reaching, pareto_front
from memorykit.evaluation.sweep import (
    LogUniform,
    RandInt,
    SweepResult,
    Uniform,
    grid,
    random_search,
    run_sweep,
)
from memorykit.evaluation.table import Table
from memorykit.evaluation.hybrid import HybridRetrieval, HybridSettings
from memorykit.evaluation.toolkit import AttentionPolicy, toolkit_policies
from memorykit.evaluation.tune import TuneResult, tune

__all__ = [
    "ANALYZERS",
    "AttentionPolicy",
    "BM25Retrieval",
    "CATEGORIES",
    "ChatLogError",
    "EvalConversation",
    "EvalDataset",
    "EvalQuestion",
    "EvalResult",
    "FullContext",
    "HarnessSettings",
    "HybridRetrieval",
    "HybridSettings",
    "LOCOMO_SHA256",
    "LOCOMO_URL",
    "LastMessages",
    "LastTokens",
    "LocomoIntegrityError",
    "LocomoReport",
    "LogUniform",
    "PreparablePolicy",
    "PreparedConversation",
    "QuestionResult",
    "RandInt",
    "Session",
    "SweepResult",
    "TuneResult",
    "Table",
    "Uniform",
    "analyze",
    "analyze_stemmed",
    "resolve_analyzer",
    "as_dataset",
    "dataset_statistics",
    "baseline_policies",
    "cheapest_reaching",
    "coincidence_note",
    "comparison_notes",
    "coinciding_policies",
    "compare_policies",
    "download_locomo",
    "evaluate",
    "grid",
    "is_query_independent",
    "load_chat_logs",
    "load_locomo",
    "normalize_evidence",
    "pareto_front",
    "parse_chat_logs",
    "parse_locomo",
    "parse_session_datetime",
    "random_search",
    "run_sweep",
    "toolkit_policies",
    "tune",
]
