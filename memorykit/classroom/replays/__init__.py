"""Runs of the library over the seeded scenarios, measured: what the lessons plot and check."""
