"""The bridge documentation keeps up with the code: every error, tool and method."""

from __future__ import annotations

from pathlib import Path

from starharness.godot import ALLOWED_METHODS, TOOL_NAMES, GodotErrorCode, HandshakeFailure


def test_the_docs_explain_every_error_and_tool() -> None:
    docs = (Path(__file__).resolve().parents[2] / "docs" / "godot-bridge.md").read_text()
    troubleshooting = docs[docs.index("## Troubleshooting") :]

    for code in GodotErrorCode:
        assert f"(`{code.value}`)" in troubleshooting, f"{code.value} is not in the table"
    for failure in HandshakeFailure:
        assert f"(`{failure.value}`)" in troubleshooting, f"{failure.value} is not in the table"
    for name in TOOL_NAMES:
        assert f"`{name}`" in docs
    for method in ALLOWED_METHODS:
        assert f"| `{method}` |" in docs
