"""llama.cpp turns the sample game's speech and decision schemas into grammars, and the speech
grammar keeps each field to its character class."""

from __future__ import annotations

import json
from typing import Any

from realmodel_support import require_real_model

from starharness.npc.encounter import GameKit
from starharness.voyage import GAME


def _grammar_text(schema: dict[str, Any]) -> str:
    require_real_model()
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    return json_schema_to_gbnf(json.dumps(schema))


def test_the_speech_schema_becomes_a_grammar_with_its_character_classes() -> None:
    kit = GameKit.of(GAME)
    grammar = _grammar_text(dict(kit.speech_tool.schema.parameters))
    assert "[A-Za-z0-9 ,.'!?;:-]" in grammar  # the line's class, not any JSON character
    assert "[A-Za-z0-9 ,.'!?]" in grammar
    from llama_cpp.llama_grammar import LlamaGrammar

    LlamaGrammar.from_string(grammar, verbose=False)  # llama.cpp's own parser takes it


def test_every_archetypes_decision_schema_becomes_a_grammar() -> None:
    require_real_model()
    from llama_cpp.llama_grammar import LlamaGrammar

    kit = GameKit.of(GAME)
    kits = [kit.default, *kit.archetypes.values()]
    assert len(kits) > 1
    for each in kits:
        grammar = _grammar_text(dict(each.decision_tool.schema.parameters))
        LlamaGrammar.from_string(grammar, verbose=False)
