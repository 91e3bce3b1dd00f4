"""``python -m bench.write_audit``: the write-quality audit by storage scope and update policy.

``memorykit.facts.audit.audit_settings_grid`` on the bundled changing-facts set
(``data/changing_facts``): one conversation (``--conversation``, default the first) row by row,
then every conversation summed. Then two checks of the audit against the set's labels, for the
store at its defaults (scope "all", update policy "keep-all"): how many of the audit's
contradictions left standing have a labelled superseded statement as their old side, and, with
the questions about changed facts as queries, on how many questions the audit's "superseded
ranked first" agrees with the labels (the first labelled statement the store recalls in its top
``recall_limit`` is a superseded one). ``--chats``/``--questions`` point it at another set in
the same format.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

from memorykit.evaluation.chatlog import load_chat_logs
from memorykit.facts.audit import FINDING_KINDS, audit_settings_grid, audit_store
from memorykit.longterm.service import MemoryService

DATA = Path(__file__).resolve().parents[1] / "data" / "changing_facts"
COLUMNS = ("storage_scope", "update_policy", "entries", *FINDING_KINDS)


def table(rows: list[dict]) -> str:
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(str(r[c]) for c in COLUMNS) + " |" for r in rows]
    return "\n".join(lines)


def labels_check(data) -> str:
    """The audit at the store's defaults against the labels (see the module docstring)."""
    labelled = found = on_labelled = asked = agree = 0
    for conv in data.conversations:
        svc = MemoryService()
        for m in conv.messages:
            svc.add("s", m)
        old = {o for q in conv.questions for o in q.superseded_ids}
        pairs = [f.ids for f in audit_store(svc, "s").findings
                 if f.kind == "contradiction left standing"]
        labelled += len(old)
        found += len(pairs)
        on_labelled += sum(o in old for o, _ in pairs)
        semantic, limit = svc.sessions["s"].semantic, svc.settings.recall_limit
        for q in conv.questions:
            if not q.superseded_ids:
                continue
            hits = [h.message_id for h in semantic.recall(q.question, limit=limit, threshold=None,
                                                          where={"session_id": "s"})
                    if h.score > 0]
            named = set(q.evidence_ids) | set(q.superseded_ids)
            first = next((h for h in hits if h in named), None)
            audit = audit_store(svc, "s", queries=[q.question])
            asked += 1
            agree += (first in q.superseded_ids) == (audit.count("superseded ranked first") == 1)
    return (f"Labels (scope all, keep-all): {labelled} labelled superseded statements; the audit "
            f"finds {found} contradictions left standing, {on_labelled} of them with a labelled "
            f"superseded statement as the old side. Superseded ranked first agrees with the "
            f"labels on {agree} of {asked} questions about changed facts.")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.write_audit", description=__doc__)
    parser.add_argument("--chats", default=str(DATA / "changing_facts.jsonl"))
    parser.add_argument("--questions", default=str(DATA / "changing_facts_questions.jsonl"))
    parser.add_argument("--conversation", type=int, default=0)
    args = parser.parse_args(argv)
    data = load_chat_logs(args.chats, questions=args.questions)
    if not 0 <= args.conversation < len(data.conversations):
        parser.error(f"--conversation must be in [0, {len(data.conversations) - 1}], "
                     f"got {args.conversation}")
    print(f"Command: `{' '.join(['python -m bench.write_audit', *argv])}`")
    conv = data.conversations[args.conversation]
    start = time.perf_counter()
    print(f"\nConversation {conv.id} ({len(conv.messages)} messages):\n")
    print(table(audit_settings_grid(list(conv.messages))))
    sums: dict[tuple[str, str], Counter] = {}
    for c in data.conversations:
        for r in audit_settings_grid(list(c.messages)):
            sums.setdefault((r["storage_scope"], r["update_policy"]), Counter()).update(
                {k: v for k, v in r.items() if k not in COLUMNS[:2]})
    print(f"\nAll {len(data.conversations)} conversations "
          f"({sum(len(c.messages) for c in data.conversations)} messages), summed:\n")
    print(table([{"storage_scope": s, "update_policy": p, **c} for (s, p), c in sums.items()]))
    print("\n" + labels_check(data))
    print(f"\n({time.perf_counter() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
