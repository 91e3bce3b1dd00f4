"""``SupersedingRetrieval``: the hybrid's ranking, with a superseded hit giving way to the current
statement (``keep="latest"``) or kept marked before it (``keep="dated"``), within the budget; the
per-conversation fast path answers as the plain one does. A lexical embedder stands in for
MiniLM: the subject is the substitution, not the model."""

from __future__ import annotations

import itertools

import pytest

from memorykit.embeddings import LexicalHashingEmbedder
from memorykit.evaluation.baselines import BM25Retrieval
from memorykit.evaluation.dataset import EvalConversation, EvalQuestion
from memorykit.evaluation.hybrid import HybridRetrieval, HybridSettings, _HybridPrepared, make_hybrid
from memorykit.evaluation import superseding
from memorykit.evaluation.superseding import MARKER, SupersedingRetrieval, make_superseding
from memorykit.evaluation.toolkit import FIXED_POLICIES, TUNABLE
from memorykit.evaluation.tune import tune
from memorykit.facts import detect
from memorykit.facts.statement import Update
from memorykit.messages import MessageFactory

QUERY = "When is the design review with the client?"
FILLER = ["Any good podcasts lately?", "I enjoyed one about octopuses.",
          "The weather has been grim all week.", "Hopefully it clears up soon.",
          "Did you water the plants?", "Yes, both of them this morning."]


def history():
    """The old statement echoes the question's words; the update says less of them."""
    f = MessageFactory()
    turns = ["The design review with the client is on Tuesday at 3pm.", "Noted, Tuesday at 3pm.",
             *FILLER, "The review moved to Thursday.", "OK, Thursday.", *FILLER]
    return [f.user(t) if k % 2 == 0 else f.assistant(t) for k, t in enumerate(turns)]


def policy(keep: str = "latest") -> SupersedingRetrieval:
    return SupersedingRetrieval(HybridRetrieval(embedder=LexicalHashingEmbedder()), keep=keep)


def texts(context) -> list[str]:
    return [i.content for i in context.items]


def test_a_superseded_hit_gives_way_to_the_current_statement(monkeypatch):
    # a hashing embedder's cosines are not MiniLM's: the meaning floor (FAR) is tested apart
    monkeypatch.setattr(superseding, "FAR", -1.0)
    messages = history()
    old, new = messages[0], messages[8]
    plain = HybridRetrieval(embedder=LexicalHashingEmbedder()).build_context(messages, QUERY, 24)
    assert old.id in plain.covered_ids() and new.id not in plain.covered_ids(), \
        "the setting: the plain hybrid keeps only the old statement at this budget"
    context = policy().build_context(messages, QUERY, 24)
    assert new.id in context.covered_ids()
    assert old.id not in context.covered_ids() and messages[1].id not in context.covered_ids()
    assert context.tokens <= 24


def test_dated_keeps_the_old_statement_marked_before_the_current_one(monkeypatch):
    monkeypatch.setattr(superseding, "FAR", -1.0)  # as above: FAR is tested apart
    messages = history()
    context = policy("dated").build_context(messages, QUERY, 200)
    kinds = [(i.kind, i.sources) for i in context.items]
    marked = [k for k, i in enumerate(context.items) if i.kind == "superseded"]
    current = next(k for k, i in enumerate(context.items) if messages[8].id in i.sources)
    assert marked and all(k < current for k in marked), kinds
    first = context.items[marked[0]]
    assert first.content == MARKER + messages[0].content and first.sources == (messages[0].id,)
    assert context.tokens <= 200


@pytest.mark.parametrize("keep", ["latest", "dated"])
def test_the_budget_is_never_exceeded(keep):
    messages = history()
    p = policy(keep)
    for budget in range(5, 260, 7):
        context = p.build_context(messages, QUERY, budget)
        assert context.tokens <= budget or not context.items, (budget, context.tokens)


def test_a_question_before_the_update_sees_the_old_statement():
    messages = history()
    context = policy().build_context(messages[:8], QUERY, 40)
    assert messages[0].id in context.covered_ids()


@pytest.mark.parametrize("keep", ["latest", "dated"])
def test_prepare_answers_as_build_context_does(keep):
    messages = history()
    questions = tuple(EvalQuestion(f"q{k}", QUERY, "Thursday", (messages[0].id,), "updated",
                                   position=k) for k in (4, 8, 9, 12, len(messages)))
    conversation = EvalConversation("c", tuple(messages), questions)
    p = policy(keep)
    state = p.prepare(conversation)
    for q in questions:
        for budget in (30, 60, 400):
            assert state.build_context(q.position, QUERY, budget) == \
                p.build_context(messages[:q.position], QUERY, budget)


def test_a_detector_is_pluggable_and_checked(monkeypatch):
    monkeypatch.setattr(superseding, "FAR", -1.0)  # as above: FAR is tested apart
    messages = history()

    class Fixed:
        def find(self, ms):
            return [Update(ms[0].id, ms[8].id, "review", "update", "test")]

    context = SupersedingRetrieval(HybridRetrieval(embedder=LexicalHashingEmbedder()),
                                   keep="latest", detector=Fixed()).build_context(messages, QUERY, 40)
    assert messages[8].id in context.covered_ids() and messages[0].id not in context.covered_ids()

    class Broken:
        def find(self, ms):
            return [("a", "b")]

    with pytest.raises(TypeError, match="detector.find must return a list of Update"):
        SupersedingRetrieval(HybridRetrieval(embedder=LexicalHashingEmbedder()),
                             detector=Broken()).build_context(messages, QUERY, 40)


def test_bad_settings_are_refused_naming_the_value():
    lexical = HybridRetrieval(embedder=LexicalHashingEmbedder())
    with pytest.raises(ValueError, match="keep must be one of"):
        SupersedingRetrieval(lexical, keep="newest")
    with pytest.raises(TypeError, match="inner must be a HybridRetrieval"):
        SupersedingRetrieval(BM25Retrieval())  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="detector must have a find"):
        SupersedingRetrieval(lexical, detector=object())  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="budget"):
        policy().build_context(history(), QUERY, 0)
    with pytest.raises(TypeError, match="conversation must be an EvalConversation"):
        policy().prepare(history())  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="position"):
        policy().prepare(EvalConversation("c", tuple(history()), ())).build_context(99, QUERY, 40)


def test_tune_sweeps_it_over_the_hybrids_grid_reading_each_history_once(monkeypatch):
    # A tuned hybrid against a superseding retrieval at its defaults was no fair match (issue
    # 27, fifth round): tune sweeps both over one grid and compares them setting for setting.
    assert FIXED_POLICIES["superseding-retrieval"].name == "superseding-retrieval"
    hybrid, mine = TUNABLE["hybrid-retrieval"], TUNABLE["superseding-retrieval"]
    assert (mine.names, mine.values, mine.defaults) == (hybrid.names, hybrid.values, hybrid.defaults)
    assert make_superseding(0.75, 2).inner.settings == make_hybrid(0.75, 2).settings
    read = []  # the histories the rules read
    real = detect._links
    monkeypatch.setattr(detect, "_links", lambda ms, s: read.append(len(ms)) or real(ms, s))
    monkeypatch.setattr(superseding, "_SHARED", detect.RuleDetector())
    messages = history()
    question = EvalQuestion("q", QUERY, "Thursday", (messages[12].id,), "updated",
                            superseded_ids=(messages[0].id,))
    result = tune(EvalConversation("c", tuple(messages), (question,)), [60],
                  ["hybrid-retrieval", "superseding-retrieval"], holdout=0)
    rows = [r for r in result.to_json()["rows"] if r["policy"] == "superseding-retrieval"]
    assert sorted(tuple(r["params"].values()) for r in rows) == \
        sorted(itertools.product(*hybrid.values))
    assert all(r["changed_questions"] == 1 and {"stale_only", "both"} <= r.keys() for r in rows)
    assert read == [len(messages)]  # 15 settings, find and follow_ups: one reading


class Links:
    """A detector with fixed updates and follow-ups, by message index."""

    def __init__(self, updates=(), follow_ups=()):
        self.updates, self.more = updates, follow_ups

    def find(self, ms):
        return [Update(ms[a].id, ms[b].id, "k", "update", "test") for a, b in self.updates]

    def follow_ups(self, ms):
        return [Update(ms[a].id, ms[b].id, "k", "update", "follow-up") for a, b in self.more]


@pytest.mark.parametrize("links", [Links(follow_ups=[(0, 8)]), Links(follow_ups=[(0, 3), (2, 9)]),
                                   Links(updates=[(3, 5)], follow_ups=[(0, 8)])])
def test_nothing_the_hybrid_sends_is_displaced(links):
    # a follow-up only takes room left over, and so does the current statement of a hit ranked
    # below the first TOP (message 3, filler the question never ranks high); message 3 itself
    # may go with keep="latest", so it is left out of the comparison
    messages = history()
    plain = HybridRetrieval(embedder=LexicalHashingEmbedder())
    p = SupersedingRetrieval(HybridRetrieval(embedder=LexicalHashingEmbedder()), detector=links)
    for budget in range(10, 200, 6):
        sent = plain.build_context(messages, QUERY, budget).covered_ids() - {messages[3].id}
        context = p.build_context(messages, QUERY, budget)
        assert sent <= context.covered_ids() and context.tokens <= budget, budget


LOWER_HITS = ("The client sent the design files.", "The design files look good.",
              "The client wants a second design option.", "I will draft one for the client.")


def with_lower_hits(after: bool = False):
    """``history()``'s first ten turns (the update at 8) with lower hits about the design and
    the client: in place of the first four filler turns (2 to 5), or ``after`` it all (10 to
    13)."""
    turns = [m.content for m in history()[:10]]
    turns = [*turns, *LOWER_HITS] if after else [*turns[:2], *LOWER_HITS, *turns[6:]]
    f = MessageFactory()
    return [f.user(t) if k % 2 == 0 else f.assistant(t) for k, t in enumerate(turns)]


def test_the_current_statement_of_a_top_hit_ranks_as_that_hit(monkeypatch):
    monkeypatch.setattr(superseding, "FAR", -1.0)  # as above: FAR is tested apart
    # the hybrid fills the budget with the old statement (its top hit) and lower hits about the
    # design and the client; the current statement takes the room of the lowest ones
    messages = with_lower_hits()
    plain = HybridRetrieval(embedder=LexicalHashingEmbedder())
    for budget in (32, 44, 52):
        sent = plain.build_context(messages, QUERY, budget).covered_ids()
        assert messages[0].id in sent and messages[8].id not in sent, "the setting"
        context = policy("dated").build_context(messages, QUERY, budget)
        assert {messages[0].id, messages[8].id} <= context.covered_ids(), budget
        assert context.tokens <= budget


def test_a_lower_hit_that_changed_a_fact_is_never_displaced(monkeypatch):
    monkeypatch.setattr(superseding, "FAR", -1.0)  # as above: FAR is tested apart
    # as above, but one lower hit is itself the later end of a link (it changed some fact): the
    # current statement of the top hit takes the room of the others, never of that one
    messages = with_lower_hits()
    plain = HybridRetrieval(embedder=LexicalHashingEmbedder())
    displaced = 0
    for budget in range(24, 80, 2):
        sent = plain.build_context(messages, QUERY, budget).covered_ids()
        lower = [k for k in range(2, 6) if messages[k].id in sent]
        for k in lower:
            before = SupersedingRetrieval(plain, detector=Links(updates=[(0, 8)]))
            after = SupersedingRetrieval(plain, detector=Links(updates=[(0, 8)],
                                                               follow_ups=[(1, k)]))
            displaced += messages[k].id not in before.build_context(
                messages, QUERY, budget).covered_ids()
            context = after.build_context(messages, QUERY, budget)
            assert messages[k].id in context.covered_ids(), (budget, k)
            assert context.tokens <= budget
    assert displaced, "the setting: without its link some lower hit gives way"


def test_a_lower_hit_said_after_the_current_statement_is_never_displaced(monkeypatch):
    monkeypatch.setattr(superseding, "FAR", -1.0)  # as above: FAR is tested apart
    # the same lower hits, said after the update: each may be a newer word on the fact than the
    # one the rules linked, so the current statement takes only room left, never theirs
    messages, plain = with_lower_hits(after=True), HybridRetrieval(embedder=LexicalHashingEmbedder())
    missed = 0
    for budget in range(24, 80, 2):
        sent = plain.build_context(messages, QUERY, budget).covered_ids()
        assert messages[0].id in sent, "the setting: the old statement is the top hit"
        context = policy("dated").build_context(messages, QUERY, budget)
        assert sent <= context.covered_ids() and context.tokens <= budget, budget
        missed += messages[8].id not in context.covered_ids()
    assert missed, "the setting: at some budget there is no room left for the current one"


def test_a_follow_up_is_pulled_in_but_never_marked_nor_dropped():
    messages = history()
    for keep in ("latest", "dated"):
        p = SupersedingRetrieval(HybridRetrieval(embedder=LexicalHashingEmbedder()), keep=keep,
                                 detector=Links(follow_ups=[(0, 8)]))
        context = p.build_context(messages, QUERY, 200)
        assert {messages[0].id, messages[8].id} <= context.covered_ids()
        assert all(i.kind != "superseded" for i in context.items)
    small = SupersedingRetrieval(HybridRetrieval(embedder=LexicalHashingEmbedder()),
                                 detector=Links(follow_ups=[(0, 8)]))
    small = small.build_context(messages, QUERY, 24)
    assert messages[0].id in small.covered_ids(), "no room: the hit stays, the follow-up waits"


class Meanings:
    """Three-dimensional meanings: the question; grandpa's walking aid (the old statement, and
    the later change in other words when ``near``); everything else."""

    def __init__(self, near: bool) -> None:
        self.near = near

    def embed(self, texts):
        return [[1.0, 0.0, 0.0] if t.startswith("What does") else
                [0.6, 0.8, 0.0] if t.startswith("Grandpa") else
                [0.0, 1.0, 0.0] if "physio" in t and self.near else [0.0, 0.0, 1.0] for t in texts]


def test_a_change_in_other_words_comes_in_for_an_unlinked_top_hit():
    # no rule links the change to the old statement (no shared word), but some link makes it a
    # message that changed a fact, and it is the closest in meaning to the hit: it displaces the
    # lower hits, and the hit is not marked on its word
    f = MessageFactory()
    # the lower hits are said before the change (one said after it is never displaced)
    turns = ["Grandpa walks with a frame at home.", "Noted.", "Home by six.", "At home all day.",
             "Home sweet home.", "Walks are nice.", *FILLER[4:],
             "After the wobble the physio put him back on the frame full time."]
    messages = [f.user(t) if k % 2 == 0 else f.assistant(t) for k, t in enumerate(turns)]
    query, old, change = "What does grandpa walk with at home?", messages[0].id, messages[8].id

    def sent(near: bool, detector) -> set[str]:
        hybrid = HybridRetrieval(embedder=Meanings(near))
        p = SupersedingRetrieval(hybrid, detector=detector) if detector else hybrid
        context = p.build_context(messages, query, 40)
        assert context.tokens <= 40 and all(i.kind != "superseded" for i in context.items)
        return context.covered_ids()

    plain = sent(True, None)
    assert old in plain and change not in plain, "the setting: the hybrid misses the change"
    assert {old, change} <= sent(True, Links(follow_ups=[(4, 8)]))
    assert sent(True, Links()) == plain, "a message that changed nothing is not pulled"
    assert sent(False, Links(follow_ups=[(4, 8)])) == plain, "nor one far in meaning"


class Ranked:
    """Meanings that rank three short hits above the old statement, which the update is close
    to in meaning (``near``) or not."""

    HITS = ("At home, grandpa walks with us.", "Walks at home with grandpa are slow.",
            "Grandpa at home: walks daily.")

    def __init__(self, near: bool) -> None:
        self.near = near

    def embed(self, texts):
        return [[1.0, 0.0, 0.0] if t.startswith("What does") else
                [0.95, 0.0, 0.31] if t in self.HITS else
                [0.5, 0.87, 0.0] if t.startswith("Grandpa walks") else
                ([0.0, 1.0, 0.0] if self.near else [0.0, 0.0, 1.0]) if "physio" in t else
                [0.1, 0.0, 0.995] for t in texts]  # the rest: just above the change


def test_a_lower_hits_link_displaces_only_when_close_in_meaning():
    # the old statement is the hybrid's 4th hit: its later statement (a sure update or a
    # follow-up) takes the place of lower hits when the two are close in meaning, and only room
    # left otherwise; a follow-up never marks the hit
    f = MessageFactory()
    turns = ["Grandpa walks with a frame at home.", "Noted.", *Ranked.HITS,
             "Grandpa naps after lunch.", *FILLER, "The physio changed it: a cane for him from today."]
    messages = [f.user(t) if k % 2 == 0 else f.assistant(t) for k, t in enumerate(turns)]
    query, old, change = "What does grandpa walk with at home?", messages[0].id, messages[-1].id

    def sent(near: bool, detector, budget: int) -> set[str]:
        hybrid = HybridRetrieval(HybridSettings(lexical_weight=0.0, diversity=0.0),
                                 embedder=Ranked(near))
        p = SupersedingRetrieval(hybrid, detector=detector) if detector else hybrid
        context = p.build_context(messages, query, budget)
        assert context.tokens <= budget
        if detector and detector.more:
            assert all(i.kind != "superseded" for i in context.items)
        return context.covered_ids()

    for budget in (75, 90, 110):
        plain = sent(True, None, budget)
        assert old in plain and change not in plain, "the setting: the hybrid misses the change"
        assert {old, change} <= sent(True, Links(updates=[(0, 12)]), budget), budget
        assert sent(False, Links(updates=[(0, 12)]), budget) == plain, "far in meaning: room left"
        assert {old, change} <= sent(True, Links(follow_ups=[(0, 12)]), budget), budget
        assert sent(False, Links(follow_ups=[(0, 12)]), budget) == plain
    ranked = HybridRetrieval(HybridSettings(lexical_weight=0.0, diversity=0.0),
                             embedder=Ranked(True))
    hits = list(ranked._ranked(_HybridPrepared(messages, ranked), len(messages), query).hits())
    assert hits.index(0) >= 3, "the setting: the old statement is a lower hit"


def test_a_top_hits_sure_update_far_in_meaning_displaces_nothing():
    # the rules link the old statement (the top hit) to a later message the meaning says is
    # about something else (cosine below FAR): that message takes only room left, and the hit
    # is not marked superseded on its word
    f = MessageFactory()
    turns = ["Grandpa walks with a frame at home.", "Noted.", *Ranked.HITS,
             "Grandpa naps after lunch.", *FILLER, "The physio changed it: a cane for him from today."]
    messages = [f.user(t) if k % 2 == 0 else f.assistant(t) for k, t in enumerate(turns)]
    query, change = "What does grandpa walk with at home?", messages[-1].id

    class Top(Ranked):
        HITS = ()  # the old statement is the top hit now

    for near, expected in ((True, True), (False, False)):
        hybrid = HybridRetrieval(HybridSettings(lexical_weight=0.0, diversity=0.0),
                                 embedder=Top(near))
        p = SupersedingRetrieval(hybrid, detector=Links(updates=[(0, 12)]))
        for budget in (75, 90):
            assert (change in p.build_context(messages, query, budget).covered_ids()) is expected
        # room for everything: both are sent, and the hit is marked only when the meaning agrees
        context = p.build_context(messages, query, 400)
        assert change in context.covered_ids()
        assert any(i.kind == "superseded" for i in context.items) is expected, near
