"""Starting a profile: setup in row order on forks, disposal in reverse, rollback on failure."""

from __future__ import annotations

import asyncio
import textwrap
from pathlib import Path

import pytest
from pydantic import BaseModel, ConfigDict

from starharness.runtime.config import (
    PluginStartError,
    ProfileError,
    ResolvedProfile,
    load_profile,
    start,
)
from starharness.runtime.kernel import Context, NoConfig, Plugin, ServiceKey

JOURNAL: ServiceKey[list[str]] = ServiceKey("test-start-journal")
GADGET: ServiceKey[str] = ServiceKey("test-gadget")


# What the Journal plugins of the running test created, so a test can read a journal even
# when `start` fails; and an event a hanging setup sets once it is parked.
JOURNALS: list[list[str]] = []
PARKED: list[asyncio.Event] = []


@pytest.fixture(autouse=True)
def _fresh_observations() -> None:
    JOURNALS.clear()
    PARKED.clear()
    PARKED.append(asyncio.Event())


class Journal(Plugin[NoConfig]):
    provides = (JOURNAL,)

    async def setup(self, ctx: Context, config: NoConfig) -> None:
        journal = [f"setup {ctx.name}"]
        JOURNALS.append(journal)
        ctx.provide(JOURNAL, journal)


class StepConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")
    fail: bool = False
    hang: bool = False


class Step(Plugin[StepConfig]):
    """Logs its setup and disposal; registers an effect that disposal must undo."""

    Config = StepConfig
    inject = (JOURNAL,)

    async def setup(self, ctx: Context, config: StepConfig) -> None:
        journal = ctx.get(JOURNAL)
        ctx.scope.add(lambda: journal.append(f"dispose {ctx.name}"))
        if config.hang:
            PARKED[0].set()
            await asyncio.Event().wait()
        if config.fail:
            raise RuntimeError(f"{ctx.name} cannot start:\nsecond line")
        journal.append(f"setup {ctx.name}")


class Gadget(Plugin[NoConfig]):
    provides = (GADGET,)

    async def setup(self, ctx: Context, config: NoConfig) -> None:
        ctx.provide(GADGET, "gadget")


class Liar(Plugin[NoConfig]):
    provides = (GADGET,)

    async def setup(self, ctx: Context, config: NoConfig) -> None:
        pass


ME = __name__


def profile(tmp_path: Path, rows: str) -> ResolvedProfile:
    path = tmp_path / "start.yml"
    body = textwrap.indent(textwrap.dedent(rows).strip(), " " * 6)
    path.write_text(f"bundles:\n  - name: b\n    rows:\n{body}\n", encoding="utf-8")
    return load_profile(path, home=tmp_path / "home")


ROWS = f"""
- {{id: journal, plugin: '{ME}:Journal'}}
- {{id: a, plugin: '{ME}:Step'}}
- {{id: gadget, plugin: '{ME}:Gadget'}}
- {{id: b, plugin: '{ME}:Step'}}
"""


async def test_rows_start_in_order_and_dispose_in_reverse(tmp_path: Path) -> None:
    runtime = await start(profile(tmp_path, ROWS))
    journal = runtime.ctx.get(JOURNAL)
    assert journal == ["setup journal", "setup a", "setup b"]
    assert runtime.ctx.get(GADGET) == "gadget"
    assert list(runtime.plugins) == ["journal", "a", "gadget", "b"]
    assert isinstance(runtime.plugins["a"], Step)

    await runtime.aclose()

    assert journal[3:] == ["dispose b", "dispose a"]
    assert runtime.closed
    assert not runtime.ctx.has(GADGET)  # what the plugins provided is gone again
    await runtime.aclose()  # a second close is harmless
    assert journal[5:] == []


async def test_runtime_is_an_async_context_manager(tmp_path: Path) -> None:
    async with await start(profile(tmp_path, ROWS)) as runtime:
        journal = runtime.ctx.get(JOURNAL)
    assert journal[-2:] == ["dispose b", "dispose a"]


async def test_a_failing_setup_rolls_back_and_names_the_row(tmp_path: Path) -> None:
    rows = ROWS + f"- {{id: broken, plugin: '{ME}:Step', config: {{fail: true}}}}"

    with pytest.raises(PluginStartError) as caught:
        await start(profile(tmp_path, rows))

    assert str(caught.value) == (
        f"row 'broken' ({ME}:Step) failed to start: broken cannot start:; second line"
    )
    assert isinstance(caught.value, ProfileError)
    assert isinstance(caught.value.__cause__, RuntimeError)
    (journal,) = JOURNALS
    assert journal[-3:] == ["dispose broken", "dispose b", "dispose a"]


async def test_a_plugin_that_does_not_provide_what_it_declares(tmp_path: Path) -> None:
    resolved = profile(tmp_path, f"- {{id: liar, plugin: '{ME}:Liar'}}")
    with pytest.raises(PluginStartError, match="'test-gadget' but its setup did not provide it"):
        await start(resolved)


async def test_two_rows_providing_one_service_conflict_at_start(tmp_path: Path) -> None:
    rows = ROWS + f"- {{id: gadget-2, plugin: '{ME}:Gadget'}}"
    with pytest.raises(PluginStartError) as caught:
        await start(profile(tmp_path, rows))
    message = str(caught.value)
    assert message.startswith(f"row 'gadget-2' ({ME}:Gadget) failed to start:")
    assert "'test-gadget' is already provided" in message
    (journal,) = JOURNALS
    assert journal[-2:] == ["dispose b", "dispose a"]


async def test_cancelling_start_disposes_what_started(tmp_path: Path) -> None:
    rows = ROWS + f"- {{id: slow, plugin: '{ME}:Step', config: {{hang: true}}}}"
    task = asyncio.create_task(start(profile(tmp_path, rows)))
    await asyncio.wait_for(PARKED[0].wait(), timeout=10)

    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task

    (journal,) = JOURNALS
    assert journal[-3:] == ["dispose slow", "dispose b", "dispose a"]
