"""Facts that change: statements, the updates that replace them, and what a memory keeps.

Real conversations change their facts: a deadline moves, an address changes, an order is
cancelled, a user corrects a number. This package holds the LLM-free pieces every memory needs
to notice it: ``statement`` (what a statement and an update are), ``detect`` (finding "the same
fact again" in a history), ``timeline`` (validity intervals and the update policies that decide
what stays current) and ``audit`` (what a long-term store holds that it should not).

Taught in ``notebooks/13_changing_facts.ipynb``.
"""
