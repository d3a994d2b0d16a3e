"""The model server's child process: llama-cpp-python's server with this package's chat handler.

Run as `python -m starharness.localmodel.llama_child FLAGS` with the flags of
`python -m llama_cpp.server`. It registers `star-harness-chatml` (see `chat_prompt`) through
llama-cpp-python's public handler registry, then runs that server unchanged; the server's
own chat formats stay available by name.

Only this module imports llama_cpp, and only the child process imports this module.
"""

from __future__ import annotations

import json
import runpy
import sys
import time
import weakref
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Final

from llama_cpp import Llama, LlamaRAMCache, LlamaState, llama_chat_format
from llama_cpp.llama_grammar import JSON_GBNF, LlamaGrammar, json_schema_to_gbnf

from .call_opening import split_opening
from .chat_prompt import (
    CALL_PREFIX,
    CHAT_FORMAT_NAME,
    END,
    MESSAGE_PREFIX,
    ChatPromptError,
    ToolFunction,
    forced_name,
    generation_prompt,
    json_response_schema,
    read_messages,
    read_tools,
    render,
)
from .prompt_states import plan_move, superseded

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
_GRAMMARS: dict[str, LlamaGrammar] = {}
"""A grammar by its schema: building one from a large `anyOf` schema costs more than a token,
and an NPC sends the same schema on every turn."""
_CALLS: dict[str, tuple[str, LlamaGrammar]] = {}
"""A forced call's fixed opening and the grammar of the rest, by its schema."""
_ANY_JSON: Final = LlamaGrammar.from_string(JSON_GBNF, verbose=False)


class _LeanStateCache(LlamaRAMCache):
    """A RAM state cache keeping no state a newer one makes redundant (see `prompt_states`):
    warmed NPC prefixes outlive a long conversation instead of being the first states
    evicted."""

    def __init__(self, capacity_bytes: int) -> None:
        super().__init__(capacity_bytes)
        self.last_superseded = 0
        """How many states the last save dropped as redundant."""

    def __setitem__(self, key: Sequence[int], value: LlamaState) -> None:
        newer = tuple(key)
        dropped = superseded(list(self.cache_state), newer)
        for old in dropped:
            del self.cache_state[tuple(old)]
        super().__setitem__(newer, value)
        self.last_superseded = len(dropped)


class _StateShelf:
    """The server's state cache, run by this handler instead of by `Llama.create_completion`:
    a state is saved when a request is about to overwrite it, not after every completion (see
    `prompt_states.plan_move`). With `verbose`, the log says each save and restore and what
    it cost."""

    def __init__(self, capacity_bytes: int, *, verbose: bool) -> None:
        self._states = _LeanStateCache(capacity_bytes)
        self._verbose = verbose

    def before(self, llama: Llama, prompt: str) -> None:
        """Save the live context or restore a saved one, as `prompt` needs."""
        # As create_completion tokenizes it: a beginning-of-text token only where the model
        # declares one.
        tokens = llama.tokenize(prompt.encode("utf-8"), add_bos=True, special=True)
        # `input_ids` is the whole context's buffer; the first `n_tokens` are evaluated.
        live: list[int] = llama.input_ids[: llama.n_tokens].tolist()
        states = self._states.cache_state
        move = plan_move(live, states, tokens)
        # Taken before the save, which may drop it from the cache as redundant.
        restored = None if move.restore is None else states[move.restore]
        if move.save_live:
            started = time.perf_counter()
            self._states[live] = llama.save_state()
            self._say(
                f"star-harness state cache: {len(states)} states, "
                f"{self._states.cache_size / 2**20:.0f} MiB; "
                f"{self._states.last_superseded} superseded "
                f"(saved {len(live)} tokens in {time.perf_counter() - started:.2f} s)"
            )
        if move.restore is not None and restored is not None:
            started = time.perf_counter()
            if move.restore in states:
                states.move_to_end(move.restore)
            llama.load_state(restored)
            self._say(
                f"star-harness state restored: {restored.n_tokens} tokens "
                f"in {time.perf_counter() - started:.2f} s"
            )

    def _say(self, line: str) -> None:
        if self._verbose:
            print(line, file=sys.stderr)


_SHELVES: weakref.WeakKeyDictionary[Llama, _StateShelf] = weakref.WeakKeyDictionary()


def _shelf(llama: Llama) -> _StateShelf | None:
    """The model's state shelf, taking over the server's plain RAM cache (`--cache_type ram`)
    on first use; None when the server keeps no states or keeps them on disk."""
    shelf = _SHELVES.get(llama)
    if shelf is None:
        cache = llama.cache
        if type(cache) is not LlamaRAMCache:
            return None
        shelf = _SHELVES[llama] = _StateShelf(cache.capacity_bytes, verbose=llama.verbose)
        llama.set_cache(None)
    return shelf


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
    try:
        functions = read_tools(tools)
        prompt = render(read_messages(messages), functions) + generation_prompt()
        forced = forced_name(tool_choice)
        answer_schema = json_response_schema(options.get("response_format"))
    except ChatPromptError as exc:
        raise ValueError(str(exc)) from None
    sampling = {key: options[key] for key in _SAMPLING if options.get(key) is not None}
    stops = [END, *([stop] if isinstance(stop, str) else (stop or []))]
    shelf = _shelf(llama)
    if shelf is not None:
        shelf.before(llama, prompt)
    if forced is None and tool_choice in ("auto", "required") and functions:
        forced = _choose(llama, prompt, functions, sampling, words=tool_choice == "auto")
    if forced is None:
        if grammar is None and answer_schema is not None:
            grammar = _grammar(answer_schema) if answer_schema else _ANY_JSON
        text_prompt = prompt + (f"{MESSAGE_PREFIX}\n" if functions else "")
        completion: Any = llama.create_completion(
            prompt=text_prompt,
            stream=stream,
            stop=stops,
            max_tokens=max_tokens,
            grammar=grammar,
            **sampling,
        )
        return _text_chunks(completion) if stream else _text_answer(completion)
    tool = next((tool for tool in functions if tool.name == forced), None)
    if tool is None:
        known = ", ".join(tool.name for tool in functions) or "none"
        raise ValueError(f"tool_choice names {forced!r}, which is not among the tools ({known})")
    opening, rest = _call_grammar(tool.parameters)
    call: Any = llama.create_completion(
        prompt=f"{prompt}{CALL_PREFIX}{tool.name}:\n{opening}",
        stream=stream,
        stop=stops,
        max_tokens=max_tokens,
        grammar=rest,
        **sampling,
    )
    if stream:
        return _call_chunks(tool.name, call, opening)
    return _call_answer(tool.name, call, opening)


def _choose(
    llama: Llama,
    prompt: str,
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


def _grammar(schema: dict[str, object]) -> LlamaGrammar:
    text = json.dumps(schema)
    grammar = _GRAMMARS.get(text)
    if grammar is None:
        grammar = _GRAMMARS[text] = LlamaGrammar.from_json_schema(text, verbose=False)
    return grammar


def _call_grammar(schema: dict[str, object]) -> tuple[str, LlamaGrammar]:
    """The call's opening for the prompt (see `call_opening`) and the grammar of the rest."""
    text = json.dumps(schema)
    known = _CALLS.get(text)
    if known is None:
        opening = split_opening(json_schema_to_gbnf(text))
        if opening is None:
            known = ("", _grammar(schema))
        else:
            known = (opening.text, LlamaGrammar.from_string(opening.grammar, verbose=False))
        _CALLS[text] = known
    return known


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
    name: str, chunks: Iterator[Mapping[str, Any]], opening: str
) -> Iterator[dict[str, Any]]:
    call_id = None
    for chunk in chunks:
        choice = chunk["choices"][0]
        if call_id is None:
            call_id = f"call_{name}_{chunk['id']}"
            # The opening the prompt ended with is the arguments' first text.
            function = {"name": name, "arguments": opening}
            start: dict[str, object] = {"index": 0, "id": call_id, "type": "function"}
            start["function"] = function
            delta = {"role": "assistant", "content": None, "tool_calls": [start]}
            yield {**_head(chunk), "choices": [_delta(delta)]}
        if choice["text"]:
            more = {"index": 0, "function": {"arguments": choice["text"]}}
            yield {**_head(chunk), "choices": [_delta({"tool_calls": [more]})]}
        if choice["finish_reason"] is not None:
            yield {**_head(chunk), "choices": [_delta({}, "tool_calls")]}


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
    llama_chat_format.register_chat_completion_handler(CHAT_FORMAT_NAME)(handle_chat)
    sys.argv[0] = "llama_cpp.server"
    runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
