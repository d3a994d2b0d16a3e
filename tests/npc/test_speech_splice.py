"""with_line: the heard line put into the arguments as the model wrote them, any spacing, key
order and escape forms; every character outside the line's value is left as it was."""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from starharness.npc.speech import with_line

FIELD = "line"

_patient = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])

# --- a JSON writer that varies what JSON allows: whitespace, key order, escape forms ---------

_SPACES = ("", "", " ", "\n", "\t", "\r\n  ")
_SHORT = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escapes(char: str) -> list[str]:
    """Every way JSON may write `char` escaped."""
    code = ord(char)
    if code > 0xFFFF:
        high, low = divmod(code - 0x10000, 0x400)
        return [f"\\u{0xD800 + high:04x}\\u{0xDC00 + low:04x}",
                f"\\u{0xD800 + high:04X}\\u{0xDC00 + low:04X}"]  # fmt: skip
    forms = [f"\\u{code:04x}", f"\\u{code:04X}"]
    if char in _SHORT:
        forms.append(_SHORT[char])
    if char == "/":
        forms.append("\\/")
    return forms


def _form(char: str, rng: random.Random) -> str:
    must_escape = char in '"\\' or ord(char) < 0x20
    return rng.choice(_escapes(char)) if must_escape or rng.random() < 0.3 else char


class Writer:
    """Writes JSON with `rng`'s choices; `steady`: each character always in the same form (a
    model's habit), else a form chosen afresh at each occurrence."""

    def __init__(self, rng: random.Random, *, steady: bool = False) -> None:
        self.rng = rng
        self.steady = steady
        self.forms: dict[str, str] = {}

    def char(self, char: str) -> str:
        if not self.steady:
            return _form(char, self.rng)
        form = self.forms.get(char)
        if form is None:
            form = self.forms[char] = _form(char, self.rng)
        return form

    def string(self, text: str) -> str:
        return '"' + "".join(self.char(char) for char in text) + '"'

    def space(self) -> str:
        return self.rng.choice(_SPACES)

    def value(self, value: object) -> str:
        if isinstance(value, str):
            return self.string(value)
        if isinstance(value, list):
            items: list[object] = value  # pyright: ignore[reportUnknownVariableType]
            inner = ",".join(self.space() + self.value(item) + self.space() for item in items)
            return "[" + (inner or self.space()) + "]"
        if isinstance(value, dict):
            members: dict[str, object] = value  # pyright: ignore[reportUnknownVariableType]
            inner = ",".join(self.member(key, item) for key, item in members.items())
            return "{" + (inner or self.space()) + "}"
        return json.dumps(value)

    def member(self, key: str, value: object) -> str:
        head = self.space() + self.string(key) + self.space() + ":" + self.space()
        return head + self.value(value) + self.space()


def document(
    writer: Writer, others: dict[str, object], line: str, position: int
) -> tuple[str, str, str]:
    """Arguments holding `others` and `line` (at `position` among them) as the text before the
    line's value, the value (quotes included), and the text after it."""
    members = [writer.member(key, value) for key, value in others.items()]
    position %= len(members) + 1
    head = "".join(
        (writer.space(), "{", *(m + "," for m in members[:position]), writer.space(),
         writer.string(FIELD), writer.space(), ":", writer.space())
    )  # fmt: skip
    value = writer.string(line)
    tail = "".join((writer.space(), *("," + m for m in members[position:]), "}", writer.space()))
    return head, value, tail


_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)
_others = st.dictionaries(st.text(max_size=8).filter(lambda key: key != FIELD), _values, max_size=4)


@_patient
@given(
    others=_others,
    line=st.text(),
    heard=st.text(),
    position=st.integers(min_value=0, max_value=10),
    seed=st.integers(min_value=0, max_value=2**32),
)
def test_only_the_lines_value_changes(
    others: dict[str, object], line: str, heard: str, position: int, seed: int
) -> None:
    head, value, tail = document(Writer(random.Random(seed)), others, line, position)
    spliced = with_line(head + value + tail, heard)
    assert spliced is not None
    assert json.loads(spliced) == {**others, FIELD: heard}
    # Every character outside the line's value is the one the model wrote.
    assert spliced.startswith(head)
    assert spliced.endswith(tail)
    assert len(spliced) >= len(head) + len(tail)
    assert json.loads(spliced[len(head) : len(spliced) - len(tail)]) == heard


@_patient
@given(
    others=_others,
    line=st.text(min_size=1),
    cut=st.tuples(st.integers(min_value=0), st.integers(min_value=0)),
    position=st.integers(min_value=0, max_value=10),
    seed=st.integers(min_value=0, max_value=2**32),
)
def test_words_the_line_kept_keep_the_models_bytes(
    others: dict[str, object], line: str, cut: tuple[int, int], position: int, seed: int
) -> None:
    writer = Writer(random.Random(seed), steady=True)
    head, value, tail = document(writer, others, line, position)
    start, stop = sorted(n % (len(line) + 1) for n in cut)
    kept = line[start:stop]
    spliced = with_line(head + value + tail, kept)
    assert spliced == head + writer.string(kept) + tail


def test_the_top_level_field_is_the_one_replaced() -> None:
    raw = ('{"options": [{"line": "Here you go."}], "mood":"calm",'
           ' "note": "\\"line\\": \\"x\\"", "l\\u0069ne" :"Here you go. Bye."}')  # fmt: skip
    assert with_line(raw, "Bye.") == raw.replace('"Here you go. Bye."', '"Bye."')
    assert with_line('{"say": "Sold."}', "Hm.", field="say") == '{"say": "Hm."}'


@pytest.mark.parametrize(
    ("line", "heard", "expected"),
    [
        # The model escaped what is not ASCII: so is a character it never wrote.
        ("Caf\\u00e9, here you go.", "Caf\u00e9 \u00fcber", "Caf\\u00e9 \\u00fcber"),
        # It wrote such characters as they are: so are new ones.
        ("Caf\u00e9, here you go.", "\u00fcber caf\u00e9", "\u00fcber caf\u00e9"),
        # Its own forms stay, hex case and escaped slashes too.
        ("A\\/B \\u00E9 here you go.", "A/B \u00e9", "A\\/B \\u00E9"),
        # Only ASCII written: new characters as json.dumps(ensure_ascii=False) writes them.
        ("Here you go.", 'S\u00fc\u00df "q"\n', 'S\u00fc\u00df \\"q\\"\\n'),
        # A lone surrogate is escaped, never left unencodable.
        ("Here you go.", "a\ud800", "a\\ud800"),
    ],
)
def test_characters_follow_the_models_habit(line: str, heard: str, expected: str) -> None:
    assert with_line(f'{{"line":"{line}"}}', heard) == f'{{"line":"{expected}"}}'


@pytest.mark.parametrize(
    "raw",
    [
        "",
        "Here you go.",
        '["line", "Here you go."]',
        '{"line": "Here you go."} and more',
        '{"line": "Here you go.",}',
        '{"line": "Here you go.", "line": "Bye."}',
        '{"line": null}',
        '{"mood": "calm"}',
        "{}",
        '{"line": "Here you go.',
        '{"line": "Here\u0001 you go."}',
    ],
)
def test_text_it_cannot_read_safely_is_left_to_the_caller(raw: str) -> None:
    assert with_line(raw, "Bye.") is None
