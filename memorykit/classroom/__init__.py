"""Lesson apps: the code behind the notebooks, so no notebook defines library logic.

Each lesson has one module holding the pure computation it plots (plain
functions returning small dataclasses, unit-tested and benchmarked) and an
explorer class that wires ipywidgets sliders to a plotly ``FigureWidget``:

* ``catalog``: every notebook with its title and one-line description; renders
  the map shown in ``notebooks/00_index.ipynb`` and checks it against the files.
* ``tour``: the static figures of the index notebook (token explosion).
* ``tokens_app``: ``notebooks/01_tokens_and_budgets.ipynb``.
* ``pruning_app``: ``notebooks/02_pruning_strategies.ipynb``.
* ``summary_app``: ``notebooks/03_summary_buffer.ipynb``.
* ``entities_app``: ``notebooks/04_entity_memory.ipynb``.
* ``tasks_app``: ``notebooks/05_task_slots.ipynb``.
* ``notes_app``: ``notebooks/06_notes_ttl.ipynb``.
* ``salience_app``: ``notebooks/07_objects_salience.ipynb``.
* ``columns_app``: ``notebooks/08_three_columns.ipynb``.
* ``recall_app``: ``notebooks/09_long_term_memory.ipynb``.
* ``architectures_app``: ``notebooks/10_architectures.ipynb``.
* ``llm_app``: ``notebooks/11_llm_in_the_loop.ipynb``.
* ``tuning_app``: ``notebooks/12_parameter_tuning.ipynb``.
* ``data``: the seeded conversation shared by lessons 01-03.
* ``checks``: the exercise checkers; each returns a ``Verdict`` saying whether
  an answer is right and, if not, why not.

An explorer's ``update(**params)`` recomputes and writes into the existing
traces inside ``fig.batch_update()`` (no redraw, no flicker); ``summary()``
returns rounded numbers and ``print_summary()`` prints them, so notebooks can
let nbval compare text instead of plot JSON.
"""

from memorykit.classroom.data import default_conversation

__all__ = ["default_conversation"]
