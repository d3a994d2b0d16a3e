"""`star-harness chat`: an interactive agent in the terminal (Godot mode with --profile godot)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ._llm_options import (
    AGENT_PROFILE,
    BaseUrl,
    Model,
    PatchFiles,
    Provider,
    interactive_profile,
)

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import TextIO

    from ..runtime.config import ResolvedProfile
    from ..runtime.kernel import Context
    from ._chat_session import ChatSession
    from ._terminal_lines import LineSource


def register(app: typer.Typer) -> None:
    """Add the `chat` command to `app`."""
    app.command(
        "chat",
        help=(
            "Talk to an agent in the terminal: answers stream as they arrive, tool calls show "
            "as they run, approvals are asked (y once, n no, c cancel). Ctrl-C cancels the "
            "turn; Ctrl-D or /quit exits. `--profile godot` is Godot mode."
        ),
    )(chat)


def chat(
    profile: Annotated[
        str, typer.Option(help="Profile name or YAML file (godot: the Godot mode).")
    ] = AGENT_PROFILE,
    project: Annotated[
        Path | None,
        typer.Option(
            help="Project folder for the file tools and the Godot bridge (default: here).",
            show_default=False,
        ),
    ] = None,
    provider: Provider = None,
    model: Model = None,
    base_url: BaseUrl = None,
    patch: PatchFiles = None,
) -> None:
    import asyncio
    import sys

    from ._terminal_lines import StreamLines

    resolved = interactive_profile("chat", profile, patch, (provider, model, base_url), project)
    lines = StreamLines(sys.stdin)
    code = asyncio.run(run_chat(resolved, lines, sys.stdout, echo_input=not sys.stdin.isatty()))
    raise typer.Exit(code)


async def run_chat(
    resolved: ResolvedProfile, lines: LineSource, out: TextIO, *, echo_input: bool = False
) -> int:
    """Start the profile and chat until the input ends; Ctrl-C (SIGINT) cancels a turn."""
    import asyncio
    import contextlib
    import signal

    from ..composition import require_model
    from ..runtime.config import start
    from ._chat_session import ChatSession

    await require_model(resolved, "chat")
    async with await start(resolved) as runtime:
        session = ChatSession(
            runtime.ctx,
            lines,
            out,
            status=lambda chat_session: status_lines(runtime.ctx, resolved, chat_session),
            banner=banner_lines(runtime.ctx, resolved),
            echo_input=echo_input,
        )
        loop = asyncio.get_running_loop()
        try:
            loop.add_signal_handler(signal.SIGINT, session.interrupt)
        except (NotImplementedError, RuntimeError):  # no signal handlers here (Windows, threads)
            return await session.run()
        try:
            return await session.run()
        finally:
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.remove_signal_handler(signal.SIGINT)


def banner_lines(ctx: Context, resolved: ResolvedProfile) -> list[str]:
    """What the person sees first: the profile, how to leave, and the Godot pairing state."""
    lines = [
        f"star-harness chat, profile {resolved.name!r}. /help lists commands; Ctrl-C cancels "
        "a turn; Ctrl-D or /quit exits."
    ]
    lines.extend(_bridge_lines(ctx))
    return lines


def status_lines(ctx: Context, resolved: ResolvedProfile, session: ChatSession) -> list[str]:
    """`/status`: profile, model, tools, and the Godot bridge when the profile has one."""
    from ..runtime.llm import LLM
    from ..runtime.tools import TOOLS

    tools = ctx.get(TOOLS).names()
    lines = [f"profile: {resolved.name} ({resolved.source})"]
    agent = session.agent
    if agent is not None:
        provider = ctx.get(LLM).get(agent.options.provider)
        lines.append(f"model: {agent.options.model or provider.default_model} ({provider.name})")
    lines.append(f"tools ({len(tools)}): {', '.join(tools) or 'none'}")
    lines.extend(_bridge_lines(ctx))
    return lines


def _bridge_lines(ctx: Context) -> Sequence[str]:
    from ..godot import GODOT_BRIDGE
    from ..godot.status_text import status_lines as bridge_status_lines

    bridge = ctx.maybe(GODOT_BRIDGE)
    return bridge_status_lines(bridge.status()) if bridge is not None else ()
