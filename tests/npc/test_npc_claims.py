"""Through the real server, WebSocket and mock LLM: a claim of a deal the world did not commit
in the turn is never heard, on the plan that decides before it speaks; after an accepted offer
committed, the same words are honest and heard whole."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from npc_support import Client, Stack, serving
from test_npc_offers import OFFER_GAME, cake_rows, offers
from tinygame.brain import customer_words, talk

from starharness.mockllm import ChatRequest, ScriptedCall, Step, Success, ToolCalls
from starharness.npc import Game
from starharness.npc.speech import ENGLISH_CLAIMS

CLAIMS_GAME = dataclasses.replace(OFFER_GAME, name="tinygame-claims", turn_plan="decide-act-speak")
OPTIONS = [{"id": "no", "label": "No thanks"}, {"id": "bye", "label": "Goodbye"}]
GREETING = "Hello there. Here's your cake, on the house."
OFFERED = "Here you go, 3 cakes. Anything else?"
REACTION = "Here you go, 3 cakes. Enjoy them!"


def _decide(action: dict[str, Any]) -> ToolCalls:
    call = ScriptedCall(name="decide", arguments=json.dumps({"action": action}))
    return ToolCalls(calls=[call])


def liar(request: ChatRequest) -> Step:
    """A small model's habits: it says the deal is done before the player has said yes."""
    said = customer_words(request)
    forced = request.tool_choice
    if isinstance(forced, dict) and forced.get("function", {}).get("name") == "decide":
        if "cakes" in said:
            return _decide({"name": "sell_cake", "arguments": {"qty": 3}})
        return _decide({"name": "none"})
    if said.startswith("I accept: "):
        line = REACTION
    elif "cakes" in said:
        line = OFFERED
    elif said == "Anything?":
        line = "Here you go."
    elif said == "Say it plainly":
        # A server that lets the model answer in plain text instead of the speaking call.
        return Success(text="Here you go, it's fresh. Anything else?", chunk_size=3)
    else:
        line = GREETING
    return ToolCalls(calls=[talk(line, options=OPTIONS)], fragment_size=4)


def _heard(frames: list[dict[str, Any]]) -> str:
    return "".join(f["text"] for f in frames if f["t"] == "say.delta")


def _model_lines(stack: Stack) -> list[str]:
    """The lines the model's own history holds, in the newest request it was sent."""
    messages = stack.mock.requests[-1].body["messages"]
    return [
        json.loads(call["function"]["arguments"])["line"]
        for message in messages
        if message["role"] == "assistant"
        for call in message.get("tool_calls") or ()
        if call["function"]["name"] == "talk"
    ]


async def _opened(client: Client) -> list[dict[str, Any]]:
    await client.send({"t": "hello", "playerId": "p1"})
    assert (await client.recv())["t"] == "welcome"
    return await client.open("e1", "n-baker", "p1")


@pytest.mark.parametrize(
    ("game", "heard"),
    [(CLAIMS_GAME, "Hello there."),
     (dataclasses.replace(CLAIMS_GAME, done_claims=None), GREETING)],
    ids=["framework-rule", "switched-off"],
)  # fmt: skip
async def test_a_greeting_claim_is_not_heard(tmp_path: Path, game: Game, heard: str) -> None:
    async with serving(game, tmp_path, responder=liar) as stack, stack.client() as client:
        frames = await _opened(client)
        assert _heard(frames).strip() == heard
        assert [f for f in frames if f["t"] == "action"] == []
        assert stack.world.holdings("p1") == (20, 0)


async def test_an_offered_deal_is_not_claimed_and_the_history_holds_what_was_heard(
    tmp_path: Path,
) -> None:
    async with serving(CLAIMS_GAME, tmp_path, responder=liar) as stack, stack.client() as client:
        await _opened(client)
        frames = await client.say("e1", "3 cakes please")
        # The decision became an offer: nothing committed, so "Here you go" is not heard.
        assert _heard(frames) == "Anything else?"
        assert [o["id"] for o in offers(frames)] == ["offer-1"]
        assert [f for f in frames if f["t"] == "action"] == []
        assert cake_rows(stack) == [] and stack.world.holdings("p1") == (20, 0)
        # Every line left out: the player still hears something, not silence.
        nothing = await client.say("e1", "Anything?")
        assert _heard(nothing) == ENGLISH_CLAIMS.instead
        # The model's next request holds the lines the player heard, not the claims.
        await client.say("e1", "Goodbye")
        assert _model_lines(stack) == ["Hello there.", "Anything else?", ENGLISH_CLAIMS.instead]
        assert not any("Here" in line for line in _model_lines(stack))


async def test_plain_words_instead_of_the_speaking_call_are_checked_too(tmp_path: Path) -> None:
    async with serving(CLAIMS_GAME, tmp_path, responder=liar) as stack, stack.client() as client:
        await _opened(client)
        frames = await client.say("e1", "Say it plainly")
        assert _heard(frames) == "Anything else?"
        await client.say("e1", "Goodbye")
        messages = stack.mock.requests[-1].body["messages"]
        texts = [m.get("content") or "" for m in messages if m["role"] == "assistant"]
        assert "Anything else?" in texts
        assert not any("Here you go" in text for text in texts)


async def test_after_an_accepted_offer_committed_the_claim_is_heard_whole(
    tmp_path: Path,
) -> None:
    async with serving(CLAIMS_GAME, tmp_path, responder=liar) as stack, stack.client() as client:
        await _opened(client)
        await client.say("e1", "3 cakes please")
        await client.send({"t": "encounter.say", "id": "e1", "optionId": "offer-1"})
        frames = await client.until_idle("e1")
        assert frames[0]["t"] == "action" and frames[0]["ok"] is True
        assert _heard(frames) == REACTION
        assert stack.world.holdings("p1") == (8, 3)


def native_liar(request: ChatRequest) -> Step:
    """A model that speaks and acts in one step (native plan): the claim waits for the step."""
    said = customer_words(request)
    if "cakes" in said:
        # The sale takes from the player: an offer, not a commit.
        action = ScriptedCall(name="sell_cake", arguments=json.dumps({"qty": 3}))
        line = OFFERED
    elif "gift" in said:
        # Baking takes nothing from the player: it commits in the same step.
        action = ScriptedCall(name="bake", arguments=json.dumps({"qty": 1}))
        line = "Here you go, fresh from the oven. Enjoy!"
    else:
        return ToolCalls(calls=[talk("Hello there.", options=OPTIONS)], fragment_size=4)
    return ToolCalls(calls=[talk(line, options=OPTIONS), action], fragment_size=4)


async def test_on_the_native_plan_a_claim_waits_for_the_steps_actions(tmp_path: Path) -> None:
    async with (
        serving(OFFER_GAME, tmp_path, responder=native_liar) as stack,
        stack.client() as client,
    ):
        await _opened(client)
        offered = await client.say("e1", "3 cakes please")
        assert _heard(offered) == "Anything else?"
        assert [o["id"] for o in offers(offered)] == ["offer-1"]
        assert cake_rows(stack) == [] and stack.world.holdings("p1") == (20, 0)
        kinds = [f["t"] for f in offered if f["t"] != "say.delta"]
        assert kinds == ["say.end", "options", "encounter.idle"]
        gift = await client.say("e1", "a gift?")
        assert [f["name"] for f in gift if f["t"] == "action"] == ["bake"]
        assert _heard(gift) == "Here you go, fresh from the oven. Enjoy!"
        await client.say("e1", "Goodbye")
        assert _model_lines(stack)[1:3] == [
            "Anything else?",
            "Here you go, fresh from the oven. Enjoy!",
        ]


COMPACT = '{"mood":"calm","options":[],"line":"Here you go, 3 cakes. Anything else, caf\\u00e9?"}'
"""A model's own way of writing its call: no spaces, the line last, an escaped character."""


def compact_liar(request: ChatRequest) -> Step:
    """`liar`, but the offered deal's line is written as `COMPACT`."""
    forced = request.tool_choice
    deciding = isinstance(forced, dict) and forced.get("function", {}).get("name") == "decide"
    if "cakes" in customer_words(request) and not deciding:
        return ToolCalls(calls=[ScriptedCall(name="talk", arguments=COMPACT)], fragment_size=4)
    return liar(request)


async def test_the_history_holds_the_heard_line_in_the_arguments_as_the_model_wrote_them(
    tmp_path: Path,
) -> None:
    async with (
        serving(CLAIMS_GAME, tmp_path, responder=compact_liar) as stack,
        stack.client() as client,
    ):
        await _opened(client)
        frames = await client.say("e1", "3 cakes please")
        assert _heard(frames) == "Anything else, caf\u00e9?"
        await client.say("e1", "Goodbye")
        messages = stack.mock.requests[-1].body["messages"]
        written = [
            call["function"]["arguments"]
            for message in messages
            if message["role"] == "assistant"
            for call in message.get("tool_calls") or ()
            if "caf" in call["function"]["arguments"]
        ]
        # Only the line's value changed: a local server's prompt cache still holds the rest.
        heard = '"line":"Anything else, caf\\u00e9?"}'
        assert written == [COMPACT[: COMPACT.index('"line"')] + heard]
