"""The command line: ``python -m memorykit tune FILE --questions Q [...]``.

(The course's commands are the classroom's: ``python -m memorykit.classroom course ...``.)

``tune`` loads OpenAI-format conversations and questions about them
(``memorykit.evaluation.chatlog``), sweeps every policy the evaluation toolkit compares
(``memorykit.evaluation.tune``) and prints, as Markdown tables, the best configuration of
each policy at each budget (picked on a tuning part of the conversations, scored on the
``--holdout`` part, with bootstrap intervals), paired comparisons of the leading policies and
the Pareto front of recall against tokens; ``--explain N`` prints the N worst missed questions
of the best policy and why the evidence was left out; ``--json OUT`` writes every row too;
``--export FILE`` writes the best policy at ``--export-budget`` (default: the largest) as a
tuned-policy file that ``memorykit.load_policy`` rebuilds (``memorykit.evaluation.export``).
A progress bar shows on a terminal (``--progress`` / ``--no-progress``
to choose). Everything runs locally: nothing is uploaded.

A LoCoMo-schema file (``locomo10.json``: samples carrying their questions in ``qa``) needs no
questions file. Without one otherwise it refuses: a log alone does not say what the agent should have
remembered, and guessing probes from it would score a policy against our guess, not against
the agent's needs. Exit codes: 0 done, 2 bad arguments or a bad file (the message names the
file, the line and the field), 1 the results could not be written. Every file is read, and the
``--json`` and ``--export`` paths checked, before the first evaluation: its folder must exist (it is not created)
and be writable, and it may not be one of the input files (after symlinks; hard links too).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

__all__ = ["main"]

NEEDS_QUESTIONS = (
    "tune needs questions: pass --questions FILE, one JSON object per question with the "
    "conversation id, the question text, and evidence (message ids or 0-based indices) and/or "
    "an answer string (format: memorykit.evaluation.chatlog). A log alone does not say what "
    "the agent should have remembered, so there is nothing honest to score it against."
)


def _parser() -> argparse.ArgumentParser:
    from memorykit.evaluation.tune import DEFAULT_BUDGETS, tunable_policy_names

    parser = argparse.ArgumentParser(prog="python -m memorykit",
                                     description="memorykit from the command line.")
    commands = parser.add_subparsers(dest="command", required=True)
    tune = commands.add_parser(
        "tune", help="sweep every memory policy over your own conversations",
        description="Replay OpenAI-format conversations through every memory policy, sweep "
                    "their parameters at each token budget, and report evidence recall.")
    tune.add_argument("conversations", metavar="FILE", type=Path,
                      help="conversations: .jsonl (one per line) or .json (one or a list)")
    tune.add_argument("--questions", "-q", metavar="Q", type=Path,
                      help="questions about them (.jsonl or .json); required to score")
    tune.add_argument("--budgets", "-b", metavar="TOKENS", type=int, nargs="+",
                      default=list(DEFAULT_BUDGETS),
                      help=f"token budgets (default: {' '.join(map(str, DEFAULT_BUDGETS))})")
    tune.add_argument("--policies", "-p", metavar="NAME", nargs="+",
                      choices=tunable_policy_names(),
                      help=f"policies to run (default: all of {', '.join(tunable_policy_names())})")
    tune.add_argument("--json", metavar="OUT", type=Path, dest="json_out",
                      help="write the whole result (every configuration) as JSON here")
    tune.add_argument("--holdout", type=float, default=0.3, metavar="FRACTION",
                      help="share of the conversations held out to report on, picked by --seed "
                           "(default 0.3; 0: pick and report on the same questions); too few "
                           "for a test part of 3 conversations: k folds of about that share")
    tune.add_argument("--folds", type=int, default=None, metavar="K",
                      help="k folds by conversation instead of one held-out part")
    tune.add_argument("--seed", type=int, default=0, help="seed of the split and the bootstrap")
    tune.add_argument("--explain", type=int, default=0, metavar="N",
                      help="print the N worst missed questions of the best policy (held out), "
                           "with the evidence's rank, score and the cutoff")
    tune.add_argument("--explain-budget", type=int, default=None, metavar="TOKENS",
                      help="the budget --explain looks at (default: the largest)")
    tune.add_argument("--export", metavar="FILE", type=Path,
                      help="write the best policy at --export-budget (its settings, budget, "
                           "encoding and held-out recall) as JSON here, for "
                           "memorykit.load_policy")
    tune.add_argument("--export-budget", type=int, default=None, metavar="TOKENS",
                      help="the budget --export picks at (default: the largest)")
    tune.add_argument("--workers", "-w", type=int, default=0, metavar="N",
                      help="run evaluations in N worker processes (default: in this one)")
    tune.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                      help="progress bars on stderr (default: when stderr is a terminal)")
    return parser


def _tune(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from memorykit.evaluation.chatlog import ChatLogError, load_chat_logs
    from memorykit.evaluation.tune import tune

    locomo = _locomo(args.conversations, parser) if args.questions is None else None
    if args.questions is None and locomo is None:
        parser.error(NEEDS_QUESTIONS)
    if any(b < 1 for b in args.budgets):
        parser.error(f"--budgets must be >= 1, got {args.budgets}")
    if args.workers < 0:
        parser.error(f"--workers must be >= 0, got {args.workers}")
    if not 0.0 <= args.holdout < 1.0:
        parser.error(f"--holdout must be in [0, 1), got {args.holdout}")
    if args.seed < 0:
        parser.error(f"--seed must be >= 0, got {args.seed}")
    if args.folds is not None and args.folds < 2:
        parser.error(f"--folds must be >= 2, got {args.folds}")
    if args.explain < 0:
        parser.error(f"--explain must be >= 0, got {args.explain}")
    if args.explain_budget is not None and args.explain_budget not in args.budgets:
        parser.error(f"--explain-budget must be one of --budgets {args.budgets}, "
                     f"got {args.explain_budget}")
    if args.export_budget is not None and args.export is None:
        parser.error("--export-budget needs --export FILE")
    if args.export_budget is not None and args.export_budget not in args.budgets:
        parser.error(f"--export-budget must be one of --budgets {args.budgets}, "
                     f"got {args.export_budget}")
    inputs = [args.conversations, args.questions] if args.questions else [args.conversations]
    for option, out in (("--json", args.json_out), ("--export", args.export)):
        if out is not None:  # before the run: a bad path must not cost a whole sweep
            problem = _output_problem(out, inputs)
            if problem:
                parser.error(f"{option} {out}: {problem}")
    if args.json_out is not None and args.export is not None and \
            args.json_out.resolve() == args.export.resolve():
        parser.error(f"--export {args.export}: is the --json file too; name another file")
    try:
        data = locomo if locomo is not None else load_chat_logs(args.conversations, args.questions)
    except (ChatLogError, FileNotFoundError) as exc:
        parser.error(str(exc))
    if data.n_questions == 0:
        parser.error(f"{args.questions or args.conversations} holds no question: nothing to score")
    if args.folds is not None and args.folds > len(data):
        parser.error(f"--folds must be at most the number of conversations ({len(data)}), "
                     f"got {args.folds}")
    progress = sys.stderr.isatty() if args.progress is None else args.progress
    executor = None
    if args.workers >= 2:
        from concurrent.futures import ProcessPoolExecutor

        executor = ProcessPoolExecutor(args.workers)
    try:
        result = tune(data, args.budgets, args.policies, holdout=args.holdout, folds=args.folds,
                      seed=args.seed, progress=progress, executor=executor)
    finally:
        if executor is not None:
            executor.shutdown()
    described = (f"{data.name}: {len(data)} conversations, {data.n_messages:,} messages, "
                 f"{data.n_questions:,} questions "
                 f"({args.questions.name if args.questions else 'its qa lists, LoCoMo schema'})")
    print(f"data: {described}")
    print(f"policies: {', '.join(result.policies)}; budgets: "
          f"{', '.join(map(str, result.budgets))}; evaluations: {len(result.table):,}")
    print("recall: share of each question's evidence messages the context holds (0 for a context "
          "over its budget); answer_recall: share whose answer the context contains; tokens: mean "
          "context tokens; over_budget: share of contexts over the budget")
    for note in result.notes():
        print(f"note: {note}")
    picked = {"holdout": "picked on the tuning part, recall on the held-out part",
              "folds": "recall of each fold's pick on the fold it did not see",
              "none": "picked and scored on the same questions"}[result.split_kind]
    print(f"\n## Best configuration of each policy at each budget ({picked})\n")
    print(result.best().to_markdown())
    print("\n## Paired comparisons: the best policy against the next three, same questions\n")
    print(result.comparisons().to_markdown())
    part = "tuning part" if result.split_kind == "holdout" else "all conversations"
    print(f"\n## Pareto front ({part}): no other configuration has more recall for fewer "
          "tokens\n")
    print(result.pareto_front().to_markdown())
    misses = _explain(result, args) if args.explain else None
    if args.json_out is not None:
        payload: dict[str, Any] = {"data": {"conversations_file": data.name,
                                            "questions_file": args.questions.name if
                                            args.questions else None,
                                            "conversations": len(data),
                                            "messages": data.n_messages,
                                            "questions": data.n_questions,
                                            "categories": data.categories()},
                                   **result.to_json()}
        if misses is not None:
            payload["explain"] = [asdict(m) for m in misses]
        try:
            args.json_out.write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")
        except OSError as exc:  # checked up front; a full disk can still refuse it
            print(f"python -m memorykit: error: --json {args.json_out}: cannot be written "
                  f"({exc.strerror})", file=sys.stderr)
            return 1
        print(f"\njson: {args.json_out}")
    if args.export is not None:
        return _export(result, args)
    return 0


def _export(result: Any, args: argparse.Namespace) -> int:
    """Write ``--export``: the best policy at ``--export-budget`` (default: the largest)."""
    from memorykit.evaluation.export import export_policy

    budget = args.export_budget if args.export_budget is not None else max(result.budgets)
    files = [p.name for p in (args.conversations, args.questions) if p is not None]
    tuned = export_policy(result, budget, files=files)
    try:
        tuned.save(args.export)
    except OSError as exc:  # checked up front; a full disk can still refuse it
        print(f"python -m memorykit: error: --export {args.export}: cannot be written "
              f"({exc.strerror})", file=sys.stderr)
        return 1
    settings = ", ".join(f"{k}={v}" for k, v in tuned.params.items()) or "defaults"
    earned = tuned.earned
    what = "held-out recall" if earned is not None and earned.split != "none" else "recall"
    recall = "n/a" if earned is None or earned.recall is None else f"{earned.recall:.3f}"
    print(f"\nexported: {tuned.policy} ({settings}) at {budget} tokens, {what} {recall}: "
          f"{args.export} (memorykit.load_policy reads it)")
    return 0


def _locomo(path: Path, parser: argparse.ArgumentParser) -> Any:
    """``path`` read as LoCoMo's schema (a JSON list of samples, each with its ``conversation``
    and its questions in ``qa``), which carries its own questions; None if it is not one."""
    from memorykit.evaluation.locomo import parse_locomo

    try:
        if path.suffix != ".json" or not path.is_file() or path.stat().st_size > 64 << 20:
            return None
        data = json.loads(path.read_bytes())
    except (OSError, ValueError, RecursionError):
        return None  # not LoCoMo: the chat-log reader says what is wrong with it
    if not (isinstance(data, list) and data and isinstance(data[0], dict)
            and {"qa", "conversation"} <= data[0].keys()):
        return None
    try:
        return parse_locomo(data, name=path.stem)
    except (TypeError, ValueError) as exc:
        parser.error(f"{path}: LoCoMo schema: {exc}")


def _explain(result: Any, args: argparse.Namespace) -> list[Any]:
    """Print and return the ``--explain`` worst misses of the best held-out policy."""
    from memorykit.evaluation.explain import explain_misses, format_misses
    from memorykit.evaluation.toolkit import TUNABLE, fixed_policy

    budget = args.explain_budget if args.explain_budget is not None else max(result.budgets)
    top = result.best().where(budget=budget)[0]
    policy = TUNABLE[top["policy"]].make(**_params(result, top)) if top["policy"] in TUNABLE \
        else fixed_policy(top["policy"])
    tested = sorted({c for s in result.splits for c in s.test}) or None
    misses = explain_misses(policy, result.dataset, budget, worst=args.explain,
                            conversations=tested)
    where = "held-out conversations" if tested else "all conversations"
    print(f"\n## Why not: the {len(misses)} worst missed questions of {top['policy']} "
          f"({top['configuration']}) at {budget} tokens, {where}\n")
    print(format_misses(misses) if misses else "(no question missed any evidence)")
    return misses


def _params(result: Any, row: dict[str, Any]) -> dict[str, Any]:
    for c in result.configurations:
        if (c["policy"], c["configuration"], c["budget"]) == (row["policy"], row["configuration"],
                                                              row["budget"]):
            return dict(c["params"])
    raise LookupError(f"no configuration {row['configuration']!r} of {row['policy']!r}")


def _output_problem(out: Path, inputs: Sequence[Path]) -> str:
    """Why ``out`` cannot take the results, or ``""``. Its folder must exist (it is not made:
    a mistyped folder should be an error, not a new tree) and be writable, and it must not be an
    input file (compared after resolving symlinks, and by inode for hard links)."""
    folder = out.parent
    if out.is_dir():
        return "is a directory; name a file to write"
    if out.exists() and not out.is_file():  # a FIFO would block the write until read
        return "is not a regular file"
    if not folder.is_dir():
        return f"folder {folder} does not exist (it is not created for you)"
    if not os.access(folder, os.W_OK | os.X_OK) or (out.exists() and not os.access(out, os.W_OK)):
        return "is not writable"
    for given in inputs:
        same = out.resolve() == given.resolve()
        if not same and out.exists() and given.exists():
            try:
                same = os.path.samefile(out, given)
            except OSError:
                same = False
        if same:
            return f"is the input file {given}; refusing to overwrite it"
    return ""


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line on ``argv`` (default: ``sys.argv[1:]``); returns the exit code."""
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command == "tune":
        return _tune(args, parser)
    parser.error(f"unknown command {args.command!r}")  # argparse refuses it first
    return 2
