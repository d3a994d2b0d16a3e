"""The terminal client's conversation logic, driven through its API against a canned harness."""

from __future__ import annotations

import io
from collections.abc import AsyncIterator, Iterable

import pytest
from frame_fakes import OFFER, OFFER_TEXT, UNKNOWN_PLAYER, FakeHarness, running_fake, up_types
from rich.console import Console

from starharness.npc.client import ServerUnreachableError
from starharness.npc.client.terminal import EXIT_FAILED, EXIT_OK, TalkSettings, run_talk


async def _lines(lines: Iterable[str]) -> AsyncIterator[str]:
    for line in lines:
        yield line


async def _talk(
    harness: FakeHarness, lines: Iterable[str], *, npc: str | None = None, player: str = "p1"
) -> tuple[int, str]:
    buffer = io.StringIO()
    console = Console(file=buffer, width=200, color_system=None, highlight=False)
    settings = TalkSettings(url=harness.url, player_id=player, npc_id=npc, echo_input=True)
    status = await run_talk(settings, _lines(lines), console)
    return status, buffer.getvalue()


async def test_a_scripted_session_trades_and_shows_every_result() -> None:
    # The tick comes before a say, so its news arrives before that turn ends.
    script = ["1", "1", "2", "/tick 3", "hello there", "/close", "/quit"]
    async with running_fake() as harness:
        status, out = await _talk(harness, script)

    assert status == EXIT_OK
    assert up_types(harness) == [
        "hello",
        "encounter.open",
        "encounter.say",
        "encounter.say",
        "world.tick",
        "encounter.close",  # the fence the client waits for after a tick
        "encounter.say",
        "encounter.close",
    ]
    assert harness.received[5] == {"t": "encounter.close", "id": "talk-fence-1"}
    opened, buy, ship, _, _, free = harness.received[1:7]
    assert opened == {"t": "encounter.open", "id": "talk-1", "npcId": "n1", "playerId": "p1"}
    assert buy == {"t": "encounter.say", "id": "talk-1", "optionId": "buy"}
    assert ship == {"t": "encounter.say", "id": "talk-1", "optionId": "ship"}
    assert free == {"t": "encounter.say", "id": "talk-1", "text": "hello there"}
    for expected in (
        "  1) Ada (dock) [n1]",
        "HUD: money 100 · cargo.ore 0",
        "— Ada notices you (attitude 10) —",
        "Ada: Well, hello there.  (neutral)",
        "  2) Buy a ship for 9000",
        "✔ trade: You buy 1 ore.",
        "HUD money: 100 → 60",
        "HUD cargo.ore: 0 → 1",
        "Ada: Pleasure.  (friendly)",
        "✘ trade refused: Not enough money: 9000 needed, 60 held.",
        "Ada: You said: hello there  (neutral)",
        "news [dock] 3 days pass",
        "You walk away from Ada.",
    ):
        assert expected in out, f"missing {expected!r} in:\n{out}"


async def test_npc_flag_opens_at_once_and_end_of_input_closes_the_encounter() -> None:
    async with running_fake() as harness:
        status, out = await _talk(harness, ["1"], npc="n2")

    assert status == EXIT_OK
    assert up_types(harness) == ["hello", "encounter.open", "encounter.say", "encounter.close"]
    assert harness.received[1]["npcId"] == "n2"
    assert harness.received[-1] == {"t": "encounter.close", "id": "talk-1"}
    assert "✔ trade: You buy 1 ore." in out
    assert "Who is here:" not in out


async def test_an_unknown_npc_is_explained_and_the_list_offered() -> None:
    async with running_fake() as harness:
        status, out = await _talk(harness, ["2", "/quit"], npc="ghost")

    assert status == EXIT_OK
    assert "! nobody here goes by that name (no NPC 'ghost')" in out
    assert "Who is here:" in out
    # The refused encounter is forgotten: "2" then picks an NPC, with a fresh encounter id.
    assert harness.received[2] == {
        "t": "encounter.open",
        "id": "talk-2",
        "npcId": "n2",
        "playerId": "p1",
    }


async def test_a_turn_that_fails_waits_for_idle_and_input_goes_on() -> None:
    async with running_fake() as harness:
        status, out = await _talk(harness, ["no model", "again"], npc="n1")

    assert status == EXIT_OK
    assert "! no answer: the model could not be reached, try again later" in out
    assert [frame.get("text") for frame in harness.received if "text" in frame] == [
        "no model",
        "again",
    ]
    assert "Ada: You said: again" in out


async def test_a_refused_say_does_not_leave_the_client_waiting() -> None:
    async with running_fake() as harness:
        status, out = await _talk(harness, ["too fast", "after"], npc="n1")

    assert status == EXIT_OK
    assert "! they are still answering; wait for them (a turn is already running)" in out
    assert "Ada: You said: after" in out


async def test_numbers_out_of_range_and_unknown_commands_send_nothing() -> None:
    async with running_fake() as harness:
        status, out = await _talk(harness, ["9", "/dance", "/tick soon", "/close"], npc="n1")

    assert status == EXIT_OK
    assert up_types(harness) == ["hello", "encounter.open", "encounter.close"]
    assert "Pick an option from 1 to 2." in out
    assert "unknown command /dance" in out
    assert "/tick needs a whole number of days of at least 1, got 'soon'" in out


async def test_text_before_picking_anyone_is_not_sent() -> None:
    async with running_fake() as harness:
        status, out = await _talk(harness, ["hi", "7", "/close", "/npcs"])

    assert status == EXIT_OK
    assert up_types(harness) == ["hello"]
    assert "You are not talking to anyone: pick someone by number." in out
    assert "There is no one numbered 7 (see /npcs)." in out
    assert out.count("Who is here:") == 2


async def test_an_unknown_player_ends_the_session() -> None:
    async with running_fake() as harness:
        status, out = await _talk(harness, ["1"], player=UNKNOWN_PLAYER)

    assert status == EXIT_FAILED
    assert "! the harness does not know this player (no player 'stranger')" in out
    assert up_types(harness) == ["hello"]


async def test_a_lost_connection_ends_the_session_with_its_reason() -> None:
    async with running_fake(FakeHarness(drop_after_frames=2)) as harness:
        status, out = await _talk(harness, ["1", "1"])

    assert status == EXIT_FAILED
    assert "connection lost: the harness closed the connection (code 1011" in out


async def test_a_frame_the_client_cannot_read_is_reported_and_skipped() -> None:
    fake = FakeHarness(raw_after_hello='{"t":"weather.report","rain":true}')
    async with running_fake(fake) as harness:
        status, out = await _talk(harness, ["1", "/quit"])

    assert status == EXIT_OK
    assert (
        "(ignored a frame this client cannot read: unknown frame type 't': 'weather.report'" in out
    )
    assert up_types(harness)[-1] == "encounter.close"


async def test_an_unreachable_server_raises_one_clear_error() -> None:
    async with running_fake() as harness:
        url = harness.url
    # The fake is gone, so its port now refuses connections.
    with pytest.raises(ServerUnreachableError, match=r"cannot reach ws://127\.0\.0\.1:\d+/gh"):
        await _talk(FakeHarness(url=url), ["/quit"])


async def test_an_offer_shows_what_the_player_gives_and_its_number_accepts_it() -> None:
    script = ["1", OFFER_TEXT, "1", "/quit"]
    async with running_fake() as harness:
        status, out = await _talk(harness, script)

    assert status == EXIT_OK
    assert harness.received[3] == {"t": "encounter.say", "id": "talk-1", "optionId": OFFER.id}
    for expected in (
        "  1) [offer] Buy 2 ore — you give 50 coins  (type 1 to accept)",
        "  2) Too dear.",
        "You accept: Buy 2 ore for 50 coins.",
        "✔ player_buys: You buy 2 ore for 50.",
        "HUD money: 100 → 50",
        "Ada: Deal.  (friendly)",
    ):
        assert expected in out, f"missing {expected!r} in:\n{out}"
    # Ordinary options are not marked as offers.
    assert "[offer] Buy one ore" not in out and "  1) Buy one ore for 40" in out
