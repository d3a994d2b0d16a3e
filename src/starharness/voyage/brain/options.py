"""The options the brain offers: stable ids that say what picking them does.

`buy:fuel:5` buys five fuel cells at the going price, `buy:fuel:5:428` at 428 a unit;
`sell:parts:3`, `intel:<id>`, `job:<id>`, `deliver:<id>`, `travel:<place>`,
`work:<place>` (a working passage, for a player who cannot pay the fare), `prices`,
`rumours`, `jobs` and `bye` say the rest.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Option:
    id: str
    label: str

    def as_json(self) -> dict[str, str]:
        return {"id": self.id, "label": self.label}


@dataclass(frozen=True, slots=True)
class Choice:
    """A decoded option id."""

    verb: str
    subject: str = ""
    qty: int = 0
    price: int | None = None


def trade_id(verb: str, good_id: str, qty: int, price: int | None = None) -> str:
    base = f"{verb}:{good_id}:{qty}"
    return base if price is None else f"{base}:{price}"


def decode(option_id: str) -> Choice | None:
    """The choice an id stands for, or None when it is not one of the brain's ids."""
    parts = option_id.strip().split(":")
    verb = parts[0]
    if verb in ("buy", "sell") and len(parts) in (3, 4):
        numbers = parts[2:]
        if all(part.isdigit() for part in numbers):
            price = int(numbers[1]) if len(numbers) == 2 else None
            return Choice(verb, parts[1], int(numbers[0]), price)
        return None
    if verb in ("intel", "job", "deliver", "travel", "work") and len(parts) == 2 and parts[1]:
        return Choice(verb, parts[1])
    if verb in ("prices", "rumours", "jobs", "bye", "passage") and len(parts) == 1:
        return Choice(verb)
    return None
