"""EntityContextPolicy: entity memory behind the common context interface."""

import pytest

from memorykit.context import ContextPolicy
from memorykit.entities import (
    Entity,
    EntityContextPolicy,
    IdMentionExtractor,
    RelevanceMemory,
    SlidingWindowMemory,
)
from memorykit.messages import Message, MessageFactory
from memorykit.classroom.scenarios import load_scenario
from pathlib import Path

DATA = Path(__file__).resolve().parent.parent / "data" / "entities"


def history():
    f = MessageFactory()
    return [
        f.user("Show me page 42"),
        f.assistant("Here is page 42: Pricing. It was written by @dana."),
        f.user("Open entry 7 as well"),
        f.assistant("Entry 7: Spring launch."),
        f.user("Update that page's title to Plans"),
        f.assistant("Done."),
    ]


def test_policy_sends_the_entity_prompt_and_recent_messages():
    h = history()
    policy = EntityContextPolicy()
    assert isinstance(policy, ContextPolicy)
    ctx = policy.build_context(h, "and publish it", 400)
    system = ctx.items[0]
    assert system.role == "system" and system.kind == "entity"
    assert 'page "" (ID: 42)' in system.content and "(ID: dana)" in system.content
    # page:42 was mentioned in messages 0 and 1 and referred to ("that page") in message 4.
    assert set(system.sources) == {h[0].id, h[1].id, h[2].id, h[3].id, h[4].id}
    assert any("page:42 cited from " + ", ".join([h[0].id, h[1].id, h[4].id]) == n for n in ctx.notes)
    assert [i.sources[0] for i in ctx.items[1:]] == [m.id for m in h]  # everything fits
    assert ctx.tokens <= 400 and not ctx.over_budget


def test_budget_holds_and_the_newest_messages_win():
    h = history()
    policy = EntityContextPolicy()
    full = policy.build_context(h, "q", 10_000)
    for budget in range(1, full.tokens + 5):
        ctx = policy.build_context(h, "q", budget)
        assert ctx.tokens <= budget or not ctx.items
        ids = [i.sources[0] for i in ctx.items if i.kind != "entity"]
        assert ids == [m.id for m in h[len(h) - len(ids):]]  # a suffix of the history
        assert ctx.covered_ids() <= {m.id for m in h}  # provenance cites only history messages
    tiny = policy.build_context(h, "q", 20)
    assert not tiny.items and "cannot hold the entity system prompt" in tiny.notes[0]


def test_fewer_entities_when_the_prompt_does_not_fit():
    f = MessageFactory()
    h = [f.user(" ".join(f"page {i}" for i in range(10)))]
    policy = EntityContextPolicy(top_k=8)
    big = policy.build_context(h, "q", 10_000).items[0]
    ctx = policy.build_context(h, "q", big.tokens)  # the reply primer no longer fits
    assert ctx.items and ctx.items[0].content.count("(ID: ") < 8
    assert any("of top_k=8 entities fit" in n for n in ctx.notes)


def test_metadata_entities_take_precedence_over_the_extractor():
    f = MessageFactory()
    a = f.user("look at the landing one", metadata={"entities": ["page:9", Entity("user", "zoe", "Zoe")]})
    b = f.user("and page 3")
    policy = EntityContextPolicy(extractor=lambda text: [])
    ctx = policy.build_context([a, b], "q", 500)
    assert "(ID: 9)" in ctx.items[0].content and 'user "Zoe"' in ctx.items[0].content
    assert "(ID: 3)" not in ctx.items[0].content  # the extractor found nothing in b
    assert ctx.items[0].sources == (a.id,)


def test_on_the_cms_scenario_prompt_stays_small_and_cites_mentions():
    sc = load_scenario(DATA / "cms_small.jsonl")
    f = MessageFactory()
    h = []
    for t in sc.turns:
        h.append(f.user(t.user, created_at=t.t_minutes * 60, turn=t.turn))
        h.append(f.assistant(t.assistant, created_at=t.t_minutes * 60, turn=t.turn))
    policy = EntityContextPolicy(lambda c: SlidingWindowMemory(20, clock=c), top_k=5)
    ctx = policy.build_context(h, "q", 600)
    assert ctx.tokens <= 600 and len(ctx.items) > 2
    shown = [n.split(" cited from ")[0] for n in ctx.notes]
    assert len(shown) == 5
    last_mentions = [m.key for t in sc.turns for m in t.mentions]
    assert set(shown) <= set(last_mentions)
    assert ctx.covered_ids() <= {m.id for m in h}


@pytest.mark.parametrize("call, error, text", [
    (lambda p: p.build_context("not a history", "q", 10), TypeError, "history must be a sequence"),
    (lambda p: p.build_context([object()], "q", 10), TypeError, r"history\[0\] must be a Message"),
    (lambda p: p.build_context([], None, 10), TypeError, "query must be a str, got None"),
    (lambda p: p.build_context([], "q", 0), ValueError, "budget must be >= 1, got 0"),
    (lambda p: p.build_context([Message("m1", "user", "x", 1, 5, metadata={"entities": "page:1"})],
                               "q", 100), TypeError, r"metadata\['entities'\] must be a list"),
    (lambda p: p.build_context([Message("m1", "user", "x", 1, 5, metadata={"entities": ["page"]})],
                               "q", 100), ValueError, "message 'm1'. names entity 'page'"),
    (lambda p: p.build_context([Message("m1", "user", "x", 1, 5, metadata={"entities": [3]})],
                               "q", 100), TypeError, "names entity 3"),
])
def test_bad_input_is_named(call, error, text):
    with pytest.raises(error, match=text):
        call(EntityContextPolicy())


@pytest.mark.parametrize("kwargs, error, text", [
    ({"make_memory": 3}, TypeError, "make_memory must be callable, got 3"),
    ({"top_k": -1}, ValueError, "top_k must be >= 0, got -1"),
    ({"by": "age"}, ValueError, "by must be one of"),
    ({"extractor": "x"}, TypeError, "extractor must be callable"),
    ({"counter": 1}, TypeError, "counter must have a count"),
])
def test_bad_settings_are_named(kwargs, error, text):
    with pytest.raises(error, match=text):
        EntityContextPolicy(**kwargs)


def test_make_memory_must_use_the_given_clock():
    from memorykit.clock import StepClock

    policy = EntityContextPolicy(lambda c: RelevanceMemory(clock=StepClock()))
    with pytest.raises(ValueError, match="clock it is given"):
        policy.build_context([], "q", 100)


def test_extractor_reads_ids_and_handles():
    ex = IdMentionExtractor()
    assert ex("Open page 42, ticket T-334, entry #7 and ask @dana about the page") == [
        "page:42", "task:T-334", "entry:7", "user:dana"]
    assert ex("update that page") == [] and ex("mail bob@example.com") == []


def test_query_independent_and_replayed_once_per_conversation():
    from memorykit.evaluation.dataset import EvalConversation, EvalQuestion
    from memorykit.evaluation.harness import evaluate, is_query_independent

    h = history()
    seen = []
    extractor = IdMentionExtractor()

    def counting(text):
        seen.append(text)
        return extractor(text)

    policy = EntityContextPolicy(extractor=counting)
    assert is_query_independent(policy)
    questions = [EvalQuestion(f"q{i}", f"question {i}", None, (h[0].id,), "c", position=p)
                 for i, p in enumerate((2, 2, 4, 6, 6, 6))]
    conv = EvalConversation("c", tuple(h), tuple(questions))
    evaluate(policy, conv, 400, progress=False)
    assert len(seen) == len(h)  # each message replayed once, not once per question or position
    # The advancing replay gives what a fresh replay of each prefix gives.
    state = policy.prepare(conv)
    for position in (0, 1, 3, 6, 2):  # 2 after 6: asked out of order, it starts again
        for budget in (30, 120, 400):
            assert state.build_context(position, "q", budget) == policy.build_context(h[:position], "q", budget)
    with pytest.raises(ValueError, match="position must be in \\[0, 6\\], got 7"):
        state.build_context(7, "q", 100)
