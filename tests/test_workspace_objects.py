"""Objects: the graph's 2-hop query, the extractor, and salience at hand-computed points."""

from __future__ import annotations

import numpy as np
import pytest

from memorykit.clock import StepClock
from memorykit.workspace import (
    FixedExtractor,
    KnowledgeGraph,
    SalienceWeights,
    Task,
    VocabularyExtractor,
    WorkingMemory,
    belief,
    entity,
    knowledge,
    person,
    salience_inputs,
    salience_matrix,
    temporal,
)


def small_graph():
    g = KnowledgeGraph([
        person("priya", "Priya Nair", 0.8, beliefs=("requires a PO number on every invoice",)),
        entity("acme", "Acme Supplies", "office supplies vendor", aliases=("Acme",)),
        belief("gl5100", "Acme Supplies invoices use GL code 5100", 0.9),
        entity("cheyenne", "Cheyenne", "project"),
        knowledge("capex", "Capex policy", "Spend over $10K needs controller approval"),
        entity("far", "Laramie", "project"),
        temporal("monthend", "Month-end close", 1.5, active_from=100.0, active_until=200.0),
    ])
    g.link("priya", "acme", "contact_of")
    g.link("gl5100", "acme", "about")
    g.link("capex", "cheyenne", "governs")
    g.link("far", "capex", "governs")
    return g


def test_two_hop_neighbourhood():
    g = small_graph()
    assert g.neighbourhood(["cheyenne"], 2) == {"cheyenne": 0, "capex": 1, "far": 2}
    assert g.neighbourhood(["priya"], 1) == {"priya": 0, "acme": 1}
    assert g.neighbourhood(["priya", "INV-1042"], 2) == {"priya": 0, "acme": 1, "gl5100": 2}
    hops = g.hop_matrix()
    assert hops[0, 2] == 2 and np.isinf(hops[0, 3])


def test_graph_rejects_bad_input():
    g = small_graph()
    with pytest.raises(ValueError, match="already in the graph"):
        g.add(entity("acme", "Acme"))
    with pytest.raises(KeyError, match="'nobody'"):
        g.link("acme", "nobody")
    with pytest.raises(ValueError, match="relationship_value must be in"):
        person("x", "X", 1.5)
    with pytest.raises(ValueError, match="strength is for beliefs"):
        entity("x", "X").__class__("x", "entity", "X", strength=0.5)


def test_vocabulary_extractor_prefers_longest_names_and_finds_invoices():
    ex = VocabularyExtractor.from_graph(small_graph())
    assert ex.extract("Acme Supplies sent INV-1042 and INV-77 for Cheyenne") == {"acme", "INV-1042", "cheyenne"}
    assert ex.extract("Acme again") == {"acme"}
    assert ex.extract("cheyenne in lower case, Acmeish, the Wyoming site") == frozenset()
    with pytest.raises(TypeError, match="text must be a str"):
        ex.extract(None)


def test_salience_at_hand_computed_points():
    g = small_graph()
    inputs = salience_inputs(
        g,
        mentions=[{"priya"}],
        task_entities=[{"acme", "INV-1042"}],  # "Process INV-1042 from Acme Supplies"
        note_entities=[{"cheyenne"}],  # "Review the Cheyenne variance report"
        times=[0.0],
    )
    m = salience_matrix(inputs)
    got = dict(zip(m.ids, m.total[:, 0].round(6)))
    assert got == {
        "priya": pytest.approx(0.3 + 0.3 * 0.8),  # recent, relationship (1 hop from Acme: no link)
        "acme": pytest.approx(0.4),  # named by the task
        "gl5100": pytest.approx(0.3 * 0.9),  # belief strength (1 hop from Acme: no link)
        "cheyenne": pytest.approx(0.2),  # named by the note
        "capex": 0.0,  # 1 hop from Cheyenne: a candidate, not linked
        "far": 0.0,  # 2 hops from the note: a candidate, but no salience
        "monthend": 0.0,
    }
    parts = {k: v[:, 0] for k, v in m.components.items()}
    np.testing.assert_allclose(sum(parts.values()), m.total[:, 0])
    assert m.candidate[:, 0].tolist() == [True, True, True, True, True, True, False]
    assert [m.ids[i] for i in np.argsort(m.rank[:, 0]) if m.selected[i, 0]] == [
        "priya", "acme", "gl5100", "cheyenne"]
    # The graph-neighbour variant: one hop from what a task or note names counts as linked.
    near = salience_matrix(inputs, SalienceWeights(link_hops=1))
    assert dict(zip(near.ids, near.total[:, 0].round(6))) == {
        "priya": pytest.approx(0.3 + 0.4 + 0.3 * 0.8),  # + 1 hop from Acme
        "acme": pytest.approx(0.4),
        "gl5100": pytest.approx(0.4 + 0.3 * 0.9),  # + 1 hop from Acme
        "cheyenne": pytest.approx(0.2),
        "capex": pytest.approx(0.2),  # + 1 hop from Cheyenne
        "far": 0.0,
        "monthend": 0.0,
    }


def test_recency_window_is_the_last_five_turns():
    g = small_graph()
    empty = [set()] * 6
    inputs = salience_inputs(g, [{"cheyenne"}] + [set()] * 5, empty, empty, [0.0] * 6)
    m = salience_matrix(inputs)
    i = m.ids.index("cheyenne")
    assert m.components["recent_mention"][i].tolist() == [0.3] * 5 + [0.0]
    m3 = salience_matrix(inputs, SalienceWeights(recency_turns=3))
    assert m3.components["recent_mention"][i].tolist() == [0.3] * 3 + [0.0] * 3


def test_weights_and_link_hops_are_parameters():
    g = small_graph()
    inputs = salience_inputs(g, [set()], [{"acme"}], [set()], [0.0])
    w = SalienceWeights(active_task_link=1.0, link_hops=0, relationship=0.0, belief_strength=0.0)
    m = salience_matrix(inputs, w)
    got = dict(zip(m.ids, m.total[:, 0]))
    assert got["acme"] == 1.0 and got["priya"] == 0.0 and got["gl5100"] == 0.0


def test_current_temporal_context_is_always_shown_and_max_objects_holds():
    g = small_graph()
    inputs = salience_inputs(g, [set(), set()], [{"acme"}] * 2, [set()] * 2, [50.0, 150.0])
    m = salience_matrix(inputs, SalienceWeights(max_objects=2))
    i = m.ids.index("monthend")
    assert m.selected[i].tolist() == [False, True]
    assert m.selected.sum(axis=0).tolist() == [2, 2]
    assert m.rank[i, 1] == 0


def test_working_memory_objects_agree_with_the_matrix():
    g = small_graph()
    clock = StepClock(150.0)
    wm = WorkingMemory(g, clock=clock, extractor=VocabularyExtractor.from_graph(g))
    wm.add_task(Task("T1", "Process INV-1042 from Acme Supplies", 0.8))
    wm.add_note("Review the Cheyenne variance report", 0.6)
    wm.observe("Priya Nair called")
    shown = [(o.id, round(s, 6)) for o, s in wm.objects()]
    assert shown == [("monthend", 0.0), ("priya", 0.54), ("acme", 0.4), ("gl5100", 0.27),
                     ("cheyenne", 0.2)]
    assert wm.urgency_multiplier() == 1.5


def test_pluggable_extractor():
    g = small_graph()
    wm = WorkingMemory(g, clock=StepClock(), extractor=FixedExtractor({"hello": ["far"]}))
    assert wm.observe("hello").entities == {"far"}


def _belief_one_hop_from_a_task():
    """Seed 002's belief (strength 0.88) about a vendor an active task names, in a note's
    context, last mentioned 9 turns before the turn scored."""
    g = KnowledgeGraph([
        entity("acme", "Acme Supplies"),
        belief("gl", "Acme Supplies invoices use GL 5100", 0.88),
    ])
    g.link("gl", "acme", "about")
    return salience_inputs(g, [set()], [{"acme"}], [{"gl"}], [0.0], initial_last_mention={"gl": 1},
                           first_turn=10)


def test_salience_counts_only_direct_links_by_default_as_seed_002():
    inputs = _belief_one_hop_from_a_task()
    assert inputs.turns_since_mention[inputs.ids.index("gl"), 0] == 9
    m = salience_matrix(inputs)
    i = m.ids.index("gl")
    # 0 (mentioned 9 turns ago, not in the last 5) + 0 (one hop from the task's entity)
    # + 0.2 (in the note) + 0.3 * 0.88 = 0.464.
    assert {c: round(float(v[i, 0]), 6) for c, v in m.components.items()} == {
        "recent_mention": 0.0, "active_task_link": 0.0, "note_link": 0.2, "relationship": 0.0,
        "belief_strength": 0.264}
    assert m.total[i, 0] == pytest.approx(0.464)


def test_graph_neighbour_variant_adds_the_task_link():
    m = salience_matrix(_belief_one_hop_from_a_task(), SalienceWeights(link_hops=1))
    assert m.total[m.ids.index("gl"), 0] == pytest.approx(0.864)  # + 0.4 for the one-hop task link


DAY = 86_400.0


def test_beliefs_updated_in_the_last_7_days_enter_the_objects_column():
    # seed 002: "recently updated beliefs (changed in last 7 days)"; a 0.88 belief linked to nothing
    # relevant scores 0.3 x 0.88 = 0.264 and is shown only while its change is at most 7 days old
    g = KnowledgeGraph([entity("acme", "Acme Supplies"), belief("gl", "Vendor X invoices use GL code 5100", 0.7)])
    clock = StepClock(0.0)
    wm = WorkingMemory(g, clock=clock)
    wm.add_task(Task("T1", "Process invoice from Acme Supplies", 0.9))
    assert [o.id for o, _ in wm.objects()] == ["acme"]  # not linked, never updated
    clock.advance(DAY)
    updated = wm.update_belief("gl", 0.88)
    assert updated.updated_at == DAY and g.get("gl").strength == 0.88 and g.neighbours("gl") == {}
    for days_later, shown in [(0, True), (6, True), (7, True), (7.01, False), (8, False)]:
        clock.set(DAY + days_later * DAY)
        scores = dict((o.id, s) for o, s in wm.objects())
        assert ("gl" in scores) is shown, days_later
        if shown:
            assert scores["gl"] == pytest.approx(0.264)
    # the window is a setting: 10 days keeps it at day 8
    wide = WorkingMemory(g, clock=clock, salience=SalienceWeights(recent_update_seconds=10 * DAY))
    assert "gl" in {o.id for o, _ in wide.objects()}
    with pytest.raises(ValueError, match="'acme' is of kind 'entity'"):
        wm.update_belief("acme", 0.5)
    with pytest.raises(ValueError, match="updated_at is for beliefs"):
        entity("x", "X").__class__("x", "entity", "X", updated_at=1.0)
    with pytest.raises(ValueError, match="recent_update_seconds must be >= 0, got -1"):
        SalienceWeights(recent_update_seconds=-1)


def test_relevant_patterns_are_the_active_tasks_patterns():
    from memorykit.workspace import pattern, relevant_patterns

    g = KnowledgeGraph([
        entity("globex", "Globex"),
        entity("q3", "Q3 budget"),
        pattern("credit", "credit notes after disputes"),   # 1 hop from Globex
        pattern("friday", "Friday invoice spike"),          # 2 hops from Globex
        pattern("close", "variance review after close"),    # named by the task itself
        pattern("q3p", "Q3 reforecast in week 2"),          # about Q3: no task names it
    ])
    g.link("credit", "globex")
    g.link("friday", "credit")
    g.link("q3p", "q3")
    wm = WorkingMemory(g, clock=StepClock(0.0))
    wm.add_task(Task("T1", "Reconcile Globex before the variance review after close", 0.9))
    # seed 002's get_relevant_patterns(active_tasks): named (0 hops) or next to what a task names
    assert [o.id for o in wm.relevant_patterns()] == ["credit", "close"]
    assert [o.id for o in wm.relevant_patterns(hops=0)] == ["close"]
    assert [o.id for o in wm.relevant_patterns(hops=2)] == ["credit", "friday", "close"]
    inputs = salience_inputs(g, [()], [wm.task_entities()], [frozenset()], [0.0])
    assert relevant_patterns(inputs, 1)[:, 0].tolist() == [False, False, True, False, True, False]
    # by default (pattern_hops=1, seed 002's example) "credit", one hop from the task's Globex, is
    # pinned beside the ranking although its salience is 0 (not named, not mentioned, not a person
    # or belief: 0.3 x 0 + 0.4 x 0 + 0.2 x 0 = 0, by hand); "friday", two hops away, is not
    shown = [(o.id, s) for o, s in wm.objects()]
    assert [oid for oid, _ in shown[:2]] == ["credit", "close"] and dict(shown)["credit"] == 0.0
    assert "friday" not in dict(shown)
    # the named option pattern_hops=None ranks patterns by salience: "credit" scores 0 and is not shown
    ranked = WorkingMemory(g, clock=StepClock(0.0), salience=SalienceWeights(pattern_hops=None))
    ranked.add_task(Task("T1", "Reconcile Globex before the variance review after close", 0.9))
    assert {o.id for o, _ in ranked.objects()} == {"globex", "close"}
    with pytest.raises(ValueError, match="hops must be >= 0, got -1"):
        wm.relevant_patterns(hops=-1)
    with pytest.raises(ValueError, match="pattern_hops must be >= 0, got -1"):
        SalienceWeights(pattern_hops=-1)


def test_a_revised_belief_statement_counts_as_recently_updated():
    # issue 27: a belief whose statement a later one supersedes is one of D2's recently updated beliefs
    g = KnowledgeGraph([entity("acme", "Acme Supplies"), belief("gl", "Vendor X invoices use GL code 5100", 0.7)])
    clock = StepClock(0.0)
    wm = WorkingMemory(g, clock=clock)
    wm.add_task(Task("T1", "Process invoice from Acme Supplies", 0.9))
    clock.advance(DAY)
    removed = wm.revise_belief("gl", "Vendor X invoices use GL code 5200")
    assert [v.statement.value for v in removed] == ["Vendor X invoices use GL code 5100"]
    assert removed[0].valid_until == DAY and g.get("gl").name == "Vendor X invoices use GL code 5200"
    assert g.get("gl").updated_at == DAY and g.get("gl").strength == 0.7
    assert "gl" in {o.id for o, _ in wm.objects()} and wm.beliefs.recently_updated(clock.now()) == ["gl"]
    clock.set(8 * DAY + 1)
    assert "gl" not in {o.id for o, _ in wm.objects()} and wm.beliefs.recently_updated(clock.now()) == []
    # keep-strongest: a weaker later statement is not taken, and the belief is not "updated"
    g2 = KnowledgeGraph([belief("gl", "GL code 5100", 0.9)])
    firm = WorkingMemory(g2, clock=StepClock(0.0), belief_policy="keep-strongest")
    [weak] = firm.revise_belief("gl", "GL code 5300, maybe", strength=0.2)
    assert weak.statement.value == "GL code 5300, maybe" and g2.get("gl").name == "GL code 5100"
    assert g2.get("gl").updated_at is None and firm.beliefs.recently_updated(0.0) == []
    with pytest.raises(ValueError, match="strength"):
        firm.revise_belief("gl", "GL code 5400", strength=0.0)
    assert len(firm.beliefs.versions("gl")) == 1
    with pytest.raises(ValueError, match="'acme' is of kind 'entity'"):
        wm.revise_belief("acme", "x")
