"""``python -m bench.llm_update_detector``: the LLM option of "the same fact again", measured.

``LLMUpdateDetector`` (``memorykit.facts.detect``) asks a chat model which later message
changes an earlier one's fact. The only model this machine has offline is SmolLM2-135M-Instruct
(4,096 tokens of context), served by ``LocalModelServer`` on 127.0.0.1 and called through the
real ``openai`` client; the history goes to it in windows of ``--window`` tokens. On the first
``--conversations`` conversations of the bundled changing-facts set (or ``--chats`` /
``--questions``) it prints what the rule detector's figures print (``bench.changing_facts``):
superseded statements linked to their question's current evidence, evidence wrongly marked,
and superseding-retrieval's recall and ``stale_only`` at 1,000 tokens with either detector.
Without the model it says why and exits 2.
"""

from __future__ import annotations

import argparse
import socket
import sys
import time

from bench.changing_facts import DATA, detection
from memorykit.evaluation.chatlog import load_chat_logs
from memorykit.evaluation.dataset import EvalDataset
from memorykit.evaluation.harness import evaluate
from memorykit.evaluation.superseding import SupersedingRetrieval
from memorykit.facts.detect import LLMUpdateDetector


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chats", default=str(DATA / "changing_facts.jsonl"))
    parser.add_argument("--questions", default=str(DATA / "changing_facts_questions.jsonl"))
    parser.add_argument("--conversations", type=int, default=2)
    parser.add_argument("--window", type=int, default=1500,
                        help="tokens of listed messages per call (SmolLM2 holds 4,096 in all)")
    parser.add_argument("--reply-tokens", type=int, default=400)
    args = parser.parse_args(argv)
    from memorykit.llm.chat import OpenAIChatModel
    from memorykit.llm.local_server import LocalModelServer, local_model_available

    available = local_model_available()
    if not available:
        print(f"no local model: {available.reason}")
        return 2
    data = load_chat_logs(args.chats, args.questions)
    data = EvalDataset(data.name, tuple(data)[:args.conversations])
    with socket.socket() as probe:  # a free port on the loopback
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with LocalModelServer(port) as server:
        model = OpenAIChatModel(server.model, base_url_client(server.base_url))
        calls: list[float] = []
        replies: list[str] = []

        def complete(prompt: str) -> str:
            t = time.perf_counter()
            reply = model.complete([{"role": "user", "content": prompt}],
                                   max_tokens=args.reply_tokens)
            calls.append(time.perf_counter() - t)
            replies.append(reply)
            return reply

        llm = LLMUpdateDetector(complete, window_tokens=args.window)
        found = {c.id: llm.find(c.messages) for c in data}  # once: the calls are the cost
    links = sum(len(v) for v in found.values())
    print(f"{data.name}: {len(data)} conversations, {data.n_questions} questions; model "
          f"{server.model} (SmolLM2-135M-Instruct Q4_1, llama.cpp), window {args.window} tokens, "
          f"{len(calls)} calls, {sum(calls):.0f} s ({max(calls):.1f} s the longest)")
    print(f"links the model gave (well-formed, ids known, old before new): {links}; replies "
          f"holding a JSON list: {sum(r.count('[{') > 0 for r in replies)} of {len(replies)}; "
          f"the first begins {' '.join(replies[0].split())[:160]!r}")
    by_messages = {tuple(m.id for m in c.messages): found[c.id] for c in data}
    rows = {"rules (find_updates)": detection(data),
            "SmolLM2 (LLMUpdateDetector)": detection(
                data, lambda ms: list(by_messages[tuple(m.id for m in ms)]), lambda ms: [])}
    print("| detector | superseded linked to current evidence | evidence wrongly marked |")
    print("|---|---:|---:|")
    for name, (linked, _, superseded, wrong, evidence) in rows.items():
        print(f"| {name} | {linked} of {superseded} | {wrong} of {evidence} |")

    class Found:  # the model's links, already asked for, as a detector
        def find(self, messages):
            return list(by_messages[tuple(m.id for m in messages)])

    print("\n| superseding-retrieval at 1,000 tokens, detector | recall | stale_only |")
    print("|---|---:|---:|")
    for name, detector in (("rules", None), ("SmolLM2", Found())):
        s = evaluate(SupersedingRetrieval(detector=detector), data, 1000).summary()
        print(f"| {name} | {s['recall']:.3f} | {s['stale_only']:.3f} |")
    return 0


def base_url_client(base_url: str):
    import openai

    return openai.OpenAI(base_url=base_url, api_key="local")


if __name__ == "__main__":
    sys.exit(main())
