"""docs/runtime.md's reference (hooks, dispatch modes, session events) is made from the code."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from starharness.runtime import reference
from starharness.runtime.session import event_types as ev

DOC = Path(__file__).resolve().parents[2] / "docs" / "runtime.md"
RUNTIME = Path(reference.__file__).resolve().parent
REGENERATE = "uv run python -m starharness.runtime.reference --write docs/runtime.md"


def test_the_checked_in_reference_is_a_fresh_generation() -> None:
    checked_in = reference.checked_in(DOC.read_text(encoding="utf-8"))
    assert checked_in, "docs/runtime.md has no generated reference section"
    assert checked_in == reference.generate(), f"docs/runtime.md is stale; run: {REGENERATE}"


def test_every_hook_and_session_event_is_documented() -> None:
    text = reference.generate()
    hooks = reference.find_hooks()
    names = {hook.name for hook in hooks}
    assert {"agent/pre-step", "agent/request", "agent/turn-stopping"} <= names
    assert {"tools/pre-execute", "tools/post-execute", "tool/result"} <= names
    assert {"approval/asked", "approval/decided"} <= names
    assert all(hook.doc for hook in hooks), [h.constant for h in hooks if not h.doc]
    for mode in ("emit", "serial", "bail", "waterfall"):
        assert f"| `{mode}` |" in text
    for type_ in ev.PAYLOADS:
        assert f"- `{type_}` " in text


def test_a_new_hook_in_any_package_changes_the_reference(tmp_path: Path) -> None:
    copy = tmp_path / "runtime"
    shutil.copytree(RUNTIME, copy, ignore=shutil.ignore_patterns("__pycache__"))
    extra = copy / "tools" / "extra_hooks.py"
    extra.write_text(
        'from ..kernel import Event\n\nEXTRA: Event[int] = Event("tools/extra")\n"""Counted."""\n',
        encoding="utf-8",
    )
    found = {hook.name: hook for hook in reference.find_hooks(copy)}
    assert found["tools/extra"].doc == "Counted."
    assert found["tools/extra"].module == "starharness.runtime.tools.extra_hooks"
    assert set(found) - {"tools/extra"} == {hook.name for hook in reference.find_hooks()}


def test_the_module_entry_point_rewrites_a_stale_section(tmp_path: Path) -> None:
    stale = tmp_path / "runtime.md"
    stale.write_text(f"# Doc\n\n{reference.BEGIN}\nold\n{reference.END}\n", encoding="utf-8")
    command = [sys.executable, "-m", "starharness.runtime.reference", "--write", str(stale)]
    subprocess.run(command, check=True, capture_output=True, timeout=60)
    assert reference.checked_in(stale.read_text(encoding="utf-8")) == reference.generate()
