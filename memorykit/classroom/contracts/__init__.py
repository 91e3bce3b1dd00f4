"""The library's contracts, runnable against any implementation: the library's or a student's.

A contract is a property every implementation of a concept must keep (a buffer never loses a
message it did not evict; a score stays in [0, 1]; ...), written once here. The test suite runs
each contract over every library implementation (``tests/test_*_contract.py``); the lessons'
build-it-yourself exercises run the same contracts over the student's code through
``run_contracts``, which turns the first failure of each contract into a message the student
can act on.

One module per part of the course (``buffers``, ..., ``facts`` for lesson 13's update policies);
nothing is re-exported here, so each part can grow on its own.
"""

from memorykit.classroom.contracts.runner import Contract, run_contracts

__all__ = ["Contract", "run_contracts"]
