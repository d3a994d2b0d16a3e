"""A forced call's fixed opening, moved from generation into the prompt.

A grammar-bound call of a JSON object always begins the same way: `{"line":"` for the speech
tool, `{"action":{"name":"` for a decision. llama.cpp generates those tokens one forward pass
each, before the first token the model actually chooses; on two busy cores each pass costs
0.1-0.3 s, and the player waits for all of them before the NPC's first word. Written at the end
of the prompt instead, they are evaluated in one batch with the rest of the new prompt tokens.

The opening is compact JSON and ends just after the opening quote of the first string value:
that is how the model writes it when it generates the opening itself, and a BPE tokenizer reads
`":"` as one token, so a prompt cut at `":` (or in another spacing) would hand the model a token
boundary it rarely saw, and steer what it chooses next.

`split_opening` takes the grammar llama.cpp's converter made from the call's schema (GBNF, one
rule per line) and returns the opening text with a grammar for what follows it. It understands
only the shapes that converter gives an object whose first property is required and a string
(or, one level down, an `anyOf` of objects that all begin with the same required string key);
for anything else it returns None and the call is generated whole, as before. Pure text:
nothing here imports llama.cpp.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Final

_RULE: Final = re.compile(r"^([A-Za-z0-9-]+) ::= (.*)$")
_OBJECT_START: Final = re.compile(r'^"\{" space ([A-Za-z0-9-]+-kv)(?=\s|$)(.*)$')
_KEY_VALUE: Final = re.compile(r'^"\\"([A-Za-z_][A-Za-z0-9_]*)\\"" space ":" space (.+)$')
_RULE_NAME: Final = re.compile(r"^[A-Za-z0-9-]+$")
_QUOTE: Final = '"\\""'
"""GBNF's literal of one double quote."""
_QUOTED_LITERAL: Final = re.compile(r'^"\\"((?:[^"\\]|\\.)*)"$')
"""A literal that begins with a double quote ("\\"calm\\""): group 1 is the rest of it."""


@dataclass(frozen=True, slots=True)
class CallOpening:
    """The text the prompt ends with, and the grammar (GBNF) of the rest of the call."""

    text: str
    grammar: str


def split_opening(gbnf: str) -> CallOpening | None:
    """The fixed opening of the object `gbnf` describes, or None when it has none we know."""
    rules: dict[str, str] = {}
    for line in gbnf.splitlines():
        if not line.strip():
            continue
        found = _RULE.match(line)
        if found is None:
            return None  # a rule spread over lines: not this converter's shape
        rules[found.group(1)] = found.group(2)
    root = rules.get("root")
    if root is None:
        return None
    first = _first_key(rules, root)
    if first is None:
        return None
    key, value, rest = first
    inside = _inside_string(rules, value)
    if inside is not None:
        rules["root"] = f"{inside}{rest}"
        return CallOpening(f'{{"{key}":"', _text(rules))
    deeper = _shared_string_key(rules, value)
    if deeper is None:
        return None
    inner_key, alternatives = deeper
    opened: list[str] = []
    for index, (inner_inside, inner_rest) in enumerate(alternatives):
        name = f"{value}-opened-{index}"
        rules[name] = f"{inner_inside}{inner_rest}"
        opened.append(name)
    rules["root"] = f"({' | '.join(opened)}){rest}"
    return CallOpening(f'{{"{key}":{{"{inner_key}":"', _text(rules))


def _text(rules: dict[str, str]) -> str:
    return "\n".join(f"{name} ::= {body}" for name, body in rules.items())


def _first_key(rules: dict[str, str], body: str) -> tuple[str, str, str] | None:
    """For `"{" space K-kv REST`: the key K, its value expression and REST."""
    found = _OBJECT_START.match(body)
    if found is None:
        return None
    kv, rest = found.groups()
    pair = _KEY_VALUE.match(rules.get(kv, ""))
    if pair is None:
        return None
    key, value = pair.groups()
    return key, value, rest


def _inside_string(rules: dict[str, str], value: str) -> str | None:
    """A grammar expression for string `value` after its opening quote, or None when `value`
    is not a rule that always opens with one (a string, or an enum of strings)."""
    if _RULE_NAME.match(value) is None or value not in rules:
        return None
    body = rules[value]
    if body.startswith(f"{_QUOTE} "):
        return body.removeprefix(f"{_QUOTE} ")
    literals = body.split(" | ")
    rests: list[str] = []
    for literal in literals:
        found = _QUOTED_LITERAL.match(literal)
        if found is None:
            return None
        rests.append(f'"{found.group(1)}"')
    return rests[0] if len(rests) == 1 else f"({' | '.join(rests)})"


def _shared_string_key(
    rules: dict[str, str], value: str
) -> tuple[str, list[tuple[str, str]]] | None:
    """When `value` names a rule whose alternatives are objects all opening with the same
    required string key: that key, and each alternative's rest after the key's opening quote."""
    if _RULE_NAME.match(value) is None or value not in rules:
        return None
    names = [part.strip() for part in rules[value].split(" | ")]
    if not all(_RULE_NAME.match(name) and name in rules for name in names):
        return None
    keys: set[str] = set()
    alternatives: list[tuple[str, str]] = []
    for name in names:
        first = _first_key(rules, rules[name])
        if first is None:
            return None
        key, inner_value, inner_rest = first
        inside = _inside_string(rules, inner_value)
        if inside is None:
            return None
        keys.add(key)
        alternatives.append((inside, inner_rest))
    if len(keys) != 1:
        return None
    return keys.pop(), alternatives


def continues_string(opening: str, arguments: str) -> bool:
    """Whether `arguments` is `opening` (which ends inside a string) followed by more of that
    string's text only: complete characters and escapes, no closing quote. The grammar that
    follows `opening` then still fits what follows `arguments`."""
    if not opening.endswith('"') or not arguments.startswith(opening):
        return False
    text = arguments[len(opening) :]
    try:
        json.loads(f'"{text}"')
    except ValueError:
        return False
    return True
