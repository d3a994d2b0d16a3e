"""The speaking tool: how an NPC says a line; the framework streams it while it arrives."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from ...runtime.tools import ToolArgsError, ToolDefinition, ToolRunContext, define_raw_tool
from ..game import SpeechContract
from ..speech import parse_arguments, read_line
from .entities import decode_entities, looks_like_arguments

HEARD: Final = "The player heard you."
"""What the model reads after speaking; constant, so it never disturbs the prefix cache."""

DEFAULT_DESCRIPTION: Final = (
    "Say one line to the player. This is the only way the player hears you. "
    "Offer short replies they may pick in the options, in the player's own words."
)
LABEL_DESCRIPTION: Final = (
    "What the player says or does if they pick this, in the player's own words "
    '("I\'ll take two."), never an id.'
)


def define_speech_tool(
    contract: SpeechContract,
    moods: Sequence[str],
    description: str = DEFAULT_DESCRIPTION,
) -> ToolDefinition[dict[str, Any]]:
    """The speaking tool a contract describes; lenient, so a misbehaving model is still heard.

    Only a missing line or one written as JSON or call syntax is an error (the model is told
    and may try again); an unknown mood or malformed options are cleaned up instead.
    """
    if not moods:
        raise ValueError("a speech tool needs at least one mood")
    schema = _schema(contract, moods)

    def parse(raw: str) -> dict[str, Any]:
        try:
            arguments = parse_arguments(raw)
        except ValueError as exc:
            raise ToolArgsError(f"arguments are not a JSON object ({exc})") from None
        line = read_line(arguments, contract.line_field)
        if not line.strip():
            raise ToolArgsError(f"field '{contract.line_field}': say a non-empty line")
        if looks_like_arguments(decode_entities(line)):
            # A small model copies a tool result into what it says; the player must not hear it.
            raise ToolArgsError(
                f"field '{contract.line_field}': say words the player hears, not JSON or a "
                "tool call (the world has already answered; tell the player in your own words)"
            )
        return arguments

    async def execute(arguments: dict[str, Any], run: ToolRunContext) -> str:
        # The encounter turns the arguments into frames and decides when the turn ends.
        return HEARD

    return define_raw_tool(
        contract.tool_name, description, schema, parse, execute, concurrency_safe=False
    )


def _schema(contract: SpeechContract, moods: Sequence[str]) -> Mapping[str, Any]:
    """Every field required and nothing else allowed: a strict schema, so a server that
    constrains arguments (grammar or `strict`) makes even a small model keep the contract."""
    label = _string(
        LABEL_DESCRIPTION, contract.max_label_chars, contract.label_characters, lead=_ALNUM
    )
    option_id = _string("A short id.", None, contract.option_id_characters, most=_MAX_ID_CHARS)
    option = {
        "type": "object",
        "properties": {
            contract.option_id_field: option_id,
            contract.option_label_field: label,
        },
        "required": [contract.option_id_field, contract.option_label_field],
        "additionalProperties": False,
    }
    line = _string("The words you say.", contract.max_line_chars, contract.line_characters)
    options: dict[str, Any] = {
        "type": "array",
        "items": option,
        "maxItems": contract.max_options,
        "description": "Replies the player may pick.",
    }
    if contract.min_options > 0:
        options["minItems"] = contract.min_options
        options["description"] = (
            f"{contract.min_options} to {contract.max_options} replies the player may pick."
        )
    return {
        "type": "object",
        "properties": {
            contract.line_field: line,
            contract.mood_field: {
                "type": "string",
                "enum": list(moods),
                "description": "How you feel saying it.",
            },
            contract.options_field: options,
        },
        "required": [contract.line_field, contract.mood_field, contract.options_field],
        "additionalProperties": False,
    }


_ALNUM: Final = "[A-Za-z0-9]"
_MAX_ID_CHARS: Final = 16


def _string(
    description: str,
    max_chars: int | None,
    characters: str | None,
    *,
    lead: str | None = None,
    most: int | None = None,
) -> dict[str, Any]:
    """A string field; with `characters`, a `pattern` of them, `lead` the first one's class.

    A grammar follows a pattern and ignores `maxLength`, so the pattern carries the length
    too: `max_chars`, or `most` where only a constrained server should cap it.
    """
    field: dict[str, Any] = {"type": "string", "description": description}
    if max_chars is not None:
        field["maxLength"] = max_chars
    if characters is not None:
        longest = max_chars if max_chars is not None else most
        rest = "" if longest is None else str(longest - 1)
        field["pattern"] = f"^{lead or characters}{characters}{{0,{rest}}}$"
    return field
