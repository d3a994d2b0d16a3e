"""Package faces: what a game author imports is light, and the server names stay where they were.

Each check runs in a fresh interpreter, since this test process has long since loaded the server.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

# What the NPC server brings (the web stack, the database driver, metrics, tokens); measured
# by the module tree `import starharness.npc.server` adds to `import starharness.npc`.
SERVER_STACK = (
    "uvicorn",
    "starlette",
    "websockets",
    "httptools",
    "watchfiles",
    "prometheus_client",
    "jwt",
    "cryptography",
    "psycopg",
    "psycopg_pool",
)

# A game's definition, as the starter game and the sample game write it.
AUTHOR_NAMES = (
    "Archetype",
    "CommittedAction",
    "Game",
    "GameKit",
    "NpcCard",
    "OfferTerms",
    "Refusal",
    "Resident",
    "Role",
    "SpeechContract",
    "World",
    "define_game_action",
    "define_speech_tool",
)

SERVER_NAMES = {
    "NPC_SERVER": "starharness.npc.plugin",
    "NpcServerConfig": "starharness.npc.plugin",
    "NpcServerPlugin": "starharness.npc.plugin",
    "ExposureError": "starharness.npc.server",
    "FanoutSettings": "starharness.npc.server",
    "LimitsSettings": "starharness.npc.server",
    "NpcServer": "starharness.npc.server",
    "RunningServer": "starharness.npc.server",
    "ServerSettings": "starharness.npc.server",
    "TranscriptSettings": "starharness.npc.server",
    "TurnSettings": "starharness.npc.server",
    "build_app": "starharness.npc.server",
    "serve_game": "starharness.npc.server",
    "start_server": "starharness.npc.server",
    "open_game_world": "starharness.npc.world_place",
}

RUNTIME_NAMES = {
    "StarHarnessError": "starharness.runtime.errors",
    "UserFacingError": "starharness.runtime.errors",
    "create_owner_only": "starharness.runtime.credentials",
    "star_harness_home": "starharness.runtime.paths",
}


def _run(probe: str) -> dict[str, object]:
    """Run `probe` in a fresh interpreter; it prints one JSON object as its last line."""
    done = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _loaded_after(statements: str) -> dict[str, object]:
    return _run(
        "import json, sys\n"
        f"{statements}\n"
        f"stack = {SERVER_STACK!r}\n"
        "tops = {name.partition('.')[0] for name in sys.modules}\n"
        "print(json.dumps({'count': len(sys.modules),"
        " 'stack': sorted(tops.intersection(stack)),"
        " 'server': sorted(m for m in sys.modules if m.startswith('starharness.npc.server'))}))"
    )


def test_a_game_authors_import_of_npc_loads_no_server() -> None:
    names = ", ".join(AUTHOR_NAMES)
    loaded = _loaded_after(
        f"import starharness.npc\nfrom starharness.npc import {names}\n"
        "from starharness.npc.actions import GameAction, predicate\n"
        "from starharness.npc.frames import WireModel\n"
        "from starharness.npc.world import AuditRecord, Meeting, NewsItem"
    )
    assert loaded["stack"] == []
    assert loaded["server"] == []


def test_the_sample_games_definition_loads_no_web_server() -> None:
    # The sample game keeps its world in SQLite or PostgreSQL, so psycopg is its own to load;
    # the web server, metrics and tokens are the framework's to load when it serves.
    loaded = _loaded_after("import starharness.voyage\nfrom starharness.voyage import GAME")
    web_stack = sorted(set(SERVER_STACK) - {"psycopg", "psycopg_pool"})
    stack = loaded["stack"]
    assert isinstance(stack, list)
    assert [name for name in web_stack if name in stack] == []
    assert loaded["server"] == []


def test_server_names_still_come_from_the_npc_package() -> None:
    """Every name of `starharness.npc.__all__` resolves, the server's ones to the very objects
    their own modules hold, and loading them is what brings the server in."""
    found = _run(
        "import importlib, json, sys\n"
        "import starharness.npc as npc\n"
        "before = 'uvicorn' in sys.modules\n"
        f"owners = {SERVER_NAMES!r}\n"
        "same = {name: getattr(npc, name) is getattr(importlib.import_module(owner), name)"
        " for name, owner in owners.items()}\n"
        "missing = [name for name in npc.__all__ if not hasattr(npc, name)]\n"
        "unlisted = sorted(set(owners) - set(npc.__all__))\n"
        "print(json.dumps({'before': before, 'after': 'uvicorn' in sys.modules,"
        " 'same': same, 'missing': missing, 'unlisted': unlisted}))"
    )
    assert found["before"] is False
    assert found["after"] is True
    assert found["same"] == dict.fromkeys(SERVER_NAMES, True)
    assert found["missing"] == []
    assert found["unlisted"] == []


def test_a_name_the_npc_package_does_not_have_is_an_attribute_error() -> None:
    import starharness.npc as npc

    with pytest.raises(AttributeError, match="no_such_name"):
        getattr(npc, "no_such_name")  # noqa: B009 - a name pyright rightly does not know


def test_from_import_of_a_server_name_works() -> None:
    found = _run(
        "import json\n"
        "from starharness.npc import ServerSettings, start_server\n"
        "from starharness.npc.server import ServerSettings as Direct\n"
        "print(json.dumps({'same': ServerSettings is Direct, 'callable': callable(start_server)}))"
    )
    assert found == {"same": True, "callable": True}


def test_the_runtime_face_loads_its_names_on_first_use() -> None:
    """`starharness.runtime` imports nothing until a game asks for one of its names."""
    found = _run(
        "import importlib, json, sys\n"
        "import starharness.runtime as runtime\n"
        "before = sorted(m for m in sys.modules if m.startswith('starharness.runtime.'))\n"
        f"owners = {RUNTIME_NAMES!r}\n"
        "same = {name: getattr(runtime, name) is getattr(importlib.import_module(owner), name)"
        " for name, owner in owners.items()}\n"
        "print(json.dumps({'before': before, 'same': same, 'listed': sorted(runtime.__all__)}))"
    )
    assert found["before"] == []
    assert found["same"] == dict.fromkeys(RUNTIME_NAMES, True)
    assert found["listed"] == sorted(RUNTIME_NAMES)
