"""The one module that maps session events to frames, fed logged events directly."""

from __future__ import annotations

import asyncio
import html
import json
from itertools import pairwise
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tinygame import GAME

from starharness.npc import ActionAttempt, GameKit
from starharness.npc.encounter import FrameMapper, LineStream
from starharness.npc.encounter.entities import decode_entities, looks_like_arguments
from starharness.npc.encounter.speech_stream import _may_become_call  # pyright: ignore[reportPrivateUsage]
from starharness.npc.frames import Frame, encode
from starharness.npc.speech import SpokenOption
from starharness.runtime.session import SessionEvent
from starharness.runtime.session import event_types as ev

KIT = GameKit.of(GAME)


class Recorder:
    def __init__(self) -> None:
        self.frames: list[dict[str, Any]] = []
        self.options: list[tuple[SpokenOption, ...]] = []
        self.mapper = FrameMapper("e1", KIT.protocol, KIT.style, self.send, self.options.append)
        self._seq = 0

    def send(self, frame: Frame) -> None:
        self.frames.append(json.loads(encode(frame)))

    def log(self, type_: str, **data: Any) -> None:
        self.mapper.on_event(SessionEvent(self._seq, 0, type_, data))
        self._seq += 1

    def delta(self, text: str, index: int = 0, name: str | None = None) -> None:
        chunk = {"type": "tool-call-delta", "index": index, "id": None, "name": name}
        self.log(ev.ASSISTANT_CHUNK, chunk={**chunk, "arguments_delta": text})

    def said(self) -> str:
        return "".join(f["text"] for f in self.frames if f["t"] == "say.delta")


def _speak(recorder: Recorder, arguments: str, call_id: str = "c1") -> None:
    call = {"id": call_id, "name": "talk", "arguments": arguments}
    recorder.log(ev.ASSISTANT_MESSAGE, text="", tool_calls=(call,))
    recorder.log(ev.TOOL_CALL, call_id=call_id, name="talk", arguments=arguments)
    recorder.log(ev.TOOL_RESULT, call_id=call_id, name="talk", content="ok", is_error=False)


async def test_a_retry_after_output_does_not_resend_what_was_said() -> None:
    recorder = Recorder()
    arguments = json.dumps({"line": "Hello there, traveller.", "mood": "happy"})
    recorder.log(ev.STEP_START, turn=1, step=1)
    recorder.delta(arguments[:5], name="talk")
    recorder.delta(arguments[5:20])
    await asyncio.sleep(0)  # deltas after a line's first leave at the end of the loop step
    said_before = recorder.said()
    assert said_before == "Hello ther"
    recorder.log(ev.LLM_RETRY, attempt=1, after_output=True)
    recorder.delta("", name="talk")
    for start in range(0, len(arguments), 3):
        recorder.delta(arguments[start : start + 3])
    _speak(recorder, arguments)
    recorder.log(ev.TURN_END, turn=1, reason="completed")
    assert recorder.said() == "Hello there, traveller."
    kinds = [f["t"] for f in recorder.frames]
    assert kinds[-3:] == ["say.end", "options", "encounter.idle"]
    assert recorder.frames[-3]["mood"] == "happy"


async def test_a_line_not_streamed_is_sent_whole_when_the_call_completes() -> None:
    recorder = Recorder()
    recorder.log(ev.STEP_START, turn=1, step=1)
    _speak(recorder, json.dumps({"line": "All at once.", "options": ["Yes", "No"]}))
    assert recorder.said() == "All at once."
    assert recorder.options == [(SpokenOption("1", "Yes"), SpokenOption("2", "No"))]


async def test_a_failed_speech_closes_its_line_without_options_and_errors_map_to_codes(
    caplog: pytest.LogCaptureFixture,
) -> None:
    recorder = Recorder()
    recorder.log(ev.STEP_START, turn=1, step=1)
    recorder.delta('{"line": "Half a', name="talk")
    recorder.log(ev.LLM_RETRY, attempt=1, after_output=True)
    recorder.log(ev.TURN_END, turn=1, reason="error", error="HTTP 503", kind="ServerError")
    assert [f["t"] for f in recorder.frames] == ["say.delta", "say.end", "error", "encounter.idle"]
    # The player sees that there is no answer; the cause is for the operator's log.
    assert (
        recorder.frames[2]["code"] == "llm_unavailable"
        and "HTTP 503" not in recorder.frames[2]["message"]
        and "try again" in recorder.frames[2]["message"]
    )
    assert "HTTP 503" in caplog.text
    limit = Recorder()
    limit.log(ev.TURN_END, turn=1, reason="error", error="too many steps", kind="limit")
    internal = Recorder()
    internal.log(ev.TURN_END, turn=1, reason="error", error="boom", kind="internal")
    assert limit.frames[0]["code"] == "limit" and internal.frames[0]["code"] == "internal"
    assert "boom" not in internal.frames[0]["message"]


async def test_other_tools_are_not_spoken_and_refusals_become_action_frames() -> None:
    recorder = Recorder()
    recorder.log(ev.STEP_START, turn=1, step=1)
    recorder.delta('{"line": "not a speech"}', name="sell_bread")
    recorder.mapper.on_attempt(ActionAttempt("sell_bread", False, "too poor", {}, {"ok": False}))
    assert recorder.frames == [
        {"t": "action", "id": "e1", "name": "sell_bread", "ok": False, "summary": "too poor"}
    ]


@given(
    line=st.text(max_size=40),
    cuts=st.lists(st.integers(min_value=0, max_value=200), max_size=8),
    retry_at=st.integers(min_value=0, max_value=200),
)
def test_a_streamed_line_is_never_retracted_or_repeated(
    line: str, cuts: list[int], retry_at: int
) -> None:
    arguments = json.dumps({"mood": "calm", "line": line})
    stream = LineStream("line")
    sent: list[str] = []
    points = sorted({0, len(arguments), *(c % (len(arguments) + 1) for c in cuts)})
    pieces = [arguments[a:b] for a, b in pairwise(points)]
    retry = retry_at % (len(pieces) + 1)
    for piece in pieces[:retry]:
        sent.append(stream.feed(piece))
    stream.restart()
    for piece in pieces:
        sent.append(stream.feed(piece))
    streamed = "".join(sent)
    assert stream.sent == streamed
    said = decode_entities(line)  # what the mapper completes the line with
    if stream.is_call:
        # An opening like call syntax is never streamed.
        assert streamed == "" and looks_like_arguments(said)
        return
    # What streamed begins the line and the completed call sends the rest, once.
    assert streamed + stream.remainder(said) == said
    if "&" not in line and not looks_like_arguments(line) and not _may_become_call(line):
        # Words are streamed as they come, not held until the call completes (a possible
        # character reference is held on purpose: see the entity tests).
        assert streamed == line


@given(
    key=st.from_regex(r"\A\w{1,12}\Z"),
    rest=st.text(max_size=30),
    opening=st.sampled_from(
        ["{", "[", '"KEY": "', '"KEY": {', '"KEY"KEY', "functions.KEY", "<tool_call>"]
    ),
    cut=st.integers(min_value=1, max_value=6),
)
def test_a_line_that_opens_like_call_syntax_is_never_streamed(
    key: str, rest: str, opening: str, cut: int
) -> None:
    line = opening.replace("KEY", key) + rest
    arguments = json.dumps({"line": line, "mood": "calm"})
    stream = LineStream("line")
    sent = [stream.feed(arguments[i : i + cut]) for i in range(0, len(arguments), cut)]
    assert "".join(sent) == "" and stream.sent == ""
    assert stream.is_call


@given(
    said=st.text(alphabet=st.sampled_from("ab '\"<>;#"), max_size=20),
    escapes=st.integers(min_value=0, max_value=2),
    cuts=st.lists(st.integers(min_value=0, max_value=300), max_size=10),
)
def test_a_line_escaped_once_or_twice_is_heard_as_written(
    said: str, escapes: int, cuts: list[int]
) -> None:
    line = said
    for _ in range(escapes):
        line = html.escape(line)  # what a template that escapes the conversation teaches
    assert decode_entities(line) == said
    arguments = json.dumps({"mood": "calm", "line": line})
    stream = LineStream("line")
    points = sorted({0, len(arguments), *(c % (len(arguments) + 1) for c in cuts)})
    streamed = "".join(stream.feed(arguments[a:b]) for a, b in pairwise(points))
    if stream.is_call:
        assert streamed == "" and looks_like_arguments(said)
        return
    assert streamed + stream.remainder(said) == said
    if said.endswith(("a", "b")) and not looks_like_arguments(said) and not _may_become_call(said):
        # No entity is left half-read once a plain letter follows it, at any depth.
        assert streamed == said


async def test_fragments_arriving_together_leave_as_one_frame_after_the_first() -> None:
    recorder = Recorder()
    recorder.log(ev.STEP_START, turn=1, step=1)
    recorder.delta('{"line": "Fi', name="talk")
    assert recorder.said() == "Fi"  # the first words leave at once
    for piece in ("rst ", "and ", "then "):
        recorder.delta(piece)
    assert recorder.said() == "Fi"
    await asyncio.sleep(0)
    assert [f["text"] for f in recorder.frames] == ["Fi", "rst and then "]
    recorder.delta("more")
    recorder.log(ev.TURN_END, turn=1, reason="completed")  # held text goes before say.end
    assert [f["t"] for f in recorder.frames][-4:] == [
        "say.delta", "say.delta", "say.end", "encounter.idle"
    ]  # fmt: skip
    assert recorder.said() == "First and then more"


async def test_a_label_cut_at_the_length_limit_ends_on_a_whole_word() -> None:
    """A grammar stops a long label at the game's limit mid-word ("... It's a 4"); the player
    reads it cut back to its last whole word, the same label the encounter remembers."""
    from dataclasses import replace

    style = replace(KIT.style, contract=replace(KIT.style.contract, max_label_chars=24))
    recorder = Recorder()
    recorder.mapper = FrameMapper("e1", KIT.protocol, style, recorder.send, recorder.options.append)
    recorder.log(ev.STEP_START, turn=1, step=1)
    cut = "Heard of the shortcut? 4"  # 24 characters: stopped at the limit
    _speak(recorder, json.dumps({"line": "Well?", "options": [cut, "No"]}))
    shown = [item["label"] for f in recorder.frames if f["t"] == "options" for item in f["items"]]
    assert shown == ["Heard of the shortcut?\u2026", "No"]
    assert recorder.options == [(SpokenOption("1", shown[0]), SpokenOption("2", "No"))]
