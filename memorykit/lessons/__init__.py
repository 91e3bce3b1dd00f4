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
* ``checks``: the exercise checkers; each returns a ``Verdict`` saying whether
  an answer is right and, if not, why not.

An explorer's ``update(**params)`` recomputes and writes into the existing
traces inside ``fig.batch_update()`` (no redraw, no flicker); ``summary()``
returns rounded numbers and ``print_summary()`` prints them, so notebooks can
let nbval compare text instead of plot JSON.
"""

from memorykit.lessons.data import default_conversation

__all__ = ["default_conversation"]
