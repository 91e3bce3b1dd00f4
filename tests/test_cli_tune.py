"""``python -m memorykit tune`` on the committed example logs, and the library call behind it."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from memorykit.evaluation.chatlog import load_chat_logs
from memorykit.evaluation.toolkit import TUNABLE
from memorykit.evaluation.tune import tunable_policy_names, tune

ROOT = Path(__file__).resolve().parent.parent
CHATS = ROOT / "data" / "chat_logs" / "support_chats.jsonl"
QUESTIONS = ROOT / "data" / "chat_logs" / "support_questions.jsonl"


def run_cli(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "memorykit", *args], capture_output=True,
                          text=True, env=env, cwd=ROOT, timeout=300)


def readme_run() -> tuple[list[str], str]:
    """The README's tuning command (its arguments after ``-m memorykit``) and pasted output."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Tune memory on your own conversations", 1)[1]
    command, output = re.findall(r"```(?:bash|text)\n(.*?)```", section, re.S)[:2]
    words = command.replace("\\\n", " ").split()
    return words[words.index("memorykit") + 1:], output


def test_readme_tuning_run_is_what_the_command_prints(tmp_path):
    args, pasted = readme_run()
    out = tmp_path / "tune.json"
    args[args.index("--json") + 1] = str(out)
    exported = tmp_path / "best.json"
    args[args.index("--export") + 1] = str(exported)
    done = run_cli(*args, "--no-progress")
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""  # no bar when told so
    assert done.stdout == pasted.replace("json: tune.json", f"json: {out}").replace(
        ": best.json (", f": {exported} ("), (
        "README.md's tuning output is stale: run its command and paste what it prints")
    payload = json.loads(out.read_text())
    assert payload["data"]["questions"] == 48
    assert payload["data"]["categories"] == {"stated": 12, "reworded": 12, "tool result": 12,
                                             "two messages": 6, "asked soon after": 6}
    rows = payload["rows"]
    grids = sum(len(k.values[0]) * len(k.values[1]) for k in TUNABLE.values())
    # 6 conversations: too few for a held-out part of 3, so 3 folds; every row on all of them
    assert len(payload["splits"]) == 3 and {r["split"] for r in rows} == {"all"}
    assert len(rows) == grids + len(tunable_policy_names()) - len(TUNABLE)
    for r in rows:
        if r["recall"] is not None:
            low, high = r["recall_ci"]
            assert low <= r["recall"] <= high
    best = payload["best"]
    assert sorted(b["policy"] for b in best) == sorted(tunable_policy_names())
    for b in best:  # the pick on every conversation is the highest recall of its policy
        mine = [r["recall"] for r in rows if r["policy"] == b["policy"]]
        assert b["tuning_recall"] == max(mine) and b["split"] == "test, 3 folds"
        assert f"| {b['policy']} | {b['configuration']} | 1000 | test, 3 folds | 48 | " \
               f"{b['recall']:.3f} |" in done.stdout
    assert payload["comparisons"][0]["policy"] == best[0]["policy"]
    front = payload["pareto_front"]
    assert sum(p["same_point"] for p in front) >= len(front) >= 1


def test_tune_without_questions_refuses_and_says_why():
    done = run_cli("tune", str(CHATS))
    assert done.returncode == 2 and done.stdout == ""
    assert "tune needs questions: pass --questions FILE" in done.stderr


def test_tune_names_the_bad_line_and_field(tmp_path):
    bad = tmp_path / "questions.jsonl"
    bad.write_text(QUESTIONS.read_text().splitlines()[0] + "\n"
                   + json.dumps({"conversation": "support-01", "question": "Q?", "evidence": [9999]})
                   + "\n")
    done = run_cli("tune", str(CHATS), "-q", str(bad), "--no-progress")
    assert done.returncode == 2
    assert "questions.jsonl:line 2: evidence[0]: index 9999 is outside conversation 'support-01'" \
        in done.stderr
    done = run_cli("tune", str(CHATS), "-q", str(QUESTIONS), "--budgets", "0")
    assert done.returncode == 2 and "--budgets must be >= 1, got [0]" in done.stderr
    done = run_cli("tune", str(CHATS), "-q", str(QUESTIONS), "--policies", "nope")
    assert done.returncode == 2 and "invalid choice: 'nope'" in done.stderr


def test_example_logs_are_what_the_generator_writes(tmp_path):
    gen = ROOT / "data" / "chat_logs" / "generate.py"
    subprocess.run([sys.executable, str(gen), "--out", str(tmp_path)], check=True, timeout=60)
    for name in (CHATS.name, QUESTIONS.name):
        assert (tmp_path / name).read_bytes() == (ROOT / "data" / "chat_logs" / name).read_bytes()


@pytest.fixture(scope="module")
def data():
    return load_chat_logs(CHATS, QUESTIONS).select(conversations=["support-01", "support-02"])


def test_tune_sweeps_each_tunable_grid_and_fixed_defaults(data):
    result = tune(data, [1000], ["attention", "full-context"], holdout=0)
    grid_size = len(TUNABLE["attention"].values[0]) * len(TUNABLE["attention"].values[1])
    assert len(result.table) == grid_size + 1
    fixed = result.table.where(policy="full-context")[0]
    assert fixed["configuration"] == "defaults" and fixed["params"] == {}
    best = result.best()
    assert sorted(best.column("policy")) == ["attention", "full-context"]
    assert best.column("recall") == sorted(best.column("recall"), reverse=True)
    top_attention = max(result.table.where(policy="attention").column("recall"))
    assert best.where(policy="attention")[0]["recall"] == top_attention
    assert result.to_json()["policies"] == ["attention", "full-context"]


def test_tune_refuses_bad_requests(data):
    assert tunable_policy_names()[:len(TUNABLE)] == list(TUNABLE)
    with pytest.raises(ValueError, match="policies must name known policies .*, got 'nope'"):
        tune(data, [500], ["nope"])
    with pytest.raises(ValueError, match="budgets must be a non-empty list of ints, got 500"):
        tune(data, 500)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"budgets\[\] must be >= 1, got 0"):
        tune(data, [0])
    with pytest.raises(ValueError, match="has no question: nothing to score"):
        tune(load_chat_logs(CHATS), [500])


def test_notes_compare_question_by_question_not_averages(data):
    from memorykit.evaluation.tune import TuneResult

    result = tune(data, [1000], ["fifo", "importance", "window-20"], holdout=0)
    n = data.n_questions
    assert result.notes()[3] == (
        f"fifo, importance give identical results on all {n} questions at 1000 tokens; the data "
        "carries no importance signal (every message's importance is 1.0), so importance fall "
        "back to arrival order")
    rows = [{**c, "units": "billed"} for c in result.configurations]
    # window-20 given fifo's per-question recall (so the same average) but its own fingerprint:
    # not called identical; figures come from the outcomes, the notes from the fingerprints
    forged = TuneResult(rows, (1000,), result.policies, 0.0, data, result.fingerprints,
                        [result.outcomes[0]] * 3)
    assert forged.best().where(policy="window-20")[0]["recall"] == result.best()[0]["recall"]
    assert not any("window-20" in note for note in forged.notes())
    twins = TuneResult(rows, (1000,), result.policies, 0.0, data, [result.fingerprints[0]] * 3,
                       result.outcomes)
    assert twins.notes()[3].startswith(f"fifo, importance, window-20 give identical results on all {n}")
    with pytest.raises(ValueError, match="one per row \\(3\\), got 1 and 3"):
        TuneResult(rows, (1000,), result.policies, 0.0, data, ["x"], result.outcomes)


# ------------------------------------------------------------ hostile files (issue 25)
def first_question(**changes) -> str:
    return json.dumps({**json.loads(QUESTIONS.read_text().splitlines()[0]), **changes}) + "\n"


HOSTILE = {  # name -> (bytes, what the message must say after the file's name)
    "latin1.jsonl": (b'{"conversation": "support-01", "question": "caf\xe9?"}\n',
                     ":line 1: is not UTF-8 text (byte 0xe9 at column 48)"),
    "deep.jsonl": (b"[" * 100_000 + b"]" * 100_000 + b"\n",
                   ":line 1: not readable: arrays or objects nested too deeply"),
    "number.jsonl": (first_question()[:-2].encode() + b', "position": ' + b"9" * 5000 + b"}\n",
                     ":line 1: not readable: a number of more than 4,300 digits"),
    "meta.jsonl": (first_question(metadata=[1, 2]).encode(),
                   ":line 1: metadata: must be an object, got [1, 2]"),
    "empty.json": (b"", ": is empty: it holds no JSON document"),
}


@pytest.mark.parametrize("name", HOSTILE)
@pytest.mark.parametrize("role", ["conversations", "questions"])
def test_hostile_files_are_a_message_and_exit_2(tmp_path, capsys, name, role):
    from memorykit.cli import main

    data, said = HOSTILE[name]
    bad = tmp_path / name
    bad.write_bytes(data)
    if role == "conversations" and name == "meta.jsonl":
        said = ":line 1: messages: must be a non-empty list of messages, got None"
    files = [str(bad), "-q", str(QUESTIONS)] if role == "conversations" else \
        [str(CHATS), "-q", str(bad)]
    with pytest.raises(SystemExit) as exit_:
        main(["tune", *files, "--no-progress"])
    assert exit_.value.code == 2
    assert f"error: {bad}{said}" in capsys.readouterr().err


def test_a_directory_is_not_called_missing_and_no_traceback_escapes(tmp_path):
    folder = tmp_path / "logs.jsonl"
    folder.mkdir()
    deep = tmp_path / "deep.jsonl"
    deep.write_bytes(HOSTILE["deep.jsonl"][0])
    for args, said in [([folder, "-q", QUESTIONS], f"{folder}: is a directory, not a file"),
                       ([CHATS, "-q", folder], f"{folder}: is a directory, not a file"),
                       ([CHATS, "-q", deep], f"{deep}:line 1: not readable: arrays or objects "
                                             "nested too deeply")]:
        done = run_cli("tune", *map(str, args), "--no-progress")
        assert done.returncode == 2 and done.stdout == ""
        assert "Traceback" not in done.stderr and "no such file" not in done.stderr
        assert said in done.stderr


@pytest.fixture()
def no_run(monkeypatch):
    """The sweep fails the test if it starts: output checks must come before it."""
    import memorykit.evaluation.tune as tune_module

    def refuse(*args, **kwargs):
        raise AssertionError("the run started before the output path was checked")

    monkeypatch.setattr(tune_module, "tune", refuse)


def test_output_paths_are_checked_before_the_run(tmp_path, capsys, no_run, monkeypatch):
    from memorykit.cli import main

    chats = tmp_path / "chats.jsonl"
    chats.write_bytes(CHATS.read_bytes())
    link = tmp_path / "link.json"
    link.symlink_to(chats)
    hard = tmp_path / "hard.json"
    os.link(chats, hard)
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    monkeypatch.chdir(tmp_path)
    for out, said in [("no/such/dir/out.json", "folder no/such/dir does not exist"),
                      (str(tmp_path), "is a directory; name a file to write"),
                      (str(chats), f"is the input file {chats}; refusing to overwrite it"),
                      ("chats.jsonl", f"is the input file {chats}; refusing to overwrite it"),
                      (str(link), f"is the input file {chats}; refusing to overwrite it"),
                      (str(hard), f"is the input file {chats}; refusing to overwrite it"),
                      (str(QUESTIONS), f"is the input file {QUESTIONS}; refusing"),
                      (str(fifo), "is not a regular file")]:
        with pytest.raises(SystemExit) as exit_:
            main(["tune", str(chats), "-q", str(QUESTIONS), "--json", out, "--no-progress"])
        assert exit_.value.code == 2
        assert f"error: --json {out}: {said}" in capsys.readouterr().err
    assert chats.read_bytes() == CHATS.read_bytes()


# ------------------------------------------------------------ held out (issue 26)
@pytest.fixture(scope="module")
def twelve(tmp_path_factory):
    """The six example conversations twice (ids suffixed): enough for one held-out part."""
    folder = tmp_path_factory.mktemp("twelve")
    chats, questions = [], []
    for copy in ("a", "b"):
        for line in CHATS.read_text().splitlines():
            c = json.loads(line)
            chats.append(json.dumps({**c, "id": f"{c['id']}{copy}"}))
        for line in QUESTIONS.read_text().splitlines():
            q = json.loads(line)
            questions.append(json.dumps({**q, "conversation": f"{q['conversation']}{copy}",
                                         "id": f"{q['id']}{copy}"}))
    (folder / "chats.jsonl").write_text("\n".join(chats) + "\n")
    (folder / "questions.jsonl").write_text("\n".join(questions) + "\n")
    return folder


def test_holdout_rows_name_their_split_and_carry_intervals(twelve):
    out = twelve / "out.json"
    done = run_cli("tune", str(twelve / "chats.jsonl"), "-q", str(twelve / "questions.jsonl"),
                   "--holdout", "0.3", "--budgets", "500", "1000", "-p", "bm25", "fifo",
                   "--json", str(out), "--no-progress")
    assert done.returncode == 0, done.stderr
    payload = json.loads(out.read_text())
    (split,) = payload["splits"]
    assert len(split["test"]) == 4 and len(split["tuning"]) == 8
    assert {r["split"] for r in payload["rows"]} == {"tuning", "test"}
    test_questions = sum(1 for line in (twelve / "questions.jsonl").read_text().splitlines()
                         if json.loads(line)["conversation"] in split["test"])
    for r in payload["rows"]:
        low, high = r["recall_ci"]
        assert low <= r["recall"] <= high
        if r["split"] == "test":
            assert r["questions"] == test_questions
    for b in payload["best"]:
        assert b["split"] == "test" and b["questions"] == test_questions
        tuning = [r for r in payload["rows"] if r["split"] == "tuning"
                  and (r["policy"], r["budget"]) == (b["policy"], b["budget"])]
        assert b["tuning_recall"] == max(r["recall"] for r in tuning)
    assert "held out (" in done.stdout and "picked on the tuning part" in done.stdout


@pytest.mark.parametrize("args, said", [
    (["--holdout", "1"], "--holdout must be in [0, 1), got 1.0"),
    (["--holdout", "nan"], "--holdout must be in [0, 1), got nan"),
    (["--folds", "1"], "--folds must be >= 2, got 1"),
    (["--folds", "7"], "--folds must be at most the number of conversations (6), got 7"),
    (["--seed", "-1"], "--seed must be >= 0, got -1"),
    (["--explain", "-2"], "--explain must be >= 0, got -2"),
    (["--explain", "3", "--explain-budget", "300"],
     "--explain-budget must be one of --budgets [1000], got 300")])
def test_bad_holdout_arguments_are_refused_before_the_run(args, said, capsys, no_run):
    from memorykit.cli import main

    with pytest.raises(SystemExit) as exit_:
        main(["tune", str(CHATS), "-q", str(QUESTIONS), "-b", "1000", *args, "--no-progress"])
    assert exit_.value.code == 2
    assert said in capsys.readouterr().err


def test_explain_prints_the_worst_misses_with_rank_score_and_cutoff(tmp_path):
    out = tmp_path / "out.json"
    done = run_cli("tune", str(CHATS), "-q", str(QUESTIONS), "-b", "500", "-p", "bm25", "fifo",
                   "--explain", "2", "--json", str(out), "--no-progress")
    assert done.returncode == 0, done.stderr
    explained = json.loads(out.read_text())["explain"]
    assert len(explained) == 2
    best = json.loads(out.read_text())["best"][0]
    assert f"worst missed questions of {best['policy']} ({best['configuration']}) at 500" \
        in done.stdout
    for miss in explained:
        assert miss["recall"] < 1 and miss["missed"]
        assert f"{miss['conversation_id']} / {miss['question_id']}" in done.stdout
        for e in miss["missed"]:
            assert best["policy"] == "bm25" and e["score"] is not None
            if e["rank"] is None:  # BM25 ranks only messages sharing a term with the question
                assert e["score"] == 0 and "not ranked at all (score 0.00)" in e["reason"]
            else:
                assert f"rank {e['rank']}, score {e['score']:.2f}" in done.stdout
    assert done.stdout.count("cutoff:") == 2


def test_a_locomo_file_carries_its_own_questions(tmp_path):
    mini = ROOT / "tests" / "fixtures" / "locomo_mini.json"
    out = tmp_path / "out.json"
    done = run_cli("tune", str(mini), "-b", "200", "-p", "bm25", "fifo", "--json", str(out),
                   "--no-progress")
    assert done.returncode == 0, done.stderr
    assert "(its qa lists, LoCoMo schema)" in done.stdout
    samples = json.loads(mini.read_text())
    payload = json.loads(out.read_text())
    assert payload["data"]["conversations"] == len(samples)
    from memorykit.evaluation.locomo import load_locomo

    assert payload["data"]["questions"] == load_locomo(mini, verify=False).n_questions
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps([{**samples[0], "conversation": "nope"}]))
    done = run_cli("tune", str(broken), "--no-progress")
    assert done.returncode == 2 and f"{broken}: LoCoMo schema: " in done.stderr
    assert "conversation must be an object, got 'nope'" in done.stderr
