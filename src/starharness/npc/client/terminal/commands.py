"""What a line typed into the terminal client means."""

from __future__ import annotations

from dataclasses import dataclass

HELP_TEXT = (
    "type what you say, or the number of an option (an [offer]'s number accepts it); "
    "/npcs lists who is here, /all talks to everyone here at once (then @name words speaks to "
    "one of them; other players here who do the same share the conversation), /close walks "
    "away, /tick N advances N days, /quit leaves"
)


@dataclass(frozen=True, slots=True)
class Say:
    """Free text for the NPC."""

    text: str


@dataclass(frozen=True, slots=True)
class SayTo:
    """Free text for one NPC of a scene, named by `who` (a name, a word of it, or an id)."""

    who: str
    text: str


@dataclass(frozen=True, slots=True)
class All:
    """Walk up to everyone here at once (a scene)."""


@dataclass(frozen=True, slots=True)
class Pick:
    """A number: an option during an encounter, an NPC otherwise."""

    number: int
    text: str


@dataclass(frozen=True, slots=True)
class Close:
    """Walk away from the current NPC."""


@dataclass(frozen=True, slots=True)
class Tick:
    """Advance the world clock."""

    days: int


@dataclass(frozen=True, slots=True)
class ListNpcs:
    """Show who can be talked to."""


@dataclass(frozen=True, slots=True)
class Help:
    """Show the commands."""


@dataclass(frozen=True, slots=True)
class Quit:
    """Leave the client."""


@dataclass(frozen=True, slots=True)
class Nothing:
    """An empty line."""


@dataclass(frozen=True, slots=True)
class Invalid:
    """A line that cannot be acted on; `problem` says why."""

    problem: str


Command = Say | SayTo | All | Pick | Close | Tick | ListNpcs | Help | Quit | Nothing | Invalid

_SIMPLE: dict[str, Command] = {
    "/all": All(),
    "/close": Close(),
    "/npcs": ListNpcs(),
    "/help": Help(),
    "/quit": Quit(),
    "/exit": Quit(),
}


def parse_command(line: str) -> Command:
    """Turn one typed line into a command; never raises."""
    text = line.strip()
    if not text:
        return Nothing()
    if text.isdecimal() and text.isascii():
        return Pick(int(text), text)
    if text.startswith("@"):
        who, _, words = text[1:].partition(" ")
        if not who or not words.strip():
            return Invalid("@ needs a name and words, as in: @Brandt what does fuel cost?")
        return SayTo(who.rstrip(",:"), words.strip())
    if not text.startswith("/"):
        return Say(text)
    name, _, argument = text.partition(" ")
    name = name.lower()
    if name == "/tick":
        return _tick(argument.strip())
    command = _SIMPLE.get(name)
    if command is None:
        return Invalid(f"unknown command {name}; {HELP_TEXT}")
    if argument.strip():
        return Invalid(f"{name} takes no argument")
    return command


def _tick(argument: str) -> Command:
    if not argument:
        return Tick(1)
    if argument.isdecimal() and argument.isascii() and int(argument) >= 1:
        return Tick(int(argument))
    return Invalid(f"/tick needs a whole number of days of at least 1, got {argument!r}")
