"""runtime/ and npc/ know no game and no client: a vocabulary test over their source files."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

SOURCE = Path(__file__).resolve().parents[1] / "src" / "starharness"
CHECKED = ("runtime", "npc")

GAME_WORDS = (
    "credits",
    "omega",
    "npc_speak",
    "player-1",
    "voyage",
    "smuggler",
    "starship",
    "spaceship",
    "pirate",
    "dockmaster",
    "contraband",
)
CLIENT_WORDS = ("three.js", "threejs", "godot", "unity", "unreal", "gdscript", "esm.sh")


def _sample_game_words() -> set[str]:
    """Place, NPC and goods names of the sample game, when it is importable."""
    try:
        seed = importlib.import_module("starharness.voyage.content.seed")
    except ImportError:
        return set()
    words: set[str] = set()
    for row in (*getattr(seed, "LOCATIONS", ()), *getattr(seed, "ACTORS", ())):
        words.update(str(v) for v in (getattr(row, "id", ""), getattr(row, "name", "")) if v)
    for good in getattr(seed, "GOODS", ()):
        name = str(getattr(good, "name", ""))
        if " " in name:  # single-word goods ids ("parts", "ore") are ordinary English
            words.add(name)
    return words


def _pattern(words: set[str]) -> re.Pattern[str]:
    alternatives = sorted((re.escape(w) for w in words if w), key=len, reverse=True)
    return re.compile(r"(?<![A-Za-z0-9_])(?:" + "|".join(alternatives) + r")(?![A-Za-z0-9_])", re.I)


WORDS = {*GAME_WORDS, *CLIENT_WORDS, *_sample_game_words()}
VOCABULARY = _pattern(WORDS)


def _files(package: str) -> list[Path]:
    return sorted((SOURCE / package).rglob("*.py"))


@pytest.mark.parametrize("package", CHECKED)
def test_no_game_or_client_vocabulary(package: str) -> None:
    files = _files(package)
    assert files, f"no sources found under {package}/"
    hits = [
        f"{path.relative_to(SOURCE)}:{number}: {match.group(0)!r}"
        for path in files
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        for match in VOCABULARY.finditer(line)
    ]
    assert not hits, "game or client words in a layer that must know none:\n" + "\n".join(hits)


def test_the_vocabulary_check_catches_each_kind_of_word() -> None:
    for sample in ("balance in credits", "three.js scene", "call npc_speak", 'id = "player-1"'):
        assert VOCABULARY.search(sample), sample
    for sample in ("sceneCredits_total", "community", "three_jsx"):
        assert not VOCABULARY.search(sample), sample


def test_the_sample_games_names_are_included_when_it_exists() -> None:
    names = _sample_game_words()
    if not names:
        pytest.skip("the sample game is not importable")
    assert all(VOCABULARY.search(name) for name in names)
