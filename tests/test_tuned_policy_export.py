"""Issue 28: a tuning run's pick exported (``tune --export``, ``export_policy``) and loaded
(``load_policy``) builds exactly the contexts the tuned configuration built through the
harness; a bad file is refused naming the file, the field and the value."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import memorykit
from memorykit.evaluation.chatlog import load_chat_logs
from memorykit.evaluation.export import (MAX_FILE_BYTES, POLICY_ENCODING, VERSION, TunedPolicy,
                                         TunedPolicyError, export_policy, load_policy)
from memorykit.evaluation.harness import evaluate
from memorykit.evaluation.toolkit import TUNABLE, fixed_policy
from memorykit.evaluation.tune import tune
from memorykit.messages import MessageFactory

ROOT = Path(__file__).resolve().parent.parent
CHATS = ROOT / "data" / "chat_logs" / "support_chats.jsonl"
QUESTIONS = ROOT / "data" / "chat_logs" / "support_questions.jsonl"
BUDGETS = [300, 1000]
POLICIES = ["bm25", "hybrid-retrieval", "fifo", "last-tokens"]


@pytest.fixture(scope="module")
def data() -> Any:
    return load_chat_logs(CHATS, QUESTIONS)


@pytest.fixture(scope="module")
def result(data: Any) -> Any:
    return tune(data, BUDGETS, POLICIES)


class Recorder:
    """The tuned configuration run by the harness as it is, keeping every context it builds
    by (conversation, position, question)."""

    def __init__(self, policy: Any) -> None:
        self.policy = policy
        self.name = policy.name
        self.contexts: dict[tuple[str, int, str], Any] = {}
        self.conversation = ""

    def build_context(self, history: Any, query: str, budget: int) -> Any:
        ctx = self.policy.build_context(history, query, budget)
        self.contexts[self.conversation, len(history), query] = ctx
        return ctx


class PreparingRecorder(Recorder):
    """A recorder for a policy with the harness's per-conversation fast path."""

    def prepare(self, conversation: Any) -> Any:
        state, contexts = self.policy.prepare(conversation), self.contexts

        class State:
            def build_context(self, position: int, query: str, budget: int) -> Any:
                ctx = state.build_context(position, query, budget)
                contexts[conversation.id, position, query] = ctx
                return ctx

        return State()


def harness_contexts(policy: Any, data: Any, budget: int) -> tuple[dict, float]:
    """Every context the harness builds with ``policy`` at ``budget``, and its recall."""
    prepares = callable(getattr(policy, "prepare", None))
    recorder = (PreparingRecorder if prepares else Recorder)(policy)
    recall = 0.0
    if prepares:
        recall = evaluate(recorder, data, budget).summary()["recall"]
    else:  # the plain path builds from the history alone: tell the recorder whose it is
        for conv in data:
            recorder.conversation = conv.id
            evaluate(recorder, [conv], budget)
        recall = evaluate(policy, data, budget).summary()["recall"]
    return recorder.contexts, recall


def item_view(ctx: Any) -> list[tuple]:
    return [(i.role, i.content, i.sources, i.tokens, i.kind, i.tool_calls, i.tool_call_id)
            for i in ctx.items]


@pytest.mark.parametrize("policy, budget", [("hybrid-retrieval", 300), ("bm25", 1000),
                                            ("fifo", 300), ("last-tokens", 1000)])
def test_loaded_policy_builds_the_contexts_the_tuned_one_built(policy, budget, result, data,
                                                               tmp_path):
    exported = export_policy(result, budget, policy=policy, files=[CHATS.name, QUESTIONS.name])
    if policy in TUNABLE:  # a real pick, not the defaults: the settings must travel
        assert exported.params != dict(zip(TUNABLE[policy].names, TUNABLE[policy].defaults))
        tuned = TUNABLE[policy].make(**exported.params)
    else:
        assert exported.params == {}
        tuned = fixed_policy(policy)
    loaded = memorykit.load_policy(exported.save(tmp_path / "best.json"))
    assert loaded == exported and loaded.budget == budget and loaded.encoding == POLICY_ENCODING
    contexts, recall = harness_contexts(tuned, data, budget)
    row = result.table.where(policy=policy, budget=budget, params=exported.params)
    assert recall == pytest.approx(row[0]["recall"], abs=1e-12)  # what the harness recorded is the configuration tune scored
    asked = 0
    for conv in data:
        for q in conv.questions:
            position = conv.position(q)
            ctx = loaded.build_context(conv.messages[:position], q.question)
            held = contexts[conv.id, position, q.question]
            assert item_view(ctx) == item_view(held), (conv.id, q.id)
            assert (ctx.tokens, ctx.budget, ctx.over_budget) == (held.tokens, budget, False)
            asked += 1
    assert asked == data.n_questions == exported.earned.questions


def test_export_records_what_it_earned_and_on_which_data(result, data):
    exported = export_policy(result, files=[CHATS.name, QUESTIONS.name])
    top = result.best().where(budget=max(BUDGETS))[0]
    assert (exported.policy, exported.budget) == (top["policy"], max(BUDGETS))
    assert exported.earned.recall == top["recall"] and exported.earned.split == "folds"
    assert list(exported.earned.recall_ci) == list(top["recall_ci"])
    on = exported.tuned_on
    assert (on.files, on.conversations, on.messages, on.questions, on.seed) == (
        (CHATS.name, QUESTIONS.name), len(data), data.n_messages, data.n_questions, 0)
    assert exported.memorykit_version == memorykit.__version__
    with pytest.raises(ValueError, match="budget must be one of the run's budgets.*500"):
        export_policy(result, 500)
    with pytest.raises(ValueError, match="'summary'"):
        export_policy(result, policy="summary")


def test_the_budget_is_counted_in_the_encoding_the_file_names(data):
    tuned = TunedPolicy("bm25", {"k1": 0.3, "b": 0.25}, 300)
    assert MessageFactory().counter.encoding == POLICY_ENCODING  # what tune's data counts in
    factory = tuned.message_factory()
    for m in next(iter(data)).messages[:20]:
        assert factory.message(m.role, m.content).content_tokens == m.content_tokens


def test_the_budget_defaults_to_the_tuned_one_and_may_be_overridden(data):
    tuned = TunedPolicy("bm25", {"k1": 0.3, "b": 0.25}, 300)
    conv = next(iter(data))
    history, query = conv.messages, conv.questions[0].question
    assert tuned.build() is not tuned.build()  # each build is a new policy
    assert tuned.build_context(history, query).budget == 300
    wider = tuned.build_context(history, query, budget=2000)
    assert item_view(wider) == item_view(tuned.build().build_context(history, query, 2000))
    with pytest.raises(ValueError, match="budget.*0"):
        tuned.build_context(history, query, budget=0)


def test_the_cli_exports_the_best_and_prints_nothing_else_new(result, tmp_path):
    out = tmp_path / "best.json"
    args = ["-m", "memorykit", "tune", str(CHATS), "-q", str(QUESTIONS), "-p", *POLICIES[:1],
            "fifo", "-b", *map(str, BUDGETS), "--no-progress"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    run = lambda *more: subprocess.run([sys.executable, *args, *more], capture_output=True,  # noqa: E731
                                       text=True, env=env, cwd=ROOT, timeout=300)
    plain, exported = run(), run("--export", str(out), "--export-budget", "300")
    assert plain.returncode == exported.returncode == 0, exported.stderr
    loaded = load_policy(out)
    expected = export_policy(tune(load_chat_logs(CHATS, QUESTIONS), BUDGETS, ["bm25", "fifo"]),
                             300, files=[CHATS.name, QUESTIONS.name])
    assert loaded == expected
    line = (f"exported: bm25 ({', '.join(f'{k}={v}' for k, v in loaded.params.items())}) at 300 "
            f"tokens, held-out recall {loaded.earned.recall:.3f}: {out} "
            f"(memorykit.load_policy reads it)\n")
    assert exported.stdout == plain.stdout + "\n" + line


@pytest.mark.parametrize("where, problem", [
    (["/no/such/folder/best.json"], "does not exist"),
    ([str(CHATS)], "is the input file"),
    (["{tmp}/a.json", "--json", "{tmp}/a.json"], "is the --json file too"),
])
def test_the_cli_checks_the_export_path_before_the_sweep(where, problem, tmp_path):
    where = [w.format(tmp=tmp_path) for w in where]
    done = subprocess.run([sys.executable, "-m", "memorykit", "tune", str(CHATS), "-q",
                           str(QUESTIONS), "--export", *where], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=ROOT, timeout=300)
    assert done.returncode == 2 and done.stdout == "" and problem in done.stderr


# ------------------------------------------------------------------ refusals
GOOD = TunedPolicy("hybrid-retrieval", {"lexical_weight": 0.5, "neighbours": 0}, 300).to_json()


def changed(**fields: Any) -> dict[str, Any]:
    """GOOD with ``fields`` replaced (a value of ``...`` removes the field)."""
    out = json.loads(json.dumps(GOOD))
    for k, v in fields.items():
        if v is ...:
            del out[k]
        else:
            out[k] = v
    return out


@pytest.mark.parametrize("content, field, value", [
    (changed(format="other.format"), "format", "'other.format'"),
    (changed(version="1"), "version", "'1'"),
    (changed(version=0), "version", "0"),
    (changed(policy="bm26"), "policy", "'bm26'"),
    (changed(policy=["bm25"]), "policy", "['bm25']"),
    (changed(params={"lexical_weight": 0.5, "neighbours": 0, "window": 3}), "params", "'window'"),
    (changed(params={"lexical_weight": 0.5}), "params", "'neighbours'"),
    (changed(params=[0.5, 0]), "params", "[0.5, 0]"),
    (changed(params={"lexical_weight": "0.5", "neighbours": 0}), "params.lexical_weight", "'0.5'"),
    (changed(params={"lexical_weight": 0.5, "neighbours": 1.5}), "params.neighbours", "1.5"),
    (changed(params={"lexical_weight": 0.5, "neighbours": True}), "params.neighbours", "True"),
    (changed(params={"lexical_weight": 2.0, "neighbours": 0}), "params", "2.0"),
    (changed(policy="fifo", params={"lexical_weight": 0.5}), "params", "'lexical_weight'"),
    (changed(policy="bm25", params={"lexical_weight": 0.5, "neighbours": 0}), "params",
     "'lexical_weight'"),
    (changed(budget=0), "budget", "0"),
    (changed(budget=-5), "budget", "-5"),
    (changed(budget=300.0), "budget", "300.0"),
    (changed(budget="300"), "budget", "'300'"),
    (changed(budget=True), "budget", "True"),
    (changed(budget=...), "budget", "missing"),
    (changed(encoding="latin-1"), "encoding", "'latin-1'"),
    (changed(encoding="o200k_base"), "encoding", "'o200k_base'"),
    (changed(chat_format={**GOOD["chat_format"], "reply_primer": 5}), "chat_format", "5"),
    (changed(chat_format={**GOOD["chat_format"], "reply_primer": "3"}),
     "chat_format.reply_primer", "'3'"),
    (changed(chat_format={"tokens_per_message": 3}), "chat_format.tokens_per_name", "missing"),
    (changed(earned={"recall": 0.9, "recall_ci": None, "questions": 4, "split": "random"}),
     "earned.split", "'random'"),
    (changed(earned={"recall": "high", "recall_ci": None, "questions": 4, "split": "none"}),
     "earned.recall", "'high'"),
    (changed(earned={"recall": 1.5, "recall_ci": None, "questions": 4, "split": "none"}),
     "earned.recall", "1.5"),
    (changed(earned={"recall": 0.5, "recall_ci": [0.75, 0.25], "questions": 4, "split": "none"}),
     "earned.recall_ci", "[0.75, 0.25]"),
    (changed(tuned_on={"name": "x", "files": "x.jsonl", "conversations": 1, "messages": 2,
                       "questions": 3, "seed": 0}), "tuned_on.files", "'x.jsonl'"),
    (changed(tuned_on={"name": "x", "files": [], "conversations": 1, "messages": 2,
                       "questions": 3, "seed": -1}), "tuned_on.seed", "-1"),
    (changed(tuned_on={"name": "x", "files": [], "conversations": 1, "messages": 2,
                       "questions": 3, "seed": 0, "pickle": "x"}), "tuned_on.pickle", "unknown"),
    (changed(polciy="bm25"), "polciy", "unknown field"),
    (changed(memorykit_version=1), "memorykit_version", "1"),
    ([GOOD], "(top level)", "list"),
])
def test_a_bad_file_is_refused_naming_the_file_the_field_and_the_value(content, field, value,
                                                                      tmp_path):
    path = tmp_path / "best.json"
    path.write_text(json.dumps(content))
    with pytest.raises(TunedPolicyError) as caught:
        load_policy(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: {field}: ") and value in message, message
    assert caught.value.field == field and isinstance(caught.value, ValueError)


def test_an_unknown_policy_lists_the_known_ones(tmp_path):
    path = tmp_path / "best.json"
    path.write_text(json.dumps(changed(policy="bm26")))
    with pytest.raises(ValueError, match=r"known: bm25, attention, hybrid-retrieval, superseding-retrieval, fifo"):
        load_policy(path)


def test_a_file_from_a_newer_version_says_so(tmp_path):
    path = tmp_path / "best.json"
    path.write_text(json.dumps(changed(version=VERSION + 1, new_field={"later": True})))
    with pytest.raises(TunedPolicyError, match=rf"{VERSION + 1} was written by a newer memorykit"
                                               r".*upgrade"):
        load_policy(path)


@pytest.mark.parametrize("raw, problem", [
    (b"{\"format\": \"memorykit.tuned-policy\", ", "not JSON"),
    (b"\xff\xfe not text", "not JSON"),
    (json.dumps(changed(budget=float("nan"))).encode(), "NaN is not a JSON number"),
    (b" " * MAX_FILE_BYTES + json.dumps(GOOD).encode(), "larger than 1,048,576 bytes"),
])
def test_a_file_that_is_not_a_small_json_object_is_refused(raw, problem, tmp_path):
    path = tmp_path / "best.json"
    path.write_bytes(raw)
    with pytest.raises(TunedPolicyError, match=f"^{path}: \\(file\\): .*{problem}"):
        load_policy(path)


def test_missing_paths_and_non_paths_are_refused(tmp_path):
    with pytest.raises(FileNotFoundError, match="nothing.json"):
        load_policy(tmp_path / "nothing.json")
    with pytest.raises(TypeError, match="42"):
        load_policy(42)
    with pytest.raises(TunedPolicyError, match=f"^{tmp_path}: \\(file\\): is not a regular file"):
        load_policy(tmp_path)


def test_a_policy_built_in_code_is_checked_as_a_file_is():
    with pytest.raises(TunedPolicyError, match=r"^TunedPolicy: params: unknown setting 'k3'"):
        TunedPolicy("bm25", {"k1": 0.3, "b": 0.25, "k3": 1}, 300)
    with pytest.raises(TunedPolicyError, match=r"^TunedPolicy: budget: .*0"):
        TunedPolicy("fifo", {}, 0)
