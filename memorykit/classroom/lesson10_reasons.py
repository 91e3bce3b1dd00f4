"""Lesson 10's reasons: why each probe is missed, where the table departs from D3, what D learned.

* ``why_missed(distractors)``: for B and C, every probe at one distractor count, recalled or not,
  and the computed reason (the episode's score against the threshold with its parts, the fact
  sentence's cosine against the threshold, or the window that still holds it);
* ``seed_comparison()``: one line per architecture, the benchmark's mean recall
  (``lesson10.recall_table``) against D3's and, where they differ, the reason from ``why_missed``;
* ``learned_rules(distractors)``: D's critic in the booking scenario: the rules it learned, the
  messages each cites, and every architecture's reply to the second request.

C and D embed with all-MiniLM-L6-v2 by default (``embedder="lexical"``: the lexical baseline);
the summarizer is extractive, the critic and actor scripted. Offline, deterministic.
Taught in ``notebooks/10_architectures.ipynb``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from memorykit._validate import require_int
from memorykit.classroom.explorer import EMBEDDERS
from memorykit.classroom.lesson10 import BUDGET, LETTERS, probe_run, recall_table
from memorykit.classroom.scenarios.probes import (adaptability_scenario, asks_for_confirmation,
                                                  booking_actor, booking_critic,
                                                  probe_conversation)
from memorykit.longterm.architectures import ReflectionArchitecture, make_architectures
from memorykit.longterm.episodic import explain


def why_missed(distractors: int = 50, window: int = 20,
               embedder: str = "minilm") -> list[dict[str, Any]]:
    """For B and C at one distractor count: each probe, recalled or not, and why (computed)."""
    require_int("distractors", distractors, minimum=0)
    run = probe_run(embedder)
    conv = probe_conversation(distractors, counter=run.counter)
    archs = make_architectures(window=window, counter=run.counter, embedder=run.embedder)
    out: list[dict[str, Any]] = []
    b, c = archs["B"], archs["C"]
    for f in conv.facts:
        b.sync(conv.messages)
        now = conv.messages[-1].created_at
        in_stm = any(m.id == f.message_id for m in b.memory.stm)
        scores = [s for s in b.memory.score(f.question, now)
                  if f.message_id in s.episode.source_message_ids]
        ctx = b.build_context(conv.messages, f.question, BUDGET)
        hit = f.key in "\n".join(i.content for i in ctx.items)
        if in_stm:
            why = "still in short-term memory (the window)"
        elif not scores:
            why = "no episode covers it"
        else:
            s = scores[0]
            kept = f.key in s.episode.summary
            chosen = {x.episode.id for x in b.memory.recall(f.question, now)}
            why = (f"episode {s.episode.id}: " + explain(s, b.settings, s.episode.id in chosen)
                   + ("" if kept else "; its summary dropped the key (the abstracted ghost)"))
        out.append({"arch": "B", "question": f.question, "key": f.key, "recalled": hit, "why": why})
    c.sync(conv.messages)
    in_window = {m.id for m in c.short_term_messages()}
    for f in conv.facts:
        ctx = c.build_context(conv.messages, f.question, BUDGET)
        hit = f.key in "\n".join(i.content for i in ctx.items)
        if f.message_id in in_window:
            why = "still in the window"
        else:
            q = c.memory.embed_query(f.question)
            v = c.memory.embedder.embed([f.text])[0]
            cos = float(np.dot(q, v) / (np.linalg.norm(q) * np.linalg.norm(v)))
            op = ">" if cos > c.settings.threshold else "<="
            why = (f"cosine(question, fact sentence) = {cos:.3f} {op} threshold "
                   f"{c.settings.threshold:g} ({run.embedder.name}: {EMBEDDERS[embedder]})")
        out.append({"arch": "C", "question": f.question, "key": f.key, "recalled": hit, "why": why})
    return out


def seed_comparison(distractors: int = 50, embedder: str = "minilm") -> list[str]:
    """One line per architecture: our mean recall against D3's, and where they differ,
    the computed reason (from ``why_missed`` at ``distractors`` turns)."""
    table = {r["arch"][0]: r for r in recall_table(embedder=embedder)}
    why = why_missed(distractors, embedder=embedder)
    name = probe_run(embedder).embedder.name
    lines = []
    for letter in LETTERS:
        r = table[letter]
        head = f"{letter}: ours {r['mean']} (mean over N=10,25,50,100), D3 {r['D3']}"
        if r["differs"] == "no":
            lines.append(head + ": same")
            continue
        own = [w for w in why if w["arch"] == ("B" if letter == "B" else "C")]
        missed = [w for w in own if not w["recalled"]]
        reason = f"at N={distractors} {len(missed)} of {len(own)} probes missed: "
        if letter == "B":
            below = sum("<=" in w["why"] for w in missed)
            ghost = sum("dropped the key" in w["why"] for w in missed)
            reason += (f"{below} episode(s) scored at or below the threshold (few query words "
                       f"among its keywords), {ghost} summary(ies) lost the key")
        else:
            below = sum("<=" in w["why"] for w in missed)
            reason += (f"{below} fact sentence(s) at or below the cosine threshold with {name} ("
                       + ("D3's embedder, but these questions paraphrase their facts)"
                          if embedder == "minilm" else "word overlap; D3 used all-MiniLM-L6-v2)"))
            if letter == "D":
                reason += "; D recalls what C recalls (its rules change behaviour, not recall)"
        lines.append(f"{head}: differs; {reason}")
    return lines


def learned_rules(distractors: int = 50) -> dict[str, Any]:
    """The adaptability scenario: D's rules (with their sources) and every actor reply."""
    require_int("distractors", distractors, minimum=0)
    run = probe_run()
    sc = adaptability_scenario(distractors, counter=run.counter)
    archs = make_architectures(critic=booking_critic(), counter=run.counter, embedder=run.embedder)
    actor = booking_actor()
    by_id = {m.id: m for m in sc.messages}
    replies, rules = {}, []
    for letter, arch in archs.items():
        ctx = arch.build_context(sc.messages, sc.second_request, BUDGET)
        reply = actor.complete(ctx.to_openai(), max_tokens=120)
        replies[letter] = {"reply": reply, "asks_first": asks_for_confirmation(reply)}
        if isinstance(arch, ReflectionArchitecture):
            for r in arch.reflection.active():
                rules.append({"rule": arch.reflection.render(r),
                              "cites": [f"{i} ({by_id[i].role}): {by_id[i].content}"
                                        for i in r.source_message_ids],
                              "cites_the_mistake":
                                  set(r.source_message_ids) == set(sc.mistake_ids)})
    return {"distractors": distractors, "messages": len(sc.messages), "rules": rules,
            "replies": replies}


__all__ = ["learned_rules", "seed_comparison", "why_missed"]
