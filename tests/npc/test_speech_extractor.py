"""LineExtractor: any JSON object, any split, the streamed text equals json.loads(...)[field]."""

from __future__ import annotations

import itertools
import json
import random
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from starharness.npc.speech import REPLACEMENT, LineExtractor

FIELD = "line"

_patient = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])

# --- a JSON writer that varies everything JSON allows: whitespace, escape forms, hex case ----

_WHITESPACE = ["", "", " ", "\n", "\t", "\r\n  ", "   "]
_SHORT = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _u(code: int, rng: random.Random) -> str:
    digits = f"{code:04x}"
    return "\\u" + (digits.upper() if rng.random() < 0.5 else digits)


def _write_char(char: str, rng: random.Random) -> str:
    code = ord(char)
    if code > 0xFFFF:
        if rng.random() < 0.5:
            return char
        code -= 0x10000
        return _u(0xD800 + (code >> 10), rng) + _u(0xDC00 + (code & 0x3FF), rng)
    must_escape = char in '"\\' or code < 0x20
    choice = rng.random()
    if char == "/" and choice < 0.3:
        return "\\/"
    if char in _SHORT and (choice < 0.6 or not must_escape):
        return _SHORT[char] if must_escape or choice < 0.3 else char
    if must_escape or choice < 0.2:
        return _u(code, rng)
    return char


def _write_string(text: str, rng: random.Random) -> str:
    return '"' + "".join(_write_char(char, rng) for char in text) + '"'


def _ws(rng: random.Random) -> str:
    return rng.choice(_WHITESPACE)


def _write(value: object, rng: random.Random) -> str:
    if isinstance(value, str):
        return _write_string(value, rng)
    if isinstance(value, list):
        items = [_ws(rng) + _write(item, rng) + _ws(rng) for item in value]
        return "[" + ",".join(items) + "]" if items else "[" + _ws(rng) + "]"
    if isinstance(value, dict):
        members = [
            _ws(rng) + _write_string(key, rng) + _ws(rng) + ":" + _ws(rng) + _write(item, rng)
            for key, item in value.items()
        ]
        return "{" + ",".join(members) + _ws(rng) + "}"
    return json.dumps(value)


@dataclass
class Document:
    text: str
    target_end: int | None
    """Index of the target string's closing quote, when the object has the field."""


def _document(others: dict[str, object], line: object, position: int, seed: int) -> Document:
    rng = random.Random(seed)
    members = [(key, value) for key, value in others.items() if key != FIELD]
    if line is not None:
        members.insert(position % (len(members) + 1), (FIELD, line))
    text = "{" + _ws(rng)
    target_end = None
    for index, (key, value) in enumerate(members):
        if index:
            text += _ws(rng) + "," + _ws(rng)
        text += _write_string(key, rng) + _ws(rng) + ":" + _ws(rng)
        text += _write(value, rng)
        if key == FIELD and isinstance(value, str):
            target_end = len(text) - 1
    return Document(text + _ws(rng) + "}" + _ws(rng), target_end)


_tricky_chars = st.sampled_from(list('"\\/{}[],:\b\f\n\r\t\x00\x1f\x7fé€😀\U0010ffff \u2028'))
_any_text = st.text(st.characters(exclude_categories=["Cs"]) | _tricky_chars, max_size=60)
_keys = st.text(max_size=6) | st.sampled_from([FIELD, "mood", '"}', "\\", "lin", "linee"])
_leaf = (
    st.none()
    | st.booleans()
    | st.integers(-(10**20), 10**20)
    | st.floats(allow_nan=False, allow_infinity=False)
    | _any_text
    | st.just(FIELD)
)
_values = st.recursive(
    _leaf,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_keys, inner, max_size=4),
    max_leaves=10,
)
_others = st.dictionaries(_keys, _values, max_size=5)


def _fragments(text: str, cuts: list[int]) -> list[str]:
    points = sorted({min(cut, len(text)) for cut in cuts})
    bounds = [0, *points, len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds) if b > a]


def _stream(fragments: list[str], field: str = FIELD) -> list[str]:
    extractor = LineExtractor(field)
    return [extractor.feed(fragment) for fragment in fragments]


@_patient
@given(
    others=_others,
    line=_any_text,
    position=st.integers(0, 10),
    seed=st.integers(0, 2**32),
    cuts=st.lists(st.integers(0, 10**4), max_size=30),
)
def test_any_object_any_split_streams_exactly_the_field(
    others: dict[str, object], line: str, position: int, seed: int, cuts: list[int]
) -> None:
    document = _document(others, line, position, seed)
    assert json.loads(document.text)[FIELD] == line  # the writer itself is right
    cuts = [cut % (len(document.text) + 1) for cut in cuts]
    assert "".join(_stream(_fragments(document.text, cuts))) == line


@_patient
@given(others=_others, line=_any_text, position=st.integers(0, 10), seed=st.integers(0, 2**32))
def test_one_character_fragments_stream_exactly_the_field(
    others: dict[str, object], line: str, position: int, seed: int
) -> None:
    document = _document(others, line, position, seed)
    assert "".join(_stream(list(document.text))) == line


@_patient
@given(
    others=_others,
    line=_any_text,
    position=st.integers(0, 10),
    seed=st.integers(0, 2**32),
    cuts=st.lists(st.integers(0, 10**4), max_size=10),
)
def test_the_whole_line_is_out_before_its_closing_quote_arrives(
    others: dict[str, object], line: str, position: int, seed: int, cuts: list[int]
) -> None:
    document = _document(others, line, position, seed)
    assert document.target_end is not None
    head = document.text[: document.target_end]
    extractor = LineExtractor(FIELD)
    emitted = "".join(extractor.feed(part) for part in _fragments(head, cuts))
    assert emitted == line
    assert not extractor.complete
    assert extractor.feed(document.text[document.target_end :]) == ""
    assert extractor.complete


@_patient
@given(
    others=_others,
    seed=st.integers(0, 2**32),
    cuts=st.lists(st.integers(0, 10**4), max_size=20),
)
def test_an_object_without_the_field_streams_nothing(
    others: dict[str, object], seed: int, cuts: list[int]
) -> None:
    document = _document(others, None, 0, seed)
    assert FIELD not in json.loads(document.text)
    deltas = _stream(_fragments(document.text, [c % (len(document.text) + 1) for c in cuts]))
    assert deltas == [""] * len(deltas)


@_patient
@given(others=_others, value=_values, position=st.integers(0, 10), seed=st.integers(0, 2**32))
def test_a_field_that_is_not_a_string_streams_nothing(
    others: dict[str, object], value: object, position: int, seed: int
) -> None:
    if isinstance(value, str):
        value = [value]
    document = _document(others, value, position, seed)
    assert "".join(_stream(list(document.text))) == ""


@_patient
@given(st.lists(st.text(max_size=12), max_size=40), st.sampled_from(["line", "", "x"]))
def test_any_input_at_all_is_consumed_without_error(fragments: list[str], field: str) -> None:
    extractor = LineExtractor(field)
    for fragment in fragments:
        assert isinstance(extractor.feed(fragment), str)


# --- the tricky splits, spelled out ------------------------------------------------------------


def _every_two_way_split(document: str) -> list[list[str]]:
    return [[document[:cut], document[cut:]] for cut in range(len(document) + 1)]


def test_a_surrogate_pair_split_anywhere_decodes_to_one_character() -> None:
    document = '{"line":"a\\uD83D\\uDE00b"}'
    for fragments in _every_two_way_split(document):
        deltas = _stream(fragments)
        assert "".join(deltas) == "a😀b"
        assert "\ud83d" not in deltas[0]
        assert REPLACEMENT not in "".join(deltas)


def test_the_high_half_is_held_back_until_the_low_half_arrives() -> None:
    extractor = LineExtractor()
    assert extractor.feed('{"line":"x\\ud83d') == "x"
    assert extractor.feed("\\ude") == ""
    assert extractor.feed("00 y") == "😀 y"


def test_an_escaped_quote_split_anywhere_is_a_quote_not_the_end() -> None:
    document = '{"line":"say \\"hi\\" \\\\","mood":"\\"}"}'
    for fragments in _every_two_way_split(document):
        assert "".join(_stream(fragments)) == 'say "hi" \\'


def test_every_three_way_split_of_a_busy_object() -> None:
    document = '{"a":{"line":"no","b":["}\\"",{"c":"]"}]},"li\\u006ee" : "o\\/k\\t\\u00e9"}'
    assert json.loads(document)[FIELD] == "o/k\té"
    for first in range(len(document) + 1):
        for second in range(first, len(document) + 1):
            fragments = [document[:first], document[first:second], document[second:]]
            assert "".join(_stream(fragments)) == "o/k\té"


def test_text_is_emitted_as_soon_as_it_arrives() -> None:
    extractor = LineExtractor()
    assert extractor.feed('{"mood":"calm","line":"Hel') == "Hel"
    assert extractor.started
    assert extractor.feed("lo, ") == "lo, "
    assert extractor.feed("there\\") == "there"
    assert extractor.feed('n"') == "\n"
    assert extractor.complete


def test_whitespace_anywhere_json_allows_it() -> None:
    document = ' \n{ \t"x" : [ 1 , { } ] ,\r\n "line"\n:\t"ok" \n} '
    assert "".join(_stream(list(document))) == "ok"


def test_a_nested_key_with_the_same_name_is_not_the_field() -> None:
    assert "".join(_stream(['{"a":{"line":"no"},"b":["line","no"],"line":"yes"}'])) == "yes"
    assert "".join(_stream(['{"a":{"line":"no"}}'])) == ""


def test_the_first_of_duplicate_keys_is_streamed_and_never_retracted() -> None:
    # json.loads keeps the last duplicate; a stream cannot take back what it already sent.
    assert "".join(_stream(['{"line":"first","line":"second"}'])) == "first"
    assert "".join(_stream(['{"line":1,"line":"second"}'])) == "second"


def test_only_the_exact_key_matches() -> None:
    document = '{"linee":"no","lin":"no","LINE":"no","l\\u0069ne":"yes"}'
    for fragments in _every_two_way_split(document):
        assert "".join(_stream(fragments)) == "yes"


def test_the_field_name_is_configurable() -> None:
    assert "".join(_stream(['{"line":"no","say":"yes"}'], field="say")) == "yes"


@pytest.mark.parametrize("document", ['["line","x"]', '"line"', "line", "", '{"line" "x"}'])
def test_input_that_is_not_an_object_with_the_field_streams_nothing(document: str) -> None:
    assert "".join(_stream(list(document))) == ""


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("a\\xb", f"a{REPLACEMENT}b"),  # unknown escape letter: the pair becomes U+FFFD
        ("\\u12G4", f"{REPLACEMENT}G4"),  # bad hex digit: kept as ordinary text after U+FFFD
        ("\\uD83Dx", f"{REPLACEMENT}x"),  # high surrogate without its low half
        ("\\uD83D", REPLACEMENT),  # high surrogate right before the closing quote
        ("\\uDE00", REPLACEMENT),  # low surrogate alone
        ("\\uD83D\\uD83D\\uDE00", f"{REPLACEMENT}😀"),  # two highs, then a low
        ("\\uD83D\\n", f"{REPLACEMENT}\n"),  # high surrogate, then a short escape
        ("\\uD83D\\u0041", f"{REPLACEMENT}A"),  # high surrogate, then a non-surrogate
    ],
)
def test_invalid_escapes_become_replacement_characters(body: str, expected: str) -> None:
    document = f'{{"line":"{body}","mood":"x"}}'
    for fragments in _every_two_way_split(document):
        extractor = LineExtractor()
        assert "".join(extractor.feed(part) for part in fragments) == expected
        assert extractor.complete


def test_an_unfinished_hex_escape_ends_at_the_closing_quote() -> None:
    extractor = LineExtractor()
    assert extractor.feed('{"line":"ab\\u12"') == f"ab{REPLACEMENT}"
    assert extractor.complete
    assert extractor.feed(',"line":"more"}') == ""


def test_raw_control_characters_pass_through() -> None:
    # Strict JSON forbids them, but a stream should not drop what a lenient model wrote.
    assert "".join(_stream(['{"line":"a\tb\nc"}'])) == "a\tb\nc"


@pytest.mark.parametrize("seed", range(5))
def test_a_long_line_in_large_and_small_fragments(seed: int) -> None:
    rng = random.Random(seed)
    alphabet = "abc xyz" * 10 + '"\\/\n\té€😀{}[],:'
    line = "".join(rng.choice(alphabet) for _ in range(20_000))
    document = _document({"before": {"k": [line]}, "after": line}, line, seed, seed).text
    sizes = [rng.choice([1, 2, 7, 500, 40_000]) for _ in range(len(document))]
    fragments: list[str] = []
    start = 0
    for size in sizes:
        if start >= len(document):
            break
        fragments.append(document[start : start + size])
        start += size
    assert "".join(_stream(fragments)) == line
    assert "".join(_stream([document])) == line
    plain = json.dumps({"k": line, FIELD: line}, ensure_ascii=False)  # long unescaped runs
    assert "".join(_stream([plain])) == line
    assert "".join(_stream([plain[:12_345], plain[12_345:]])) == line
