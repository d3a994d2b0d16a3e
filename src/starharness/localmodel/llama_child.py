"""The model server's child process: llama-cpp-python's server with this package's chat handler.

Run as `python -m starharness.localmodel.llama_child FLAGS` with the flags of
`python -m llama_cpp.server`. It registers `star-harness-chatml` (see `chat_prompt`) through
llama-cpp-python's public handler registry, then builds that server's app as its own
`__main__` does (`create_app`) and serves it inside `IdleWork`, which lets the handler use
the time between turns (see `idle_work`); the server's own chat formats stay available by name.

Only this module and `grammar_filter`, `jump_forward` and `state_shelf`, which it imports,
import llama_cpp, and only the child process imports them. A greedy forced call (a decision)
is completed by `jump_forward`, the text its grammar forces evaluated in batches; the rest by
llama-cpp-python's own completion.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, Final, cast

import uvicorn
from llama_cpp import Llama, llama_chat_format
from llama_cpp.llama_grammar import JSON_GBNF, LlamaGrammar, json_schema_to_gbnf
from llama_cpp.server.app import create_app
from llama_cpp.server.cli import add_args_from_model, parse_model_from_args
from llama_cpp.server.settings import ModelSettings, ServerSettings, Settings

from . import jump_forward
from .call_opening import continues_string, split_opening
from .chat_prompt import (
    CALL_PREFIX,
    CHAT_FORMAT_NAME,
    END,
    MESSAGE_PREFIX,
    ChatMessage,
    ChatPromptError,
    PromptPart,
    ToolFunction,
    continued_call,
    forced_name,
    generation_parts,
    json_response_schema,
    next_user_parts,
    read_messages,
    read_tools,
    render_parts,
)
from .forced_text import compact
from .grammar_filter import GrammarFilter
from .idle_work import ASGIApp, IdleWork
from .request_check import RequestCheck
from .state_shelf import Lookahead, StateShelf, lookahead_after_answer, prompt_tokens, shelf_of

_SAMPLING: Final = (
    "temperature",
    "top_p",
    "top_k",
    "min_p",
    "typical_p",
    "seed",
    "presence_penalty",
    "frequency_penalty",
    "repeat_penalty",
    "tfs_z",
    "mirostat_mode",
    "mirostat_tau",
    "mirostat_eta",
    "model",
    "logits_processor",
    "logit_bias",
)
_GRAMMARS: dict[str, str] = {}
"""A grammar (GBNF) by its schema: converting a large `anyOf` schema costs more than a token,
and an NPC sends the same schema on every turn."""
_CALLS: dict[str, tuple[str, str]] = {}
"""A forced call's fixed opening and the grammar of the rest, by its schema."""
_PARSED: dict[str, LlamaGrammar] = {}
"""A grammar for the sampler chain, by its text (see `_constrained`)."""
_IDLE: list[IdleWork] = []
"""The server's idle work, once `main` serves it (empty in a process that calls the handler
directly, as tests do)."""


def handle_chat(
    *,
    llama: Llama,
    messages: Sequence[Mapping[str, object]],
    tools: Sequence[object] | None = None,
    tool_choice: object = None,
    stream: bool = False,
    stop: str | list[str] | None = None,
    max_tokens: int | None = None,
    grammar: LlamaGrammar | None = None,
    **options: Any,
) -> Any:
    """One chat completion: plain text, a forced named call, or the model's own choice."""
    asked = _read(messages, tools, tool_choice, options.get("response_format"))
    functions, forced, answer_schema = asked.functions, asked.forced, asked.answer_schema
    prompt = (*render_parts(asked.history, functions), *generation_parts())
    sampling = {key: options[key] for key in _SAMPLING if options.get(key) is not None}
    stops = [END, *([stop] if isinstance(stop, str) else (stop or []))]
    shelf = shelf_of(llama)
    if forced is None and tool_choice in ("auto", "required") and functions:
        chosen_by = _ready(llama, prompt, shelf)
        forced = _choose(llama, chosen_by, functions, sampling, words=tool_choice == "auto")
    if forced is None:
        checked: GrammarFilter | None = None
        constrained: dict[str, Any] = {**sampling, "grammar": grammar}
        if grammar is None and answer_schema is not None:
            gbnf = _grammar(answer_schema) if answer_schema else JSON_GBNF
            constrained, checked = _constrained(llama, gbnf, sampling)
        words = (PromptPart(f"{MESSAGE_PREFIX}\n"),) if functions else ()
        text_prompt = _ready(llama, (*prompt, *words), shelf)
        completion: Any = llama.create_completion(
            prompt=text_prompt, stream=stream, stop=stops, max_tokens=max_tokens, **constrained
        )
        if stream:
            return _checked(_text_chunks(_noted(llama, text_prompt, completion)), checked)
        _note(llama, text_prompt, completion["choices"][0])
        return _text_answer(_whole(completion, checked))
    tool = _tool(functions, forced)
    opening, rest = _call_grammar(tool.parameters)
    start = asked.begun if asked.begun is not None and forced == asked.forced else opening
    call_prompt = _ready(llama, (*prompt, PromptPart(f"{CALL_PREFIX}{tool.name}:\n{start}")), shelf)
    call: Any
    if jump_forward.applies(llama, sampling, stops, END):
        _, checked = _constrained(llama, compact(rest), sampling)
        assert checked is not None, "a greedy completion's grammar is always a filter"
        _advance(llama, checked, start[len(opening) :])
        chunks = jump_forward.complete(
            llama, call_prompt, checked, max_tokens=max_tokens, model=sampling.get("model")
        )
        call = chunks if stream else _joined(chunks)
    else:
        constrained, checked = _constrained(llama, rest, sampling)
        _advance(llama, checked, start[len(opening) :])
        call = llama.create_completion(
            prompt=call_prompt, stream=stream, stop=stops, max_tokens=max_tokens, **constrained
        )
    if stream:
        name = sampling.get("model") or llama.model_path
        chunks = _call_chunks(tool.name, _noted(llama, call_prompt, call), start, name)
        return _checked(chunks, checked)
    _note(llama, call_prompt, call["choices"][0])
    return _call_answer(tool.name, _whole(call, checked), start)


@dataclass(frozen=True, slots=True)
class _Asked:
    """A chat request as the handler reads it, checked."""

    functions: tuple[ToolFunction, ...]
    forced: str | None
    history: tuple[ChatMessage, ...]
    begun: str | None
    """The forced call's arguments so far, where the request began it (see `continued_call`):
    its opening and more of its first string."""
    answer_schema: dict[str, object] | None


def _read(
    messages: Sequence[Mapping[str, object]],
    tools: Sequence[object] | None,
    tool_choice: object,
    response_format: object,
) -> _Asked:
    """The request's parts, or ValueError saying what the handler cannot answer."""
    try:
        functions = read_tools(tools)
        forced = forced_name(tool_choice)
        history, begun = continued_call(read_messages(messages), forced)
        answer_schema = json_response_schema(response_format)
    except ChatPromptError as exc:
        raise ValueError(str(exc)) from None
    if forced is not None:
        tool = _tool(functions, forced)
        if begun is not None:
            begun = _continued(_call_grammar(tool.parameters)[0], begun)
    return _Asked(functions, forced, history, begun, answer_schema)


def request_problem(body: Mapping[str, Any]) -> str | None:
    """What the handler would refuse in a chat request's `body` (see `RequestCheck`), or None.
    Messages that are not a list are refused here too: the server's own validation answers
    them with a 500 and a traceback."""
    messages = body.get("messages")
    if not isinstance(messages, list):
        return "messages: give a list of chat messages"
    try:
        _read(
            cast(list[Mapping[str, object]], messages),
            body.get("tools"),
            body.get("tool_choice"),
            body.get("response_format"),
        )
    except ValueError as exc:
        return str(exc)
    return None


def _tool(functions: Sequence[ToolFunction], name: str) -> ToolFunction:
    tool = next((tool for tool in functions if tool.name == name), None)
    if tool is None:
        known = ", ".join(tool.name for tool in functions) or "none"
        raise ValueError(f"tool_choice names {name!r}, which is not among the tools ({known})")
    return tool


def _continued(opening: str, begun: str) -> str:
    """The arguments a continued call begins with (see `continued_call`): `begun`, which must
    be the call's fixed opening and more of its first string."""
    if not opening or not continues_string(opening, begun):
        shown = begun if len(begun) <= 80 else begun[:77] + "..."
        expected = f"{opening!r} and more of that string" if opening else "nothing to continue"
        raise ValueError(
            f"the last message begins the forced call with arguments {shown!r}; "
            f"a call continued here must begin with {expected}"
        )
    return begun


def _advance(llama: Llama, checked: GrammarFilter | None, text: str) -> None:
    """Advance the grammar of what follows the call's opening over `text`, the continued
    call's given part: what the model writes next is checked from where it ends."""
    if checked is None or not text:
        return
    if not checked.accept(llama.tokenize(text.encode("utf-8"), add_bos=False, special=False)):
        checked.broken = None
        raise ValueError(f"the continued call's text {text!r} breaks the call's schema")


def _noted(
    llama: Llama, prompt: list[int], chunks: Iterator[dict[str, Any]]
) -> Iterator[dict[str, Any]]:
    """`chunks`, then `_note` of the whole answer once the last has been sent."""
    texts: list[str] = []
    finish: str | None = None
    for chunk in chunks:
        choice = chunk["choices"][0]
        texts.append(choice["text"])
        finish = choice["finish_reason"] or finish
        yield chunk
    _note(llama, prompt, {"text": "".join(texts), "finish_reason": finish})


def _note(llama: Llama, prompt: list[int], choice: Mapping[str, Any]) -> None:
    """Leave the idle work the end of this answer and a user message's opening (see
    `Lookahead`): between turns the server evaluates them, so the next turn's first word waits
    for the player's line and what follows it only; and a state buffer (`StateShelf.prepare`).
    Any answer replaces the job of the one before, whose context is gone."""
    if not _IDLE:
        return
    ahead = None
    # An answer cut at `max_tokens` (a warm-up asks for one token) is not what the history
    # will hold; one that ended by itself is.
    if choice.get("finish_reason") == "stop":
        ahead = lookahead_after_answer(llama, prompt, choice["text"], next_user_parts())
    _IDLE[0].after(partial(_between_turns, llama, ahead, shelf_of(llama)))


def _between_turns(llama: Llama, ahead: Lookahead | None, shelf: StateShelf | None) -> None:
    """The idle work after an answer: what the next request most likely begins with, then a
    buffer for the next state the shelf saves."""
    if ahead is not None:
        ahead.run(llama)
    if shelf is not None:
        shelf.prepare(llama)


def _ready(llama: Llama, prompt: Sequence[PromptPart], shelf: StateShelf | None) -> list[int]:
    """`prompt`'s tokens (see `prompt_tokens`), with the state they continue in the context."""
    tokens = prompt_tokens(llama, prompt, shelf)
    if shelf is not None:
        shelf.before(llama, tokens)
    return tokens


def _choose(
    llama: Llama,
    prompt: list[int],
    functions: Sequence[ToolFunction],
    sampling: dict[str, Any],
    *,
    words: bool,
) -> str | None:
    """The function the model opens its answer with, or None for words (grammar-bound; with
    `words` false, "required", it must open with a function)."""
    names = " | ".join(json.dumps(f"{CALL_PREFIX}{tool.name}:") for tool in functions)
    root = f'functions | "{MESSAGE_PREFIX}"' if words else "functions"
    choice = LlamaGrammar.from_string(f"root ::= {root}\nfunctions ::= {names}\n", verbose=False)
    greedy: dict[str, Any] = {**sampling, "temperature": 0}
    picked: Any = llama.create_completion(
        prompt=prompt, stream=False, max_tokens=None, grammar=choice, **greedy
    )
    text: str = picked["choices"][0]["text"]
    if not text.startswith(CALL_PREFIX):
        return None
    return text.removeprefix(CALL_PREFIX).removesuffix(":")


def _grammar(schema: dict[str, object]) -> str:
    text = json.dumps(schema)
    grammar = _GRAMMARS.get(text)
    if grammar is None:
        grammar = _GRAMMARS[text] = json_schema_to_gbnf(text)
    return grammar


def _call_grammar(schema: dict[str, object]) -> tuple[str, str]:
    """The call's opening for the prompt (see `call_opening`) and the grammar of the rest;
    ValueError when the schema cannot be made a grammar."""
    text = json.dumps(schema)
    known = _CALLS.get(text)
    if known is None:
        try:
            whole = _grammar(schema)
        except Exception as exc:  # the converter's own errors: KeyError, RecursionError, ...
            raise ValueError(f"a tool's parameters cannot be made a grammar: {exc!r}") from None
        opening = split_opening(whole)
        known = ("", whole) if opening is None else (opening.text, opening.grammar)
        _CALLS[text] = known
    return known


def _constrained(
    llama: Llama, gbnf: str, sampling: dict[str, Any]
) -> tuple[dict[str, Any], GrammarFilter | None]:
    """`sampling` with the grammar `gbnf` applied: as a `GrammarFilter` where it applies (the
    filter is returned, to be asked afterwards whether it ended the answer), else in the
    sampler chain."""
    checked = GrammarFilter.for_sampling(llama, gbnf, sampling)
    if checked is None:
        parsed = _PARSED.get(gbnf)
        if parsed is None:
            parsed = _PARSED[gbnf] = LlamaGrammar.from_string(gbnf, verbose=False)
        return {**sampling, "grammar": parsed}, None
    return checked.sampling(sampling), checked


def _whole(completion: Any, checked: GrammarFilter | None) -> Any:
    """A whole completion, refused when the grammar filter had to end it."""
    if checked is not None and checked.broken is not None:
        raise ValueError(f"the answer broke its grammar: {checked.broken}")
    return completion


def _joined(chunks: Iterator[dict[str, Any]]) -> dict[str, Any]:
    """A streamed completion as one, the shape `create_completion` returns without `stream`."""
    parts = list(chunks)
    last = parts[-1]
    text = "".join(part["choices"][0]["text"] for part in parts)
    choice = {**last["choices"][0], "text": text}
    return {**last, "choices": [choice]}


def _checked(
    chunks: Iterator[dict[str, Any]], checked: GrammarFilter | None
) -> Iterator[dict[str, Any]]:
    """A streamed completion; when the grammar filter had to end it, the server's log says
    why (the client sees the answer end and finds it incomplete)."""
    yield from chunks
    if checked is not None and checked.broken is not None:
        print(f"star-harness: an answer broke its grammar: {checked.broken}", file=sys.stderr)


def _head(chunk: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "id": f"chat{chunk['id']}",
        "object": "chat.completion.chunk",
        "created": chunk.get("created", int(time.time())),
        "model": chunk["model"],
    }


def _text_chunks(chunks: Iterator[Mapping[str, Any]]) -> Iterator[dict[str, Any]]:
    first = True
    for chunk in chunks:
        choice = chunk["choices"][0]
        if first:
            first = False
            yield {**_head(chunk), "choices": [_delta({"role": "assistant", "content": ""})]}
        finish = choice["finish_reason"]
        delta = {"content": choice["text"]} if choice["text"] else {}
        yield {**_head(chunk), "choices": [_delta(delta, finish)]}


def _call_chunks(
    name: str, chunks: Iterator[Mapping[str, Any]], opening: str, model: str
) -> Iterator[dict[str, Any]]:
    """The call's chunks, the first before the prompt is evaluated: the opening the prompt
    ends with is the arguments' first text, and a continued call's given words reach the
    client (the player) while the model reads the prompt."""
    completion_id = f"cmpl-{uuid.uuid4()}"
    head = {
        "id": f"chat{completion_id}",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
    }
    call: dict[str, object] = {"index": 0, "id": f"call_{name}_{completion_id}"}
    call |= {"type": "function", "function": {"name": name, "arguments": opening}}
    start = {"role": "assistant", "content": None, "tool_calls": [call]}
    yield {**head, "choices": [_delta(start)]}
    for chunk in chunks:
        choice = chunk["choices"][0]
        if choice["text"]:
            more = {"index": 0, "function": {"arguments": choice["text"]}}
            yield {**head, "choices": [_delta({"tool_calls": [more]})]}
        if choice["finish_reason"] is not None:
            yield {**head, "choices": [_delta({}, "tool_calls")]}


def _delta(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}


def _text_answer(completion: Mapping[str, Any]) -> dict[str, Any]:
    choice = completion["choices"][0]
    message = {"role": "assistant", "content": choice["text"]}
    return _answer(completion, message, choice["finish_reason"])


def _call_answer(name: str, completion: Mapping[str, Any], opening: str) -> dict[str, Any]:
    arguments: str = opening + completion["choices"][0]["text"]
    call = {
        "id": f"call_{name}_{completion['id']}",
        "type": "function",
        "function": {"name": name, "arguments": arguments},
    }
    message = {"role": "assistant", "content": None, "tool_calls": [call]}
    return _answer(completion, message, "tool_calls")


def _answer(completion: Mapping[str, Any], message: dict[str, Any], finish: str) -> dict[str, Any]:
    return {
        "id": f"chat{completion['id']}",
        "object": "chat.completion",
        "created": completion.get("created", int(time.time())),
        "model": completion["model"],
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
        "usage": completion.get("usage"),
    }


def main() -> None:
    """llama-cpp-python's server with the chat handler registered, as its `__main__` builds
    it from the same flags, served inside `IdleWork`."""
    llama_chat_format.register_chat_completion_handler(CHAT_FORMAT_NAME)(handle_chat)
    parser = argparse.ArgumentParser(
        prog="python -m starharness.localmodel.llama_child",
        description="llama-cpp-python's server with star-harness's chat handler",
    )
    add_args_from_model(parser, Settings)
    args = parser.parse_args()
    try:
        # Annotated as returning the class; it returns an instance of it.
        server = cast(ServerSettings, parse_model_from_args(ServerSettings, args))
        model = cast(ModelSettings, parse_model_from_args(ModelSettings, args))
    except ValueError as exc:
        parser.error(str(exc))
    app: ASGIApp = create_app(server_settings=server, model_settings=[model])
    if model.chat_format == CHAT_FORMAT_NAME:
        app = RequestCheck(app, request_problem)
    idle = IdleWork(app)
    _IDLE[:] = [idle]
    uvicorn.run(
        idle,
        host=server.host,
        port=server.port,
        ssl_keyfile=server.ssl_keyfile,
        ssl_certfile=server.ssl_certfile,
    )


if __name__ == "__main__":
    main()
