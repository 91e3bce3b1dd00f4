"""Write ``data/chat_logs/``: synthetic agent conversations in the OpenAI chat format, with questions.

Everything here is invented by this script (seeded: byte-identical on every run): six
conversations between a user and an assistant agent that calls tools (``lookup_order``,
``search_flights``, ``get_weather``, ``create_reminder``), as an agent's log would hold them
(the chat API's ``messages`` array: ``content`` null beside ``tool_calls``, ``tool`` results
naming their ``tool_call_id``). The user states a few facts among small talk; the agent's
tools return others. Questions cite their evidence three ways: 0-based message indices,
message ids (conversations whose messages carry an ``id``), or only an answer string.
Question kinds: a fact the user stated (words shared with the question), the same in other
words (few shared), a tool's result, two messages together, and one asked mid-conversation.
It is a small format example for ``python -m memorykit tune``, not a benchmark: the facts
are planted by a template, so do not read its numbers as a policy's quality on real logs.

    .venv/bin/python data/chat_logs/generate.py          # rewrite
    .venv/bin/python data/chat_logs/generate.py --check  # exit 1 if a file would change
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
FILES = ("support_chats.jsonl", "support_questions.jsonl")
SEED = 15
N_CONVERSATIONS = 6
FILLER_TURNS = 34

NAMES = ["Amara", "Bruno", "Chen", "Dalia", "Emil", "Farah"]
SIBLINGS = [("sister", "Lena"), ("brother", "Marco"), ("sister", "Yuki"), ("brother", "Tariq")]
CITIES = ["Porto", "Ghent", "Tallinn", "Valencia", "Kraków", "Bergen", "Trieste", "Aarhus"]
FOODS = ["peanuts", "shellfish", "sesame", "gluten", "dairy"]
CARRIERS = ["Parcelway", "SwiftPost", "Nordline Freight", "BlueCrate"]
WEATHER = ["light rain, 14 degrees", "sunny, 22 degrees", "overcast, 9 degrees", "snow showers, -2 degrees"]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]
SMALL_TALK = [
    "Can you suggest a good podcast for a long drive?",
    "What is a quick way to clean a cast iron pan?",
    "Any tips for keeping basil alive on a windowsill?",
    "How do I stop my laptop fan from being so loud?",
    "What should I read after finishing a long fantasy series?",
    "Is it better to stretch in the morning or at night?",
    "How long should I steep green tea?",
    "Give me an idea for a rainy Sunday afternoon.",
    "What is a polite way to decline a meeting invitation?",
    "How do I get wax out of a tablecloth?",
    "Which houseplants survive a dark flat?",
    "What is a good warm-up before a short run?",
]
REPLIES = [
    "A few options work well here. Start with the simplest one and see whether it is enough; "
    "if not, the second approach usually takes care of the rest. Keep notes on what you try, "
    "since small changes in routine make a noticeable difference over a couple of weeks.",
    "Short answer: yes, with a caveat. It depends on how much time you have and what you "
    "already own. Most people get good results with a small daily habit rather than a big "
    "weekly effort, and it is easier to keep going that way.",
    "Here is what I would do: pick one thing to change, try it for a week, and compare. "
    "If you want, I can put together a short checklist so you do not have to remember the "
    "steps each time.",
    "That is a common question. The usual advice is to go gently at first, pay attention to "
    "what feels off, and adjust. There is no single right answer, but a consistent routine "
    "beats an occasional perfect one.",
]
THANKS = ["Thanks, that helps.", "Great, I will try that.", "Okay, makes sense.", "Perfect, thank you."]


def pick(rng: random.Random, items: list) -> object:
    # random() only: its sequence is stable across Python versions, choice()'s need not be
    return items[int(rng.random() * len(items))]


class Chat:
    """One conversation being written, and the questions asked about it."""

    def __init__(self, cid: str, with_ids: bool) -> None:
        self.cid = cid
        self.with_ids = with_ids
        self.messages: list[dict] = []
        self.questions: list[dict] = []
        self.calls = 0

    def say(self, role: str, content: str | None, **extra: object) -> int:
        message: dict = {"role": role, "content": content, **extra}
        if self.with_ids:
            message = {"id": f"{self.cid}-m{len(self.messages):03d}", **message}
        self.messages.append(message)
        return len(self.messages) - 1

    def ref(self, index: int) -> object:
        """How a question cites this message: its id when messages carry one, else its index."""
        return self.messages[index]["id"] if self.with_ids else index

    def tool(self, name: str, arguments: dict, result: dict) -> int:
        self.calls += 1
        call_id = f"call_{self.cid}_{self.calls}"
        self.say("assistant", None, tool_calls=[{
            "id": call_id, "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments, sort_keys=True)}}])
        return self.say("tool", json.dumps(result, sort_keys=True), tool_call_id=call_id)

    def ask(self, question: str, category: str, *, evidence: list | None = None,
            answer: str | None = None, position: int | None = None) -> None:
        q: dict = {"conversation": self.cid, "id": f"{self.cid}-q{len(self.questions) + 1}",
                   "question": question, "category": category}
        if evidence is not None:
            q["evidence"] = evidence
        if answer is not None:
            q["answer"] = answer
        if position is not None:
            q["position"] = position
        self.questions.append(q)


def conversation(rng: random.Random, n: int) -> Chat:
    chat = Chat(f"support-{n + 1:02d}", with_ids=n % 2 == 1)
    name = NAMES[n]
    relation, sibling = pick(rng, SIBLINGS)
    city, home = pick(rng, CITIES), pick(rng, CITIES)
    food, carrier = pick(rng, FOODS), pick(rng, CARRIERS)
    order = f"K-{10000 + int(rng.random() * 89999)}"
    budget = 800 + 100 * int(rng.random() * 20)
    flight = f"TP {1000 + int(rng.random() * 8999)}"
    day = pick(rng, DAYS)
    chat.say("system", f"You are a helpful assistant for {name}. Use the tools when you need "
             "live data. Be brief and friendly.")
    events = ["order", "food", "sibling", "budget", "flight", "weather", "reminder"]
    slots = sorted(rng.random() for _ in events)
    order_of_events = sorted(range(len(events)), key=lambda i: rng.random())
    at = {events[i]: int(slots[k] * FILLER_TURNS) for k, i in enumerate(order_of_events)}
    where: dict[str, int] = {}
    for turn in range(FILLER_TURNS + 1):
        for event in (e for e in events if at[e] == turn):
            if event == "order":
                where["order"] = chat.say("user", f"By the way, my order number is {order}, "
                                          "in case I need to chase it later.")
                chat.say("assistant", f"Noted: order {order}.")
            elif event == "food":
                where["food"] = chat.say("user", f"I am allergic to {food}, so please keep that "
                                         "in mind for any recipes.")
                chat.say("assistant", f"Understood, I will avoid {food} in every suggestion.")
            elif event == "sibling":
                where["sibling"] = chat.say("user", f"My {relation} {sibling} moved to {city} "
                                            "last spring.")
                chat.say("assistant", f"{city} is lovely. Say hello to {sibling}!")
            elif event == "budget":
                where["budget"] = chat.say("user", f"For the trip we agreed on {budget} euros "
                                           "in total, flights included.")
                chat.say("assistant", f"Got it, a total of {budget} euros.")
            elif event == "flight":
                chat.say("user", f"Can you find me a morning flight from {home} to {city}?")
                where["flight"] = chat.tool("search_flights", {"origin": home, "destination": city},
                                            {"flight": flight, "departs": "07:40", "seats": 4})
                chat.say("assistant", f"Flight {flight} leaves at 07:40 and still has seats.")
            elif event == "weather":
                chat.say("user", f"What is the weather like in {city} right now?")
                where["weather"] = chat.tool("get_weather", {"city": city},
                                             {"city": city, "now": pick(rng, WEATHER)})
                chat.say("assistant", "Here is the current forecast from the weather service.")
            else:
                chat.say("user", f"Remind me on {day} to call the bank about my card.")
                where["reminder"] = chat.tool("create_reminder", {"when": day, "text": "call the bank"},
                                              {"created": True, "when": day})
                chat.say("assistant", f"Done: a reminder for {day} to call the bank.")
        if turn == min(at["order"] + 3, FILLER_TURNS):
            chat.say("user", "Where is my package now?")
            where["carrier"] = chat.tool("lookup_order", {"order_id": order},
                                         {"order_id": order, "status": "in transit",
                                          "carrier": carrier, "eta": pick(rng, DAYS)})
            chat.say("assistant", f"It is in transit with {carrier}.")
        chat.say("user", str(pick(rng, SMALL_TALK)))
        chat.say("assistant", str(pick(rng, REPLIES)))
        chat.say("user", str(pick(rng, THANKS)))
        chat.say("assistant", "You are welcome.")
    chat.ask("What is my order number?", "stated", evidence=[chat.ref(where["order"])])
    chat.ask("Which ingredient must the dinner recipes leave out?", "reworded", answer=food)
    chat.ask(f"Where does my {relation} live now?", "stated", evidence=[chat.ref(where["sibling"])])
    chat.ask("How much money can we spend on the whole trip?", "reworded",
             evidence=[chat.ref(where["budget"])], answer=str(budget))
    chat.ask("Which company is delivering my package?", "tool result", answer=carrier)
    chat.ask("What was the number of the flight you found?", "tool result",
             evidence=[chat.ref(where["flight"])])
    chat.ask(f"Is it a good day for a walk where {sibling} lives?", "two messages",
             evidence=[chat.ref(where["sibling"]), chat.ref(where["weather"])])
    chat.ask("On which day will you remind me about the bank?", "asked soon after",
             evidence=[chat.ref(where["reminder"])], position=where["reminder"] + 5)
    return chat


def render() -> dict[str, str]:
    """Each file's text, from the seed."""
    rng = random.Random(SEED)
    chats = [conversation(rng, n) for n in range(N_CONVERSATIONS)]
    line = lambda record: json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n"  # noqa: E731
    note = f"synthetic: invented by data/chat_logs/generate.py (seed {SEED}), not a real user's log"
    return {FILES[0]: "".join(line({"id": c.cid, "messages": c.messages, "note": note})
                              for c in chats),
            FILES[1]: "".join(line(q) for c in chats for q in c.questions)}


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    out = Path(args[args.index("--out") + 1]) if "--out" in args else HERE
    stale = []
    for name, text in render().items():
        path = out / name
        if "--check" in args:
            if not path.is_file() or path.read_text(encoding="utf-8") != text:
                stale.append(name)
        else:
            path.write_text(text, encoding="utf-8")
    if stale:
        print(f"out of date: {', '.join(stale)} (run python data/chat_logs/generate.py)",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
