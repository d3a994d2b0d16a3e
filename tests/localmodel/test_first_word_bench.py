"""bench/first_word.py end to end against the fake llama.cpp server: what it prints.

No timing is checked (the fake answers at once); the test holds the report's shape: the load
average at both ends, every turn, the warm-up, the server's floor, the ratios, and the prompt
tokens read from the server's log.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from realmodel_support import REPO

FAKE_SERVER = Path(__file__).with_name("fake_llama_server.py")
BENCH = REPO / "bench" / "first_word.py"


def test_the_bench_prints_first_words_floors_ratios_and_the_load(tmp_path: Path) -> None:
    model = tmp_path / "tiny.gguf"
    model.write_bytes(b"GGUF" + b"\0" * 16)
    log = tmp_path / "server.log"
    command = [sys.executable, str(BENCH), "--model", str(model), "--says", "3", "--warm"]
    command += ["--pause", "0.2"]
    command += ["--server-command", f"{sys.executable} {FAKE_SERVER}", "--server-log", str(log)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=REPO)
    out = done.stdout
    assert done.returncode in (0, 1), out + done.stderr  # 1: a goal missed, not a failure
    assert "Traceback" not in done.stderr, done.stderr
    assert out.startswith("load average at start: ")
    assert "--logits_all false --interrupt_requests false --n_batch 128 --n_ubatch 128" in out
    # The NPC server warms every NPC before the first greeting; the floor's fresh server, the
    # bench's two NPCs with the same requests.
    assert out.count("  warm-up  the NPC server warmed 4 NPCs (prefix and scene opening)") == 1
    assert out.count("prefix and scene opening evaluated in") == 2
    assert out.count("  greeting ") == 2 and out.count("  warm     ") == 3
    assert (
        "(3 warm says, npcs npc-karsk npc-brandt, 0.2 s from a turn's end to the next say)" in out
    )
    assert out.count("  floor    ") == 5
    assert "a fresh server" in out  # the state cache is on: the floor does not reuse it
    assert "warm (3 turns spoke, 0 silent):" in out
    assert "greeting (2 turns spoke, 0 silent):" in out
    for line in (
        "first say.delta  median",
        "server ttft      median",
        "harness / ttft   median",
        "harness / plan   median",
    ):
        assert out.count(line) == 2, out
    # A greeting only speaks (no decision on walking up): its plan is the speech's prompt.
    assert out.count("  greeting ") == out.count("requests npc_speak  load") == 2, out
    assert out.count("server plan      median   0.00 s") == 1, out  # the fake's log: 1.5 ms
    assert out.count("server plan      median   0.01 s") == 1, out  # 1.5 + 2.5 + 1.5 ms
    assert "decide     requests: prompt tokens evaluated median" in out
    assert "npc_speak  requests: prompt tokens evaluated median" in out
    # Per kind and tool: warm says' decide and npc_speak, greetings' npc_speak.
    assert out.count("server time: prompt median  0.00 s, generated tokens median  12") == 3
    assert "\nload average at end: " in out
    assert "prefix-match hit" in log.read_text()
