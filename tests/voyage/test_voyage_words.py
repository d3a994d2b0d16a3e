"""What the player reads: action cards from their side, counts in English, no hint for the model
in their face, and a price per unit read as a price."""

from __future__ import annotations

import pytest
from voyage_action_support import Bench
from voyage_brain_support import ARRIVAL, Conversation, option_ids, speech

from starharness.voyage import VoyageWorld
from starharness.voyage.brain.intents import classify
from starharness.voyage.brain.options import Option
from starharness.voyage.brain.scene import Job, SceneView, Ware
from starharness.voyage.content import DOCK_MASTER, DOCK_MASTER_PERSONA, OMEGA
from starharness.voyage.content.seed import LOCATIONS
from starharness.voyage.content.words import units_of


@pytest.mark.parametrize(
    ("qty", "name", "said"),
    [
        (1, "fuel cells", "1 fuel cell"),
        (5, "fuel cells", "5 fuel cells"),
        (1, "drive parts", "1 drive part"),
        (1, "medical gel", "1 medical gel"),
        (1_000, "titanium ore", "1,000 titanium ore"),
    ],
)
def test_a_count_of_goods_reads_as_english(qty: int, name: str, said: str) -> None:
    assert units_of(qty, name) == said


async def test_action_cards_read_from_the_players_side(world: VoyageWorld) -> None:
    bought = await Bench(world).call("player_buys", good_id="fuel", qty=1, unit_price=450)
    assert bought["summary"] == "Bought 1 fuel cell for 450 credits."
    # Karsk does not buy fuel (Ilse does): the rules offer his sale instead, nothing is sold.
    sold = await Bench(world, accept=False).call(
        "player_sells", good_id="fuel", qty=1, unit_price=380
    )
    assert (sold["action"], sold["offer"]) == ("player_buys", "Buy 1 fuel cell at 450 (450 cr)")
    sold = await Bench(world, npc_id=DOCK_MASTER).call(
        "player_sells", good_id="fuel", qty=1, unit_price=380
    )
    assert sold["summary"] == "Sold 1 fuel cell for 380 credits."
    hint = await Bench(world).call("player_buys", good_id="fuel", qty=1, unit_price=10)
    assert "goes for" not in str(hint) and "going price of fuel cells here is 450" in str(hint)


async def test_a_free_rumour_is_offered_as_free_without_a_pay_label(world: VoyageWorld) -> None:
    heard = await Bench(world, npc_id=DOCK_MASTER).call("sell_intel", intel_id="intel-hiring")
    assert heard["summary"] == 'Heard the rumour "who is hiring".'
    talk = Conversation(persona=DOCK_MASTER_PERSONA).player(ARRIVAL)
    talk.scene(
        "Day 1. Omega station: the docking ring.\nIlse Brandt: 30,000 credits.\n"
        "The player: Captain Ash, 12,000 credits; hold: empty.\n"
        "Attitude to the player: 10 (neutral).\n"
        'Intel for sale: [intel-hiring] rumour "who is hiring" free (needs attitude 0).\n'
        "Memories of the player: You have never dealt with them."
    )
    step = talk.player("Any rumours?").ask()
    said = speech(step)
    assert "for free" not in said["line"] and "Pay" not in str(said["options"])
    assert "intel:intel-hiring" in option_ids(step)


@pytest.mark.parametrize(
    "text", ["Can you do 300 a fuel cell?", "could you do 300 per cell", "300 credits a fuel cell?"]
)
def test_a_price_per_unit_is_a_price_not_a_quantity(text: str) -> None:
    scene = SceneView(sells=[Ware("fuel", "fuel cells", 450, 40)])
    intent = classify(text, scene, [])
    assert (intent.kind, intent.good_id, intent.price, intent.qty) == ("haggle", "fuel", 300, None)


@pytest.mark.parametrize(
    "text", ["Sell me 3 medical gel", "Brandt, sell me three medical gel", "can you sell us 3 gel?"]
)
def test_sell_me_is_the_player_buying(text: str) -> None:
    # Found playing a scene at the bar: "Brandt, sell me 3 medical gel" got "I'm not buying that".
    scene = SceneView(sells=[Ware("medgel", "medical gel", 1_100, 12)])
    intent = classify(text, scene, [])
    assert (intent.kind, intent.good_id, intent.qty) == ("buy", "medgel", 3)


def test_the_station_has_one_name() -> None:
    assert next(place.name for place in LOCATIONS if place.id == OMEGA) == "Omega station"


def test_a_refused_berth_is_told_in_the_npcs_words_not_the_models_hint() -> None:
    talk = Conversation(persona=DOCK_MASTER_PERSONA).player(ARRIVAL)
    talk.scene(
        "Day 1. Omega station: the docking ring.\nIlse Brandt: 30,000 credits.\n"
        "The player: Captain Ash, 500 credits; hold: empty.\n"
        "Attitude to the player: 10 (neutral).\n"
        "Passage for sale: Ceres Deep [ceres-deep] 1,800, 1d; "
        "Kessler's Hollow [kessler-hollow] 2,500, 2d\n"
        "Memories of the player: You have never dealt with them."
    )
    talk.player("I'll work my passage to Ceres Deep")
    hint = "they can pay the 1,800 fare; sell them the berth with work=false"
    call = talk.called("book_passage", {"destination": "ceres-deep", "work": True})
    talk.result(call, {"ok": False, "reason": "can_pay", "hint": hint, "facts": {}})
    said = speech(talk.ask())
    assert "work=" not in said["line"] and "sell I" not in said["line"]
    assert "Ceres Deep" in said["line"]


@pytest.mark.parametrize(("attitude", "offered"), [("-30 (hostile)", False), ("0 (wary)", True)])
def test_a_job_that_needs_attitude_0_is_offered_only_to_a_player_at_0(
    attitude: str, offered: bool
) -> None:
    # Found by the game walk: Vex (attitude -30) offered "bring 6 drive parts" (needs 0), and
    # taking it was refused, a dead end; a bar of 0 had read as no bar at all.
    talk = Conversation().player(ARRIVAL)
    talk.scene(
        "Day 3. Kessler's Hollow: the deal room.\nVex: 9,000 credits.\n"
        "The player: Captain Ash, 8,000 credits; hold: empty.\n"
        f"Attitude to the player: {attitude}.\n"
        'Jobs on offer to the player: [quest-parts] "bring 6 drive parts", reward 12,000 for '
        "6 [parts] (needs attitude 0)\n"
        "Memories of the player: You have never dealt with them."
    )
    talk.player("Got any work?")
    step = talk.ask()
    assert ("job:quest-parts" in option_ids(step)) is offered
    assert speech(step)["line"].startswith("No work for you today") is not offered


@pytest.mark.parametrize(
    "text", ["I'll take the job.", "i'll take the job!", "  I'll take the job  "]
)
def test_an_options_words_typed_with_punctuation_pick_it(text: str) -> None:
    # Found playing as a newcomer: typing the option's own words with a full stop listed the
    # jobs again instead of taking the one offered.
    options = [Option("job:quest-medgel", "I'll take the job"), Option("bye", "Leave")]
    intent = classify(text, SceneView(), options)
    assert (intent.kind, intent.subject, intent.picked) == ("job", "quest-medgel", True)


@pytest.mark.parametrize(
    "text", ["Fine, I'll take that job", "I accept the job.", "I want the work"]
)
def test_taking_a_job_in_words_takes_the_open_one(text: str) -> None:
    scene = SceneView(open_jobs=[Job("quest-medgel", "bring 10 medical gel", 14_000, None)])
    intent = classify(text, scene, [])
    assert (intent.kind, intent.subject) == ("job", "quest-medgel")
    # With no open job it is still a question about work.
    assert classify(text, SceneView(), []).kind == "jobs"
