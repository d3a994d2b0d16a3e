"""The model server's child process: llama-cpp-python's server with this package's chat handler.

Run as `python -m starharness.localmodel.llama_child FLAGS` with the flags of
`python -m llama_cpp.server`. It registers `star-harness-chatml` (see `chat_prompt`) through
llama-cpp-python's public handler registry, then runs that server unchanged; the server's
own chat formats stay available by name.

Only this module and `grammar_filter` and `jump_forward`, which it imports, import llama_cpp,
and only the child process imports them. A greedy forced call (a decision) is completed by
`jump_forward`, the text its grammar forces evaluated in batches; the rest by llama-cpp-python's
own completion.
"""

from __future__ import annotations

import ctypes
import json
import mmap
import runpy
import sys
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import llama_cpp
from llama_cpp import Llama, LlamaRAMCache, llama_chat_format
from llama_cpp.llama_grammar import JSON_GBNF, LlamaGrammar, json_schema_to_gbnf

from . import jump_forward
from .call_opening import split_opening
from .chat_prompt import (
    CALL_PREFIX,
    CHAT_FORMAT_NAME,
    END,
    MESSAGE_PREFIX,
    ChatPromptError,
    PromptPart,
    ToolFunction,
    forced_name,
    generation_parts,
    json_response_schema,
    read_messages,
    read_tools,
    render_parts,
)
from .forced_text import compact
from .grammar_filter import GrammarFilter
from .prompt_states import (
    buffer_size,
    plan_move,
    respelled,
    reusable_buffer,
    shared_prefix,
    superseded,
)

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


@dataclass(frozen=True, slots=True)
class _SavedState:
    """The model's state as llama.cpp serializes it (its attention cache and last logits):
    the first `size` bytes of `data`."""

    data: ctypes.Array[ctypes.c_uint8]
    size: int


_MAX_SPARE: Final = 2
"""Buffers of dropped states kept for the next saves: a switch between two conversations
drops one state (the saving conversation's older one) and saves one."""


class _StateShelf:
    """The server's state cache, run by this handler instead of by `Llama.create_completion`:
    a state is saved when a request is about to overwrite it, not after every completion (see
    `prompt_states.plan_move`), and a state a newer one makes redundant is dropped, so warmed
    NPC prefixes outlive a long conversation instead of being the first states evicted. With
    `verbose`, the log says each save and restore and what it cost.

    A state is llama.cpp's own bytes, saved and restored through its state API, not
    `Llama.save_state`: that one also copies `batch x vocabulary` floats of logits nothing
    reads here (74 MiB with a 150k vocabulary, not counted in the cache's budget) and copies
    the model state three times. A dropped state's buffer is kept for the next save
    (`prompt_states.reusable_buffer`), and a new one is mapped in whole (`_new_buffer`): on
    two cores, a 68 MB state written into fresh memory took 0.29-0.9 s, into a kept buffer
    0.013 s. Every turn of one NPC after another's pays
    one save and one restore (0.04 s) before the NPC's first word. The budget counts every
    buffer held, spare ones included, at its size."""

    def __init__(self, capacity_bytes: int, *, verbose: bool) -> None:
        self._capacity = capacity_bytes
        self._states: OrderedDict[tuple[int, ...], _SavedState] = OrderedDict()
        self._spare: list[ctypes.Array[ctypes.c_uint8]] = []
        self._bytes = 0
        self._verbose = verbose

    def keys(self) -> list[tuple[int, ...]]:
        """The saved states' tokens, most recently used last."""
        return list(self._states)

    def before(self, llama: Llama, tokens: Sequence[int]) -> None:
        """Save the live context or restore a saved one, as the prompt `tokens` needs."""
        live = _live(llama)
        move = plan_move(live, self._states, tokens)
        # Taken before the save, which may drop it from the cache as redundant (its buffer is
        # not written until it is loaded).
        restored = None if move.restore is None else self._states[move.restore]
        if move.save_live:
            started = time.perf_counter()
            dropped, kept = self._save(llama, tuple(live), busy=restored)
            self._say(
                f"star-harness state cache: {len(self._states)} states, "
                f"{self._bytes / 2**20:.0f} MiB; {dropped} superseded "
                f"(saved {len(live)} tokens in {time.perf_counter() - started:.2f} s, "
                f"{'into a kept buffer' if kept else 'into a new buffer'})"
            )
        if move.restore is not None and restored is not None:
            started = time.perf_counter()
            if move.restore in self._states:
                self._states.move_to_end(move.restore)
            self._load(llama, move.restore, restored, whole_prompt=len(tokens) == len(move.restore))
            self._say(
                f"star-harness state restored: {len(move.restore)} tokens "
                f"in {time.perf_counter() - started:.2f} s"
            )

    def _save(
        self, llama: Llama, key: tuple[int, ...], *, busy: _SavedState | None
    ) -> tuple[int, bool]:
        """Save the live state under `key`: how many saved states it made redundant, and
        whether it went into a kept buffer. `busy`'s buffer is not written."""
        size = llama_cpp.llama_state_get_size(llama.ctx)
        dropped = superseded(list(self._states), key)
        for old in dropped:
            self._drop(self._states.pop(tuple(old)).data, busy)
        free = [index for index, data in enumerate(self._spare) if not _same(data, busy)]
        index = reusable_buffer([len(self._spare[i]) for i in free], size)
        if index is None:
            data = _new_buffer(buffer_size(size))
            self._bytes += len(data)
        else:
            data = self._spare.pop(free[index])
        written = llama_cpp.llama_state_get_data(llama.ctx, data, len(data))
        if written > len(data):
            raise RuntimeError(f"llama.cpp wrote {written} bytes of state into {len(data)}")
        self._states[key] = _SavedState(data, written)
        while self._bytes > self._capacity and (self._spare or self._states):
            if self._spare:
                self._bytes -= len(self._spare.pop(0))
            else:
                _, evicted = self._states.popitem(last=False)
                self._bytes -= len(evicted.data)
        return len(dropped), index is not None

    def _drop(self, data: ctypes.Array[ctypes.c_uint8], busy: _SavedState | None) -> None:
        """Keep a dropped state's buffer for a later save, the largest `_MAX_SPARE` of them;
        `busy`'s (to be loaded still) is kept but not written by this save."""
        self._spare.append(data)
        self._spare.sort(key=len, reverse=True)
        while len(self._spare) > _MAX_SPARE:
            extra = next(
                (i for i in reversed(range(len(self._spare))) if not _same(self._spare[i], busy)),
                len(self._spare) - 1,
            )
            self._bytes -= len(self._spare.pop(extra))

    @staticmethod
    def _load(
        llama: Llama, key: tuple[int, ...], state: _SavedState, *, whole_prompt: bool
    ) -> None:
        if llama_cpp.llama_state_set_data(llama.ctx, state.data, state.size) != state.size:
            raise RuntimeError("llama.cpp refused a saved state")
        # A prompt that is exactly the saved tokens would be answered from the restored
        # logits without a decode (`Llama.load_state` marks them stale for that reason, in a
        # private field); the last token is left to be evaluated again instead.
        held = len(key) - 1 if whole_prompt else len(key)
        llama.input_ids[:held] = key[:held]
        llama.n_tokens = held

    def _say(self, line: str) -> None:
        if self._verbose:
            print(line, file=sys.stderr)


def _live(llama: Llama) -> list[int]:
    # `input_ids` is the whole context's buffer; the first `n_tokens` are evaluated.
    return llama.input_ids[: llama.n_tokens].tolist()


def prompt_tokens(
    llama: Llama, prompt: Sequence[PromptPart], shelf: _StateShelf | None
) -> list[int]:
    """`prompt`'s tokens as the completion evaluates them: as the tokenizer cuts it (with a
    beginning-of-text token where the model declares one, as `create_completion` does; only
    markers read as control tokens), begun instead with the tokens the live context or a saved
    state spells the same text with, the one that keeps the most (`prompt_states.respelled`)."""
    canonical = llama.tokenize(b"", add_bos=True, special=True)
    lead = len(canonical)
    text = ""  # neighbouring text parts are cut as one run, as the tokenizer cuts a string
    for part in [*prompt, PromptPart("", marker=True)]:
        if not part.marker:
            text += part.text
            continue
        if text:
            canonical += llama.tokenize(text.encode("utf-8"), add_bos=False, special=False)
            text = ""
        if part.text:
            canonical += llama.tokenize(part.text.encode("utf-8"), add_bos=False, special=True)
    candidates = [_live(llama), *(shelf.keys() if shelf is not None else ())]
    # What is left to evaluate: a respelling must leave less than the tokenizer's cut leaves
    # after the context that shares most of it.
    best = canonical
    left = len(canonical) - max(shared_prefix(canonical, held) for held in candidates)
    for held in candidates:
        found = respelled(canonical, held, _piece_reader(llama), lead=lead)
        if found is not None and len(found) - shared_prefix(found, held) < left:
            best, left = found, len(found) - shared_prefix(found, held)
    return best


_PIECES: weakref.WeakKeyDictionary[Llama, dict[int, bytes]] = weakref.WeakKeyDictionary()


def _piece_reader(llama: Llama) -> Callable[[int], bytes]:
    """A token's bytes, remembered per model; a control token's are `0xFF` and its number,
    which no UTF-8 text spells, so text that spells `<|im_start|>` never matches one."""
    known = _PIECES.get(llama)
    if known is None:
        known = _PIECES[llama] = {}
    vocab = llama_cpp.llama_model_get_vocab(llama.model)
    if vocab is None:
        raise ValueError("the model has no vocabulary")

    def piece(token: int) -> bytes:
        found = known.get(token)
        if found is None and llama_cpp.llama_vocab_is_control(vocab, token):
            found = known[token] = b"\xff" + str(token).encode()
        if found is None:
            buffer = ctypes.create_string_buffer(64)
            size = llama_cpp.llama_token_to_piece(vocab, token, buffer, len(buffer), 0, True)
            if size < 0:  # the piece is longer: llama.cpp says how long
                buffer = ctypes.create_string_buffer(-size)
                size = llama_cpp.llama_token_to_piece(vocab, token, buffer, len(buffer), 0, True)
            if size < 0:
                raise ValueError(f"llama.cpp gives no piece for token {token}")
            found = known[token] = buffer.raw[:size]
        return found

    return piece


def _new_buffer(size: int) -> ctypes.Array[ctypes.c_uint8]:
    """`size` bytes for a state, mapped in by the kernel at once where it can (Linux's
    `MAP_POPULATE`). In the model server's process on two cores, a 70 MB `ctypes` array took
    0.62-0.73 s (its pages faulted in one by one as it was zeroed), a populated mapping
    0.016-0.021 s; either is then written in 0.013 s."""
    populate: int = getattr(mmap, "MAP_POPULATE", 0)
    anonymous: int = getattr(mmap, "MAP_ANONYMOUS", 0)
    if populate and anonymous:
        region = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | anonymous | populate)
        return (ctypes.c_uint8 * size).from_buffer(region)
    return (ctypes.c_uint8 * size)()


def _same(data: ctypes.Array[ctypes.c_uint8], state: _SavedState | None) -> bool:
    return state is not None and data is state.data


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
        prompt = (*render_parts(read_messages(messages), functions), *generation_parts())
        forced = forced_name(tool_choice)
        answer_schema = json_response_schema(options.get("response_format"))
    except ChatPromptError as exc:
        raise ValueError(str(exc)) from None
    sampling = {key: options[key] for key in _SAMPLING if options.get(key) is not None}
    stops = [END, *([stop] if isinstance(stop, str) else (stop or []))]
    shelf = _shelf(llama)
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
            return _checked(_text_chunks(completion), checked)
        return _text_answer(_whole(completion, checked))
    tool = next((tool for tool in functions if tool.name == forced), None)
    if tool is None:
        known = ", ".join(tool.name for tool in functions) or "none"
        raise ValueError(f"tool_choice names {forced!r}, which is not among the tools ({known})")
    opening, rest = _call_grammar(tool.parameters)
    call_opening = PromptPart(f"{CALL_PREFIX}{tool.name}:\n{opening}")
    call_prompt = _ready(llama, (*prompt, call_opening), shelf)
    call: Any
    if jump_forward.applies(llama, sampling, stops, END):
        _, checked = _constrained(llama, compact(rest), sampling)
        assert checked is not None, "a greedy completion's grammar is always a filter"
        chunks = jump_forward.complete(
            llama, call_prompt, checked, max_tokens=max_tokens, model=sampling.get("model")
        )
        call = chunks if stream else _joined(chunks)
    else:
        constrained, checked = _constrained(llama, rest, sampling)
        call = llama.create_completion(
            prompt=call_prompt, stream=stream, stop=stops, max_tokens=max_tokens, **constrained
        )
    if stream:
        return _checked(_call_chunks(tool.name, call, opening), checked)
    return _call_answer(tool.name, _whole(call, checked), opening)


def _ready(llama: Llama, prompt: Sequence[PromptPart], shelf: _StateShelf | None) -> list[int]:
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
    """The call's opening for the prompt (see `call_opening`) and the grammar of the rest."""
    text = json.dumps(schema)
    known = _CALLS.get(text)
    if known is None:
        opening = split_opening(_grammar(schema))
        known = ("", _grammar(schema)) if opening is None else (opening.text, opening.grammar)
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
