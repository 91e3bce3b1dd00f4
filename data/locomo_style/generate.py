"""Write ``data/locomo_style/locomo_style.json``: a small LoCoMo-schema fixture, written for memorykit.

LoCoMo itself (snap-research/locomo) is CC BY-NC 4.0 and is never shipped; this file
only copies its *schema* (``sample_id``; ``conversation`` with ``speaker_a``/``speaker_b``,
``session_<n>`` turn lists with ``dia_id``/``text`` and image turns with ``blip_caption``,
``session_<n>_date_time``; ``qa`` with ``question``, ``answer`` or ``adversarial_answer``,
``evidence``, ``category`` 1-5) and its quirks (malformed evidence strings, a date key with no
session), with invented people and text. Seeded: the output is byte-identical on every run.

    .venv/bin/python data/locomo_style/generate.py          # rewrite
    .venv/bin/python data/locomo_style/generate.py --check  # exit 1 if it would change

Used by ``notebooks/12_parameter_tuning.ipynb`` (``memorykit.lessons.tuning_app``).
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

OUT = Path(__file__).with_name("locomo_style.json")
PAIRS = [("Aria", "Ben"), ("Noor", "Tomas"), ("Ines", "Kofi")]
HOBBIES = ["pottery", "climbing", "chess", "sailing", "baking", "gardening", "violin", "kayaking",
           "photography", "knitting", "astronomy", "surfing", "calligraphy", "fencing", "birdwatching",
           "woodworking", "salsa", "archery"]
PLACES = ["community centre", "old library", "harbour club", "art school", "sports hall", "town museum",
          "night market", "river park"]
RELATIVES = ["cousin", "aunt", "neighbour", "old roommate", "colleague", "uncle"]
NAMES = ["Jonah", "Maya", "Elif", "Ravi", "Greta", "Luis", "Hana", "Oskar", "Zara", "Pavel"]
CITIES = ["Lisbon", "Osaka", "Toronto", "Nairobi", "Oslo", "Lima", "Seoul", "Dublin"]
FEELINGS = ["Honestly it is the best part of my week, I leave feeling calm and light.",
            "It is harder than I expected, some evenings I just want to quit.",
            "I love it, I keep thinking about it during work meetings.",
            "It makes me nervous but proud at the same time.",
            "It is fun, though the early mornings are brutal."]
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
          "October", "November", "December"]
CHAT = ["How was your week? Mine was a blur of errands and late dinners.",
        "I finally cleaned out the garage this weekend, it took forever.",
        "Work has been hectic, we are shipping a big release soon.",
        "Did you watch that documentary about the deep ocean? It was stunning.",
        "I tried a new coffee place near the station, pretty decent.",
        "My sister called, she says hi and wants to visit in the autumn.",
        "The weather has been so grey lately, I miss the sun.",
        "I have been reading a thriller every night before bed.",
        "We should plan a picnic once things calm down a bit.",
        "My phone broke again, I really need to stop dropping it.",
        "I started going to bed earlier and I feel so much better.",
        "The neighbours are renovating and the drilling starts at eight.",
        "I cooked a big pot of soup and froze half of it.",
        "Traffic was awful today, it took an hour to get home.",
        "Thanks for listening yesterday, it really helped.",
        "That sounds lovely, tell me more when you have time.",
        "Ha, that is so typical of you!",
        "Same here, honestly. Let us catch up properly soon."]
NUDGES = ["Any news on the {h} front?", "Still doing {h}?", "How is {h} going these days?"]
SHRUGS = ["Not much to report, same as usual.", "Busy week, nothing new really.",
          "Slow progress, but I am sticking with it."]
DECOYS = ["More {h} tonight.",
          "The {h} group chat is all {h} memes now: {h} this, {h} that, even a {h} quiz.",
          "I bought a thick book about the history of {h}, no idea when I will read it, it weighs a ton "
          "and the cover is gorgeous.",
          "My {h} project list keeps growing, first I need more free time.",
          "Someone at work asked me about {h} classes and I talked for twenty minutes.",
          "{h}, {h}, {h}: honestly I think about {h} too much."]
CAPTIONS = ["a photo of a cup of coffee on a wooden table", "a photo of a dog lying on a sofa",
            "a photo of a sunset over the water", "a photo of a messy desk with a laptop"]


def conversation(k: int, rng: random.Random) -> dict:
    a, b = PAIRS[k]
    hobbies = rng.sample(HOBBIES, 8)
    n_sessions = 12
    sessions: list[list[dict]] = [[] for _ in range(n_sessions)]
    qa: list[dict] = []
    turn_speaker = [a, b]

    def say(s: int, who: str, text: str, **extra) -> str:
        turns = sessions[s]
        dia = f"D{s + 1}:{len(turns) + 1}"
        turns.append({"speaker": who, "dia_id": dia, "text": text, **extra})
        return dia

    def chat(s: int, n: int) -> None:
        for _ in range(n):
            who = turn_speaker[len(sessions[s]) % 2]
            if rng.random() < 0.06:
                say(s, who, "Look at this!", img_url=["https://example.invalid/p.jpg"],
                    blip_caption=rng.choice(CAPTIONS))
            else:
                say(s, who, rng.choice(CHAT))

    def nudge(s: int, h: str) -> None:
        who = turn_speaker[len(sessions[s]) % 2]
        other = b if who == a else a
        say(s, who, rng.choice(NUDGES).format(h=h))
        say(s, other, rng.choice(SHRUGS))

    for i, h in enumerate(hobbies):
        owner, friend = (a, b) if i % 2 == 0 else (b, a)
        s1 = min(n_sessions - 1, i + rng.choice([0, 1]))
        s2 = min(n_sessions - 1, s1 + 1 + int(rng.random() * 3))
        s3 = min(n_sessions - 1, s2 + int(rng.random() * 3))
        place = rng.choice(PLACES)
        rel, name, city = rng.choice(RELATIVES), rng.choice(NAMES), rng.choice(CITIES)
        chat(s1, 4 + int(rng.random() * 8))
        e_place = say(s1, owner, f"I signed up for a {h} class at the {place}, first lesson was great.")
        e_who = say(s1, owner, f"My {rel} {name} got me into {h} in the first place.")
        chat(s1, 2 + int(rng.random() * 6))
        say(s2, friend, f"So how do you feel about {h} now that you have done a few sessions?")
        e_feel = say(s2, owner, rng.choice(FEELINGS))
        chat(s2, 4 + int(rng.random() * 8))
        e_city = say(s3, owner, f"Big news from {name}: moving to {city} next month.")
        month = rng.choice(MONTHS)
        e_done = say(s3, owner, f"Back in {month} I finished my first real {h} project, I am so proud.")
        chat(s3, 2 + int(rng.random() * 6))
        for s in range(s3, n_sessions):
            if rng.random() < 0.7:
                nudge(s, h)
        for decoy in DECOYS:
            s = s1 + int(rng.random() * (n_sessions - s1))
            say(s, owner if rng.random() < 0.7 else friend, decoy.format(h=h))
        qa += [
            {"question": f"Where does {owner} take {h} classes?", "answer": f"at the {place}",
             "evidence": [e_place], "category": 4},
            {"question": f"How does {owner} feel about {h}?", "answer": "see the reply",
             "evidence": [e_feel], "category": 3},
            {"question": f"When did {owner} finish a first {h} project?", "answer": month,
             "evidence": [e_done], "category": 2},
            {"question": f"Where is the person who got {owner} into {h} moving?", "answer": city,
             "evidence": [f"{e_who}; {e_city}"] if i == 0 else [e_who, e_city], "category": 1},
            {"question": f"Why did {friend} quit {h}?", "adversarial_answer": "it was boring",
             "evidence": [e_feel], "category": 5},
        ]
    for s in range(n_sessions):
        chat(s, 12)
    # LoCoMo's quirks, reproduced: "D:s:t", a zero-padded turn, an id that names no turn.
    q0 = qa[0]
    s, t = q0["evidence"][0][1:].split(":")
    q0["evidence"] = [f"D:{s}:{t}"]
    s, t = qa[2]["evidence"][0][1:].split(":")
    qa[2]["evidence"] = [f"D{s}:{int(t):02d}"]
    qa[5]["evidence"].append(f"D{n_sessions + 5}:1")
    conv: dict = {"speaker_a": a, "speaker_b": b}
    for s in range(n_sessions):
        day, month = 1 + (5 * s) % 28, MONTHS[2 + (5 * s) // 28]
        conv[f"session_{s + 1}_date_time"] = f"{1 + s % 11}:{(7 * s) % 60:02d} pm on {day} {month}, 2024"
        conv[f"session_{s + 1}"] = sessions[s]
    conv[f"session_{n_sessions + 1}_date_time"] = "9:00 am on 1 August, 2024"  # a date with no session
    return {"sample_id": f"demo-{k + 1}", "qa": qa, "conversation": conv}


def build() -> str:
    rng = random.Random(12)
    data = [conversation(k, rng) for k in range(len(PAIRS))]
    return json.dumps(data, indent=1, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    text = build()
    if "--check" in sys.argv:
        same = OUT.is_file() and OUT.read_text(encoding="utf-8") == text
        print("unchanged" if same else "would change")
        sys.exit(0 if same else 1)
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT} ({len(text):,} bytes)")
