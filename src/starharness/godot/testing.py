"""A fake Godot addon speaking the wire protocol over a real socket, for tests and benches."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from pydantic import JsonValue

from .bridge.endpoint import read_endpoint
from .protocol.framing import LineSplitter, OversizedLine
from .protocol.messages import encode_message

FAKE_GODOT_VERSION: Final = "4.3.stable.fake"
FAKE_ADDON_VERSION: Final = "0.7.0"
FAKE_SCENE: Final = "res://main.tscn"

Params = dict[str, JsonValue]
Responder = Callable[[Params], JsonValue]


@dataclass(slots=True)
class FakeBehaviour:
    """How the fake answers: per-method delays, silence, errors, overrides, disconnects."""

    delays_s: dict[str, float] = field(default_factory=dict[str, float])
    silent: set[str] = field(default_factory=set[str])
    disconnect_on: set[str] = field(default_factory=set[str])
    errors: dict[str, str] = field(default_factory=dict[str, str])
    results: dict[str, JsonValue] = field(default_factory=dict[str, JsonValue])


class FakeAddon:
    """Connects out to a bridge like addons/agent_rpc does and answers every method."""

    def __init__(
        self,
        host: str,
        port: int,
        *,
        token: str | None,
        project_path: str,
        behaviour: FakeBehaviour | None = None,
        godot_version: str = FAKE_GODOT_VERSION,
        addon_version: str = FAKE_ADDON_VERSION,
    ) -> None:
        self.host = host
        self.port = port
        self.token = token
        self.project_path = project_path
        self.behaviour = behaviour or FakeBehaviour()
        self.godot_version = godot_version
        self.addon_version = addon_version
        self.requests: list[dict[str, JsonValue]] = []
        self.closed_by_peer = asyncio.Event()
        self._request_seen = asyncio.Event()
        self._writer: asyncio.StreamWriter | None = None
        self._reader_task: asyncio.Task[None] | None = None
        self._answers: set[asyncio.Task[None]] = set()

    @classmethod
    async def from_endpoint(
        cls,
        path: Path,
        *,
        project_path: str,
        token: str | None = None,
        behaviour: FakeBehaviour | None = None,
    ) -> FakeAddon:
        """Discover host, port and token from an endpoint file, as the real addon does."""
        reading = await asyncio.to_thread(read_endpoint, path)
        if reading.endpoint is None:
            raise FileNotFoundError(f"no valid endpoint file at {path}: {reading.problem}")
        endpoint = reading.endpoint
        return cls(
            endpoint.host,
            endpoint.port,
            token=token if token is not None else endpoint.token,
            project_path=project_path,
            behaviour=behaviour,
        )

    async def connect(self, *, handshake: bool = True) -> None:
        """Open the socket and, unless told otherwise, send the editor_ready handshake."""
        reader, self._writer = await asyncio.open_connection(self.host, self.port)
        self._reader_task = asyncio.create_task(self._read(reader))
        if handshake:
            await self.send(self.editor_ready())

    def editor_ready(self) -> dict[str, JsonValue]:
        """The handshake event; the token key is left out when the token is None."""
        ready: dict[str, JsonValue] = {
            "type": "editor_ready",
            "godotVersion": self.godot_version,
            "projectPath": self.project_path,
            "addonVersion": self.addon_version,
        }
        if self.token is not None:
            ready["token"] = self.token
        return ready

    async def send(self, message: Mapping[str, object]) -> None:
        """Send one JSON line."""
        await self.send_raw(encode_message(message))

    async def send_raw(self, data: bytes) -> None:
        """Send bytes as they are (for malformed or oversized lines)."""
        if self._writer is None:
            raise RuntimeError("connect() first")
        self._writer.write(data)
        await self._writer.drain()

    async def play_error(self, message: str, severity: str = "error") -> None:
        """Report a play error event."""
        await self.send({"type": "play_error", "severity": severity, "message": message})

    async def scene_changed(self, path: str) -> None:
        """Report a scene_changed event."""
        await self.send({"type": "scene_changed", "path": path})

    async def wait_closed_by_peer(self, timeout_s: float = 5.0) -> bool:
        """True when the bridge closed the connection within `timeout_s`."""
        try:
            async with asyncio.timeout(timeout_s):
                await self.closed_by_peer.wait()
        except TimeoutError:
            return False
        return True

    async def wait_for_requests(self, count: int, timeout_s: float = 5.0) -> None:
        """Return once `count` requests have arrived; raise TimeoutError otherwise."""
        async with asyncio.timeout(timeout_s):
            while len(self.requests) < count:
                seen = self._request_seen
                await seen.wait()

    async def close(self) -> None:
        """Close the socket and stop every task of the fake."""
        tasks = [*self._answers, *([self._reader_task] if self._reader_task else [])]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._answers.clear()
        self._reader_task = None
        self._drop_socket()

    def _drop_socket(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None

    async def _read(self, reader: asyncio.StreamReader) -> None:
        splitter = LineSplitter()
        try:
            while data := await reader.read(65_536):
                for line in splitter.feed(data):
                    if not isinstance(line, OversizedLine):
                        self._on_line(line)
        except ConnectionError:
            pass
        self.closed_by_peer.set()

    def _on_line(self, line: bytes) -> None:
        message: object = json.loads(line)
        if not isinstance(message, dict) or "method" not in message:
            return
        request: dict[str, JsonValue] = message  # pyright: ignore[reportUnknownVariableType]
        self.requests.append(request)
        self._request_seen.set()
        self._request_seen = asyncio.Event()
        method = str(request.get("method"))
        behaviour = self.behaviour
        if method in behaviour.disconnect_on:
            self._drop_socket()
        elif method in behaviour.silent:
            return
        elif method in behaviour.delays_s:
            task = asyncio.create_task(self._answer_later(request, behaviour.delays_s[method]))
            self._answers.add(task)
            task.add_done_callback(self._answers.discard)
        elif self._writer is not None:
            # Answer at once, like an editor that handles the request within its frame.
            self._writer.write(encode_message(self._reply(request)))

    async def _answer_later(self, request: dict[str, JsonValue], delay_s: float) -> None:
        await asyncio.sleep(delay_s)
        with contextlib.suppress(ConnectionError, RuntimeError):
            await self.send(self._reply(request))

    def _reply(self, request: dict[str, JsonValue]) -> dict[str, JsonValue]:
        method = str(request.get("method"))
        behaviour = self.behaviour
        params: Params = {k: v for k, v in request.items() if k not in ("id", "method")}
        reply: dict[str, JsonValue] = {"id": request.get("id")}
        if method in behaviour.errors:
            reply |= {"ok": False, "error": behaviour.errors[method]}
        elif method in behaviour.results:
            reply |= {"ok": True, "result": behaviour.results[method]}
        elif method in CANNED_RESULTS:
            reply |= {"ok": True, "result": CANNED_RESULTS[method](self, params)}
        else:
            reply |= {"ok": False, "error": f"unknown method: {method}"}
        return reply


def _str(params: Params, key: str, default: str = "") -> str:
    value = params.get(key)
    return value if isinstance(value, str) else default


def _list(params: Params, key: str) -> list[JsonValue]:
    value = params.get(key)
    return value if isinstance(value, list) else []


def _run(method: str) -> Callable[[FakeAddon, Params], JsonValue]:
    return lambda _fake, params: {
        "started": True,
        "playing": True,
        "waitMs": params.get("wait_ms"),
        "playMethod": method,
        "errors": [],
    }


CANNED_RESULTS: Final[dict[str, Callable[[FakeAddon, Params], JsonValue]]] = {
    "ping": lambda _fake, _params: {"pong": True},
    "get_editor_info": lambda fake, _params: {
        "godotVersion": fake.godot_version,
        "projectPath": fake.project_path,
        "editedScene": FAKE_SCENE,
        "playing": False,
    },
    "get_open_scenes": lambda _fake, _params: {"scenes": [FAKE_SCENE]},
    "get_edited_scene": lambda _fake, _params: {
        "path": FAKE_SCENE,
        "playing": False,
        "playingScene": "",
    },
    "open_scene": lambda _fake, params: {"opened": _str(params, "path")},
    "reload_scene": lambda _fake, params: {"reloaded": _str(params, "path")},
    "get_scene_tree": lambda _fake, params: {
        "path": _str(params, "path", FAKE_SCENE),
        "maxDepth": params.get("max_depth"),
        "tree": {"name": "Main", "type": "Node2D", "script": "", "children": []},
        "nodeCount": 1,
        "truncated": False,
    },
    "get_node_properties": lambda _fake, params: {
        "path": _str(params, "path", FAKE_SCENE),
        "nodePath": _str(params, "node_path"),
        "properties": [{"name": "visible", "type": "bool", "value": "true", "hint": "none"}],
    },
    "run_current_scene": _run("play_current_scene"),
    "play_main_scene": _run("play_main_scene"),
    "import_resources": lambda _fake, params: {
        "scanned": not _list(params, "paths"),
        "reimported": _list(params, "paths"),
    },
    "get_play_errors": lambda _fake, params: {
        "playing": False,
        "errors": [],
        "cleared": params.get("clear", False),
    },
    "stop_scene": lambda _fake, _params: {"stopped": True},
    "get_debugger_state": lambda _fake, _params: {
        "playing": False,
        "sessions": [],
        "breakCount": 0,
        "pendingBreakpoints": [],
        "errors": [],
    },
    "set_breakpoint": lambda _fake, params: {
        "file": _str(params, "file"),
        "line": params.get("line"),
        "enabled": not params.get("remove", False),
        "conditionIgnored": bool(params.get("condition")),
    },
    "find_unused_resources": lambda _fake, params: {
        "root": _str(params, "root", "res://"),
        "unused": [],
        "scanned": 0,
    },
    "export_project": lambda _fake, params: {
        "ok": True,
        "timedOut": False,
        "outputPath": _str(params, "output_dir") + "/game",
        "errors": [],
        "logTail": [],
    },
    "get_project_setting": lambda _fake, params: {
        "key": _str(params, "key"),
        "exists": True,
        "value": "Fake Project",
    },
    "set_project_setting": lambda _fake, params: {
        "key": _str(params, "key"),
        "value": params.get("value"),
        "saved": True,
    },
    "lint_scripts": lambda _fake, params: {
        "files": [{"path": path, "ok": True, "issues": []} for path in _list(params, "paths")]
    },
    "list_project_files": lambda _fake, params: {
        "root": _str(params, "root", "res://"),
        "total": 1,
        "files": [{"path": FAKE_SCENE, "type": "scene", "uid": "uid://fake"}],
        "nextCursor": None,
        "truncated": False,
    },
    "resolve_uid": lambda _fake, params: {
        "uid": _str(params, "uid", "uid://fake"),
        "path": _str(params, "path", FAKE_SCENE),
        "exists": True,
    },
    "wait_for_import_done": lambda _fake, _params: {"ok": True, "remaining": [], "elapsedMs": 0},
    "list_global_classes": lambda _fake, _params: {"classes": [], "count": 0},
    "find_class_name_conflicts": lambda _fake, _params: {"conflicts": [], "count": 0},
    "inspect_script": lambda _fake, params: {
        "path": _str(params, "path"),
        "base": "Node",
        "signals": [],
        "methods": [],
        "properties": [],
        "constants": [],
    },
    "list_export_presets": lambda _fake, _params: {"presets": [], "count": 0},
    "check_export_templates": lambda _fake, _params: {
        "installed": False,
        "version": "4.3.stable",
        "templateDir": "",
        "templateFiles": [],
        "missingPlatforms": [],
    },
}
