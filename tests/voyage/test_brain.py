"""The offline brain as a pure function: hand-built requests in, the step a model would take out."""

from __future__ import annotations

import json

import pytest
from voyage_action_support import action_tools
from voyage_brain_support import (
    ARRIVAL,
    Conversation,
    only_call,
    option_ids,
    price_refusal,
    speech,
)

from starharness.mockllm import ChatRequest, Success, ToolCalls
from starharness.voyage.actions import MOODS, SPEECH
from starharness.voyage.brain import KNOWN_TOOLS, respond
from starharness.voyage.brain.scene import SceneView, Ware
from starharness.voyage.brain.voice import wares_again
from starharness.voyage.content import DOCK_MASTER_PERSONA

SCENE = """\
Day 1. Omega station: The Rusty Nebula, a dim bar on the docking ring; the dock office is next door.
Jonah Karsk: 48,000 credits.
Sells from the hold, units at going price: fuel cells [fuel] 40 at 450, medical gel [medgel] \
12 at 1,100, nebula spice [spice] 6 at 2,900.
Buys, paying 75-85% of the going price shown: real coffee [coffee] 160, medical gel [medgel] \
1,100, drive parts [parts] 1,500, nebula spice [spice] 2,900.
The player: Captain Ash, 12,000 credits; hold: empty.
Attitude to the player: 0 (neutral).
Jobs on offer to the player: [quest-medgel] "bring 10 medical gel for a clinic", reward 14,000.
Intel for sale: [intel-patrols] rumour "customs patrol times" 1,500 (needs attitude 20); \
[intel-shortcut] route "the Kessler shortcut" 4,000 (needs attitude 40).
Memories of the player: You have never dealt with them."""

GREETING_OPTIONS = [
    ("buy:fuel:5", "Buy 5 fuel cells (2,250)"),
    ("buy:medgel:5", "Buy 5 medical gel (5,500)"),
    ("rumours", "Any rumours?"),
    ("bye", "Leave"),
]


def _greeted(scene: str = SCENE) -> Conversation:
    talk = Conversation().player(ARRIVAL).scene(scene)
    talk.spoke("Evening, kid.", GREETING_OPTIONS)
    return talk


def test_the_greeting_lists_the_real_stock_and_prices() -> None:
    step = Conversation().player(ARRIVAL).scene(SCENE).ask()
    said = speech(step)
    line = said["line"]
    for words in ("fuel cells at 450 (40 left)", "medical gel at 1,100", "nebula spice at 2,900"):
        assert words in line
    assert "kid" in line
    assert said["mood"] == "neutral"
    assert option_ids(step) == ["buy:fuel:5", "buy:medgel:5", "rumours", "bye"]


def test_the_greeting_follows_a_different_scene() -> None:
    poorer = SCENE.replace("12,000 credits", "1,000 credits").replace("40 at 450", "3 at 460")
    step = Conversation().player(ARRIVAL).scene(poorer).ask()
    assert "fuel cells at 460 (3 left)" in speech(step)["line"]
    assert option_ids(step)[0] == "buy:fuel:2"
    assert "buy:medgel:5" not in option_ids(step)


def test_picking_an_option_carries_it_out_through_the_tool() -> None:
    talk = _greeted().player("Buy 5 fuel cells (2,250)")
    assert only_call(talk.ask()) == (
        "player_buys",
        {"good_id": "fuel", "qty": 5, "unit_price": 450},
    )


@pytest.mark.parametrize(
    ("said", "call"),
    [
        (
            "I'll buy 3 medical gel",
            ("player_buys", {"good_id": "medgel", "qty": 3, "unit_price": 1100}),
        ),
        ("buy 2 spice", ("player_buys", {"good_id": "spice", "qty": 2, "unit_price": 2900})),
        ("10 fuel at 420 each", ("player_buys", {"good_id": "fuel", "qty": 10, "unit_price": 420})),
        # The trader pays 85% of the going price (1,500): below the 90% it sells at, at least.
        (
            "sell 2 drive parts",
            ("player_sells", {"good_id": "parts", "qty": 2, "unit_price": 1275}),
        ),
    ],
)
def test_free_text_requests_become_actions(said: str, call: tuple[str, dict[str, object]]) -> None:
    assert only_call(_greeted().player(said).ask()) == call


@pytest.mark.parametrize("said", ["buy:medgel:2:1", "buy:fuel:40:1", "sell:parts:1:99999"])
def test_text_that_looks_like_an_option_id_is_not_a_deal(said: str) -> None:
    step = _greeted().player(said).ask()
    assert isinstance(step, ToolCalls), step
    deals = [
        json.loads(c.arguments) for c in step.calls if c.name in ("player_buys", "player_sells")
    ]
    assert all(deal["unit_price"] not in (1, 99999) for deal in deals), deals


def test_the_brain_speaks_about_a_done_deal_after_warming_to_a_fair_payer() -> None:
    talk = _greeted().player("Buy 5 fuel cells (2,250)")
    done = {
        "ok": True,
        "summary": "Sold 5 fuel cells for 2,250 credits.",
        "good": "fuel cells",
        "qty": 5,
        "unit_price": 450,
        "total": 2250,
        "their_credits": 9750,
        "your_units_left": 35,
    }
    talk.follow(talk.ask(), done)
    name, arguments = only_call(talk.ask())
    assert name == "change_attitude" and arguments["delta"] > 0
    talk.follow(talk.ask(), {"ok": True, "summary": "Attitude +5", "attitude": 5, "before": 0})
    said = speech(talk.ask())
    assert "5 fuel cells for 2,250" in said["line"]
    assert "9,750 left" in said["line"]
    assert said["mood"] == "pleased"


def test_a_refusal_is_spoken_with_an_alternative_the_player_can_afford() -> None:
    talk = _greeted().player("buy 5 nebula spice")
    assert only_call(talk.ask())[0] == "player_buys"
    refusal = {
        "ok": False,
        "reason": "insufficient_funds",
        "hint": "they have 12,000, the deal is 14,500; at 2,900 a unit that pays for 4",
        "facts": {"payer": "player-1", "have": 12000, "need": 14500, "max_qty": 4},
    }
    talk.follow(talk.ask(), refusal)
    step = talk.ask()
    line = speech(step)["line"]
    assert "12,000" in line and "14,500" in line
    assert "4 for 11,600" in line
    assert option_ids(step)[0] == "buy:spice:4"
    talk.follow(step)
    assert only_call(talk.player("Buy 4 nebula spice (11,600)").ask())[1]["qty"] == 4


def test_a_stock_refusal_offers_what_is_left() -> None:
    talk = _greeted().player("buy 50 fuel")
    talk.follow(
        talk.ask(),
        {
            "ok": False,
            "reason": "insufficient_stock",
            "hint": "you hold only 40 fuel cells; the player can buy at most 40",
            "facts": {"good_id": "fuel", "have": 40, "want": 50},
        },
    )
    step = talk.ask()
    assert "only got 40 fuel cells" in speech(step)["line"]
    # 40 at 450 is 18,000, more than the captain's 12,000: offer the 26 the purse pays for.
    assert "your purse pays for 26" in speech(step)["line"]
    assert option_ids(step)[0] == "buy:fuel:26"


def test_a_deal_the_rules_read_the_other_way_is_said_by_its_offer() -> None:
    # The brain's own sale of gel the player does not hold came back as the rules' reading of
    # it: the NPC's sale to them, offered. The line says that offer, not a purchase.
    talk = _greeted().player("sell 3 medical gel")
    step = talk.ask()
    assert only_call(step)[0] == "player_sells"
    offered = {
        "ok": True,
        "action": "player_buys",
        "offered": "offer-1",
        "offer": "Buy 3 medical gel at 1,100 (3,300 cr)",
        "status": "offered, not done: the player has not answered",
    }
    talk.follow(step, offered)
    line = speech(talk.ask())["line"]
    assert "Buy 3 medical gel at 1,100 (3,300 cr)" in line
    assert "I'll give you" not in line


def test_an_unknown_refusal_is_told_in_the_npcs_voice() -> None:
    talk = _greeted().player("buy 2 fuel")
    talk.follow(
        talk.ask(),
        {
            "ok": False,
            "reason": "not_here",
            "hint": "they are at Kessler's Hollow and you are at Omega station; they must travel "
            "here first",
            "facts": {},
        },
    )
    line = speech(talk.ask())["line"]
    assert line.startswith("You are at Kessler's Hollow and I am at Omega station")


def test_haggling_gets_a_discount_then_a_last_word_then_a_colder_npc() -> None:
    talk = _greeted().player("too expensive")
    first = talk.ask()
    assert speech(first)["mood"] == "amused"
    assert option_ids(first)[0] == "buy:fuel:5:428"
    talk.follow(first)
    second = talk.player("come on, cheaper").ask()
    assert speech(second)["mood"] == "wary"
    assert option_ids(second)[0] == "buy:fuel:5:405"
    talk.follow(second)
    name, arguments = only_call(talk.player("give me a discount").ask())
    assert name == "change_attitude"
    assert arguments["delta"] < 0
    assert "haggling" in arguments["reason"]


def test_a_lowball_cools_the_npc_at_once_and_it_holds_its_price() -> None:
    talk = _greeted().player("5 fuel for 200 each")
    name, arguments = only_call(talk.ask())
    assert (name, arguments["delta"]) == ("change_attitude", -5)
    assert "200" in arguments["reason"]
    talk.follow(talk.ask(), {"ok": True, "summary": "Attitude -5", "attitude": -5, "before": 0})
    step = talk.ask()
    said = speech(step)
    assert said["mood"] == "annoyed"
    assert "450 a unit" in said["line"]
    assert option_ids(step)[0] == "buy:fuel:5"


def test_a_return_visit_mentions_the_last_deal() -> None:
    memories = (
        "Memories of the player: 3 memories since day 1.\n"
        "- day 1: They bought 5 fuel cells for 2,250 (450 each).\n"
        "- day 1: Warmed to them (+5): paid my price for fuel cells, no fuss\n"
        "- day 1: They came by. Sold 5 fuel cells for 2,250 credits."
    )
    scene = SCENE.replace("Memories of the player: You have never dealt with them.", memories)
    line = speech(Conversation().player(ARRIVAL).scene(scene).ask())["line"]
    assert line.startswith("Back again, kid.")
    assert "Last time you bought 5 fuel cells off me for 2,250." in line


def test_a_folded_last_deal_is_found_too() -> None:
    memories = (
        "Memories of the player: 40 memories since day 1.\n"
        "Earlier: 30 deals (they bought 120 fuel cells for 54,000); first deal day 1: they bought "
        "5 fuel cells for 2,250.\n"
        "Last deal: day 4, they sold 3 drive parts for 4,050.\n"
        "- day 5: Asked about my old crew."
    )
    scene = SCENE.replace("Memories of the player: You have never dealt with them.", memories)
    line = speech(Conversation().player(ARRIVAL).scene(scene).ask())["line"]
    assert "Last time you sold me 3 drive parts for 4,050." in line


def test_rumours_wait_for_trust() -> None:
    cold = speech(_greeted().player("heard any rumours?").ask())
    assert cold["mood"] == "wary"
    assert "haven't earned" in cold["line"]
    warm_scene = SCENE.replace("0 (neutral)", "25 (friendly)")
    step = _greeted(warm_scene).player("heard any rumours?").ask()
    assert "customs patrol times" in speech(step)["line"]
    assert option_ids(step)[0] == "intel:intel-patrols"
    talk = _greeted(warm_scene).player("heard any rumours?")
    talk.spoke("It's yours.", [("intel:intel-patrols", 'Pay for "customs patrol times"')])
    talk.player('Pay for "customs patrol times"')
    assert only_call(talk.ask()) == ("sell_intel", {"intel_id": "intel-patrols"})


def test_jobs_are_offered_then_taken_through_the_tool() -> None:
    step = _greeted().player("got any work?").ask()
    assert "bring 10 medical gel" in speech(step)["line"]
    assert option_ids(step)[0] == "job:quest-medgel"
    label = speech(step)["options"][0]["label"]
    talk = _greeted().player("got any work?")
    talk.spoke(speech(step)["line"], [("job:quest-medgel", label)])
    talk.player(label)  # what the framework sends for {"optionId": "job:quest-medgel"}
    assert only_call(talk.ask()) == ("offer_quest", {"quest_id": "quest-medgel"})
    # Typed as free text, an option id is not a pick.
    typed = _greeted().player("job:quest-medgel").ask()
    assert isinstance(typed, ToolCalls) and typed.calls[0].name != "offer_quest"


def test_the_dock_master_sells_passage() -> None:
    scene = (
        "Day 1. Omega station: The Rusty Nebula.\nIlse Brandt: 30,000 credits.\n"
        "The player: Captain Ash, 12,000 credits; hold: empty.\n"
        "Attitude to the player: 10 (neutral).\n"
        "Passage for sale: Ceres Deep [ceres-deep] 1,800, 1d; Kessler's Hollow [kessler-hollow] "
        "2,500, 2d\nMemories of the player: You have never dealt with them."
    )
    talk = Conversation(persona=DOCK_MASTER_PERSONA).player(ARRIVAL).scene(scene)
    greeting = talk.ask()
    assert "Captain Ash" in speech(greeting)["line"]
    assert "Ceres Deep for 1,800 (1 day)" in speech(greeting)["line"]
    talk.follow(greeting)
    step = talk.player("I need passage to Kessler's Hollow").ask()
    assert only_call(step) == ("book_passage", {"destination": "kessler-hollow"})


def test_goodbye_is_spoken_and_ends_the_turn() -> None:
    step = _greeted().player("bye").ask()
    said = speech(step)
    assert "Safe travels" in said["line"]
    assert option_ids(step) == ["prices", "bye"]


def test_once_it_has_spoken_the_brain_does_not_speak_twice() -> None:
    talk = _greeted()
    step = talk.ask()
    assert isinstance(step, Success)
    assert step.text == ""


def test_without_a_speaking_tool_it_answers_in_text() -> None:
    talk = Conversation().player(ARRIVAL).scene(SCENE)
    assert speech(talk.ask())["line"]
    bare = ChatRequest("c", 0, "m", tuple(talk.messages), (), None, True, {}, {})
    assert isinstance(respond(bare), Success)


@pytest.mark.parametrize(
    "said",
    [
        ARRIVAL,
        "Buy 5 fuel cells (2,250)",
        "buy 5 nebula spice",
        "cheaper",
        "3 medgel for 100 each",
        "what are your prices?",
        "any rumours?",
        "got any work?",
        "sell 3 coffee",
        "I need passage",
        "what a lovely day",
        "bye",
    ],
)
def test_every_call_fits_the_game_and_parses_with_the_real_tool(said: str) -> None:
    tools = {tool.name: tool for tool in action_tools()}
    step = _greeted().player(said).ask()
    assert isinstance(step, ToolCalls)
    for call in step.calls:
        assert call.name in KNOWN_TOOLS
        tools[call.name].parse(call.arguments)
    if step.calls[-1].name == SPEECH.tool_name:
        arguments = speech(step)
        assert arguments["mood"] in MOODS
        # What the player sees: the offers made with the line, then its options.
        shown = option_ids(step)
        assert 2 <= len(shown) <= SPEECH.max_options, shown
        assert len(set(shown)) == len(shown)
    else:
        only_call(step)


def test_the_brain_knows_only_the_games_tools() -> None:
    assert {tool.name for tool in action_tools()} >= KNOWN_TOOLS


def test_asking_about_one_good_prices_just_that_good() -> None:
    step = _greeted().player("how much is the spice?").ask()
    assert speech(step)["line"] == "Nebula spice: 2,900 a unit, 6 left, kid."
    assert option_ids(step) == ["buy:spice:1", "bye"]


def test_a_price_band_refusal_is_answered_with_the_lowest_price_it_takes() -> None:
    talk = _greeted().player("anything cheap?")
    talk.spoke("Try this.", [("buy:fuel:5:100", "Buy 5 fuel cells (500)")])
    talk.player("Buy 5 fuel cells (500)")
    assert only_call(talk.ask()) == (
        "player_buys",
        {"good_id": "fuel", "qty": 5, "unit_price": 100},
    )
    talk.follow(
        talk.ask(),
        price_refusal("fuel cells", 450, 405, 562, 100),
    )
    step = talk.ask()
    assert "Can't do 100" in speech(step)["line"]
    assert "405 is as low as I go" in speech(step)["line"]
    assert option_ids(step)[0] == "buy:fuel:5:405"


@pytest.mark.parametrize(
    ("asked", "band", "words", "offer"),
    [
        # The band the refusal states, not one of the brain's own: asked under it, its least.
        (100, (420, 540), "420 is as low as I go", "buy:fuel:2:420"),
        # Asked above it (the player offering to overpay): the most the rules allow.
        (900, (405, 562), "562 is the most I may ask", "buy:fuel:2:562"),
    ],
)
def test_a_sale_refused_by_the_band_names_the_rules_nearest_price_either_side(
    asked: int, band: tuple[int, int], words: str, offer: str
) -> None:
    talk = _greeted().player("anything else?")
    label = f"Buy 2 fuel cells ({2 * asked:,})"
    talk.spoke("Try this.", [(f"buy:fuel:2:{asked}", label)])
    talk.player(label)
    talk.follow(talk.ask(), price_refusal("fuel cells", 450, *band, asked))
    step = talk.ask()
    assert words in speech(step)["line"]
    assert option_ids(step)[0] == offer


def test_a_sale_asked_below_what_the_npc_pays_is_answered_with_the_deal_the_rules_offer() -> None:
    # "sell 2 drive parts for 2,000" is 1,000 a unit, below the 1,125 to 1,275 the trader pays:
    # the rules offer the sale at the nearest price, 1,125, and the line must name that deal
    # (it named the top, 1,275, while the card said 1,125).
    talk = _greeted().player("sell 2 drive parts for 2,000")
    step = talk.ask()
    assert only_call(step) == ("player_sells", {"good_id": "parts", "qty": 2, "unit_price": 1000})
    talk.follow(
        step,
        price_refusal("drive parts", 1_500, 1_125, 1_275, 1_000),
    )
    line = speech(talk.ask())["line"]
    assert "1,125 a unit is the least I pay for drive parts" in line
    assert "1,275" not in line


def test_a_sale_priced_above_what_the_npc_pays_is_answered_with_the_most_it_pays() -> None:
    # A picked sale at 1,400, over the 1,125 to 1,275 the trader pays for drive parts: the
    # rules' deal in its place is at the band's nearest price, its top, and the line names it.
    talk = _greeted(SCENE.replace("hold: empty", "hold: 3 drive parts"))
    talk.spoke("Parts?", [("sell:parts:2:1400", "Sell 2 drive parts at 1,400 (2,800)")])
    step = talk.player("Sell 2 drive parts at 1,400 (2,800)").ask()
    assert only_call(step) == ("player_sells", {"good_id": "parts", "qty": 2, "unit_price": 1400})
    talk.follow(
        step,
        price_refusal("drive parts", 1_500, 1_125, 1_275, 1_400),
    )
    answer = talk.ask()
    line = speech(answer)["line"]
    assert line == "1,275 a unit is the most I pay for drive parts, kid: 2,550 for 2."
    assert option_ids(answer)[0] == "sell:parts:2:1275"


def test_asked_who_it_is_after_its_greeting_it_does_not_greet_again() -> None:
    talk = Conversation().player(ARRIVAL).scene(SCENE)
    greeting = speech(talk.ask())["line"]
    talk.spoke(greeting, GREETING_OPTIONS)
    line = speech(talk.player("Evening. Who are you, and what do you trade?").ask())["line"]
    assert line != greeting
    assert line.startswith("The name's Jonah Karsk, kid.")
    assert "I sell fuel cells, medical gel and nebula spice" in line
    assert "450" not in line  # the greeting gave the prices


def test_the_wares_are_named_again_without_the_prices_just_given() -> None:
    talk = Conversation().player(ARRIVAL).scene(SCENE)
    greeting = speech(talk.ask())["line"]
    talk.spoke(greeting, GREETING_OPTIONS)
    line = speech(talk.player("I want to buy something").ask())["line"]
    assert line == "Which one, kid? I've got fuel cells, medical gel and nebula spice."
    # Without the prices in its last line, it gives them.
    line = speech(_greeted().player("I want to buy something").ask())["line"]
    assert "fuel cells at 450 (40 left)" in line


@pytest.mark.parametrize(
    ("note", "words"),
    [
        (
            "I accept: Buy 2 fuel cells at 450 (900 cr). [Done: Bought 2 fuel cells for 900 "
            "credits.]",
            "Pleasure doing business",
        ),
        (
            "I accept: Buy 2 fuel cells at 450 (900 cr). [It did not go through; nothing "
            "changed: they have 100 credits]",
            "That deal's off, kid.",
        ),
    ],
)
def test_the_frameworks_acceptance_notes_are_read_as_such(note: str, words: str) -> None:
    assert words in speech(_greeted().player(note).ask())["line"]


def test_a_player_saying_i_accept_is_not_read_as_the_frameworks_note() -> None:
    # Words: the job is offered; the note would have been answered as a deal settled.
    step = _greeted().player("I accept the job.").ask()
    assert only_call(step) == ("offer_quest", {"quest_id": "quest-medgel"})


def test_wares_said_again_by_name_keep_the_side_of_the_trade() -> None:
    # Sold out of everything it sells: the list is what it buys, said again as buying.
    scene = SceneView(
        sells=[Ware("fuel", "fuel cells", 450, 0)],
        buys=[Ware("coffee", "real coffee", 160), Ware("parts", "drive parts", 1500)],
    )
    first = wares_again(scene, "")
    assert first == "I'm buying real coffee at 160 and drive parts at 1,500."
    assert wares_again(scene, f"Evening. {first}") == "I'm buying real coffee and drive parts."
