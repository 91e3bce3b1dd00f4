"""Exercise checkers: is the student's answer right, and if not, why not.

Every checker is deterministic (it replays the default scenario, never a live
model) and returns a ``Verdict``, which a notebook displays as the cell's result
(``show=True`` prints it as well, for scripts). A verdict names the numbers that
decided it, so a wrong answer tells the student what to change.

One module per part of the course (``buffers``, ``entities``, ``tasks``,
``columns``, ``recall``, ``llm``, ``tuning``); everything is re-exported here, so notebooks import
from ``memorykit.classroom.checks``.

* ``check_billed_tokens``, ``check_budget``: ``notebooks/01_tokens_and_budgets.ipynb``.
* ``check_victim_choice``, ``check_pruning_choice``: ``notebooks/02_pruning_strategies.ipynb``.
* ``check_summary_settings``, ``check_attention_window``, ``check_context_boost``,
  ``check_summarizer``:
  ``notebooks/03_summary_buffer.ipynb``.
* ``check_relevance_score``, ``check_entity_capacity``, ``check_entity_ttl``:
  ``notebooks/04_entity_memory.ipynb``.
* ``check_admission_rule``, ``check_preemption_ratio``: ``notebooks/05_task_slots.ipynb``.
* ``check_escalation``, ``check_min_shared_entities``, ``check_escalated_priority``:
  ``notebooks/06_notes_ttl.ipynb``.
* ``check_salience_weights``, ``check_object_salience``: ``notebooks/07_objects_salience.ipynb``.
* ``check_column_limits``, ``check_three_columns``: ``notebooks/08_three_columns.ipynb``.
* ``check_episodic_tau``, ``check_semantic_threshold``, ``check_episodic_score``:
  ``notebooks/09_long_term_memory.ipynb``.
* ``check_window_size``, ``check_semantic_best``, ``check_recall_rule``:
  ``notebooks/10_architectures.ipynb``.
* ``check_recall_limit``, ``check_loop_settings``, ``check_reply_judge``:
  ``notebooks/11_llm_in_the_loop.ipynb``.
* ``check_beats_bm25``, ``check_retrieval_policy``: ``notebooks/12_parameter_tuning.ipynb``.
"""

from memorykit.classroom.checks.verdict import Verdict
from memorykit.classroom.checks.buffers import (
    check_billed_tokens,
    check_victim_choice,
    check_summarizer,
    BUDGET_EXERCISE,
    budget_bounds,
    check_budget,
    PRUNING_EXERCISE,
    check_pruning_choice,
    SUMMARY_EXERCISE,
    check_summary_settings,
    ATTENTION_EXERCISE,
    check_attention_window,
    CONTEXT_EXERCISE,
    check_context_boost,
)
from memorykit.classroom.checks.columns import (
    ESCALATION_EXERCISE,
    check_escalation,
    SURFACING_EXERCISE,
    check_min_shared_entities,
    SALIENCE_EXERCISE,
    check_salience_weights,
    COLUMNS_EXERCISE,
    check_column_limits,
    check_escalated_priority,
    check_object_salience,
    check_three_columns,
)
from memorykit.classroom.checks.entities import (
    ENTITY_TTL_TARGET,
    entity_capacity_answer,
    entity_ttl_answer,
    check_entity_capacity,
    check_entity_ttl,
)
# Lessons 04 and 05 (issue 16): build-it-yourself checkers; lesson 05's moved to checks/tasks.py.
from memorykit.classroom.checks.entities import check_relevance_score
from memorykit.classroom.checks.tasks import (
    PREEMPTION_EXERCISE,
    check_admission_rule,
    check_preemption_ratio,
)
from memorykit.classroom.checks.recall import (
    TAU_EXERCISE,
    tau_recall_ok,
    check_episodic_tau,
    semantic_threshold_answer,
    check_semantic_threshold,
    check_episodic_score,
    WINDOW_EXERCISE_DISTRACTORS,
    check_window_size,
    SEMANTIC_EXERCISE,
    semantic_best,
    check_semantic_best,
    check_recall_rule,
)
from memorykit.classroom.checks.llm import (
    LOOP_TOKEN_TARGET,
    check_recall_limit,
    check_loop_settings,
    check_reply_judge,
    recorded_replies,
)
from memorykit.classroom.checks.tuning import (
    check_beats_bm25,
    check_retrieval_policy,
    retrieval_threshold,
)

__all__ = [
    "ATTENTION_EXERCISE",
    "CONTEXT_EXERCISE",
    "BUDGET_EXERCISE",
    "COLUMNS_EXERCISE",
    "ENTITY_TTL_TARGET",
    "ESCALATION_EXERCISE",
    "LOOP_TOKEN_TARGET",
    "PREEMPTION_EXERCISE",
    "PRUNING_EXERCISE",
    "SALIENCE_EXERCISE",
    "SEMANTIC_EXERCISE",
    "SUMMARY_EXERCISE",
    "SURFACING_EXERCISE",
    "TAU_EXERCISE",
    "Verdict",
    "WINDOW_EXERCISE_DISTRACTORS",
    "budget_bounds",
    "check_attention_window",
    "check_context_boost",
    "check_beats_bm25",
    "check_billed_tokens",
    "check_victim_choice",
    "check_summarizer",
    "check_budget",
    "check_column_limits",
    "check_admission_rule",
    "check_entity_capacity",
    "check_entity_ttl",
    "check_episodic_score",
    "check_episodic_tau",
    "check_escalated_priority",
    "check_escalation",
    "check_loop_settings",
    "check_min_shared_entities",
    "check_object_salience",
    "check_preemption_ratio",
    "check_pruning_choice",
    "check_recall_rule",
    "check_recall_limit",
    "check_relevance_score",
    "check_reply_judge",
    "recorded_replies",
    "check_retrieval_policy",
    "retrieval_threshold",
    "check_salience_weights",
    "check_semantic_best",
    "check_semantic_threshold",
    "check_summary_settings",
    "check_three_columns",
    "check_window_size",
    "entity_capacity_answer",
    "entity_ttl_answer",
    "semantic_best",
    "semantic_threshold_answer",
    "tau_recall_ok",
]
