"""The terminal client's view: who is here by the HUD's location, the HUD in words."""

from __future__ import annotations

import io

from rich.console import Console

from starharness.npc.client.terminal.printer import Printer
from starharness.npc.client.terminal.render import hud_changes, hud_summary
from starharness.npc.client.terminal.state import TalkState
from starharness.npc.client.terminal.view import TalkView
from starharness.npc.frames import (
    GENERIC_PROTOCOL,
    EncounterIdle,
    EncounterOpened,
    NpcEntry,
    OfferTerms,
    OptionItem,
    Options,
    SayDelta,
    SayEnd,
    SceneNpc,
    ScenePlayer,
    ScenePlayers,
    Welcome,
)

HUD = {
    "playerId": "p1",
    "coins": 20,
    "location": {"id": "dock", "name": "the dock"},
    "hold": [{"name": "rope", "qty": 2}],
    "attitudes": {"n1": 3},
    "news": [{"locationId": "dock", "day": 2, "headline": "A ship came in."}],
}


def _view() -> tuple[TalkView, io.StringIO]:
    buffer = io.StringIO()
    console = Console(file=buffer, width=200, color_system=None, highlight=False)
    return TalkView(TalkState(player_id="p1"), Printer(console)), buffer


def test_who_is_here_lists_only_the_npcs_at_the_players_place() -> None:
    view, buffer = _view()
    npcs = [NpcEntry(id="n1", name="Ada", location_id="dock"),
            NpcEntry(id="n2", name="Bo", location_id="mill")]  # fmt: skip
    view.on_welcome(Welcome(protocol=1, hud=HUD, npcs=npcs))
    view.show_npcs()
    out = buffer.getvalue()
    assert "  1) Ada (dock) [n1]" in out
    assert "  2)" not in out and "Elsewhere: Bo (mill)" in out
    assert "HUD: coins 20 · location the dock · hold 2 × rope · attitudes.Ada 3" in out
    assert "news [dock] A ship came in." in out


def test_hud_words_and_changes() -> None:
    names = {"n1": "Ada"}
    after = {**HUD, "coins": 14, "hold": [{"name": "rope", "qty": 5}]}
    assert hud_changes(HUD, after, names) == ["coins: 20 → 14", "hold: 2 × rope → 5 × rope"]
    assert "playerId" not in hud_summary(HUD) and "news" not in hud_summary(HUD)
    assert hud_changes({"hold": []}, {"hold": [{"goodId": "rope", "qty": 1}]}) == [
        "hold: none → 1 × rope"
    ]


def test_an_offer_reads_as_an_offer_with_its_cost_and_how_to_accept_it() -> None:
    buffer = io.StringIO()
    console = Console(file=buffer, width=200, color_system=None, highlight=False)
    state = TalkState(player_id="p1")
    view = TalkView(state, Printer(console))
    encounter_id = state.begin_encounter("Ada")
    plain = OptionItem(id="2", label="Too steep for me.")
    free = OptionItem(id="g", label="Take the map", offer=OfferTerms(action="give_map", cost=""))
    offer = OptionItem(
        id="offer-1",
        label="Buy 3 medical gel",
        offer=OfferTerms(action="player_buys", cost="3,300 cr"),
    )
    view.on_options(Options(id=encounter_id, items=[offer, plain, free]))
    assert buffer.getvalue().splitlines() == [
        "  1) [offer] Buy 3 medical gel — you give 3,300 cr  (type 1 to accept)",
        "  2) Too steep for me.",
        "  3) [offer] Take the map  (type 3 to accept)",
    ]


def test_an_offer_in_json_reaches_the_view_through_the_frame_protocol() -> None:
    raw = (
        '{"t":"options","id":"e1","items":[{"id":"offer-1","label":"Buy 3 medical gel",'
        '"offer":{"action":"player_buys","cost":"3,300 cr"}},{"id":"2","label":"Leave"}]}'
    )
    frame = GENERIC_PROTOCOL.parse_down_frame(raw)
    assert isinstance(frame, Options)
    first, second = frame.items
    assert first.offer == OfferTerms(action="player_buys", cost="3,300 cr")
    assert second.offer is None


def test_a_welcome_without_revision_is_a_revision_1_harness_that_shares_no_scenes() -> None:
    for raw, shares in (
        ('{"t":"welcome","protocol":1,"hud":{},"npcs":[]}', False),
        ('{"t":"welcome","protocol":1,"revision":2,"hud":{},"npcs":[]}', False),
        ('{"t":"welcome","protocol":1,"revision":3,"hud":{},"npcs":[]}', True),
    ):
        state = TalkState(player_id="p1")
        view = TalkView(state, Printer(Console(file=io.StringIO(), color_system=None)))
        frame = GENERIC_PROTOCOL.parse_down_frame(raw)
        assert isinstance(frame, Welcome)
        view.on_welcome(frame)
        assert state.shares_scenes is shares, raw


def test_another_players_line_shows_under_their_name_and_the_prompt_comes_back() -> None:
    buffer = io.StringIO()
    state = TalkState(player_id="p1")
    printer = Printer(Console(file=buffer, width=200, color_system=None, highlight=False))
    view = TalkView(state, printer)
    state.begin_encounter("Ada and Bo")
    view.on_encounter_opened(
        EncounterOpened(
            id=state.encounter_id or "",
            npc_name="Ada",
            attitude=0,
            speaker_id="n1",
            npcs=[
                SceneNpc(id="n1", name="Ada", attitude=0),
                SceneNpc(id="n2", name="Bo", attitude=1),
            ],
        )
    )
    view.on_encounter_idle(EncounterIdle(id="talk-1"))
    printer.prompt("> ")
    # Another player speaks while this one's prompt waits: their line, then the NPC's answer.
    view.on_say_delta(
        SayDelta(id="talk-1", text="Bo, any news?", speaker_id="p2", speaker_name="Cy")
    )
    view.on_say_end(SayEnd(id="talk-1", mood="neutral", speaker_id="p2"))
    view.on_say_delta(SayDelta(id="talk-1", text="Quiet week.", speaker_id="n2"))
    view.on_say_end(SayEnd(id="talk-1", mood="sad", speaker_id="n2"))
    view.on_encounter_idle(EncounterIdle(id="talk-1"))
    out = buffer.getvalue()
    assert "\nCy (player): Bo, any news?\nBo: Quiet week.  (sad)\n> " in out
    assert out.endswith("> ")


def test_who_joins_and_leaves_a_shared_scene_is_one_line_each() -> None:
    view, buffer = _view()
    state = view._state  # pyright: ignore[reportPrivateUsage]
    scene = state.begin_encounter("Ada and Bo")
    me, cy, di = (
        ScenePlayer(id=f"p{n}", name=name) for n, name in ((1, "Ash"), (2, "Cy"), (3, "Di"))
    )
    view.on_scene_players(ScenePlayers(id=scene, players=[me, cy]))
    view.on_scene_players(ScenePlayers(id=scene, players=[me, cy, di]))
    # Mid-line, a notice ends the line and the rest comes again under its speaker's name.
    view.on_say_delta(SayDelta(id=scene, text="Quiet ", speaker_id="n2"))
    view.on_scene_players(ScenePlayers(id=scene, players=[me, di]))
    view.on_scene_players(ScenePlayers(id="another", players=[me]))
    out = buffer.getvalue()
    assert out == "Cy is here.\nDi joined.\nn2: Quiet \nCy left.\n", out
    assert state.speaker_name("p3") == "Di"
