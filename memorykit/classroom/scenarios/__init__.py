"""Seeded scenarios that exercise memories with labelled ground truth.

* ``conversation``: simulated chats with planted facts (``simulate_conversation``, the files of
  ``data/conversations``), written from ``prose`` (word tables, the writer) and ``facts``
  (planted facts, their keys, ``fact_survival``).
* ``cms``: a user editing a CMS (pages, entries, users, tasks) with references
  whose true antecedents are labelled, so reference resolution is measured.
* ``workflow``: a month of agent work for the three-column working memory.

The generators of the committed cms and workflow files live beside them, in
``data/entities/generate.py`` and ``data/workflow/generate.py``; lessons load the files.

Taught in ``notebooks/04_entity_memory.ipynb``.
"""

from memorykit.classroom.scenarios.cms import (
    CMSScenario,
    LabelledReference,
    Mention,
    ScenarioTurn,
    load_scenario,
)

__all__ = [
    "CMSScenario",
    "LabelledReference",
    "Mention",
    "ScenarioTurn",
    "load_scenario",
]
