"""The web UI's work panel in a real Chromium: the plan updates live as todo_write changes it,
a background job shows its command, state, exit code and output, and both come back after a
reload; at a desktop and a phone-sized window nothing overlaps or is cut off."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Page, expect
from web_support import launch_chromium, require_chromium, screenshot_path, watch_page_errors
from webui_support import web_stack

from session_protocol_support import call, mock_rows, say
from starharness.mockllm import MockLlmServer

pytestmark = pytest.mark.browser
expect.set_options(timeout=20_000)

JOB = "echo building; echo 'step two'; exit 3"


@pytest.fixture
async def mock() -> AsyncIterator[MockLlmServer]:
    async with MockLlmServer() as server:
        yield server


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("STAR_HARNESS_HOME", str(home))
    return home


def _rows(base_url: str, project: Path) -> list[dict[str, Any]]:
    return [
        *mock_rows(base_url, project),
        {
            "id": "sandbox",
            "plugin": "starharness.runtime.sandbox:SandboxPlugin",
            "config": {"providers": ["bubblewrap", "landlock"], "tier": "workspace-write"},
            "before": "agents",
        },
        {"id": "goals", "plugin": "starharness.runtime.context:GoalsPlugin"},
    ]


def _plan(revision: int, *statuses: str) -> dict[str, Any]:
    texts = ["Write the plan", "Start the build", "Read its output"]
    items = [
        {"id": str(n + 1), "text": text, "status": status}
        for n, (text, status) in enumerate(zip(texts, statuses, strict=True))
    ]
    return call("todo_write", {"items": items, "expected_revision": revision})


_BOXES = """() => {
  const box = (node) => {
    if (!node || node.hidden || node.closest("[hidden]")) return null;
    const r = node.getBoundingClientRect();
    return { left: r.left, top: r.top, right: r.right, bottom: r.bottom };
  };
  const q = (s) => box(document.querySelector(s));
  const cut = [...document.querySelectorAll(
      ".step-text, .step-state, .job-head, #plan-title, .tabs button, #send")]
    .filter((n) => n.scrollWidth > n.clientWidth + 1).map((n) => n.className || n.id);
  return {
    width: innerWidth, height: innerHeight,
    pageWidth: document.documentElement.scrollWidth,
    header: q(".top"), sidebar: q("#tab-chat .sidebar"), title: q("#session-title"),
    work: q("#work"), plan: q("#plan"), jobs: q("#jobs"), messages: q("#messages"),
    composer: q("#composer"), send: q("#send"), cut,
  };
}"""


def _overlap(a: dict[str, float], b: dict[str, float]) -> bool:
    return (
        a["left"] < b["right"] - 0.5
        and b["left"] < a["right"] - 0.5
        and a["top"] < b["bottom"] - 0.5
        and b["top"] < a["bottom"] - 0.5
    )


async def _assert_laid_out(page: Page, where: str) -> None:
    boxes: dict[str, Any] = await page.evaluate(_BOXES)
    assert boxes["pageWidth"] <= boxes["width"], f"the page scrolls sideways {where}: {boxes}"
    assert boxes["cut"] == [], f"text is cut off {where}: {boxes['cut']}"
    parts = ["header", "sidebar", "title", "work", "messages", "composer"]
    for name in [*parts, "plan", "jobs", "send"]:
        part = boxes[name]
        assert part is not None, f"{name} is not shown {where}"
        assert part["left"] >= -0.5 and part["right"] <= boxes["width"] + 0.5, (name, where)
        assert part["top"] >= -0.5 and part["bottom"] <= boxes["height"] + 0.5, (name, where)
    for n, first in enumerate(parts):
        for second in parts[n + 1 :]:
            assert not _overlap(boxes[first], boxes[second]), f"{first} overlaps {second} {where}"
    assert boxes["messages"]["bottom"] - boxes["messages"]["top"] >= 80, f"no room {where}"


@pytest.mark.parametrize("size", [(1280, 800), (480, 800)], ids=["desktop", "small"])
async def test_the_plan_and_a_job_show_live_and_after_a_reload(
    home: Path, tmp_path: Path, mock: MockLlmServer, size: tuple[int, int]
) -> None:
    require_chromium()
    project = tmp_path / "project"
    project.mkdir()
    mock.script_next(
        [
            _plan(0, "done", "in_progress", "pending"),
            call("job_start", {"command": JOB}),
            _plan(1, "done", "done", "in_progress"),
            say("The build ran."),
        ]
    )
    width, height = size
    async with (
        web_stack("task", _rows(mock.base_url, project), tmp_path) as stack,
        launch_chromium() as browser,
    ):
        page = await browser.new_page(viewport={"width": width, "height": height})
        errors = watch_page_errors(page)
        await page.goto(stack.url)
        await expect(page.locator("body[data-ready=true]")).to_be_attached()
        await expect(page.locator("#work")).to_be_hidden()
        await page.fill("#prompt", "plan the build and run it")
        await page.press("#prompt", "Enter")

        # The turn waits on the job's approval: the first plan is already shown, live.
        steps = page.locator("#plan-steps .step")
        approval = page.locator(".approval[data-approval]")
        await expect(approval).to_contain_text("job_start")
        await expect(steps).to_have_count(3)
        await expect(page.locator("#plan-title")).to_contain_text("1/3 done")
        await expect(steps.nth(1)).to_have_attribute("data-status", "in_progress")
        await expect(steps.nth(2)).to_have_attribute("data-status", "pending")
        await expect(page.locator("#jobs")).to_be_hidden()
        await approval.get_by_role("button", name="Allow once").click()

        job = page.locator("#job-list .job[data-job=job-1]")
        await expect(job).to_have_attribute("data-state", "exited")
        await expect(job.locator(".job-state")).to_have_text("exited 3")
        await expect(job.locator(".job-command")).to_have_text(JOB)
        await expect(job.locator(".job-tail")).to_have_text("building\nstep two\n")
        await expect(page.locator("#plan-title")).to_contain_text("2/3 done · revision 2")
        await expect(steps.nth(1)).to_have_attribute("data-status", "done")
        await expect(steps.nth(2)).to_have_attribute("data-status", "in_progress")
        await expect(page.locator(".msg.assistant").last).to_have_text("The build ran.")
        await _assert_laid_out(page, f"at {width}x{height}")
        name = "webui-work.png" if width > 600 else "webui-work-small.png"
        await page.screenshot(path=str(screenshot_path(name, tmp_path)))

        # A reload resumes the session: plan and job come back from the session's log.
        await page.reload()
        await expect(page.locator("body[data-ready=true]")).to_be_attached()
        await expect(page.locator("#plan-title")).to_contain_text("2/3 done · revision 2")
        await expect(steps).to_have_count(3)
        await expect(steps.nth(2)).to_have_attribute("data-status", "in_progress")
        await expect(job).to_have_attribute("data-state", "exited")
        await expect(job.locator(".job-state")).to_have_text("exited 3")
        await expect(job.locator(".job-tail")).to_have_text("building\nstep two\n")
        await _assert_laid_out(page, f"after a reload at {width}x{height}")

        # A new chat starts with no plan and no jobs.
        await page.click("#new-chat")
        await expect(page.locator("#work")).to_be_hidden()
        assert errors == []
    mock.assert_complete()
