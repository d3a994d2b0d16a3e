"""What the session-protocol tests share: a home, a project folder and a patch at the mock."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

KEY_VARIABLES = ("DEEPSEEK_API_KEY", "DEEPSEEK_BASE_URL", "OPENAI_API_KEY", "OPENAI_BASE_URL")


def mock_rows(base_url: str, project: Path | None) -> list[dict[str, Any]]:
    """The llm row at the mock (fast retries) and, with a project, the file tools on it."""
    rows: list[dict[str, Any]] = [
        {
            "id": "llm",
            "config": {
                "provider": "openai-compatible",
                "model": "mock-model",
                "base_url": base_url,
                "retry": {"base_delay_s": 0.001, "max_delay_s": 0.01, "jitter": 0},
            },
        }
    ]
    if project is not None:
        rows.append(
            {
                "id": "workspace",
                "plugin": "starharness.runtime.workspace:WorkspacePlugin",
                "config": {"root": str(project)},
                "before": "agents",
            }
        )
    return rows


def write_patch(folder: Path, rows: list[dict[str, Any]], name: str = "test.patch.yml") -> Path:
    path = folder / name
    path.write_text(json.dumps(rows), encoding="utf-8")
    return path


def child_env(home: Path) -> dict[str, str]:
    """The environment of a child `star-harness`: our home, no provider keys."""
    env = {k: v for k, v in os.environ.items() if k not in KEY_VARIABLES}
    env["STAR_HARNESS_HOME"] = str(home)
    return env


def call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"behaviour": "tool_call_success", "calls": [{"name": name, "arguments": arguments}]}


def say(text: str) -> dict[str, Any]:
    return {"behaviour": "success", "text": text}
