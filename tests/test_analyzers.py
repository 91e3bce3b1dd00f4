"""The lexical analyzers: hand-made cases of what stemming and possessive stripping change."""

from __future__ import annotations

import pickle

import pytest

from memorykit.evaluation.baselines import (
    ANALYZERS,
    BM25Retrieval,
    analyze,
    analyze_stemmed,
    resolve_analyzer,
)
from memorykit.messages import MessageFactory


def test_possessives_are_stripped_straight_or_curly():
    assert analyze_stemmed("Caroline's") == analyze_stemmed("Caroline") == ["carolin"]
    assert analyze_stemmed("Melanie’s kids") == analyze_stemmed("melanie kids")
    # The plain analyzer keeps the possessive as another word.
    assert analyze("Caroline's") == ["caroline's"] != analyze("Caroline")


def test_inflections_share_a_stem():
    assert analyze_stemmed("painting paints painted") == ["paint"] * 3
    assert analyze_stemmed("adopting adoption") == ["adopt"] * 2
    assert analyze("painting paints") == ["painting", "paints"]


def test_function_words_stay_out_before_and_after_stripping():
    assert analyze_stemmed("He's here and it's what they're doing") == []
    assert analyze_stemmed("What did Caroline's dog chase?") == ["carolin", "dog", "chase"]


def test_numbers_and_hyphenated_words_survive():
    assert analyze_stemmed("GPT-4 in 2023") == ["gpt-4", "2023"]


def test_analyzers_by_name_and_bad_names():
    assert ANALYZERS == {"stemmed": analyze_stemmed, "plain": analyze}
    assert resolve_analyzer("plain") is analyze
    assert resolve_analyzer(str.split) is str.split
    with pytest.raises(ValueError, match="analyzer must be one of 'stemmed', 'plain', got 'porter'"):
        BM25Retrieval(analyzer="porter")
    with pytest.raises(TypeError, match="analyzer must be one of stemmed, plain or callable, got 3"):
        BM25Retrieval(analyzer=3)  # type: ignore[arg-type]


def test_bm25_default_finds_a_possessive_question_the_plain_one_misses():
    f = MessageFactory()
    history = [f.user("Caroline: I went to a support group for adoption yesterday."),
               f.assistant("Melanie: Nice weather for the lake today."),
               f.user("Caroline: The lake was cold.")]
    query = "What group did Caroline's adopting plans lead her to?"
    assert history[0].id in BM25Retrieval().build_context(history, query, 40).covered_ids()
    plain = BM25Retrieval(analyzer="plain").build_context(history, query, 40)
    assert history[0].id in plain.covered_ids()  # "group" still matches without stemming
    # Only the possessive and the inflection tie the question to the turn.
    query = "Caroline's adopting?"
    assert BM25Retrieval().build_context(history, query, 40).covered_ids() >= {history[0].id}
    assert history[0].id not in BM25Retrieval(analyzer="plain").build_context(history, query, 40).covered_ids()


def test_the_default_policy_pickles_for_process_pools():
    policy = pickle.loads(pickle.dumps(BM25Retrieval()))
    assert policy.analyzer is analyze_stemmed
