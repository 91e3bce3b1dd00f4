"""Issue 28's entry points fed hostile input (helper "probe"): each test is a case that once
went wrong (silently changed data, or crashed deep instead of naming the value) and now does not.

* ``load_policy``: a key given twice in the file (json keeps the last one silently) is refused,
  naming the key and both values; an int past ``sys.maxsize`` says so, not ">= 1"; a
  ``TunedPolicy``'s params cannot be changed after it built its policy (the file it saved would
  have said one thing and the policy done another).
* Both adapters: text that is not valid Unicode (a lone surrogate, from a broken decode) is
  refused at conversion, naming the item, instead of crashing inside the embedder of
  hybrid-retrieval (a TypeError from the tokenizers library).
* The OpenAI Agents adapter names the ``output`` field of a tool result, not ``content``.
* BM25 (alone and in the hybrid) over a history without one indexable term ("ok", "", stopwords)
  crashed in ``bm25s`` (``max() arg is an empty sequence``): it now scores every message 0.
"""

from __future__ import annotations

import copy
import json
import pickle
import re
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from memorykit.adapters.langgraph import memorykit_pre_model_hook, to_memorykit
from memorykit.adapters.openai_agents import TunedContextFilter, UnconvertibleItem
from memorykit.evaluation.export import TunedPolicy, TunedPolicyError, load_policy

GOOD = {"format": "memorykit.tuned-policy", "version": 1, "policy": "hybrid-retrieval",
        "params": {"lexical_weight": 0.5, "neighbours": 0}, "budget": 1000,
        "encoding": "cl100k_base"}
BROKEN = "the car is on level \ud800 three"  # a lone surrogate: what a bad decode leaves


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "policy.json"
    path.write_text(text, encoding="utf-8")
    return path


# ------------------------------------------------------------------ load_policy
@pytest.mark.parametrize("key, tail", [("budget", '"budget": 5}'), ("policy", '"policy": "fifo"}'),
                                       ("lexical_weight", None)])
def test_a_key_given_twice_is_refused_not_last_one_wins(key: str, tail: str | None,
                                                        tmp_path: Path) -> None:
    text = json.dumps(GOOD)
    if tail is None:  # inside the params object
        text = text.replace('"neighbours": 0}', '"neighbours": 0, "lexical_weight": 1.0}')
    else:
        text = text[:-1] + ", " + tail
    path = write(tmp_path, text)
    with pytest.raises(TunedPolicyError, match=rf"{path}: \(file\): .*{key!r} appears twice"):
        load_policy(path)


def test_the_same_file_without_the_duplicate_loads(tmp_path: Path) -> None:
    assert load_policy(write(tmp_path, json.dumps(GOOD))).budget == 1000


def test_an_int_past_the_largest_says_so(tmp_path: Path) -> None:
    path = write(tmp_path, json.dumps({**GOOD, "budget": sys.maxsize + 1}))
    with pytest.raises(TunedPolicyError, match=rf"budget: must be an int <= {sys.maxsize}, "
                                               rf"got {sys.maxsize + 1}"):
        load_policy(path)


def test_a_tuned_policys_settings_cannot_drift_from_the_policy_it_built(tmp_path: Path) -> None:
    tuned = TunedPolicy("bm25", {"k1": 1.5, "b": 0.75}, 100)
    for change in (lambda p: p.__setitem__("k1", 9.0), lambda p: p.update(k1=9.0),
                   lambda p: p.pop("k1"), lambda p: p.clear()):
        with pytest.raises(TypeError, match="params cannot be changed"):
            change(tuned.params)
    # what it saves is what it built, and copies keep the same settings
    assert load_policy(tuned.save(tmp_path / "p.json")).params == {"k1": 1.5, "b": 0.75}
    assert copy.deepcopy(tuned).params == pickle.loads(pickle.dumps(tuned)).params == tuned.params


# ------------------------------------------------------------------ adapters: broken Unicode
@pytest.fixture(scope="module")
def hybrid() -> TunedPolicy:
    return TunedPolicy("hybrid-retrieval", {"lexical_weight": 0.5, "neighbours": 0}, 200)


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


@pytest.mark.parametrize("items, named", [
    ([user(BROKEN), user("where is the car parked")], "items[0]"),
    ([user("the car is on level three"), user(BROKEN)], "items[1].content"),
    ([user("hello there"), {"type": "function_call", "call_id": "c1", "name": "find",
                            "arguments": json.dumps({"q": "x"})[:-2] + '\ud800"}'},
      {"type": "function_call_output", "call_id": "c1", "output": "ok"},
      user("where is the car parked")], "items[1]"),
])
def test_agents_filter_refuses_text_that_is_not_unicode_naming_the_item(
        items: list[dict[str, Any]], named: str, hybrid: TunedPolicy) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # bm25s on a two-message corpus
        with pytest.raises(UnconvertibleItem, match=re.escape(named) +
                           r".*(not valid Unicode|surrogates)"):
            TunedContextFilter(hybrid).model_input(items)


def test_agents_filter_names_the_output_field_of_a_tool_result(hybrid: TunedPolicy) -> None:
    items = [user("hello there"), {"type": "function_call", "call_id": "c1", "name": "find",
                                   "arguments": "{}"},
             {"type": "function_call_output", "call_id": "c1", "output": None},
             user("where is the car parked")]
    with pytest.raises(UnconvertibleItem, match=r"items\[2\]\.output must be a str"):
        TunedContextFilter(hybrid).model_input(items)


@pytest.mark.parametrize("position", [0, 1])
def test_langgraph_hook_refuses_text_that_is_not_unicode_naming_the_message(
        position: int, hybrid: TunedPolicy) -> None:
    messages = [HumanMessage(content="the car is on level three", id="h0"),
                AIMessage(content="noted", id="a1"), HumanMessage(content="where?", id="h2")]
    messages[position] = type(messages[position])(content=BROKEN, id=f"x{position}")
    with pytest.raises(ValueError, match=rf"messages\[{position}\]: content is not valid Unicode"):
        memorykit_pre_model_hook(hybrid)({"messages": messages})
    with pytest.raises(ValueError, match=rf"messages\[{position}\]"):
        to_memorykit(messages)


@pytest.mark.parametrize("call_id, name, named", [(None, "find", "id"), ("c1", "", "name")])
def test_langgraph_names_the_message_of_a_tool_call_without_id_or_name(
        call_id: str | None, name: str, named: str) -> None:
    call = {"name": name, "args": {}, "id": call_id, "type": "tool_call"}
    messages = [HumanMessage(content="hello there"), AIMessage(content="", tool_calls=[call])]
    with pytest.raises(ValueError, match=rf"messages\[1\]: tool call {named} .*got "
                                         rf"{re.escape(repr(call_id if named == 'id' else name))}"):
        to_memorykit(messages)


# ------------------------------------------------------------------ a history with no term
@pytest.mark.parametrize("policy", ["bm25", "hybrid-retrieval"])
def test_a_history_without_an_indexable_term_still_gets_a_context(policy: str) -> None:
    params = {"bm25": {"k1": 1.5, "b": 0.75},
              "hybrid-retrieval": {"lexical_weight": 0.5, "neighbours": 0}}[policy]
    tuned = TunedPolicy(policy, params, 200)
    factory = tuned.message_factory()
    history = [factory.user("ok"), factory.assistant("")]
    context = tuned.build_context(history, "where did we park")
    assert not context.over_budget
    # and once a message with a term arrives, it is found
    later = [*history, factory.user("We parked on level 3 of the blue garage.")]
    found = tuned.build_context(later, "where did we park on level 3")
    assert any("level 3" in item.content for item in found.items)
