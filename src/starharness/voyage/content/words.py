"""Counting goods in English: "1 fuel cell", "5 fuel cells", "1 medical gel"."""

from __future__ import annotations


def units_of(qty: int, name: str) -> str:
    """`qty` of a good named in the plural ("fuel cells"): one is "1 fuel cell".

    Names that are not plural ("medical gel", "titanium ore") read the same for any number.
    """
    return f"{qty:,} {singular(name) if qty == 1 else name}"


def singular(name: str) -> str:
    """One of a good named in the plural: "fuel cells" is "fuel cell"."""
    return name[:-1] if name.endswith("s") and not name.endswith("ss") else name
