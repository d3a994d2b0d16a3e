"""Step models and script files: shorthand, validation errors, YAML and JSON."""

import json
from pathlib import Path

import httpx
import pytest
from mockllm_client import post_chat
from pydantic import ValidationError

from starharness.mockllm import (
    BEHAVIOURS,
    MockLlmServer,
    RateLimit,
    ScriptFileError,
    Stall,
    Success,
    ToolCalls,
    load_script_file,
    parse_behaviour_list,
    parse_script,
    parse_step,
    parse_steps,
)


def test_every_behaviour_of_the_issue_has_a_step() -> None:
    wanted = {
        "success", "reasoning_success", "tool_call_success", "max_tokens", "slow_success",
        "stall", "connection_reset", "stream_disconnect", "empty_body", "malformed_json",
        "malformed_event", "wrong_content_type", "rate_limit", "server_error",
        "service_unavailable", "auth_error", "invalid_request", "context_overflow",
        "quota_exceeded",
    }  # fmt: skip

    assert set(BEHAVIOURS) == wanted
    for name in BEHAVIOURS:
        assert parse_step(name).behaviour == name


def test_steps_parse_from_names_mappings_and_models() -> None:
    steps = parse_steps(
        [
            "success",
            {"behaviour": "rate_limit", "retry_after_s": 3},
            Stall(phase="mid_stream"),
            {
                "behaviour": "tool_call_success",
                "calls": [{"name": "speak", "arguments": {"line": "hi"}}],
            },
        ]
    )

    assert steps[0] == Success()
    assert steps[1] == RateLimit(retry_after_s=3)
    assert isinstance(steps[2], Stall)
    assert steps[2].phase == "mid_stream"
    assert isinstance(steps[3], ToolCalls)
    assert json.loads(steps[3].calls[0].arguments) == {"line": "hi"}


@pytest.mark.parametrize(
    ("value", "fragment"),
    [
        ("sucess", "sucess"),
        ({"behaviour": "success", "txt": "typo"}, "txt"),
        ({"behaviour": "success", "chunk_size": 0}, "chunk_size"),
        ({"behaviour": "stall", "phase": "sometime"}, "phase"),
        ({"behaviour": "tool_call_success", "calls": []}, "calls"),
    ],
)
def test_bad_steps_name_the_problem(value: object, fragment: str) -> None:
    with pytest.raises(ValidationError, match=fragment):
        parse_step(value)


def test_behaviour_list() -> None:
    assert parse_behaviour_list("success, stall") == (Success(), Stall())
    with pytest.raises(ValueError, match="empty behaviour"):
        parse_behaviour_list("success,,stall")
    with pytest.raises(ValueError, match="unknown behaviour 'nope'; known: success,"):
        parse_behaviour_list("nope")


def test_a_bare_list_is_a_script_for_each_conversation() -> None:
    script = parse_script(["success", "stall"])

    assert script.each == [Success(), Stall()]
    assert script.sessions == {}


def test_yaml_script_file(tmp_path: Path) -> None:
    path = tmp_path / "script.yaml"
    path.write_text(
        """
repeat_last: true
sessions:
  npc-1:
    - behaviour: success
      text: Hello from YAML
    - rate_limit
next:
  - [success]
each:
  - behaviour: reasoning_success
    reasoning: thinking
""",
        encoding="utf-8",
    )

    script = load_script_file(path)

    assert script.repeat_last
    assert script.sessions["npc-1"][0] == Success(text="Hello from YAML")
    assert script.next == [[Success()]]
    assert script.each is not None
    assert script.each[0].behaviour == "reasoning_success"


def test_json_script_file(tmp_path: Path) -> None:
    path = tmp_path / "script.json"
    path.write_text(json.dumps({"sessions": {"a": ["success"]}}), encoding="utf-8")

    assert load_script_file(path).sessions == {"a": [Success()]}


@pytest.mark.parametrize(
    ("name", "content", "fragment"),
    [
        ("bad.yaml", "sessions: [unclosed", "not valid YAML"),
        ("bad.json", "{", "not valid JSON"),
        ("bad.yml", "sessions:\n  a: [nope]\n", "nope"),
        ("bad2.yaml", "sesions: {}\n", "sesions"),
    ],
)
def test_bad_script_files_name_file_and_problem(
    tmp_path: Path, name: str, content: str, fragment: str
) -> None:
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")

    with pytest.raises(ScriptFileError, match=fragment) as failure:
        load_script_file(path)

    assert str(path) in str(failure.value)


def test_missing_script_file(tmp_path: Path) -> None:
    with pytest.raises(ScriptFileError, match="cannot read"):
        load_script_file(tmp_path / "absent.yaml")


async def test_loaded_script_routes_like_the_python_api(http: httpx.AsyncClient) -> None:
    script = parse_script(
        {
            "sessions": {"bound": [{"behaviour": "success", "text": "bound"}]},
            "next": [[{"behaviour": "success", "text": "claimed"}]],
            "each": [{"behaviour": "success", "text": "copy"}],
        }
    )
    async with MockLlmServer() as mock:
        mock.load_script(script)
        texts = [
            (await post_chat(http, mock.base_url, session=s)).json()["choices"][0]["message"][
                "content"
            ]
            for s in ("x", "bound", "y")
        ]
        mock.assert_complete()

    assert texts == ["claimed", "bound", "copy"]
