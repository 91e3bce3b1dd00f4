"""Lesson 10's explorer draws every architecture where it can be seen (issue 24: looking at the
screenshots, A's tokens per call, 11 tokens under C's, hid under C's wide line in every state,
and its 0% recall under B's)."""

from __future__ import annotations

from memorykit.classroom import lesson10 as aa


def test_a_is_drawn_on_top_and_the_legend_still_reads_a_to_d():
    ex = aa.ArchitecturesExplorer()
    for suffix in ("", ": tokens"):
        order = [t.name for t in ex.fig.data if t.name.endswith(suffix)
                 and t.name.removesuffix(suffix) in aa.NAMES.values()]
        assert order[-1] == aa.NAMES["A"] + suffix, order
        assert order.index(aa.NAMES["C"] + suffix) < order.index(aa.NAMES["D"] + suffix)
    a, b = ex.trace(aa.NAMES["A"]), ex.trace(aa.NAMES["B"])
    assert a.marker.size < b.marker.size  # B's markers show around A's where both are at 0%
    ranked = sorted((t for t in ex.fig.data if t.showlegend), key=lambda t: t.legendrank)
    assert [t.name for t in ranked] == list(aa.NAMES.values())
