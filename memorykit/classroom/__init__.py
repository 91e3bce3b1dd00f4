"""The classroom: everything that exists to teach or test the library, beside it.

The library (``memorykit`` without this package) is what an agent imports; it never imports
anything from here. The classroom may import the library:

* ``lessonNN`` (and ``lessonNN_<part>`` where a lesson has two explorers): the computation a
  lesson plots and its explorer; ``lessonNN_checks``: its exercise checkers. One lesson, one
  place: ``notebooks/NN_*.ipynb`` imports from these modules only.
* ``explorer``: the one explorer all lessons share (sliders declared as data, a live figure,
  the student's own implementation drawn beside the library's with ``yours=``, and
  ``show_code`` for the mechanism a lesson teaches); ``figure`` its plotly plumbing; ``memo``
  the one memoizer of lesson computations; ``verdict`` what every checker returns;
  ``tables`` printed tables; ``data`` the seeded conversation lessons 01-03 and 12 share.

Importing the package imports none of these (a course command or a grading process
loads only what it uses).
* ``catalog`` and ``learning_path``: the course map (README, docs/LEARNING_PATH.md).
* ``contracts``: the properties the tests and the build-it-yourself checkers both run;
  ``scenarios``: seeded conversations and workflows; ``replays``: the library run over them,
  measured; ``doubles``: a loopback OpenAI server, stores that fail on cue, recorded replies.
* ``course``: the nbgrader editions and grading (``python -m memorykit.classroom course``).
"""
