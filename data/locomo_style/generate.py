"""Write ``data/locomo_style/locomo_style.json``: a small LoCoMo-schema fixture, written for memorykit.

LoCoMo itself (snap-research/locomo) is CC BY-NC 4.0 and is never shipped; this file
only copies its *schema* (``sample_id``; ``conversation`` with ``speaker_a``/``speaker_b``,
``session_<n>`` turn lists with ``dia_id``/``text`` and image turns with ``blip_caption``,
``session_<n>_date_time``; ``qa`` with ``question``, ``answer`` or ``adversarial_answer``,
``evidence``, ``category`` 1-5) and its quirks (malformed evidence strings, a date key with no
session), with invented people and text. Seeded: the output is byte-identical on every run.

    .venv/bin/python data/locomo_style/generate.py          # rewrite
    .venv/bin/python data/locomo_style/generate.py --check  # exit 1 if it would change
    .venv/bin/python data/locomo_style/generate.py --conversations 10 --events 24 --out X.json

The last writes a LoCoMo-sized set elsewhere (10 conversations, about 1,950 questions) for
``bench/tuning_lesson_scale.py``; events past the eight kinds repeat a kind with other slots.

Used by ``notebooks/12_parameter_tuning.ipynb`` (``memorykit.classroom.lesson12``).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

OUT = Path(__file__).with_name("locomo_style.json")
PAIRS = [("Aria", "Ben"), ("Noor", "Tomas"), ("Ines", "Kofi"), ("Lena", "Marco"), ("Yusuf", "Clara"),
         ("Priya", "Daniel"), ("Sofia", "Kenji"), ("Amara", "Felix"), ("Rosa", "Idris"), ("Mei", "Anton")]
"""The two speakers of each conversation (the bundled fixture uses the first three)."""
HOBBIES = ["pottery", "climbing", "chess", "sailing", "baking", "gardening", "violin", "kayaking",
           "photography", "knitting", "astronomy", "surfing", "calligraphy", "fencing", "birdwatching",
           "woodworking", "salsa", "archery"]
PLACES = ["community centre", "old library", "harbour club", "art school", "sports hall", "town museum",
          "night market", "river park"]
RELATIVES = ["cousin", "aunt", "neighbour", "old roommate", "colleague", "uncle"]
NAMES = ["Jonah", "Maya", "Elif", "Ravi", "Greta", "Luis", "Hana", "Oskar", "Zara", "Pavel"]
CITIES = ["Lisbon", "Osaka", "Toronto", "Nairobi", "Oslo", "Lima", "Seoul", "Dublin"]
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
          "October", "November", "December"]


# Life events: (what the owner says, with a relative time; a single-hop question in other words;
# its answer; a temporal question; an open-domain question the statement answers by inference).
EVENTS = [
    ("We finally brought {pet_name} home {when}, a {pet} from the shelter, she sleeps on my feet.",
     "What is the name of {owner}'s {pet}?", "{pet_name}", "When did {owner} adopt a {pet}?",
     "Is {owner} likely to own pet supplies?"),
    ("{when} I ran my first half marathon along the {river}, my legs are still jelly.",
     "Which race did {owner} run by the {river}?", "a half marathon", "When did {owner} run a half marathon?",
     "Would {owner} consider themselves a runner?"),
    ("I handed in my notice {when}, starting at {company} as a {job} next month.",
     "What job did {owner} take at {company}?", "{job}", "When did {owner} resign?",
     "Was {owner} happy in the old job?"),
    ("My grandmother's recipe book turned up {when} while we cleared the attic, full of {dish} notes.",
     "Whose recipe book did {owner} find?", "the grandmother's", "When did {owner} find the recipe book?",
     "Does {owner} care about family traditions?"),
    ("Booked flights to {city} {when}, two weeks of museums and street food with my {rel}.",
     "Where is {owner} travelling with the {rel}?", "{city}", "When did {owner} book the trip?",
     "Does {owner} enjoy travelling?"),
    ("I started volunteering at the {place} {when}, reading stories to the kids on Thursdays.",
     "Where does {owner} volunteer?", "at the {place}", "When did {owner} start volunteering?",
     "Would {owner} enjoy a career in teaching?"),
    ("{when} I sold my old {vehicle} and bought a cargo bike, the commute is twice as fun.",
     "What did {owner} buy to replace the {vehicle}?", "a cargo bike", "When did {owner} sell the {vehicle}?",
     "Does {owner} care about the environment?"),
    ("The doctor told me {when} that my wrist needs six weeks in a cast, so no {sport} for a while.",
     "Why can't {owner} play {sport}?", "a wrist injury", "When did {owner} hurt the wrist?",
     "Is {owner} an active person?"),
]
SLOTS = {"pet": ["dog", "cat", "rabbit"], "pet_name": ["Pepper", "Miso", "Juniper", "Biscuit", "Olive"],
         "river": ["river Tagus", "canal path", "lake shore"], "company": ["Northwind", "Brightline", "Kestrel Labs"],
         "job": ["data analyst", "nurse", "sound engineer", "teacher"], "dish": ["dumpling", "stew", "pastry"],
         "city": CITIES, "rel": RELATIVES, "place": PLACES, "vehicle": ["car", "scooter", "van"],
         "sport": ["tennis", "climbing", "volleyball"]}
WHEN = {"yesterday": "the day before", "last weekend": "the weekend before",
        "last week": "the week before", "two days ago": "two days before",
        "this morning": "the morning of"}
"""What a turn says -> how LoCoMo's temporal answers put it against the session's date."""
OPENERS = ["Honestly,", "Funny thing,", "So,", "Oh,", "Anyway,", "You know what,", "Guess what,",
           "Quick update,", ""]
TOPICS = ["the new café", "my sister", "the weather", "work", "that series", "the neighbours",
          "my phone", "the traffic", "dinner", "the weekend", "the gym", "my plants", "the garden",
          "the news", "my inbox", "the kids next door", "the train", "our old school"]
COMMENTS = ["has been on my mind all week.", "was a total mess today.", "made me laugh so hard.",
            "is driving me a bit crazy.", "turned out better than expected.", "needs a proper plan.",
            "reminded me of you.", "is the same as ever, really.", "took most of my evening.",
            "kept me busy from breakfast until well after dark.",
            "has been the main thing everyone talks about lately.",
            "surprised me, I did not see that coming at all."]
FOLLOW_UPS = ["I keep meaning to tell you about it properly.", "Not sure what to make of it yet.",
              "We should talk about it over coffee some time.", "How has your week been?",
              "I will spare you the long version, it goes on and on.",
              "My brother thinks I am overreacting, which is probably fair.",
              "Still, it could have been a lot worse, so I am not complaining.",
              "Remind me to show you the pictures when we meet."]
REPLIES = ["Ha, that sounds about right.", "Oh no, I hope it gets better soon!", "That is so you.",
           "Tell me more next time we meet.", "Same here, to be honest.", "Wow, good for you!",
           "I know the feeling.", "That made my day, thanks for sharing.",
           "No way, I would have loved to see that.", "Oh, I have been wondering about that too."]
REPLY_TAILS = ["Things have been quiet on my side, mostly work and sleep.",
               "I had almost the same week, believe it or not.", "Keep me posted, okay?",
               "Let me know how it goes, I am curious now.",
               "We really need to catch up properly, it has been ages.",
               "My evenings have been all laundry and emails lately.",
               "I laughed out loud on the bus reading that."]
"""Small talk is built from these parts (opener, topic, comment and up to two follow-ups; a reply
and up to two tails), so its length varies like the evidence turns' instead of being shorter."""
CAPTIONS = ["a photo of a cup of coffee on a wooden table", "a photo of a dog lying on a sofa",
            "a photo of a sunset over the water", "a photo of a messy desk with a laptop"]


def session_date(s: int, comma: str = "") -> str:
    """Session ``s``'s day: nine days after the one before, from 1 January 2024."""
    return f"{1 + (9 * s) % 28} {MONTHS[(s * 9) // 28 % 12]}{comma} 2024"


def conversation(k: int, rng: random.Random, events: int = 6) -> dict:
    """One two-person conversation in LoCoMo's proportions: 19-27 sessions of 15-30 turns,
    life events planted in any session and asked about after the last one (so the evidence is
    often many sessions back), questions worded unlike their evidence, and small talk that keeps
    naming the speakers and the same topics. Each speaker has ``events`` life events."""
    a, b = PAIRS[k]
    n_sessions = rng.randint(19, 27)
    sessions: list[list[dict]] = [[] for _ in range(n_sessions)]
    qa: list[dict] = []
    speakers = [a, b]

    def say(s: int, who: str, text: str, **extra) -> str:
        turns = sessions[s]
        dia = f"D{s + 1}:{len(turns) + 1}"
        turns.append({"speaker": who, "dia_id": dia, "text": text, **extra})
        return dia

    def reply() -> str:
        return " ".join([rng.choice(REPLIES)] + rng.sample(REPLY_TAILS, rng.choice((0, 1, 1, 2))))

    def small_talk(s: int) -> None:
        who = speakers[len(sessions[s]) % 2]
        if rng.random() < 0.06:
            say(s, who, "Look at this!", img_url=["https://example.invalid/p.jpg"],
                blip_caption=rng.choice(CAPTIONS))
        elif rng.random() < 0.5:
            parts = [rng.choice(OPENERS), rng.choice(TOPICS), rng.choice(COMMENTS)]
            say(s, who, " ".join(parts + rng.sample(FOLLOW_UPS, rng.choice((0, 1, 1, 2)))).strip())
        else:
            say(s, who, reply())

    plan = [[] for _ in range(n_sessions)]  # events planted per session: (owner, event, slots)
    for who in (a, b):
        kinds = rng.sample(range(len(EVENTS)), min(events, len(EVENTS)))
        for e in kinds + rng.choices(range(len(EVENTS)), k=max(0, events - len(EVENTS))):
            slots = {name: rng.choice(values) for name, values in SLOTS.items()}
            plan[rng.randrange(n_sessions - 1)].append((who, e, slots))
    cousins = [(a if i % 2 == 0 else b, rng.choice(NAMES), rng.choice(CITIES), rng.choice(HOBBIES))
               for i in range(3)]
    multi = [(c, rng.sample(range(n_sessions - 1), 2)) for c in cousins]
    for s in range(n_sessions):
        size = rng.randint(15, 30)
        events = [(rng.randrange(size), item) for item in plan[s]]
        hops = [(rng.randrange(size), (c, first == s)) for c, (first, second) in multi if s in (first, second)]
        for t in range(size):
            for _, (owner, e, slots) in [x for x in events if x[0] == t]:
                other = b if owner == a else a
                statement, single, answer, temporal, open_q = EVENTS[e]
                fill = {**slots, "owner": owner, "when": rng.choice(list(WHEN))}
                text = statement.format(**fill)
                dia = say(s, owner, text[0].upper() + text[1:])
                say(s, other, reply())
                qa += [{"question": single.format(**fill), "answer": answer.format(**fill),
                        "evidence": [dia], "category": 4},
                       {"question": temporal.format(**fill), "answer": f"{WHEN[fill['when']]} {session_date(s)}",
                        "evidence": [dia], "category": 2},
                       {"question": open_q.format(**fill), "answer": "likely yes",
                        "evidence": [dia], "category": 3},
                       {"question": single.format(**{**fill, "owner": other}),
                        "adversarial_answer": answer.format(**fill), "evidence": [dia], "category": 5}]
            for _, ((owner, name, city, hobby), first) in [x for x in hops if x[0] == t]:
                if first:
                    say(s, owner, f"My cousin {name} just moved to {city}, she says the rent is wild.")
                else:
                    say(s, owner, f"{name} has taken up {hobby} with a club there, she sends me videos.")
                say(s, b if owner == a else a, reply())
            small_talk(s)
    for (owner, name, city, hobby), (first, second) in multi:
        ids = [f"D{x + 1}:{i + 1}" for x in (first, second) for i, t in enumerate(sessions[x])
               if name in t["text"] and t["speaker"] == owner]
        qa.append({"question": f"Which hobby did {owner}'s cousin pick up after moving?", "answer": hobby,
                   "evidence": ids[:2], "category": 1})
    # LoCoMo's quirks, reproduced: "D:s:t", a zero-padded turn, "a; b" in one string, an id that
    # names no turn.
    s, t = qa[0]["evidence"][0][1:].split(":")
    qa[0]["evidence"] = [f"D:{s}:{t}"]
    s, t = qa[1]["evidence"][0][1:].split(":")
    qa[1]["evidence"] = [f"D{s}:{int(t):02d}"]
    qa[-1]["evidence"] = ["; ".join(qa[-1]["evidence"])]
    qa[2]["evidence"].append(f"D{n_sessions + 5}:1")
    conv: dict = {"speaker_a": a, "speaker_b": b}
    for s in range(n_sessions):
        conv[f"session_{s + 1}_date_time"] = f"{1 + s % 11}:{(7 * s) % 60:02d} pm on {session_date(s, ',')}"
        conv[f"session_{s + 1}"] = sessions[s]
    conv[f"session_{n_sessions + 1}_date_time"] = "9:00 am on 1 December, 2024"  # a date with no session
    return {"sample_id": f"demo-{k + 1}", "qa": qa, "conversation": conv}


def build(conversations: int = 3, events: int = 6) -> str:
    """The JSON text of ``conversations`` conversations (at most ``len(PAIRS)``) with ``events``
    life events per speaker; the defaults are the bundled fixture's."""
    if not 1 <= conversations <= len(PAIRS):
        raise ValueError(f"conversations must be in [1, {len(PAIRS)}], got {conversations!r}")
    if events < 1:
        raise ValueError(f"events must be >= 1, got {events!r}")
    rng = random.Random(12)
    data = [conversation(k, rng, events) for k in range(conversations)]
    return json.dumps(data, indent=1, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the fixture would change")
    parser.add_argument("--conversations", type=int, default=3)
    parser.add_argument("--events", type=int, default=6, help="life events per speaker")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    text = build(args.conversations, args.events)
    if args.check:
        same = args.out.is_file() and args.out.read_text(encoding="utf-8") == text
        print("unchanged" if same else "would change")
        sys.exit(0 if same else 1)
    args.out.write_text(text, encoding="utf-8")
    print(f"wrote {args.out} ({len(text):,} bytes)")
