"""Reference resolution: the seed's examples, typed references, unresolvable ones, bad types."""

import pytest

from memorykit.clock import StepClock
from memorykit.entities import Entity, EntityMemory, ReferenceResolver, SlidingWindowMemory


@pytest.fixture
def memory():
    clock = StepClock()
    mem = EntityMemory(20, clock=clock)
    for e in [Entity("page", 41, "About"), Entity("entry", 7, "Launch recap"),
              Entity("page", 42, "Home Page"), Entity("user", "dana", "Dana"),
              Entity("entry", 9, "Q3 roadmap"), Entity("task", "T-1", "Fix links")]:
        clock.advance(30)
        mem.add(e)
    return mem


def keys(resolutions):
    return [r.entity_key for r in resolutions]


def test_seed_example_show_page_then_update_that_page():
    mem = EntityMemory(20, clock=StepClock())
    mem.add(Entity("page", 42, "Home Page"))
    (res,) = ReferenceResolver().resolve("Update that page's title", mem)
    assert res.entity_key == "page:42" and res.resolved
    assert res.reference_text == "that page" and "most recent page" in res.reason


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Publish this page.", ["page:42"]),
        ("Publish that entry.", ["entry:9"]),
        ("Publish that post.", ["entry:9"]),       # vocabulary: post -> entry
        ("Close the ticket.", ["task:T-1"]),        # ticket -> task
        ("Mark it as done.", ["task:T-1"]),         # it: most recent of any type
        ("Set its priority.", ["task:T-1"]),
        ("Who wrote the previous entry?", ["entry:7"]),
        ("Go back to the previous page.", ["page:41"]),
        ("Ping that user.", ["user:dana"]),
        ("Compare this one with the previous one.", ["task:T-1", None]),  # only one task
    ],
)
def test_resolves_to_most_recent_of_type(memory, text, expected):
    assert keys(ReferenceResolver().resolve(text, memory)) == expected


def test_previous_one_uses_the_type_of_the_newest_entity(memory):
    memory.get("page:42")  # the newest entity is now a page
    (res,) = ReferenceResolver().resolve("Go back to the previous one.", memory)
    assert res.entity_key == "page:41" and res.form == "previous-one"


def test_resolution_counts_as_an_access(memory):
    before = memory.peek("page:41").access_count
    ReferenceResolver().resolve("Reopen the previous page", memory)
    assert memory.peek("page:41").access_count == before + 1
    # and it now is the most recent page
    assert keys(ReferenceResolver().resolve("this page", memory)) == ["page:41"]
    ReferenceResolver().resolve("that page", memory, access=False)
    assert memory.peek("page:41").access_count == before + 2


def test_references_in_one_turn_resolve_in_order(memory):
    res = ReferenceResolver().resolve("Update that page's title and publish it", memory)
    assert keys(res) == ["page:42", "page:42"]


def test_unresolvable_references_say_so():
    mem = SlidingWindowMemory(3, clock=StepClock())
    r = ReferenceResolver()
    (res,) = r.resolve("Publish it", mem)
    assert res.entity_key is None and res.reason == "no entity in working memory"
    mem.add(Entity("page", 1, "Home"))
    (res,) = r.resolve("Assign that task to me", mem)
    assert res.entity_key is None and res.reason == "no task in working memory"
    (res,) = r.resolve("Go back to the previous page", mem)
    assert res.entity_key is None and "only 1 page in working memory" in res.reason


def test_evicted_entity_is_unresolvable_not_guessed():
    mem = SlidingWindowMemory(2, clock=StepClock())
    mem.add(Entity("task", "T-1", "Fix"))
    mem.add(Entity("page", 1, "A"))
    mem.add(Entity("page", 2, "B"))  # the task leaves
    (res,) = ReferenceResolver().resolve("Close that task", mem)
    assert res.entity_key is None


def test_explicit_ids_and_other_words_are_not_references():
    r = ReferenceResolver()
    assert r.find("Open the page 42 and page 7.") == []
    assert r.find("Italy, item, with, title") == []
    assert r.find("Open the Pricing page.") == []


def test_typed_api_and_unknown_types(memory):
    r = ReferenceResolver()
    assert r.resolve_typed("page", memory).entity_key == "page:42"
    assert r.resolve_typed("ticket", memory).entity_key == "task:T-1"
    assert r.resolve_typed(None, memory).entity_key == "task:T-1"
    assert r.resolve_typed("entry", memory, ordinal=1).entity_key == "entry:7"
    with pytest.raises(ValueError, match="unknown entity type 'widget'"):
        r.resolve_typed("widget", memory)
    with pytest.raises(ValueError, match="ordinal must be >= 0, got -1"):
        r.resolve_typed("page", memory, ordinal=-1)


def test_custom_vocabulary():
    r = ReferenceResolver({"doc": "page", "story": "entry"})
    mem = EntityMemory(5, clock=StepClock())
    mem.add(Entity("page", 3, "Docs"))
    assert [x.entity_key for x in r.resolve("Publish that doc", mem)] == ["page:3"]
    assert r.find("Publish that page") == []  # 'page' is not in this vocabulary
    with pytest.raises(ValueError, match="vocabulary must name at least one noun"):
        ReferenceResolver({})
