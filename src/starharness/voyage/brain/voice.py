"""How the brain's NPCs talk: forms of address, money, moods, and hints turned into speech."""

from __future__ import annotations

import re

from .scene import SceneView, Ware

_SWAPS = {
    "you are": "I am",
    "they are": "you are",
    "you have": "I have",
    "they have": "you have",
    "you hold": "I hold",
    "they hold": "you hold",
    "you": "I",
    "your": "my",
    "yours": "mine",
    "they": "you",
    "their": "your",
    "them": "you",
}
_SWAP = re.compile(r"\b(" + "|".join(sorted(_SWAPS, key=len, reverse=True)) + r")\b", re.I)


def money(amount: int) -> str:
    return f"{amount:,}"


def address(system: str, scene: SceneView) -> str:
    """What the NPC calls the player: the persona's nickname for strangers, else their name."""
    if '"kid"' in system:
        return "kid"
    return scene.player_name or "friend"


def mood_for(attitude: int) -> str:
    """A resting mood for an attitude, in the game's words."""
    if attitude <= -30:
        return "hostile"
    if attitude < -9:
        return "wary"
    if attitude < 20:
        return "neutral"
    if attitude < 60:
        return "friendly"
    return "pleased"


def sentence(text: str) -> str:
    """Capitalised and closed with a full stop."""
    text = text.strip()
    if not text:
        return text
    text = text[0].upper() + text[1:]
    return text if text[-1] in ".!?" else text + "."


def to_player(hint: str) -> str:
    """A hint written to the NPC, said to the player: "they have" becomes "you have"."""
    return sentence(_SWAP.sub(_swap, hint))


def _swap(found: re.Match[str]) -> str:
    said = found[1]
    swapped = _SWAPS[said.casefold()]
    return swapped[0].upper() + swapped[1:] if said[0].isupper() else swapped


def wares_line(scene: SceneView, limit: int = 3, *, priced: bool = True) -> str:
    """What the NPC sells, with prices and units, or what it buys when it sells nothing;
    `priced` false: by name only."""
    selling = [ware for ware in scene.sells if ware.units][:limit]
    if selling:
        return "I've got " + _join([_ware(w) if priced else w.name for w in selling]) + "."
    if scene.buys:
        bought = [f"{w.name} at {money(w.price)}" if priced else w.name for w in scene.buys]
        return "I'm buying " + _join(bought) + "."
    return ""


def wares_again(scene: SceneView, last_line: str, limit: int = 3) -> str:
    """`wares_line`, or the wares by name only when the NPC's last line already gave their
    prices: the same list word for word every turn reads as a machine."""
    line = wares_line(scene, limit)
    return wares_line(scene, limit, priced=False) if line and line in last_line else line


def trades_line(scene: SceneView) -> str:
    """What the NPC trades, by name only: who it is, asked again after its greeting (which
    gave the prices)."""
    parts: list[str] = []
    if scene.sells:
        parts.append("I sell " + _join([ware.name for ware in scene.sells]))
    if scene.buys:
        parts.append("I buy " + _join([ware.name for ware in scene.buys]))
    if scene.passages:
        parts.append("I book berths to " + _join([p.name for p in scene.passages]))
    return "; ".join(parts) + "." if parts else ""


def passages_line(scene: SceneView) -> str:
    if not scene.passages:
        return ""
    parts = [
        f"{p.name} for {money(p.fare)} ({p.days} day{'s' if p.days != 1 else ''})"
        for p in scene.passages
    ]
    return "Berths to " + _join(parts) + "."


def _ware(ware: Ware) -> str:
    return f"{ware.name} at {money(ware.price)} ({ware.units} left)"


def _join(parts: list[str]) -> str:
    if len(parts) <= 1:
        return "".join(parts)
    return ", ".join(parts[:-1]) + " and " + parts[-1]
