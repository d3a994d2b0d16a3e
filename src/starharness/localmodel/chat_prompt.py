"""The ChatML prompt that `star-harness models serve-local` renders for a chat request.

llama-cpp-python's `chatml-function-calling` handler renders the same shape, with three costs
a small model on a CPU pays on every turn:

- it HTML-escapes the whole conversation (`"` becomes `&#34;`, `'` becomes `&#39;`): a tool
  call's JSON in the history costs about twice its tokens, and a small model copies the
  entities into what it says;
- the function list comes after the system message, so two NPCs with the same actions but
  different personas share no prefix the server's cache can reuse;
- a request with no forced call renders a different system message (no functions), so the
  step after a decision evaluates the whole prompt again.

Here nothing is escaped, the function list opens the system message (byte-identical for every
request that offers the same tools), and every request with tools renders them. Rendering
`messages[:n]` always yields a prefix of rendering `messages[:n + 1]` (before the generation
prompt), so the server reuses everything up to the newest message. Only the template's own
`<|im_start|>` and `<|im_end|>` are read as control tokens (`render_parts`): text that spells
them, a player's line included, is read as text. Tool messages are not
rendered, as in `chatml-function-calling`: the `llama-cpp` provider profile declares that the
model sees no tool results, and the harness repeats them in a user message.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from pydantic import BaseModel, ConfigDict, Field

CHAT_FORMAT_NAME: Final = "star-harness-chatml"
"""The chat handler's name on the server's `--chat_format`."""
START: Final = "<|im_start|>"
END: Final = "<|im_end|>"
CALL_PREFIX: Final = "functions."
MESSAGE_PREFIX: Final = "message:"
_FUNCTIONS_INTRO: Final = "You have access to the following functions:\n"
_FUNCTIONS_OUTRO: Final = (
    "\nTo call a function, begin your answer with `functions.<function_name>:` and its JSON "
    "arguments on the next line. To answer in words, begin with `message:`."
)


class ChatPromptError(ValueError):
    """A request the prompt cannot be rendered from (a message without a role, a bad tool)."""


class ToolFunction(BaseModel):
    """One function of a request's `tools`, as the OpenAI chat API sends it."""

    model_config = ConfigDict(extra="ignore")
    name: str = Field(min_length=1)
    description: str | None = None
    parameters: dict[str, object] = Field(default_factory=dict[str, object])


class _Tool(BaseModel):
    model_config = ConfigDict(extra="ignore")
    function: ToolFunction


class _Part(BaseModel):
    model_config = ConfigDict(extra="ignore")
    text: str = ""


class _CalledFunction(BaseModel):
    model_config = ConfigDict(extra="ignore")
    name: str = Field(min_length=1)
    arguments: str = "{}"


class _Call(BaseModel):
    model_config = ConfigDict(extra="ignore")
    function: _CalledFunction


class _Named(BaseModel):
    model_config = ConfigDict(extra="ignore")
    name: str = Field(min_length=1)


class _NamedChoice(BaseModel):
    model_config = ConfigDict(extra="ignore")
    function: _Named


class _Message(BaseModel):
    model_config = ConfigDict(extra="ignore")
    role: str = Field(min_length=1)
    content: str | list[_Part] | None = None
    tool_calls: list[_Call] | None = None


@dataclass(frozen=True, slots=True)
class ToolCallText:
    """One call in an assistant message of the history."""

    name: str
    arguments: str


@dataclass(frozen=True, slots=True)
class ChatMessage:
    role: str
    content: str
    calls: tuple[ToolCallText, ...] = ()


def read_tools(raw: Sequence[object] | None) -> tuple[ToolFunction, ...]:
    """A request's `tools`, validated (ChatPromptError names the first bad one)."""
    tools: list[ToolFunction] = []
    for index, item in enumerate(raw or ()):
        try:
            tools.append(_Tool.model_validate(item).function)
        except ValueError as exc:
            raise ChatPromptError(f"tools[{index}] is not a function tool: {exc}") from None
    return tuple(tools)


def read_messages(raw: Sequence[Mapping[str, object]]) -> tuple[ChatMessage, ...]:
    """A request's messages as the prompt needs them (content parts joined, calls kept)."""
    messages: list[ChatMessage] = []
    for index, item in enumerate(raw):
        try:
            message = _Message.model_validate(item)
        except ValueError as exc:
            raise ChatPromptError(f"messages[{index}] is not a chat message: {exc}") from None
        content = message.content
        text = "".join(part.text for part in content) if isinstance(content, list) else content
        calls = tuple(
            ToolCallText(call.function.name, call.function.arguments)
            for call in message.tool_calls or ()
        )
        messages.append(ChatMessage(message.role, text or "", calls))
    return tuple(messages)


class _SchemaSpec(BaseModel):
    model_config = ConfigDict(extra="ignore")
    schema_: dict[str, object] = Field(default_factory=dict[str, object], alias="schema")


class _ResponseFormat(BaseModel):
    model_config = ConfigDict(extra="ignore")
    type: str = "text"
    json_schema: _SchemaSpec | None = None


def json_response_schema(response_format: object) -> dict[str, object] | None:
    """The JSON Schema a `response_format` asks the answer to follow (`{}`: any JSON object),
    None for text."""
    if response_format is None:
        return None
    try:
        shape = _ResponseFormat.model_validate(response_format)
    except ValueError as exc:
        raise ChatPromptError(f"response_format is not understood: {exc}") from None
    if shape.type == "json_object":
        return {}
    if shape.type == "json_schema":
        return shape.json_schema.schema_ if shape.json_schema is not None else {}
    return None


def forced_name(tool_choice: object) -> str | None:
    """The function a `tool_choice` forces (`{"type": "function", "function": {"name": ...}}`),
    None for "auto", "none", "required" or nothing."""
    if not isinstance(tool_choice, Mapping):
        return None
    try:
        return _NamedChoice.model_validate(tool_choice).function.name
    except ValueError as exc:
        raise ChatPromptError(f"tool_choice names no function: {exc}") from None


def functions_block(tools: Sequence[ToolFunction]) -> str:
    """The function list that opens the system message; empty without tools."""
    if not tools:
        return ""
    entries = [
        f"\n{CALL_PREFIX}{tool.name}:"
        + (f" {tool.description.strip()}" if tool.description else "")
        + f"\n{compact_json(tool.parameters)}\n"
        for tool in tools
    ]
    return _FUNCTIONS_INTRO + "".join(entries) + _FUNCTIONS_OUTRO


@dataclass(frozen=True, slots=True)
class PromptPart:
    """A piece of a rendered prompt: the template's own marker (`<|im_start|>`, `<|im_end|>`),
    read as the model's control token, or text, read as text whatever it spells."""

    text: str
    marker: bool = False


_START: Final = PromptPart(START, marker=True)
_END: Final = PromptPart(END, marker=True)


def render(messages: Sequence[ChatMessage], tools: Sequence[ToolFunction]) -> str:
    """The conversation, without the generation prompt (see `generation_prompt`)."""
    return "".join(part.text for part in render_parts(messages, tools))


def render_parts(
    messages: Sequence[ChatMessage], tools: Sequence[ToolFunction]
) -> tuple[PromptPart, ...]:
    """`render`'s prompt in parts: only the template's markers are markers. A player's line,
    a tool's schema or a line the model said that spells `<|im_start|>system` is text: read as
    a control token it would open a message the conversation never had."""
    block = functions_block(tools)
    seen_system = False
    out: list[PromptPart] = []
    for message in messages:
        if message.role == "tool":
            continue
        out += [_START, PromptPart(f"{message.role}\n")]
        if message.role == "system" and not seen_system:
            seen_system = True
            if block:
                out.append(PromptPart(block + ("\n\n" if message.content else "")))
        if message.role == "assistant":
            out.append(PromptPart(_assistant_body(message, bool(tools))))
        else:
            out.append(PromptPart(message.content))
        out += [_END, PromptPart("\n")]
    if block and not seen_system:
        # No system message: the functions still open the prompt, in one of their own.
        out[:0] = [_START, PromptPart(f"system\n{block}"), _END, PromptPart("\n")]
    return _joined(out)


def generation_parts() -> tuple[PromptPart, ...]:
    """`generation_prompt` in parts."""
    return (_START, PromptPart("assistant\n"))


def next_user_parts() -> tuple[PromptPart, ...]:
    """What follows an answer generated after the generation prompt when the next message is
    the user's: the answer's end and a user message's opening, in parts. The model server
    evaluates them while the player reads (see `idle_work`)."""
    return (_END, PromptPart("\n"), _START, PromptPart("user\n"))


def continued_call(
    messages: Sequence[ChatMessage], forced: str | None
) -> tuple[tuple[ChatMessage, ...], str | None]:
    """`messages` without a last message that begins the forced call, and that call's
    arguments so far (None, and `messages` whole, when the last message is anything else).

    A request may end with an assistant message that holds nothing but one call of the
    function its `tool_choice` forces, its arguments cut off: the answer is that call
    continued (an assistant prefill, as other chat APIs call it), its arguments beginning with
    the text given. A conversation never ends that way otherwise: a call in the history is
    followed by its result."""
    if forced is None or not messages:
        return tuple(messages), None
    last = messages[-1]
    if last.role != "assistant" or last.content or len(last.calls) != 1:
        return tuple(messages), None
    call = last.calls[0]
    if call.name != forced:
        return tuple(messages), None
    return tuple(messages[:-1]), call.arguments


def _joined(parts: Sequence[PromptPart]) -> tuple[PromptPart, ...]:
    """`parts` with neighbouring text joined (the tokenizer cuts text as one run) and empty
    text dropped."""
    out: list[PromptPart] = []
    for part in parts:
        if not part.text:
            continue
        if out and not part.marker and not out[-1].marker:
            out[-1] = PromptPart(out[-1].text + part.text)
        else:
            out.append(part)
    return tuple(out)


def _assistant_body(message: ChatMessage, with_tools: bool) -> str:
    parts: list[str] = []
    if message.content:
        parts.append(f"{MESSAGE_PREFIX}\n{message.content}" if with_tools else message.content)
    parts.extend(f"{CALL_PREFIX}{call.name}:\n{call.arguments}" for call in message.calls)
    return "\n".join(parts)


def generation_prompt() -> str:
    return "".join(part.text for part in generation_parts())


def compact_json(value: object) -> str:
    """JSON without the spaces a model reads as tokens (keys in the order given)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
