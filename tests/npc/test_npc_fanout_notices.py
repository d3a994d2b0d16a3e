"""The bus's notice payloads: what a worker announces, another reads back exactly."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from starharness.npc.server.fanout import NoticeError, hud_payload, parse_hud, parse_world
from starharness.npc.server.fanout.notices import MAX_PAYLOAD_BYTES


@given(st.text(min_size=1, max_size=300).filter(lambda s: "\x00" not in s))
def test_a_players_hud_notice_names_that_player(player_id: str) -> None:
    assert parse_hud(hud_payload(player_id)).player_id == player_id


@given(st.text(min_size=1))
def test_a_hud_notice_fits_notify_or_means_everyone(player_id: str) -> None:
    payload = hud_payload(player_id)
    assert len(payload.encode()) <= MAX_PAYLOAD_BYTES and "\x00" not in payload
    # Announcing everyone for an id that does not fit over-pushes; it never misses the player.
    assert parse_hud(payload).player_id in (player_id, None)


def test_an_overlong_player_id_is_announced_as_everyone() -> None:
    assert parse_hud(hud_payload("x" * MAX_PAYLOAD_BYTES)).player_id is None
    assert parse_hud(hud_payload(None)).player_id is None
    for payload in ("p:a\x00b", "p:" + "x" * MAX_PAYLOAD_BYTES, "p:", "x", "**"):
        with pytest.raises(NoticeError):
            parse_hud(payload)


@given(st.text())
def test_a_hud_payload_is_read_or_refused_clearly(payload: str) -> None:
    try:
        notice = parse_hud(payload)
    except NoticeError as error:
        assert "a HUD notice is '*' or 'p:<player id>'" in str(error)
    else:
        assert hud_payload(notice.player_id) == payload


@given(st.integers(min_value=0, max_value=2**63 - 1))
def test_a_world_notice_is_the_last_news_id(news_id: int) -> None:
    assert parse_world(str(news_id)) == news_id


@given(st.text())
def test_a_world_payload_is_an_id_or_refused(payload: str) -> None:
    try:
        news_id = parse_world(payload)
    except NoticeError as error:
        assert "a world notice is a news id" in str(error)
    else:
        assert news_id >= 0 and payload.isdecimal() and payload.isascii()


@pytest.mark.parametrize("payload", ["", "-1", "1.5", " 1", "١٢", "9" * 20])
def test_world_payloads_that_are_not_ids(payload: str) -> None:
    with pytest.raises(NoticeError):
        parse_world(payload)
