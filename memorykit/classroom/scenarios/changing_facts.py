"""Conversations whose facts change: stated, then updated, corrected, cancelled or contradicted.

A seeded generator of chats between a user and an assistant (a personal assistant, customer
support, project work) in the OpenAI chat format ``memorykit.evaluation.chatlog`` reads. In
each conversation about ten facts are stated among ordinary filler turns (a dentist
appointment, a delivery address, a door code, a project deadline...). Most of them change
later, in one of five ways:

* **updated**: a new value with a cue ("the meeting moved to Thursday 16 May");
* **corrected**: the user fixes a mistake ("sorry, it's 4712, not 4721");
* **cancelled**: the fact ends ("please cancel the dentist appointment");
* **contradicted**: a different value simply stated later, with no cue at all;
* **changed twice**: two updates, corrections or contradictions in a row (two superseded
  statements; a question asked between the two changes sees only the first).

Others never change (**unchanged**: control questions). Around the facts sit *distractors*
that are not changes: the same value restated ("still Friday 9 May, nothing changed"), a
hypothetical ("what if we changed it to Monday 5 May?" ... "no, leave it"), a similar fact about a
different thing (two projects' deadlines, the user's and a colleague's phone), and messages
that mention a fact without its value ("do I need to bring anything to the dentist
appointment?").

Every question asks for the value *current* when it is asked: ``evidence`` lists the messages
that state it (the change itself and any later restatement), ``superseded`` the messages that
stated a replaced value, ``answer`` is the current value (for a cancelled fact, the word that
cancels it), and ``metadata["gap"]`` counts the messages between the last superseded statement
and the current one. Gaps are drawn from "at once" (a correction in the very next message) to
about 160 messages later (kept within the conversation); ``gap=k`` forces every change to come
exactly ``k`` messages after what it replaces, so a lesson can plot stale answers against the
gap. A change often names the fact in other words than its first statement ("the dentist" for
"the dentist appointment", "it" right after it), and questions are sometimes worded unlike
both. Each conversation record also carries the gold ``updates`` (old message -> the one
replacing it) and ``distractors`` (message, kind, fact) for a detector to be scored against.

Only ``random.Random.random()`` is drawn (its sequence is stable across Python versions), so
a seed gives the same bytes everywhere. The facts are planted by templates: figures measured
on this set describe the templates, and a held-out set written independently is the check.
The bundled files are ``data/changing_facts/`` (written by ``data/changing_facts/generate.py``).
Taught in ``notebooks/13_changing_facts.ipynb``.
"""

from __future__ import annotations

import datetime as _dt
import json
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from memorykit.evaluation.dataset import EvalDataset

__all__ = [
    "CATEGORIES",
    "DEFAULT_CONVERSATIONS",
    "DEFAULT_SEED",
    "changing_facts_dataset",
    "changing_facts_files",
    "render_changing_facts",
]

CATEGORIES = ("updated", "corrected", "cancelled", "contradicted", "changed twice", "unchanged")
"""The ``category`` of a question: how its fact changed before it was asked."""
DEFAULT_SEED = 27
DEFAULT_CONVERSATIONS = 16
_CHANGE_KINDS = ("updated", "corrected", "contradicted")  # the links of a "changed twice" chain
_MAX_GAP = 400


def _pick(rng: random.Random, items: Sequence[Any]) -> Any:
    # random() only: its sequence is stable across Python versions, choice()'s need not be
    return items[int(rng.random() * len(items))]


def _n(rng: random.Random, lo: int, hi: int) -> int:
    return lo + int(rng.random() * (hi - lo + 1))


# ------------------------------------------------------------------------------------ values
_MONTHS = ("March", "April", "May", "June", "September", "October", "November")
_STREETS = ("Larch Road", "Mill Lane", "Harbour Street", "Orchard Way", "Beacon Close",
            "Wren Avenue", "Copper Row", "Kestrel Drive", "Tanner Street", "Quarry Hill")
_FIRST = ("Priya", "Tomasz", "Aiko", "Rafael", "Ingrid", "Kwame", "Lucia", "Oren", "Saanvi",
          "Declan", "Mirela", "Hugo", "Noor", "Elif", "Callum", "Yara")
_LAST = ("Raman", "Kowalski", "Brennan", "Okafor", "Lindqvist", "Moreau", "Haddad", "Castillo",
         "Novak", "Fitzgerald", "Takeda", "Ferreira")
_CITIES = ("Lisbon", "Ljubljana", "Galway", "Bologna", "Tromsø", "Seville", "Gdańsk", "Bruges",
           "Dubrovnik", "Innsbruck", "Porto", "Tallinn")
_VENUES = ("the Olive Tree", "Casa Lupo", "the Brass Monkey", "Nori House", "the Old Granary",
           "Little Saigon", "the Fig and Fennel", "Marlow's Bistro")
_ROOMS = ("Room 4B", "Room 2A", "Room 7C", "Room 3D", "the Atlas room", "the Birch room")
_PLANS = ("the Basic plan", "the Plus plan", "the Premium plan", "the Family plan",
          "the Business plan")
_MILKS = ("oat milk", "soy milk", "almond milk", "skimmed milk", "no milk")
_SEATS = ("an aisle seat", "a window seat", "an exit-row seat", "a seat near the front")
_DIETS = ("vegetarian", "vegan", "pescatarian", "gluten-free", "halal")
_SLOTS = ("mornings", "afternoons", "evenings", "weekends", "lunchtimes")


def _value(rng: random.Random, kind: str) -> str:
    """A fresh value of ``kind`` (a date, a time, a phone number...)."""
    if kind == "date":
        day = _dt.date(2025, 3, 3) + _dt.timedelta(days=_n(rng, 0, 260))
        return f"{day:%A} {day.day} {day:%B}"
    if kind == "time":
        hour = _n(rng, 8, 19)
        return f"{hour}:{_pick(rng, ('00', '15', '30', '45', '10', '40', '20', '50'))}"
    if kind == "address":
        return f"{_n(rng, 2, 189)} {_pick(rng, _STREETS)}"
    if kind == "phone":
        return f"07700 900{_n(rng, 100, 999)}"
    if kind == "order":
        return f"ORD-{_n(rng, 10000, 99999)}"
    if kind == "ticket":
        return f"SUP-{_n(rng, 1000, 9999)}"
    if kind == "booking":
        letters = "ABCDEFGHJKLMNPQRSTUVWXYZ"
        return "".join(_pick(rng, letters) for _ in range(3)) + str(_n(rng, 100, 999))
    if kind == "amount":
        return f"€{_n(rng, 12, 480) * 5:,}"
    if kind == "budget":
        return f"€{_n(rng, 8, 95) * 500:,}"
    if kind == "name":
        return f"{_pick(rng, _FIRST)} {_pick(rng, _LAST)}"
    if kind == "code":
        return str(_n(rng, 1000, 9999))
    if kind == "count":
        return f"{_n(rng, 4, 40)} people"
    if kind == "version":
        return f"v{_n(rng, 1, 6)}.{_n(rng, 0, 19)}.{_n(rng, 0, 9)}"
    if kind == "city":
        return _pick(rng, _CITIES)
    if kind == "venue":
        return _pick(rng, _VENUES)
    if kind == "room":
        return _pick(rng, _ROOMS)
    if kind == "plan":
        return _pick(rng, _PLANS)
    if kind == "milk":
        return _pick(rng, _MILKS)
    if kind == "seat":
        return _pick(rng, _SEATS)
    if kind == "diet":
        return _pick(rng, _DIETS)
    if kind == "slot":
        return _pick(rng, _SLOTS)
    raise ValueError(f"unknown value kind {kind!r}")  # pragma: no cover - internal tables


_TYPO_KINDS = frozenset({"code", "phone", "order", "ticket", "booking", "address", "amount"})
"""Values a slip of the finger can garble into another valid value (not a date or a time)."""


def _typo(rng: random.Random, value: str) -> str | None:
    """``value`` with two neighbouring digits swapped (what a correction fixes), or None."""
    spots = [i for i in range(len(value) - 1)
             if value[i].isdigit() and value[i + 1].isdigit() and value[i] != value[i + 1]]
    if not spots:
        return None
    i = _pick(rng, spots)
    typo = value[:i] + value[i + 1] + value[i] + value[i + 2:]
    # no "04 Mill Lane": a run of digits does not start with 0
    starts = [j for j, c in enumerate(typo) if c.isdigit() and not typo[j - 1:j].isdigit()]
    return None if any(typo[j] == "0" for j in starts) else typo


# ------------------------------------------------------------------------------------ facts
@dataclass(frozen=True)
class _Thing:
    """A fact a conversation can hold: what it is about, its value kind, its question."""

    kind: str
    thing: str
    question: str
    cancel: bool = False
    """It can be cancelled (an appointment, an order, a booking)."""
    hypo: bool = False
    """A "what if we moved it to X?" makes sense for it."""
    relay: bool = False
    """The assistant can learn its new value from outside (a carrier, a clinic)."""
    mention: tuple[str, ...] = ()
    """Messages that mention it without its value."""


_PERSONAL = (
    _Thing("date", "the dentist appointment", "When is my dentist appointment?", True, True, True,
           ("Do I need to bring anything to the dentist appointment?",
            "Should I take the afternoon off for the dentist appointment?")),
    _Thing("date", "Mum's birthday dinner", "What date is Mum's birthday dinner?", True, True,
           False,
           ("Any gift ideas for Mum's birthday dinner? She likes gardening.",)),
    _Thing("time", "the hairdresser booking", "What time is my hairdresser booking?", True, True,
           True,
           ("Is the hairdresser booking long enough for a colour as well as a cut?",)),
    _Thing("time", "the school pickup", "What time is the school pickup?", False, True, False,
           ("Who usually covers the school pickup when I'm travelling?",)),
    _Thing("phone", "my sister's phone number", "What is my sister's phone number?", False, False,
           False, ("I should call my sister's phone number this weekend, remind me.",)),
    _Thing("phone", "my own mobile number", "What is my mobile number?", False, False, False,
           ("Which forms still have my own mobile number on them, do you think?",)),
    _Thing("address", "the new flat's address", "What is the address of the new flat?", False,
           False, False, ("What should I pack first for the new flat?",)),
    _Thing("code", "the door code for the building", "What is the building's door code?", False,
           False, False, ("The door code for the building sometimes sticks. Who do I tell?",)),
    _Thing("code", "the gym locker code", "What is my gym locker code?", False, False, False, ()),
    _Thing("city", "our summer holiday destination", "Where are we going for the summer holiday?",
           True, True, False,
           ("How much cash should we take for the summer holiday destination?",)),
    _Thing("venue", "the restaurant for Friday's dinner", "Which restaurant is Friday's dinner at?",
           True, True, False, ("Does the restaurant for Friday's dinner take card payments?",)),
    _Thing("count", "the number of guests at the housewarming",
           "How many guests are coming to the housewarming?", False, True, False,
           ("What snacks work for the housewarming, something easy?",)),
    _Thing("booking", "the car service booking reference",
           "What is the car service booking reference?", False, False, True,
           ("Will the car service booking include a wash?",)),
    _Thing("milk", "my coffee order", "How do I take my coffee?", False, True, False, ()),
    _Thing("seat", "my seat preference for flights", "What seat do I prefer on flights?", False,
           True, False, ()),
    _Thing("name", "the landlord's name", "What is the landlord's name?", False, False, False,
           ("I need to email the landlord about the boiler. Can you draft something polite?",)),
)
_SUPPORT = (
    _Thing("order", "my order number", "What is my order number?", False, False, False,
           ("Can you see whether my order has left the warehouse?",)),
    _Thing("date", "the delivery date", "When will my delivery arrive?", False, True, True,
           ("Will someone need to sign for the delivery?",)),
    _Thing("address", "the delivery address", "What is the delivery address?", False, False,
           False, ("Can the courier leave the parcel with a neighbour at the delivery address?",)),
    _Thing("amount", "the refund amount", "How much is the refund?", False, False, True,
           ("How long does the refund usually take to reach my card?",)),
    _Thing("ticket", "the ticket number for the router fault",
           "What is the ticket number for the router fault?", False, False, True,
           ("Is there anything I can try myself while the router fault ticket is open?",)),
    _Thing("ticket", "the ticket number for the billing dispute",
           "What is the ticket number for the billing dispute?", False, False, True, ()),
    _Thing("phone", "my callback number", "Which number should you call me back on?", False,
           False, False, ("What hours do callbacks usually happen?",)),
    _Thing("name", "the agent handling my case", "Who is handling my case?", False, False, True,
           ("Is the agent handling my case in the same time zone as me?",)),
    _Thing("plan", "my subscription plan", "Which subscription plan am I on?", True, True, False,
           ("Does my subscription plan include international calls?",)),
    _Thing("date", "the technician visit", "When is the technician visit?", True, True, True,
           ("Does anyone need to be home for the technician visit?",)),
    _Thing("time", "the technician's arrival window", "What time does the technician arrive?",
           False, True, True, ()),
    _Thing("code", "the router's admin PIN", "What is the router's admin PIN?", False, False,
           False, ()),
    _Thing("slot", "the best time to reach me", "When is the best time to reach me?", False,
           True, False, ()),
)
_PROJECT = (
    _Thing("date", "the deadline for the Apollo report", "When is the Apollo report due?", False,
           True, True, ("Who else should review the Apollo report before it goes out?",)),
    _Thing("date", "the deadline for the Borealis slides", "When are the Borealis slides due?",
           False, True, True, ("Should the Borealis slides reuse last quarter's template?",)),
    _Thing("time", "the client call", "What time is the client call?", True, True, True,
           ("Can you draft an agenda for the client call?",)),
    _Thing("time", "the daily standup", "What time is the daily standup?", False, True, False,
           ("The daily standup keeps running long. Any tips to keep it short?",)),
    _Thing("budget", "the budget for the migration", "What is the migration budget?", False, True,
           True, ("What usually eats the budget for a migration like this?",)),
    _Thing("name", "the reviewer for the design doc", "Who is reviewing the design doc?", False,
           False, True, ("What should the reviewer for the design doc focus on?",)),
    _Thing("name", "the client's point of contact", "Who is the client's point of contact?",
           False, False, True, ()),
    _Thing("version", "the release we ship to the client",
           "Which release do we ship to the client?",
           False, True, True, ("What goes in the release notes for the client release?",)),
    _Thing("city", "the team offsite location", "Where is the team offsite?", True, True, False,
           ("What activities would suit the team offsite?",)),
    _Thing("date", "the launch date", "When is the launch?", True, True, True,
           ("What could still block the launch?",)),
    _Thing("count", "the workshop headcount", "How many people are coming to the workshop?", False,
           True, False, ()),
    _Thing("room", "the room for the retro", "Which room is the retro in?", True, True, False, ()),
    _Thing("phone", "Dana's phone number", "What is Dana's phone number?", False, False, False,
           ("Is Dana's phone number the best way to reach her during the launch?",)),
    _Thing("diet", "the dietary requirement for the catering", "What dietary requirement did we "
           "give the caterers?", False, True, False, ()),
)
# Other ways to refer to a thing (a change rarely repeats the first wording: "the dentist
# moved to Friday") and other ways to ask about it (a question worded unlike its evidence).
_ALIASES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "the dentist appointment": (("the dentist", "my check-up", "the dental visit"),
                                ("What day am I seeing the dentist?",)),
    "Mum's birthday dinner": (("the birthday dinner", "Mum's dinner"),
                              ("When are we celebrating Mum's birthday?",)),
    "the hairdresser booking": (("the haircut", "my hair appointment"),
                                ("When do I get my hair cut?",)),
    "the school pickup": (("pickup", "collecting the kids"),
                          ("When do I need to collect the kids from school?",)),
    "my sister's phone number": (("my sister's number", "her number"),
                                 ("How do I reach my sister by phone?",)),
    "my own mobile number": (("my number", "my mobile"), ("Which number is my mobile?",)),
    "the new flat's address": (("the new place", "the flat"), ("Where is the new flat?",)),
    "the door code for the building": (("the door code", "the entry code"),
                                       ("How do I get into the building?",)),
    "the gym locker code": (("the locker code", "my locker combination"),
                            ("Which combination opens my locker at the gym?",)),
    "our summer holiday destination": (("the holiday", "our summer trip"),
                                       ("Which city are we visiting this summer?",)),
    "the restaurant for Friday's dinner": (("Friday's restaurant", "the dinner booking"),
                                           ("Where are we eating on Friday?",)),
    "the number of guests at the housewarming": (
        ("the guest count", "the housewarming head count"),
        ("How many are we expecting at the housewarming?",)),
    "the car service booking reference": (("the garage reference", "the service booking"),
                                          ("What reference did the garage give us?",)),
    "my coffee order": (("my coffee", "the coffee"), ("What milk goes in my coffee?",)),
    "my seat preference for flights": (("my seat preference", "seating on flights"),
                                       ("Where do I like to sit on a plane?",)),
    "the landlord's name": (("the landlord", "the owner of the flat"),
                            ("Who owns the flat we rent?",)),
    "my order number": (("the order", "my order reference"), ("Which order am I asking about?",)),
    "the delivery date": (("the delivery", "the parcel"), ("What day is the parcel coming?",)),
    "the delivery address": (("the address for the parcel", "where it should go"),
                             ("Where should the parcel be delivered?",)),
    "the refund amount": (("the refund", "my refund"),
                          ("How much money am I getting back?",)),
    "the ticket number for the router fault": (("the router ticket", "the fault ticket"),
                                               ("Which ticket tracks the router problem?",)),
    "the ticket number for the billing dispute": (("the billing ticket", "the dispute ticket"),
                                                  ("Which ticket tracks the billing complaint?",)),
    "my callback number": (("the callback number", "the number to ring"),
                           ("Where should the callback go?",)),
    "the agent handling my case": (("my case owner", "the agent on the case"),
                                   ("Which agent owns my case?",)),
    "my subscription plan": (("my plan", "the subscription"), ("What am I subscribed to?",)),
    "the technician visit": (("the engineer's visit", "the visit"),
                             ("What day is the engineer coming?",)),
    "the technician's arrival window": (("the arrival time", "the engineer's slot"),
                                        ("When should I expect the engineer at the door?",)),
    "the router's admin PIN": (("the admin PIN", "the router PIN"),
                               ("Which PIN opens the router settings?",)),
    "the best time to reach me": (("my availability", "the best time to call me"),
                                  ("When am I easiest to reach?",)),
    "the deadline for the Apollo report": (("the Apollo deadline", "Apollo"),
                                           ("By when must the Apollo report be handed in?",)),
    "the deadline for the Borealis slides": (("the Borealis deadline", "the slides"),
                                             ("By when do the Borealis slides have to be ready?",)),
    "the client call": (("the call with the client", "the call"),
                        ("When are we speaking to the client?",)),
    "the daily standup": (("standup", "the morning sync"), ("When does the team sync each day?",)),
    "the budget for the migration": (("the migration budget", "the budget"),
                                     ("How much can the migration cost?",)),
    "the reviewer for the design doc": (("the design doc reviewer", "the reviewer"),
                                        ("Who signs off the design doc?",)),
    "the client's point of contact": (("our contact at the client", "the client contact"),
                                      ("Who do we talk to at the client?",)),
    "the release we ship to the client": (("the client release", "the build for the client"),
                                          ("Which version goes to the client?",)),
    "the team offsite location": (("the offsite", "the team trip"),
                                  ("Which city is the offsite in?",)),
    "the launch date": (("the launch", "go-live"), ("What day do we go live?",)),
    "the workshop headcount": (("the headcount", "the workshop count"),
                               ("How many seats do we need for the workshop?",)),
    "the room for the retro": (("the retro room", "the retro"),
                               ("Where are we holding the retro?",)),
    "Dana's phone number": (("Dana's number", "Dana's mobile"), ("How do I phone Dana?",)),
    "the dietary requirement for the catering": (
        ("the catering", "the food order"), ("What kind of food did we order for the event?",)),
}

_SETTINGS = {
    "personal": ("You are a personal assistant for {user}. Keep track of appointments, "
                 "contacts and plans. Be brief and friendly.", _PERSONAL),
    "support": ("You are a customer support agent for Brightline Broadband and Home. Help "
                "{user} with orders, deliveries, billing and faults. Be clear and polite.",
                _SUPPORT),
    "project": ("You are a project assistant for {user}'s team. Track deadlines, meetings, "
                "budgets and owners. Be concise.", _PROJECT),
}
_USERS = ("Maya", "Jonas", "Aleksandra", "Tariq", "Beatriz", "Sven", "Chiara", "Dev", "Hana",
          "Olu", "Freya", "Mateo", "Leila", "Nikolai", "Grace", "Ravi")

# ---------------------------------------------------------------------------------- wording
# {thing}: the fact's noun phrase ({Thing}: capitalised); {value}: its value; {old}: the value
# it replaces. Capitalised placeholders start a sentence.
_STATE = (
    "{Thing} is {value}.",
    "Just so you have it: {thing} is {value}.",
    "Can you note down that {thing} is {value}?",
    "For the record, {thing} is {value}.",
    "Please keep this somewhere: {thing} is {value}.",
    "Okay, sorted out {thing} this morning. It's {value}.",
    "One thing to remember: {thing} is {value}.",
    "I've got the details for {thing}: {value}.",
    "Save this for later please, {thing} is {value}.",
    "{Thing}? It's {value}, I checked the email.",
)
_UPDATE = (
    "Quick update: {thing} is now {value}.",
    "Heads-up, {thing} has changed. It's {value} from now on.",
    "Change of plan: {thing} will be {value} instead.",
    "Please update {thing} to {value}.",
    "{Thing} has been changed to {value}, so plan around that.",
    "New info on {thing}: it's {value} now.",
    "We switched {thing} to {value} after all.",
    "Small change, {thing} is going to be {value}.",
    "Got an email: {thing} is no longer what I told you, it's {value}.",
)
_MOVE = (  # an update of a date, a time or a place
    "They moved {thing} to {value}.",
    "{Thing} got pushed to {value}.",
    "They've rescheduled {thing}, it's {value} now.",
    "{Thing} moved to {value}, sorry for the back and forth.",
)
_MOVABLE = frozenset({"date", "time", "city", "venue", "room"})
_RELAY_UPDATE = (  # the assistant, after checking with someone
    "I just heard back: {thing} has changed to {value}.",
    "Update from their side: {thing} is now {value}.",
    "I checked again and {thing} has changed. It's {value} now.",
)
_RELAY_LEAD = (
    "Any news about {thing}?",
    "Could you check on {thing} for me?",
    "Has anything happened with {thing}?",
)
_CORRECT = (
    "Sorry, I got that wrong: {thing} is {value}, not {old}.",
    "Correction: {value}, not {old}.",
    "Wait, I mistyped. It's {value}, not {old}.",
    "Oops, {old} was wrong. {Thing} is actually {value}.",
    "Actually, scratch that: {thing} is {value}.",
    "My mistake, I meant {value} for {thing}.",
    "Hang on, I gave you the wrong one. {Thing} is {value}.",
    "No wait, not {old}. {Value}.",
)
_CONTRADICT = (  # a different value simply stated: no cue word at all
    "{Thing} is {value}.",
    "By the way, {thing} is {value}.",
    "Right, {thing}: {value}. Let's plan around that.",
    "I'm heading out soon. {Thing} is {value}, if anyone asks.",
    "{Thing} is {value}, in case you need it later.",
)
_RELAY_CONTRADICT = (
    "I checked: {thing} is {value}.",
    "According to their system, {thing} is {value}.",
)
_CANCEL = (  # (template, the word a question's answer names)
    ("Please cancel {thing}, we won't need it.", "cancel"),
    ("{Thing} is cancelled.", "cancelled"),
    ("We've called off {thing}.", "called off"),
    ("Forget {thing}, it's been scrapped.", "scrapped"),
    ("Can you cancel {thing}? Plans fell through.", "cancel"),
    ("{Thing} isn't happening any more, they cancelled it.", "cancelled"),
)
_RESTATE = (  # the same value again: not a change
    "Still {value} for {thing}, nothing changed.",
    "To confirm, {thing} stays {value}.",
    "{Thing} is still {value}, as planned.",
    "Just double-checked and {thing} is {value}, same as before.",
    "Yes, {thing} remains {value}.",
)
_HYPO = (
    "What if we changed {thing} to {value}? Would that be easier?",
    "Hypothetically, if {thing} were {value}, would that clash with anything?",
    "I'm wondering whether to switch {thing} to {value}. Thoughts?",
    "Would {value} work better for {thing}, do you think?",
)
_HYPO_REPLY = (
    "It could work, but it would mean reshuffling a few other things. Up to you.",
    "Possibly. I don't see a clash, though it is a bit tight.",
    "That is an option. I would weigh it against what is already arranged.",
)
_KEEP = (
    "No, let's keep it as it is.",
    "On second thought, leave it unchanged.",
    "Never mind, it's fine the way it is.",
    "Forget I asked, we'll stick with the original.",
)
_ACK = ("Got it, noted.", "Thanks, I've saved that.", "Understood, I'll keep that in mind.",
        "Noted.", "Okay, I have it written down.", "Great, that's on file now.")
_ACK_CHANGE = ("Done, I've updated my notes.", "No problem, changed.", "Okay, updated.",
               "Thanks for the heads-up, noted.", "Right, I've fixed that on my side.")
_ACK_END = ("Okay, I've taken it off the list.", "Understood, it's off the schedule.",
            "Right, I'll drop it from my notes.")
_ACK_MENTION = (
    "Good question. I would check the confirmation email for anything specific first.",
    "I can help with that. Let me know the details you care about and I will draft something.",
    "Nothing unusual as far as I can tell. I will flag it if that changes.",
    "I would allow a little extra time, just in case. Want me to set a reminder?",
)

# ----------------------------------------------------------------------------------- filler
_FILLER: dict[str, tuple[tuple[str, str], ...]] = {  # (the user's question, the gist of a reply)
    "personal": (
        ("Can you suggest a quick dinner I can make with spinach and chickpeas?",
         "A chickpea and spinach curry takes about 20 minutes: fry an onion with garlic and "
         "cumin, add a tin of tomatoes and the chickpeas, then wilt the spinach in at the end."),
        ("What's a polite way to decline a wedding invitation?",
         "Thank them warmly, say you are sorry you cannot be there, and wish them a wonderful "
         "day. There is no need to give a detailed reason; a card or small gift is a kind touch."),
        ("Remind me how to get candle wax out of a tablecloth.",
         "Let the wax harden, scrape off what you can, then put brown paper over the spot and "
         "press it with a warm iron so the paper soaks up the rest."),
        ("Any ideas for a rainy Sunday with two bored kids?",
         "A blanket fort with a torch and a stack of books always goes down well, or an indoor "
         "treasure hunt with clues hidden around the house."),
        ("Which houseplants survive in a dark hallway?",
         "Snake plants, ZZ plants and pothos all cope with very little light. Water them "
         "sparingly: in a dark spot they drink much less."),
        ("Help me write a short thank-you note to my neighbour for watering the plants.",
         "Something like: thank you so much for looking after the plants while we were away, "
         "they are thriving, and please let us return the favour whenever you need it."),
        ("What's a good stretching routine after a long day at the desk?",
         "Try a chest opener in a doorway, a seated twist each way, a hamstring stretch and slow "
         "neck rolls. Hold each for about 30 seconds and breathe out into the stretch."),
        ("How long should I steep green tea so it isn't bitter?",
         "2 to 3 minutes in water at about 80 degrees is plenty. Boiling water and long "
         "steeping pull out the bitter tannins."),
        ("Can you recommend a podcast for a long drive?",
         "A narrative history series works well on long drives because the episodes run into "
         "each other. If you prefer something lighter, a comedy panel show passes the time."),
        ("Is it worth descaling the kettle, and how?",
         "Yes, it boils faster and the tea tastes cleaner. Fill it halfway with equal parts "
         "water and white vinegar, boil, leave it for an hour, then rinse well."),
        ("Give me a packing list for a weekend away.",
         "Two outfits plus one spare top, sleepwear, a warm layer, comfortable shoes, "
         "toiletries, chargers, any medication, and a book for the journey."),
        ("How do I stop the bathroom mirror from fogging up?",
         "Rub a little shaving foam or washing-up liquid over the glass and buff it off with a "
         "dry cloth. It leaves a thin film that stops the steam from settling."),
        ("What's a nice low-effort present for a colleague who is leaving?",
         "A good notebook and pen, a plant for their new desk, or a card everyone signs with a "
         "voucher for a coffee shop near their new office."),
        ("Can you draft a message to the group chat about the barbecue?",
         "Here is a draft: we are doing a barbecue at ours, bring whatever you like to grill and "
         "we will sort drinks and salads. Let me know if you can make it!"),
        ("My friend Ottilie is visiting on the 3rd for 2 nights. Any ideas for a Saturday in town?",
         "A morning at the market, lunch somewhere with a view, and a walk by the river in the "
         "afternoon. If it rains, the museum is open until 6 on Saturdays."),
        ("How many grams of pasta per person, roughly?",
         "About 80 to 100 grams of dried pasta per person for a main course, a bit less if "
         "there is a starter."),
        ("The boiler pressure is at 0.5 bar. Is that too low?",
         "Yes, most boilers like 1 to 1.5 bar when cold. You can top it up with the filling loop "
         "underneath; open it slowly and close it once the needle reaches 1.2."),
        ("My basil keeps wilting. What am I doing wrong?",
         "Basil likes a sunny spot, warmth and steady watering. Water it from below when the "
         "top of the soil is dry, and pinch off the flower buds so it keeps growing leaves."),
    ),
    "support": (
        ("The app keeps logging me out. Is that a known problem?",
         "We have seen that after the last update. Clearing the app's cache and signing in again "
         "fixes it for most people; if not, reinstalling the app will."),
        ("How do I change the name on my account?",
         "Go to Account, then Personal details, and choose Edit name. For a legal name change we "
         "may ask for a document, which you can upload on the same page."),
        ("My Wi-Fi drops every evening around dinner time. Any idea why?",
         "Evening drops are often interference from neighbours' networks when everyone is home. "
         "Switching the router to the less busy band usually helps."),
        ("Can I pause my subscription while I'm abroad?",
         "Yes, you can pause it for up to 3 months from the Subscriptions page. You will not "
         "be billed while it is paused, and everything resumes automatically."),
        ("Where do I find my invoices in the app?",
         "Open the menu, choose Billing, then Invoices. Each one can be downloaded as a PDF."),
        ("The router's lights are blinking orange. What does that mean?",
         "Blinking orange means the router cannot reach our network. Restart it by holding the "
         "power button for 10 seconds; if the light stays orange, there may be a line fault."),
        ("Is there a way to get paper bills instead of email?",
         "Yes, under Billing preferences you can switch to paper bills. There is a small monthly "
         "charge for printing and postage."),
        ("Why was I charged a late fee when I paid on time?",
         "Payments made on the due date sometimes take a day to clear, which can trigger the "
         "fee. I can ask the billing team to review it and reverse it if the payment was on time."),
        ("Can I add a second user to my account?",
         "You can add up to 4 additional users under Account, then Household. Each gets their "
         "own login, and you stay the account holder."),
        ("The speed test says I'm getting half of what I pay for.",
         "Wi-Fi tests often read lower than the line speed. Could you run the test on a device "
         "plugged into the router with a cable? That tells us whether the line itself is slow."),
        ("Do you have an engineer who can look at the wiring in the hallway?",
         "Our engineers cover the wiring from the street up to the main socket. Internal wiring "
         "beyond that is usually a job for an electrician, but I can check your options."),
        ("How do I reset my password if I no longer have the old email?",
         "Use the Forgot password link and choose Verify another way. We will confirm your "
         "identity with a code sent to your phone, and then you can set a new email too."),
        ("The parcel tracking page hasn't updated since yesterday.",
         "Tracking often pauses while a parcel is between depots. It normally updates again "
         "once the parcel is scanned at the local depot."),
        ("Can I return an item I bought in the sale?",
         "Sale items can be returned within the normal return period as long as they are unused. "
         "Start the return from your order history and print the label."),
        ("I was on hold for 40 minutes yesterday with someone called Bartek. Is that normal?",
         "Sorry about that. Mondays are our busiest day; waits are usually under 10 "
         "minutes after 2 pm, and the callback option keeps your place in the queue."),
        ("Does the 12-month contract include the router, or is it extra?",
         "The router is included on every contract of 12 months or more. On a 1-month rolling "
         "plan it is a one-off charge."),
        ("Your chat kept disconnecting earlier, sorry if I repeat myself.",
         "No problem at all, I can see the earlier messages, so nothing is lost."),
    ),
    "project": (
        ("Can you summarise the main risks we discussed for the data migration?",
         "Three stood out: data loss during the cut-over, the reporting tools breaking on the "
         "new schema, and the team being stretched thin while running both systems."),
        ("Draft a short status update for the steering group, please.",
         "Draft: work is on track overall. Two risks are being watched, the integration tests "
         "and vendor access, and we will flag any change to the plan at the next meeting."),
        ("What's a good way to run a retro when half the team is remote?",
         "Run it fully online even for the people in the office, so everyone has the same "
         "experience. A shared board with silent writing first keeps the loudest voices in check."),
        ("How should we split the onboarding docs between the two teams?",
         "Split by audience rather than by system: one team owns the getting-started path, the "
         "other owns the reference material. Agree on one template so they feel like one set."),
        ("Can you turn my notes from the planning session into action items?",
         "Here they are as owners and next steps: finalise the scope, confirm the test plan, "
         "book time with the data team, and circulate the timeline for comments."),
        ("What's the difference between a feature flag and a release branch, briefly?",
         "A feature flag ships the code but keeps it switched off until you are ready; a release "
         "branch holds the code back from the main line until it is ready to go out."),
        ("Help me write a polite nudge to a reviewer who hasn't responded.",
         "Try: just bumping this in case it got buried. If you are short on time, a quick look "
         "at the summary section alone would already unblock us."),
        ("Which metrics should the dashboard show first?",
         "Lead with the two or three numbers people act on, such as error rate, latency and "
         "weekly active users. Everything else can live one click away."),
        ("Can you suggest a structure for the design doc?",
         "Context and goals, non-goals, the proposed design, alternatives considered, risks, and "
         "a rollout plan. Keep the first page readable on its own."),
        ("The test suite is flaky again. Where would you start looking?",
         "Start with tests that depend on time, ordering or shared state. Rerun the failing ones "
         "in isolation; if they pass alone, something leaks between tests."),
        ("How do I explain the delay to the client without sounding defensive?",
         "State what happened in one sentence, what you are doing about it, and what it means "
         "for them. Skip the long justification; clients mostly want the new plan."),
        ("Give me three options for naming the new service.",
         "Something descriptive, like Ledger Sync; something short and neutral, like Relay; or a "
         "code name from a theme the team likes, like the names of rivers."),
        ("What should go into a handover note before my leave?",
         "Open items with their status and owner, decisions still pending, where the documents "
         "live, and who to ask about what while you are away."),
        ("Can you tidy up this paragraph for the proposal? It reads clunky.",
         "I shortened the sentences, moved the main point to the front and cut the repeated "
         "caveats. It reads more confidently now without changing what it promises."),
        ("Marguerite from finance wants the Q3 numbers by end of week. What should I include?",
         "Spend against plan, the 3 biggest variances with one line of explanation each, and the "
         "forecast for Q4. A one-page table is usually what finance wants."),
        ("Sprint 14 ended with 6 stories unfinished. How do I raise that in the review?",
         "Say it plainly: 6 stories carried over, here is why, and here is what we change in "
         "sprint 15. Focus on the cause rather than the count."),
        ("We keep arguing about story points. Is there a better way to estimate?",
         "Some teams drop points and just count items, splitting anything that looks bigger "
         "than a few days. It ends most of the arguing and forecasts about as well."),
    ),
}
_FILLER_OPEN = ("", "", "", "Different question. ", "Random one: ", "Unrelated, but ",
                "Also, ", "While I remember, ", "Okay, next thing. ")
_REPLY_SENTENCES = (  # closings that fit after any answer
    "Let me know if you want more detail on any of that.",
    "Happy to go through it step by step if that helps.",
    "If you want, I can put together a short checklist so you do not have to remember the steps.",
    "If it keeps coming up, it is worth raising properly rather than working around it.",
    "Shout if anything is unclear.",
    "I can write that up as a note for later if you like.",
    "There is no single right answer, but that is where I would start.",
    "Try it once and tell me how it went; we can adjust from there.",
)
_FOLLOW_UP = (  # (a follow-up on the last answer, the reply)
    ("And if that doesn't work?",
     "Then try the second option. If it keeps happening after that, it is worth raising "
     "properly rather than working around it."),
    ("How long does that usually take?",
     "Not long: ten minutes or so the first time, less once you know the steps."),
    ("Is there a quicker way?",
     "Not really a shortcut, but doing the simplest part first saves most of the time."),
    ("Could you put that as a short checklist?",
     "Sure. First, the simplest step. Second, check whether it helped. Third, if not, the next "
     "option. Last, a note of what worked for next time."),
    ("What would you do in my place?",
     "I would try the simplest option first and give it a week before changing anything else."),
    ("Anything I should avoid?",
     "Avoid doing everything at once, because then you cannot tell what made the difference."),
    ("Can you say that more briefly?", "In short: start simple, check, then adjust."),
    ("Does that cost anything?",
     "Usually nothing beyond a little time. If there is a charge, it is shown before you "
     "confirm anything."),
)
_THANKS = ("Thanks, that helps.", "Great, I'll try that.", "Okay, makes sense.",
           "Perfect, thank you.", "Nice, cheers.", "Good idea.")


_BEFORE = ("Busy day here.", "Sorry for the flood of messages today.", "Okay, admin time.",
           "Quick one.", "Morning!", "Just got off the phone.")
_AFTER = ("Can you keep that in mind?", "Let me know if anything clashes.",
          "It's been a hectic week, so I'm glad someone is keeping track.",
          "I'll forward you the email later.", "No action needed for now.",
          "Thanks for keeping on top of all this.")


def _pad(rng: random.Random, text: str) -> str:
    """A statement as people write it: often inside a message with more in it."""
    if rng.random() < 0.3:
        text = f"{_pick(rng, _BEFORE)} {text}"
    if rng.random() < 0.3:
        text = f"{text} {_pick(rng, _AFTER)}"
    return text


def _ref(rng: random.Random, thing: _Thing, near: bool = False) -> str:
    """How a later message refers to ``thing``: its first wording, another one, or (right after
    it was last mentioned) "it"."""
    r = rng.random()
    if near and r < 0.3 and thing.kind not in ("name", "count", "phone"):
        return "it"
    if r < 0.65:
        return _pick(rng, _ALIASES[thing.thing][0])
    return thing.thing


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _fill(template: str, thing: str, value: str = "", old: str = "") -> str:
    return template.format(thing=thing, Thing=_cap(thing), value=value, Value=_cap(value),
                           old=old)


# ----------------------------------------------------------------------------------- events
@dataclass
class _Event:
    """A message planned at a fixed index (and what it does to its fact)."""

    role: str
    text: str
    fact: int
    does: str
    """"state" (a new value), "restate", "hypo", "keep", "mention", "lead", "reply"."""
    value: str = ""
    ack: tuple[str, ...] = ()
    """What the assistant says next, when the next index is free."""


@dataclass
class _Fact:
    thing: _Thing
    category: str
    values: list[str]
    kinds: list[str]
    """How each statement after the first replaced the one before ("updated", ...)."""
    gaps: list[int]
    similar: str | None = None
    at: list[int] = field(default_factory=list)
    """Message index of each statement, in order."""
    answers: list[str] = field(default_factory=list)


def _gap(rng: random.Random, forced: int | None) -> int:
    """Messages between a statement and the one that replaces it: from none to 160."""
    if forced is not None:
        return forced
    r = rng.random()
    if r < 0.15:
        drawn = _n(rng, 0, 2)
    elif r < 0.45:
        drawn = _n(rng, 3, 12)
    elif r < 0.75:
        drawn = _n(rng, 13, 45)
    else:
        drawn = _n(rng, 46, 160)
    return drawn


def _plan_facts(rng: random.Random, things: Sequence[_Thing], n_facts: int,
                gap: int | None, used: set[str]) -> list[_Fact]:
    """Which facts the conversation holds, how each changes, and its values (all different
    from each other and from ``used``, which grows)."""
    pool = list(things)
    chosen: list[_Thing] = []
    while len(chosen) < n_facts and pool:
        chosen.append(pool.pop(int(rng.random() * len(pool))))
    # one category each, spread evenly: a shuffled deck, cancelled only where it makes sense
    deck = ["updated", "corrected", "contradicted", "changed twice", "unchanged", "cancelled",
            "updated", "corrected", "contradicted", "changed twice", "unchanged", "cancelled"]
    deck.sort(key=lambda _: rng.random())
    facts: list[_Fact] = []
    for thing in chosen:
        # the deck's cancellations go to things that can be cancelled (most of those draw one)
        if thing.cancel and "cancelled" in deck and rng.random() < 0.7:
            category = "cancelled"
        else:
            category = next((c for c in deck if c != "cancelled"), "updated")
        if category in deck:
            deck.remove(category)
        if category == "changed twice":
            kinds = [_pick(rng, _CHANGE_KINDS), _pick(rng, _CHANGE_KINDS)]
        elif category in ("unchanged", "cancelled"):
            kinds = []
        else:
            kinds = [category]
        values = [_fresh(rng, thing.kind, used)]
        for kind in kinds:
            new = _typo(rng, values[-1]) if kind == "corrected" and \
                thing.kind in _TYPO_KINDS else None
            if new is None or new in used:
                new = _fresh(rng, thing.kind, used)
            used.add(new)
            values.append(new)
        if category == "cancelled":  # the fact ends: its last "value" is none
            kinds, values = ["cancelled"], values + [""]
        gaps = [_gap(rng, gap) for _ in values[1:]]
        facts.append(_Fact(thing, category, values, kinds, gaps))
    for f in facts:  # the similar fact about a different thing: same kind of value
        twin = next((g for g in facts if g is not f and g.thing.kind == f.thing.kind), None)
        f.similar = None if twin is None else twin.thing.thing
    return facts


def _fresh(rng: random.Random, kind: str, used: set[str]) -> str:
    for _ in range(200):
        value = _value(rng, kind)
        if value not in used:
            used.add(value)
            return value
    raise ValueError(f"could not draw a fresh {kind!r} value")  # pragma: no cover


class _Schedule:
    """Message indices taken by planned events."""

    def __init__(self) -> None:
        self.events: dict[int, _Event] = {}

    def free(self, indices: Sequence[int]) -> bool:
        return all(i >= 1 and i not in self.events for i in indices)

    def put(self, i: int, event: _Event) -> None:
        assert i not in self.events, i
        self.events[i] = event


def _statement_events(rng: random.Random, k: int, fact: _Fact,
                      forced: bool) -> list[tuple[int, _Event]]:
    """The fact's statements as (offset from the first, event), leads included."""
    t = fact.thing
    out: list[tuple[int, _Event]] = []
    offset = 0
    first = _pad(rng, _fill(_pick(rng, _STATE), t.thing, fact.values[0]))
    out.append((0, _Event("user", first, k, "state",
                          fact.values[0], _ACK)))
    for j, kind in enumerate(fact.kinds):
        value, old = fact.values[j + 1], fact.values[j]
        relay = t.relay and kind in ("updated", "contradicted") and rng.random() < 0.6 and \
            fact.gaps[j] >= 2
        if not forced and kind != "corrected" and fact.gaps[j] == 0:
            fact.gaps[j] = 1  # only a correction comes at once, in a second message
        if not forced and fact.gaps[j] and (fact.gaps[j] % 2 == 0) != relay:
            # a drawn gap keeps turns alternating: a user statement comes an odd number of
            # messages after the last, the assistant's an even number (a gap of 0 is the user
            # correcting themself in a second message at once)
            fact.gaps[j] += 1
        offset += fact.gaps[j] + 1
        ref = _ref(rng, t, near=fact.gaps[j] <= 3)
        if relay:
            out.append((offset - 1, _Event("user", _fill(_pick(rng, _RELAY_LEAD), t.thing), k,
                                           "lead")))
            bank = _RELAY_UPDATE if kind == "updated" else _RELAY_CONTRADICT
            out.append((offset, _Event("assistant", _fill(_pick(rng, bank), ref, value), k,
                                       "state", value)))
            continue
        if kind == "cancelled":
            template, word = _pick(rng, _CANCEL)
            fact.answers.append(word)
            out.append((offset, _Event("user", _pad(rng, _fill(template, ref)), k, "state", "",
                                       _ACK_END)))
        elif kind == "corrected":
            out.append((offset, _Event("user", _fill(_pick(rng, _CORRECT), ref, value, old),
                                       k, "state", value, _ACK_CHANGE)))
        elif kind == "updated":
            bank = _UPDATE + _MOVE if t.kind in _MOVABLE else _UPDATE
            out.append((offset, _Event("user", _pad(rng, _fill(_pick(rng, bank), ref, value)), k,
                                       "state", value, _ACK_CHANGE)))
        else:
            text = _pad(rng, _fill(_pick(rng, _CONTRADICT), ref, value))
            out.append((offset, _Event("user", text, k,
                                       "state", value, _ACK)))
    return out


def _place(rng: random.Random, schedule: _Schedule, planned: list[tuple[int, _Event]],
           lo: int, hi: int) -> int | None:
    """Put ``planned`` (offsets from a start) at a free start in [lo, hi]; the start or None.

    A user statement also wants the next index free for the assistant's acknowledgement. The
    start is odd: the filler alternates user (odd indices) and assistant (even), so a planned
    user message lands where the user speaks anyway (unless a forced gap says otherwise)."""
    span = max(o for o, _ in planned)
    lo += 1 - lo % 2
    if hi - span < lo:
        return None
    for _ in range(300):
        start = _n(rng, lo, hi - span)
        start -= 1 - start % 2
        need = [start + o for o, _ in planned]
        soft = [start + o + 1 for o, e in planned if e.ack and start + o + 1 not in need]
        if schedule.free(need + soft):
            for o, e in planned:
                schedule.put(start + o, e)
            return start
    return None


def _conversation(rng: random.Random, n: int, setting: str, gap: int | None,
                  facts_per_conversation: int) -> tuple[dict, list[dict]]:
    cid = f"cf-{n + 1:02d}"
    system, things = _SETTINGS[setting]
    user = _USERS[n % len(_USERS)]
    used: set[str] = set()  # every value said in the conversation, hypothetical ones too
    facts = _plan_facts(rng, things, facts_per_conversation, gap, used)
    length = _n(rng, 110, 230)
    if gap is None:  # a drawn chain fits the conversation drawn for it: halve its longest gap
        for f in facts:
            while sum(f.gaps) + 2 * len(f.gaps) > length - 12:
                longest = f.gaps.index(max(f.gaps))
                f.gaps[longest] //= 2
    schedule = _Schedule()
    # the statements first (longest chains first: they are hardest to fit)
    order = sorted(range(len(facts)), key=lambda k: (-sum(facts[k].gaps), k))
    for k in order:
        planned = _statement_events(rng, k, facts[k], gap is not None)
        span = max(o for o, _ in planned)
        while True:
            start = _place(rng, schedule, planned, 2, length - 4)
            if start is not None:
                break
            length += 20  # no room left: the conversation grows
        facts[k].at = [start + o for o, e in planned if e.does == "state"]
        length = max(length, start + span + 4)
    # then the distractors, each in a free place after the first statement
    for k, f in enumerate(facts):
        t = f.thing
        last = f.at[-1]
        if t.mention and rng.random() < 0.55:
            text = _pick(rng, t.mention)
            _place(rng, schedule, [(0, _Event("user", text, k, "mention")),
                                   (1, _Event("assistant", _pick(rng, _ACK_MENTION), k, "reply"))],
                   f.at[0] + 1, length - 3)
        if f.category != "cancelled" and rng.random() < 0.4:  # restate the current value
            text = _fill(_pick(rng, _RESTATE), _ref(rng, t), f.values[-1])
            _place(rng, schedule, [(0, _Event("user", text, k, "restate", f.values[-1],
                                              ("Great, thanks for confirming.",)))],
                   last + 2, length - 3)
        if gap is None and len(f.at) > 1 and rng.random() < 0.3:  # restate a value later replaced
            i = _n(rng, 0, len(f.at) - 2)
            if f.at[i + 1] - f.at[i] > 5:
                text = _fill(_pick(rng, _RESTATE), _ref(rng, t), f.values[i])
                _place(rng, schedule, [(0, _Event("user", text, k, "restate", f.values[i],
                                                  ("Great, thanks for confirming.",)))],
                       f.at[i] + 2, f.at[i + 1] - 3)
        if t.hypo and f.category != "cancelled" and rng.random() < 0.6:
            hypo = _fresh(rng, t.kind, used)
            planned = [
                (0, _Event("user", _fill(_pick(rng, _HYPO), _ref(rng, t), hypo), k, "hypo", hypo)),
                (1, _Event("assistant", _pick(rng, _HYPO_REPLY), k, "reply")),
                (2, _Event("user", _pick(rng, _KEEP), k, "keep", "", ("Sure, nothing changes.",)))]
            where = _n(rng, 0, len(f.at) - 1)  # between two statements if they leave room,
            until = f.at[where + 1] - 5 if where + 1 < len(f.at) else length - 5
            if _place(rng, schedule, planned, f.at[where] + 2, until) is None:
                _place(rng, schedule, planned, last + 2, length - 5)  # else after the last
    return _render(rng, cid, setting, system.format(user=user), facts, schedule, length)


def _render(rng: random.Random, cid: str, setting: str, system: str, facts: list[_Fact],
            schedule: _Schedule, length: int) -> tuple[dict, list[dict]]:
    """Write the messages (events at their indices, filler around them) and the questions.

    Filler is small threads: a question from the setting's list (each asked once before any
    repeats), the assistant's answer, sometimes a follow-up and its answer, sometimes thanks."""
    length = max(length, max(schedule.events) + 2)
    messages: list[dict] = [{"id": f"{cid}-m000", "role": "system", "content": system}]
    pool = list(_FILLER[setting]) + (list(_FILLER["personal"]) if setting == "project" else [])
    deck: list[tuple[str, str]] = []
    pending_ack: tuple[str, ...] = ()
    wants, gist = "nothing", ""  # what the user's last filler message asks of the assistant
    answered = False   # the assistant's last message answered a question
    for i in range(1, length):
        event = schedule.events.get(i)
        if event is not None:
            role, text = event.role, event.text
            pending_ack, wants, answered = event.ack, "nothing", False
        elif messages[-1]["role"] == "user":
            role = "assistant"
            if pending_ack:
                text = _pick(rng, pending_ack)
            elif wants == "gist":  # the answer, often with a closing sentence
                text = " ".join([gist] + [_pick(rng, _REPLY_SENTENCES)
                                          for _ in range(_n(rng, 0, 1))])
            elif wants == "more":  # the follow-up's reply, sometimes with a closing sentence
                text = " ".join([gist] + [_pick(rng, _REPLY_SENTENCES)
                                          for _ in range(_n(rng, 0, 1))])
            else:
                text = _pick(rng, ("Sure.", "Any time.", "Of course.", "Glad to help."))
            answered = wants in ("gist", "more")
            pending_ack, wants = (), "nothing"
        else:
            role = "user"
            r = rng.random()
            if answered and r < 0.3:
                (text, gist), wants = _pick(rng, _FOLLOW_UP), "more"
            elif answered and r < 0.5:
                text, wants = _pick(rng, _THANKS), "nothing"
            else:
                if not deck:  # every question once, in a drawn order, before any repeats
                    deck = sorted(pool, key=lambda _: rng.random())
                ask, gist = deck.pop()
                opener = _pick(rng, _FILLER_OPEN)
                lower = opener and not opener.endswith((". ", ": "))
                text, wants = opener + (ask[:1].lower() + ask[1:] if lower else ask), "gist"
            pending_ack, answered = (), False
        messages.append({"id": f"{cid}-m{i:03d}", "role": role, "content": text})
    return _questions(rng, cid, messages, facts, schedule)


def _questions(rng: random.Random, cid: str, messages: list[dict], facts: list[_Fact],
               schedule: _Schedule) -> tuple[dict, list[dict]]:
    questions: list[dict] = []
    updates: list[dict] = []
    end = len(messages)
    for k, f in enumerate(facts):
        said = sorted((i, e) for i, e in schedule.events.items()
                      if e.fact == k and e.does in ("state", "restate"))
        for j in range(1, len(f.at)):  # the gold links: every earlier statement -> its successor
            for i, e in said:
                if f.at[j - 1] <= i < f.at[j]:
                    updates.append({"old": messages[i]["id"], "new": messages[f.at[j]]["id"],
                                    "key": f.thing.thing, "kind": f.kinds[j - 1]})
        positions = [end]
        if f.category == "changed twice":  # also asked between the two changes
            lo, hi = f.at[1] + 2, f.at[2]
            if hi > lo:
                positions.insert(0, _n(rng, lo, hi))
        for position in positions:
            stated = [j for j, i in enumerate(f.at) if i < position]
            current = stated[-1]
            evidence = [messages[i]["id"] for i, e in said
                        if f.at[current] <= i < position and e.value == f.values[current]]
            superseded = [messages[i]["id"] for i, e in said if i < f.at[current]]
            if current == 0:
                category = "unchanged"
            elif position == end:
                category = f.category
            else:
                category = f.kinds[0]
            q: dict[str, Any] = {
                "conversation": cid, "id": f"{cid}-q{len(questions) + 1:02d}",
                "question": _pick(rng, (f.thing.question,) + _ALIASES[f.thing.thing][1]),
                "category": category,
                "answer": f.answers[0] if f.values[current] == "" else f.values[current],
                "evidence": evidence,
                "metadata": {
                    "key": f.thing.thing, "value_kind": f.thing.kind,
                    "gap": None if current == 0 else
                    f.at[current] - max(i for i, _ in said if i < f.at[current]) - 1,
                    "asked": "at the end" if position == end else "between the changes",
                    "statements": current + 1, "similar": f.similar,
                    "replaced": list(f.values[:current]),
                    "by": messages[f.at[current]]["role"]},
            }
            if superseded:
                q["superseded"] = superseded
            if position != end:
                q["position"] = position
            questions.append(q)
    names = {"restate": "restated", "hypo": "hypothetical", "keep": "kept", "mention": "mention"}
    distractors = [{"message": messages[i]["id"], "kind": names[e.does],
                    "key": facts[e.fact].thing.thing}
                   for i, e in sorted(schedule.events.items()) if e.does in names]
    note = ("synthetic: invented by memorykit.classroom.scenarios.changing_facts, not a real "
            "user's log")
    return {"id": cid, "messages": messages, "note": note, "updates": updates,
            "distractors": distractors}, questions


# -------------------------------------------------------------------------------------- API
_MAX_CONVERSATIONS = 1000
"""More is a typo, not a lab: 1,000 conversations are already ~3 M tokens."""


def render_changing_facts(seed: int = DEFAULT_SEED, conversations: int = DEFAULT_CONVERSATIONS,
                          gap: int | None = None, facts_per_conversation: int = 10,
                          ) -> tuple[list[dict], list[dict]]:
    """The conversations and the questions as records (what the two files hold, line by line).

    ``gap``: None draws each change's distance from what it replaces (0 to ~160 messages);
    an int forces every change to come exactly that many messages after the statement it
    replaces (and then no old value is restated in between, so ``metadata["gap"]`` is ``gap``).
    """
    for name, value in (("seed", seed), ("conversations", conversations),
                        ("facts_per_conversation", facts_per_conversation)):
        if type(value) is not int:
            raise TypeError(f"{name} must be an int, got {value!r}")
    if seed < 0:
        raise ValueError(f"seed must be a non-negative int, got {seed!r}")
    if not 1 <= conversations <= _MAX_CONVERSATIONS:
        raise ValueError(f"conversations must be in [1, {_MAX_CONVERSATIONS}] (each is a few "
                         f"thousand tokens), got {conversations!r}")
    if not 1 <= facts_per_conversation <= 12:
        raise ValueError(f"facts_per_conversation must be in [1, 12], got "
                         f"{facts_per_conversation!r}")
    if gap is not None and (type(gap) is not int or not 0 <= gap <= _MAX_GAP):
        raise ValueError(f"gap must be None or an int in [0, {_MAX_GAP}], got {gap!r}")
    rng = random.Random(seed)
    settings = list(_SETTINGS)
    chats: list[dict] = []
    questions: list[dict] = []
    for n in range(conversations):
        chat, asked = _conversation(rng, n, settings[n % len(settings)], gap,
                                    facts_per_conversation)
        chats.append(chat)
        questions.extend(asked)
    return chats, questions


def _line(record: dict) -> str:
    return json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n"


def changing_facts_files(seed: int = DEFAULT_SEED, conversations: int = DEFAULT_CONVERSATIONS,
                         gap: int | None = None, facts_per_conversation: int = 10,
                         ) -> tuple[str, str]:
    """The text of the conversations file and of the questions file (JSON Lines, keys sorted)."""
    chats, questions = render_changing_facts(seed, conversations, gap, facts_per_conversation)
    return "".join(map(_line, chats)), "".join(map(_line, questions))


def changing_facts_dataset(seed: int = DEFAULT_SEED, conversations: int = DEFAULT_CONVERSATIONS,
                           gap: int | None = None, facts_per_conversation: int = 10,
                           ) -> EvalDataset:
    """The set as an ``EvalDataset`` (read by ``parse_chat_logs``, as ``tune`` reads the files)."""
    from memorykit.evaluation.chatlog import parse_chat_logs  # imported when used: the
    # generator itself needs nothing of the evaluation package

    chats, asked = changing_facts_files(seed, conversations, gap, facts_per_conversation)
    name = "changing facts" if gap is None else f"changing facts (gap {gap})"
    return parse_chat_logs(chats, asked, name=name)
