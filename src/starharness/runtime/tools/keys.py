"""The tools package's service key (declared here, beside the plugin that provides it)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..kernel import ServiceKey

if TYPE_CHECKING:
    from .registry import ToolRegistry

TOOLS: ServiceKey[ToolRegistry] = ServiceKey(
    "tools", "add the tools plugin to the profile", provider="starharness.runtime.tools:ToolsPlugin"
)
