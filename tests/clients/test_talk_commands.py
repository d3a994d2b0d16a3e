"""What typed lines mean, and how HUDs and errors read in plain words."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from starharness.npc.client.terminal import (
    ERROR_WORDS,
    error_words,
    hud_changes,
    hud_summary,
    parse_command,
)
from starharness.npc.client.terminal.commands import (
    Close,
    Help,
    Invalid,
    ListNpcs,
    Nothing,
    Pick,
    Quit,
    Say,
    Tick,
)
from starharness.npc.frames import ErrorCode


def test_each_command_is_recognised() -> None:
    assert parse_command("  /close ") == Close()
    assert parse_command("/NPCS") == ListNpcs()
    assert parse_command("/help") == Help()
    assert parse_command("/quit") == Quit()
    assert parse_command("/tick") == Tick(1)
    assert parse_command("/tick 5") == Tick(5)
    assert parse_command("") == Nothing()
    assert parse_command("3") == Pick(3, "3")
    assert parse_command("a bit of text") == Say("a bit of text")


def test_bad_commands_say_what_is_wrong() -> None:
    assert parse_command("/tick 0") == Invalid(
        "/tick needs a whole number of days of at least 1, got '0'"
    )
    assert parse_command("/close now") == Invalid("/close takes no argument")
    unknown = parse_command("/fly")
    assert isinstance(unknown, Invalid)
    assert unknown.problem.startswith("unknown command /fly;")


@given(st.text())
def test_any_line_parses_to_a_command_and_text_is_kept_whole(line: str) -> None:
    command = parse_command(line)
    if isinstance(command, Say):
        assert command.text == line.strip()
        assert not command.text.startswith("/")
    if isinstance(command, Pick):
        assert str(command.number) == line.strip().lstrip("0") or command.number == 0


@given(st.integers(min_value=0, max_value=10**6))
def test_numbers_are_picks(number: int) -> None:
    assert parse_command(f" {number} ") == Pick(number, str(number))


def test_non_ascii_digits_are_text_not_numbers() -> None:
    assert parse_command("٣") == Say("٣")


def test_hud_changes_name_each_changed_value_with_before_and_after() -> None:
    before = {"money": 100, "cargo": {"ore": 0, "gas": 2}, "name": "Ash"}
    after = {"money": 60, "cargo": {"ore": 1}, "name": "Ash", "rank": [1, 2]}

    assert hud_changes(before, after) == [
        "money: 100 → 60",
        "cargo.ore: 0 → 1",
        "rank: [1, 2]",
        "cargo.gas: gone",
    ]
    assert hud_changes(after, after) == []
    assert hud_summary(after) == "money 60 · cargo.ore 1 · name Ash · rank [1, 2]"
    assert hud_summary({}) == "(empty)"


def test_every_error_code_has_plain_words() -> None:
    assert set(ERROR_WORDS) == set(ErrorCode)
    assert error_words(ErrorCode.BUSY, "a turn is running") == (
        "they are still answering; wait for them (a turn is running)"
    )
    assert error_words(ErrorCode.INTERNAL, "") == "the harness had an internal fault"
