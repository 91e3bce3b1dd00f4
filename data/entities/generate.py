"""Regenerate the CMS scenario files byte-identically.

    python data/entities/generate.py          # write the files
    python data/entities/generate.py --check  # exit 1 if a file differs from what the generator makes

The generator itself (``generate_cms_scenario``) lives here, beside the files it writes; the
scenario and its loader are ``memorykit/classroom/scenarios/cms.py``.

Files: ``cms_small.jsonl`` (seed 3, 120 turns, 40 entities; used by the tests)
and ``cms_large.jsonl`` (seed 7, 1,000 turns, 200 entities; the heatmap and the
FIFO-vs-relevance comparison). See ``memorykit/classroom/scenarios/cms.py`` for the format.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))

import math  # noqa: E402
import random  # noqa: E402
import re  # noqa: E402
from typing import Any  # noqa: E402

from memorykit._validate import require_int, require_unit_interval  # noqa: E402
from memorykit.classroom.scenarios.cms import (ENTITY_TYPES, CMSScenario,  # noqa: E402
                                               LabelledReference, Mention, ScenarioTurn)
from memorykit.classroom.scenarios.conversation import MAX_TURNS  # noqa: E402
from memorykit.entities.records import Entity  # noqa: E402


# ------------------------------------------------------------------- vocabulary
_TYPE_SHARE = {"page": 0.34, "entry": 0.34, "user": 0.12, "task": 0.20}
_PAGE_NAMES = [
    "Pricing", "Careers", "About us", "Contact", "Home", "Docs", "Security", "Partners",
    "Press", "Changelog", "Status", "Privacy policy", "Terms", "Integrations", "Customers",
    "Webinars", "Events", "Support", "Enterprise", "Startups", "Education", "Nonprofits",
    "Roadmap", "API reference", "Brand assets",
]
_PAGE_VARIANTS = ["", " (EU)", " (US)", " FAQ", " landing", " v2", " archive", " (DE)"]
_ENTRY_TOPICS = [
    "Launch recap", "Q3 roadmap", "Customer story: Acme", "Release notes 4.2", "Hiring update",
    "Security advisory", "Migration guide", "Year in review", "Pricing changes", "Team offsite",
    "Webinar replay", "Holiday hours", "Case study: Globex", "Design system notes",
    "Performance tuning", "Community spotlight", "Accessibility audit", "Partner program",
]
_ENTRY_SUFFIX = ["", " (part 2)", " - draft", " - translated", " - update", " (short)"]
_USERS = [
    "dana", "ravi", "mei", "tomas", "aisha", "jonas", "priya", "leo", "sofia", "kenji", "amara",
    "felix", "nora", "omar", "lucia", "ivan", "zoe", "malik", "hana", "pablo", "ines", "yuki",
    "sam", "elif", "theo", "maya", "arjun", "clara", "diego", "lena",
]
_TASK_VERBS = ["Fix broken links on", "Translate", "Refresh screenshots for", "Proofread",
               "Add SEO tags to", "Archive", "Restructure", "Review legal copy of"]
_TASK_OBJECTS = ["the docs", "the blog", "the landing pages", "the pricing section",
                 "the careers area", "the release notes", "the support hub", "the partner pages",
                 "the press kit", "the events calendar"]
_TITLES = ["Plans and pricing", "Work with us", "Our story", "Get in touch", "Trust center",
           "What's new", "Start here", "Talk to sales"]
_SLUGS = ["plans", "jobs", "story", "contact", "trust", "new", "start", "sales"]
_SECTIONS = ["/company", "/products", "/resources", "/legal", "/support"]
_TAGS = ["release", "customers", "engineering", "hiring", "security", "events"]
_DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]
_COMMENTS = ["waiting on legal", "blocked by the redesign", "needs two more screenshots",
             "copy is approved", "ready for review"]
_CHAT = [
    ("Thanks, that helps.", "You're welcome."),
    ("How do I preview on mobile?", "Use the device toggle in the preview bar."),
    ("What's the keyboard shortcut for save?", "Ctrl+S (Cmd+S on a Mac)."),
    ("Remind me what the review workflow looks like.",
     "Draft, review by an editor, then scheduled or immediate publish."),
    ("Give me a minute.", "Sure, take your time."),
]
_BROWSE = [
    "List the latest drafts in {section}.",
    "Show me what changed in {section} this week.",
    "Search for anything about {topic}.",
    "What is waiting for review?",
    "Show open work in {section}.",
]
_NOUNS = {"page": ["page"], "entry": ["entry", "post", "entry"], "user": ["user"],
          "task": ["task", "ticket", "task"]}
_ACTIONS: dict[str, list[str]] = {
    "page": ["Update {p} title to \"{title}\".", "Publish {o}.", "Add a hero image to {o}.",
             "Change {p} slug to /{slug}.", "Unpublish {o} until {day}.", "Move {o} under {section}."],
    "entry": ["Publish {o}.", "WHO_WROTE", "Add the tag '{tag}' to {o}.",
              "Schedule {o} for {day} 9am.", "Fix the typo in {p} intro."],
    "task": ["ASSIGN", "Mark {o} as done.", "Set {p} priority to high.",
             "Add a comment to {o}: {comment}."],
    "user": ["Give {o} editor rights.", "WORKING_ON", "Send {o} a review request."],
}
_ACTION_WEIGHTS = {"open": 0.20, "act": 0.34, "act_other": 0.12, "browse": 0.14,
                   "previous": 0.08, "chat": 0.12}


class _Text:
    """Builds a text piece by piece, recording spans of mentions and references."""

    def __init__(self, where: str) -> None:
        self.where = where
        self.parts: list[str] = []
        self.n = 0
        self.mentions: list[Mention] = []
        self.refs: list[LabelledReference] = []

    def add(self, s: str) -> None:
        self.parts.append(s)
        self.n += len(s)

    def mention(self, s: str, key: str) -> None:
        start = self.n
        self.add(s)
        self.mentions.append(Mention(key, self.where, (start, self.n), s))

    def ref(self, s: str, antecedent: str, form: str, ok: bool) -> None:
        start = self.n
        self.add(s)
        self.refs.append(LabelledReference(s, (start, self.n), antecedent, form, ok))

    def text(self) -> str:
        return "".join(self.parts)


class _Generator:
    def __init__(self, seed: int, n_turns: int, n_entities: int, p_ambiguous_it: float) -> None:
        self.rng = random.Random(seed)
        self.n_turns = n_turns
        self.p_ambiguous_it = p_ambiguous_it
        self.entities = self._make_entities(n_entities)
        self.by_key = {e.key: e for e in self.entities}
        self.unused = {t: [e.key for e in self.entities if e.type == t] for t in ENTITY_TYPES}
        for keys in self.unused.values():
            self.rng.shuffle(keys)
        self.known: list[str] = []
        self.order: dict[str, None] = {}  # discourse recency, oldest first
        self.focus: str | None = None
        self.focus_history: list[str] = []
        self.side: str | None = None  # a side entity the last answer mentioned
        self.projects: list[dict[str, Any]] = []
        self.project: dict[str, Any] | None = None
        self.stint_left = 0
        self.opened: list[str] = []
        self.listed: list[str] = []

    # ------------------------------------------------------------ entities
    def _make_entities(self, n: int) -> list[Entity]:
        rng = self.rng
        counts = {t: max(2, round(n * share)) for t, share in _TYPE_SHARE.items()}
        counts["page"] += n - sum(counts.values())
        pages = [a + b for b in _PAGE_VARIANTS for a in _PAGE_NAMES]
        entries = [a + b for b in _ENTRY_SUFFIX for a in _ENTRY_TOPICS]
        tasks = [f"{v} {o}" for v in _TASK_VERBS for o in _TASK_OBJECTS]
        users = list(_USERS) + [f"{u}{i}" for i in range(2, 9) for u in _USERS]
        out: list[Entity] = []
        page_ids = rng.sample(range(10, 1000), counts["page"])
        for pid, label in zip(page_ids, rng.sample(pages, counts["page"])):
            out.append(Entity("page", pid, label, {"status": rng.choice(["draft", "published"])}))
        entry_ids = rng.sample(range(100, 2000), counts["entry"])
        for eid, label in zip(entry_ids, rng.sample(entries, counts["entry"])):
            out.append(Entity("entry", eid, label, {"status": rng.choice(["draft", "published"])}))
        for handle in users[: counts["user"]]:
            out.append(Entity("user", handle, handle.rstrip("0123456789").capitalize(),
                              {"role": rng.choice(["editor", "author", "admin"])}))
        task_ids = rng.sample(range(100, 999), counts["task"])
        for tid, label in zip(task_ids, rng.sample(tasks, counts["task"])):
            out.append(Entity("task", f"T-{tid}", label, {"status": "open"}))
        return out

    def fresh(self, entity_type: str) -> str:
        """An entity of that type not yet in the conversation, else a known one."""
        if self.unused[entity_type]:
            return self.unused[entity_type].pop()
        known = [k for k in self.known if k.startswith(entity_type + ":")]
        return self.rng.choice(known)

    def touch(self, key: str) -> None:
        self.order.pop(key, None)
        self.order[key] = None
        if key not in self.by_key:
            raise AssertionError(key)
        if key not in self.known:
            self.known.append(key)
            for keys in self.unused.values():
                if key in keys:
                    keys.remove(key)

    # ----------------------------------------------------------- discourse
    def recent_of(self, entity_type: str | None) -> list[str]:
        return [k for k in reversed(self.order) if entity_type is None or k.startswith(entity_type + ":")]

    def heuristic(self, form: str, entity_type: str | None) -> str | None:
        if form == "it":
            r = self.recent_of(None)
            return r[0] if r else None
        if form == "this-type":
            r = self.recent_of(entity_type)
            return r[0] if r else None
        if form == "previous-type":
            r = self.recent_of(entity_type)
            return r[1] if len(r) > 1 else None
        newest = self.recent_of(None)
        if not newest:
            return None
        r = self.recent_of(newest[0].split(":")[0])
        return r[1] if len(r) > 1 else None

    def explicit(self, key: str) -> str:
        e = self.by_key[key]
        return f"@{e.id}" if e.type == "user" else f"{e.type} {e.id}"

    def refer(self, text: _Text, key: str, possessive: bool, *, allow_ambiguous: bool = False) -> None:
        """Write a referring expression for ``key`` (or an explicit mention when none fits)."""
        rng = self.rng
        etype = key.split(":")[0]
        newest = self.recent_of(None)
        same = self.recent_of(etype)
        choice: tuple[str, str] | None = None
        if newest and newest[0] == key and rng.random() < 0.45:
            choice = ("its" if possessive else rng.choice(["it", "it", "this one", "that one"]), "it")
        elif same and same[0] == key:
            if (allow_ambiguous and self.side is not None and newest and newest[0] == self.side
                    and rng.random() < self.p_ambiguous_it):
                choice = ("its" if possessive else "it", "it")
            else:
                det = rng.choice(["this", "that", "that", "the"])
                choice = (f"{det} {rng.choice(_NOUNS[etype])}", "this-type")
        elif len(same) > 1 and same[1] == key and rng.random() < 0.8:
            choice = (f"the previous {rng.choice(_NOUNS[etype])}", "previous-type")
        if choice is None:
            text.mention(self.explicit(key), key)
            if possessive:
                text.add("'s")
            self.touch(key)
            return
        words, form = choice
        ok = self.heuristic(form, None if form == "it" else etype) == key
        text.ref(words, key, form, ok)
        if possessive and form != "it":
            text.add("'s")
        self.touch(key)

    # ------------------------------------------------------------- actions
    def new_project(self) -> None:
        rng = self.rng
        if self.projects and rng.random() < 0.3:
            self.project = rng.choice(self.projects)
        else:
            items = [self.fresh(rng.choice(["page", "entry"])) for _ in range(rng.randint(2, 4))]
            self.project = {"task": self.fresh("task"), "owner": self.fresh("user"), "items": items}
            self.projects.append(self.project)
        self.stint_left = rng.randint(25, 60)
        self.opened = []

    def members(self) -> list[str]:
        p = self.project
        assert p is not None
        return [p["task"], *p["items"]]

    def do_open(self, u: _Text, a: _Text, key: str | None = None) -> str:
        rng = self.rng
        if key is None:
            unopened = [k for k in self.members() if k not in self.opened]
            if rng.random() < 0.15:
                key = self.fresh(rng.choice(["page", "entry", "task"])) if rng.random() < 0.6 \
                    else rng.choice(self.known or [self.fresh("page")])
            elif unopened:
                key = unopened[0]
            else:
                key = rng.choice(self.members())
        e = self.by_key[key]
        verb = rng.choice(["Open", "Show me", "Pull up", "Go to"])
        u.add(f"{verb} ")
        if e.type == "user":
            u.add("the profile of ")
        u.mention(self.explicit(key), key)
        u.add(".")
        self.touch(key)
        a.add(f'Here is {e.type} {e.id}: "{e.label}" ({e.metadata.get("status", e.metadata.get("role"))}).')
        self.set_focus(key)
        self.side = None
        if key in self.members() and key not in self.opened:
            self.opened.append(key)
        return "open"

    def do_act(self, u: _Text, a: _Text, key: str) -> str:
        rng = self.rng
        e = self.by_key[key]
        template = rng.choice(_ACTIONS[e.type])
        side = None
        if template == "ASSIGN":
            u.add("Assign ")
            self.refer(u, key, False, allow_ambiguous=True)
            assignee = self.project["owner"] if rng.random() < 0.6 else self.fresh("user")
            u.add(" to ")
            u.mention(self.explicit(assignee), assignee)
            u.add(".")
            self.touch(assignee)
            a.add(f"Assigned task {e.id} to {self.by_key[assignee].label}.")
            side = assignee
        elif template == "WHO_WROTE":
            u.add("Who wrote ")
            self.refer(u, key, False, allow_ambiguous=True)
            u.add("?")
            author = rng.choice([k for k in self.known if k.startswith("user:")] or [self.fresh("user")]) \
                if rng.random() < 0.5 else self.fresh("user")
            a.add(f'Entry {e.id} "{e.label}" was written by ')
            a.mention(self.explicit(author), author)
            a.add(".")
            self.touch(author)
            side = author
        elif template == "WORKING_ON":
            u.add("What is ")
            self.refer(u, key, False, allow_ambiguous=True)
            u.add(" working on?")
            a.add(f"{e.label} is working on ")
            items = rng.sample(self.members(), k=min(2, len(self.members())))
            for i, item in enumerate(items):
                if i:
                    a.add(" and ")
                a.mention(self.explicit(item), item)
                self.touch(item)
            a.add(".")
            side = items[-1]
        else:
            fill = dict(title=rng.choice(_TITLES), slug=rng.choice(_SLUGS), day=rng.choice(_DAYS),
                        section=rng.choice(_SECTIONS), tag=rng.choice(_TAGS),
                        comment=rng.choice(_COMMENTS))
            slot = re.search(r"\{[op]\}", template)
            assert slot is not None, template
            u.add(template[: slot.start()].format(**fill))
            self.refer(u, key, slot.group(0) == "{p}", allow_ambiguous=True)
            u.add(template[slot.end():].format(**fill))
            a.add(f'Done: {e.type} {e.id} "{e.label}" is updated.')
        self.set_focus(key)
        self.side = side
        if key in self.members() and key not in self.opened:
            self.opened.append(key)
        return "act"

    def do_browse(self, u: _Text, a: _Text) -> str:
        rng = self.rng
        u.add(rng.choice(_BROWSE).format(section=rng.choice(_SECTIONS), topic=rng.choice(_TAGS)))
        k = rng.randint(3, 6)
        keys: list[str] = []
        while len(keys) < k:
            if rng.random() < 0.6 or not self.known:
                key = self.fresh(rng.choice(["page", "entry", "entry", "task"]))
            else:
                key = rng.choice(self.known)
            if key not in keys:
                keys.append(key)
        a.add(f"I found {k}: ")
        for i, key in enumerate(keys):
            if i:
                a.add(", ")
            e = self.by_key[key]
            a.mention(self.explicit(key), key)
            a.add(f' "{e.label}"')
            self.touch(key)
        a.add(".")
        self.listed = keys
        self.side = keys[-1]
        return "browse"

    def do_previous(self, u: _Text, a: _Text) -> str | None:
        """Return to what was being worked on before the current focus."""
        key = next((k for k in reversed(self.focus_history) if k != self.focus), None)
        if key is None:
            return None
        etype = key.split(":")[0]
        newest = self.recent_of(None)
        same = self.recent_of(etype)
        u.add(self.rng.choice(["Go back to ", "Let's return to ", "Reopen "]))
        if len(same) > 1 and same[1] == key and newest[0].split(":")[0] == etype \
                and self.rng.random() < 0.4:
            u.ref("the previous one", key, "previous-one", self.heuristic("previous-one", None) == key)
            self.touch(key)
        else:
            self.refer(u, key, False)
        u.add(".")
        e = self.by_key[key]
        a.add(f'Back on {e.type} {e.id}: "{e.label}".')
        self.set_focus(key)
        self.side = None
        return "previous"

    def set_focus(self, key: str) -> None:
        self.focus = key
        if not self.focus_history or self.focus_history[-1] != key:
            self.focus_history.append(key)
            del self.focus_history[:-8]

    def turn(self, n: int, t: float) -> ScenarioTurn:
        rng = self.rng
        if self.project is None or self.stint_left <= 0:
            self.new_project()
        self.stint_left -= 1
        u, a = _Text("user"), _Text("assistant")
        if self.listed and rng.random() < 0.4:
            action = self.do_open(u, a, rng.choice(self.listed))
            self.listed = []
        else:
            self.listed = []
            action = rng.choices(list(_ACTION_WEIGHTS), weights=list(_ACTION_WEIGHTS.values()))[0]
            if action in ("act", "act_other") and self.focus is None:
                action = "open"
            if action == "act_other":
                others = [k for k in self.opened if k != self.focus]
                action = "act" if not others else "act_other"
            if action == "open":
                action = self.do_open(u, a)
            elif action == "act":
                action = self.do_act(u, a, self.focus)
            elif action == "act_other":
                self.do_act(u, a, rng.choice([k for k in self.opened if k != self.focus]))
            elif action == "browse":
                action = self.do_browse(u, a)
            elif action == "previous":
                action = self.do_previous(u, a) or self._chat(u, a)
            else:
                action = self._chat(u, a)
        return ScenarioTurn(n, round(t, 3), action, u.text(), a.text(),
                            tuple(u.mentions + a.mentions), tuple(u.refs))

    def _chat(self, u: _Text, a: _Text) -> str:
        q, r = self.rng.choice(_CHAT)
        u.add(q)
        a.add(r)
        return "chat"

    def run(self) -> list[ScenarioTurn]:
        rng = self.rng
        t = 0.0
        turns = []
        for n in range(1, self.n_turns + 1):
            if n > 1:
                # Median 0.5 min between turns; about one break of 8-30 minutes per 50 turns.
                t += rng.lognormvariate(math.log(0.5), 0.6)
                if rng.random() < 0.02:
                    t += rng.uniform(8, 30)
            turns.append(self.turn(n, t))
        return turns


def generate_cms_scenario(
    seed: int = 0,
    n_turns: int = 1000,
    n_entities: int = 200,
    *,
    p_ambiguous_it: float = 0.35,
    name: str | None = None,
) -> CMSScenario:
    """A seeded CMS editing session of ``n_turns`` over a universe of ``n_entities``.

    ``p_ambiguous_it`` is how often the user says "it" for the entity being
    worked on right after an answer mentioned a different one.
    """
    require_int("seed", seed, minimum=0)
    require_int("n_turns", n_turns, minimum=1, maximum=MAX_TURNS)
    require_int("n_entities", n_entities, minimum=8, maximum=MAX_TURNS)
    require_unit_interval("p_ambiguous_it", p_ambiguous_it)
    gen = _Generator(seed, n_turns, n_entities, p_ambiguous_it)
    turns = gen.run()
    params = {"n_turns": n_turns, "n_entities": n_entities, "p_ambiguous_it": p_ambiguous_it}
    return CMSScenario(name or f"cms-seed{seed}-{n_turns}t", seed, params,
                       tuple(gen.entities), tuple(turns))


SCENARIOS = {
    "cms_small.jsonl": dict(seed=3, n_turns=120, n_entities=40, name="cms-small"),
    "cms_large.jsonl": dict(seed=7, n_turns=1000, n_entities=200, name="cms-large"),
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare instead of writing")
    args = parser.parse_args(argv)
    status = 0
    for filename, params in SCENARIOS.items():
        text = generate_cms_scenario(**params).to_jsonl()
        path = HERE / filename
        if args.check:
            same = path.exists() and path.read_text(encoding="utf-8") == text
            print(f"{filename}: {'ok' if same else 'DIFFERS'}")
            status |= 0 if same else 1
        else:
            path.write_text(text, encoding="utf-8")
            print(f"{filename}: wrote {len(text.splitlines())} lines")
    return status


if __name__ == "__main__":
    raise SystemExit(main())
