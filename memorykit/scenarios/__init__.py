"""Seeded scenarios that exercise memories with labelled ground truth.

* ``cms``: a user editing a CMS (pages, entries, users, tasks) with references
  whose true antecedents are labelled, so reference resolution is measured.

Taught in ``notebooks/04_entity_memory.ipynb``.
"""

from memorykit.scenarios.cms import (
    CMSScenario,
    LabelledReference,
    Mention,
    ScenarioTurn,
    generate_cms_scenario,
    load_scenario,
)

__all__ = [
    "CMSScenario",
    "LabelledReference",
    "Mention",
    "ScenarioTurn",
    "generate_cms_scenario",
    "load_scenario",
]
