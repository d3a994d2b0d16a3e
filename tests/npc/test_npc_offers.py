"""Invariant 9 through the real server: what takes from the player commits only on their pick.

A game whose cake sale takes coins from the player (declared `takes_from=Role.PLAYER`): the
model's calls become offers in `options`; the player's pick commits one, once, with the guards
and the quoted price checked again; the `action` frame comes before any model call.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from npc_support import Client, Stack, serving
from pydantic import BaseModel, Field
from tinygame import GREETING_GAME
from tinygame.actions import BAKE, TALK
from tinygame.brain import customer_words, talk
from tinygame.world import Tx

from starharness.mockllm import ChatRequest, ScriptedCall, Step, ToolCalls
from starharness.npc import OfferTerms, Role, define_game_action
from starharness.npc.actions import ActionDefinitionError, predicate
from starharness.npc.encounter.offer_desk import plain_acceptance

BASE_PRICE = 4


class CakeArgs(BaseModel):
    npc_id: str
    player_id: str
    qty: int = Field(ge=1, le=5)


def _price(tx: Tx) -> int:
    # The "dear" switch moves the going price, as a director or a tick would.
    return BASE_PRICE * (2 if tx.switch("dear") else 1)


def _sell(tx: Tx, args: CakeArgs) -> Mapping[str, Any]:
    total = args.qty * _price(tx)
    tx.add(args.player_id, coins=-total, loaves=args.qty)
    tx.add(args.npc_id, coins=total, loaves=-args.qty)
    return {"total": total}


def _terms(tx: Tx, args: CakeArgs) -> OfferTerms:
    price = _price(tx)
    return OfferTerms(f"Buy {args.qty} cakes", f"{args.qty * price} coins", {"price": price})


CAKE = define_game_action(
    "sell_cake",
    "Sell cakes to the customer at the going price.",
    CakeArgs,
    bind={"npc_id": Role.NPC, "player_id": Role.PLAYER},
    guards=[
        predicate(
            lambda tx, a: tx.coins(a.player_id) >= a.qty * _price(tx),
            reason="cannot_afford",
            hint="they cannot pay for that many",
        )
    ],
    apply=_sell,
    narrate=lambda args, effect: f"Sold {args.qty} cakes for {effect['total']} coins.",
    takes_from=Role.PLAYER,
    terms=_terms,
)
OFFER_GAME = dataclasses.replace(GREETING_GAME, name="tinygame-offers", actions=(CAKE, BAKE, TALK))


def _call(name: str, **arguments: Any) -> ScriptedCall:
    return ScriptedCall(name=name, arguments=json.dumps(arguments))


def greedy(request: ChatRequest) -> Step:
    """A model told to take everything: every turn it sells cakes and bakes, unasked."""
    if request.last_message.role == "tool":
        return ToolCalls(calls=[talk("Cakes? Say the word.", options=[NO_THANKS])], fragment_size=4)
    said = customer_words(request)
    if said.startswith("I accept: "):
        return ToolCalls(calls=[talk("Enjoy them.", "happy", [NO_THANKS])], fragment_size=4)
    return ToolCalls(
        calls=[_call("sell_cake", qty=1), _call("sell_cake", qty=2), _call("bake", qty=1)]
    )


NO_THANKS = {"id": "no", "label": "No thanks"}


def offers(frames: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The offer items of the last `options` frame in `frames`."""
    last = [f for f in frames if f["t"] == "options"][-1]
    return [item for item in last["items"] if "offer" in item]


def _last_words(stack: Stack) -> str:
    """What the model last read from the player (the scene excluded)."""
    messages = stack.mock.requests[-1].body["messages"]
    said = [m["content"] for m in messages if m["role"] == "user" and "Scene:" not in m["content"]]
    return said[-1]


def cake_rows(stack: Stack) -> list[dict[str, Any]]:
    return [row for row in stack.world.audit_rows() if row["action"] == "sell_cake"]


async def _opened(stack: Stack, client: Client) -> list[dict[str, Any]]:
    await client.send({"t": "hello", "playerId": "p1"})
    assert (await client.recv())["t"] == "welcome"
    return await client.open("e1", "n-baker", "p1")


async def _pick(client: Client, option_id: str) -> list[dict[str, Any]]:
    await client.send({"t": "encounter.say", "id": "e1", "optionId": option_id})
    return await client.until(lambda f: f["t"] in ("encounter.idle", "error"))


async def test_a_greeting_commits_nothing_the_player_owns(tmp_path: Path) -> None:
    async with serving(OFFER_GAME, tmp_path, responder=greedy) as stack, stack.client() as client:
        frames = await _opened(stack, client)
        assert stack.world.holdings("p1") == (20, 0)
        assert cake_rows(stack) == []
        # The NPC's own baking commits (it takes nothing from the player)...
        assert [f["name"] for f in frames if f["t"] == "action"] == ["bake"]
        # ...the sales wait as offers, in the order made, with what the player would give.
        assert [(o["id"], o["label"], o["offer"]) for o in offers(frames)] == [
            ("offer-1", "Buy 1 cakes", {"action": "sell_cake", "cost": "4 coins"}),
            ("offer-2", "Buy 2 cakes", {"action": "sell_cake", "cost": "8 coins"}),
        ]


async def test_an_offer_picked_twice_commits_once(tmp_path: Path) -> None:
    async with serving(OFFER_GAME, tmp_path, responder=greedy) as stack, stack.client() as client:
        await _opened(stack, client)
        asked = len(stack.mock.requests)
        frames = await _pick(client, "offer-2")
        # The commit is shown before the NPC says anything about it.
        assert [f["t"] for f in frames][:2] == ["action", "hud"]
        assert frames[0] == {
            "t": "action", "id": "e1", "name": "sell_cake", "ok": True,
            "summary": "Sold 2 cakes for 8 coins.",
        }  # fmt: skip
        assert len(stack.mock.requests) > asked  # then the NPC reacts
        assert stack.world.holdings("p1") == (12, 2)
        again = await _pick(client, "offer-2")
        assert again[-1]["t"] == "error" and again[-1]["code"] == "bad_option"
        assert "no longer open" in again[-1]["message"]
        # Accepting one withdrew the other: it was priced on the purse before the deal.
        other = await _pick(client, "offer-1")
        assert other[-1]["code"] == "bad_option"
        assert stack.world.holdings("p1") == (12, 2)
        rows = cake_rows(stack)
        assert [(row["ok"], json.loads(row["args"])["accepted_offer"]) for row in rows] == [
            (1, "offer-2")
        ]


async def test_a_forged_id_and_a_closed_encounter_change_nothing(tmp_path: Path) -> None:
    async with serving(OFFER_GAME, tmp_path, responder=greedy) as stack, stack.client() as client:
        await _opened(stack, client)
        forged = await _pick(client, "offer-99")
        assert forged[-1]["code"] == "bad_option"
        assert "'offer-1', 'offer-2'" in forged[-1]["message"]  # it names what was offered
        await client.send({"t": "encounter.close", "id": "e1"})
        closed = await _pick(client, "offer-1")
        assert closed[-1]["code"] == "unknown_encounter"
        assert stack.world.holdings("p1") == (20, 0)
        assert cake_rows(stack) == []


async def test_an_offer_whose_price_moved_is_refused_and_nothing_changes(tmp_path: Path) -> None:
    async with serving(OFFER_GAME, tmp_path, responder=greedy) as stack, stack.client() as client:
        await _opened(stack, client)
        stack.world.set("INSERT INTO switches VALUES ('dear', 1)")
        frames = await _pick(client, "offer-1")
        action = frames[0]
        assert action["t"] == "action" and action["ok"] is False
        assert action["summary"] == "The deal no longer stands: the terms changed."
        assert stack.world.holdings("p1") == (20, 0)
        [row] = cake_rows(stack)
        assert (row["ok"], row["reason"]) == (0, "offer_changed")
        # The NPC hears why and may offer again at the new price.
        note = _last_words(stack)
        assert note.startswith("I accept: Buy 1 cakes (4 coins). [It did not go through")
        assert "price 4 -> 8" in note


async def test_a_plain_yes_accepts_one_offer_and_asks_which_of_two(tmp_path: Path) -> None:
    async with serving(OFFER_GAME, tmp_path, responder=greedy) as stack, stack.client() as client:
        await _opened(stack, client)
        asked = len(stack.mock.requests)
        frames = await client.say("e1", "Yes, deal!")
        assert [f["t"] for f in frames if f["t"] != "say.delta"] == [
            "say.end",
            "options",
            "encounter.idle",
        ]
        assert "".join(f["text"] for f in frames if f["t"] == "say.delta") == (
            OFFER_GAME.which_offer_line
        )
        assert [item["id"] for item in offers(frames)] == ["offer-1", "offer-2"]
        assert len(stack.mock.requests) == asked  # asked without a model call
        assert stack.world.holdings("p1") == (20, 0)
        # A line that only sounds like yes is words for the NPC, never a commit.
        await client.say("e1", "yes, but 3 of them?")
        assert cake_rows(stack) == []


async def test_a_plain_yes_with_one_offer_pending_commits_it(tmp_path: Path) -> None:
    def single(request: ChatRequest) -> Step:
        if request.last_message.role == "tool":
            return ToolCalls(calls=[talk("One cake?", options=[NO_THANKS])], fragment_size=4)
        if customer_words(request).startswith("I accept: "):
            return ToolCalls(calls=[talk("Enjoy.", "happy", [NO_THANKS])], fragment_size=4)
        return ToolCalls(calls=[_call("sell_cake", qty=1)])

    async with serving(OFFER_GAME, tmp_path, responder=single) as stack, stack.client() as client:
        await _opened(stack, client)
        frames = await client.say("e1", "ok, I'll take it")
        assert frames[0]["t"] == "action" and frames[0]["ok"] is True
        assert stack.world.holdings("p1") == (16, 1)


def test_taking_from_the_player_needs_terms() -> None:
    with pytest.raises(ActionDefinitionError, match="terms"):
        define_game_action(
            "grab",
            "Take.",
            CakeArgs,
            bind={"npc_id": Role.NPC, "player_id": Role.PLAYER},
            apply=_sell,
            narrate=lambda a, e: "",
            takes_from=Role.PLAYER,
        )


@pytest.mark.parametrize(
    "line",
    ["yes", "Yes, deal!", "deal", "ok", "Okay, I'll take it.", "sure thing".replace(" thing", ""),
     "Agreed.", "you have a deal", "it's a deal", "yep, sounds good", "I accept",
     "yeah alright, I'll take them", "ok, I'll take those", "Sure, that works for me.",
     "Fine by me, deal.", "That works for me.", "works for me"],
)  # fmt: skip
def test_plain_acceptance_says_yes(line: str) -> None:
    assert plain_acceptance(line)


@pytest.mark.parametrize(
    "line",
    ["no deal", "yes, but cheaper", "deal for 3?", "ok 500", "Yes please, 2 more",
     "I'll take the spice", "not a deal", "hello", "", "what?", " ".join(["yes"] * 9),
     "sure, for the spice", "works for me, but cheaper"],
)  # fmt: skip
def test_plain_acceptance_refuses_anything_more(line: str) -> None:
    assert not plain_acceptance(line)


@given(st.text())
def test_no_line_with_a_digit_a_question_or_a_no_accepts(text: str) -> None:
    for line in (f"yes {text} 3", f"deal {text}?", f"no {text} deal"):
        assert not plain_acceptance(line)
