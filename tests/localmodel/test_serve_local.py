"""`models serve-local`: finding the model, owning the server process, one-line errors."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import pytest

from starharness.localmodel import (
    INSTALL_HINT,
    LocalModelError,
    LocalModelServer,
    LocalServerSettings,
    resolve_model,
)

FAKE_SERVER = Path(__file__).with_name("fake_llama_server.py")


def _gguf(tmp_path: Path, tail: bytes = b"") -> Path:
    path = tmp_path / "tiny.gguf"
    path.write_bytes(b"GGUF" + b"\0" * 16 + tail)
    return path


def _settings(model: Path, **changes: Any) -> LocalServerSettings:
    base = LocalServerSettings(
        model, port=0, start_timeout_s=30, server_command=(sys.executable, str(FAKE_SERVER))
    )
    return replace(base, **changes)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie still answers kill(0); its /proc state says it is gone.
    status = Path(f"/proc/{pid}/status")
    return status.exists() and "State:\tZ" not in status.read_text()


def test_a_missing_file_and_a_file_that_is_not_gguf_are_named(tmp_path: Path) -> None:
    with pytest.raises(LocalModelError, match="does not exist"):
        resolve_model(tmp_path / "nope.gguf")
    text = tmp_path / "notes.gguf"
    text.write_text("hello")
    with pytest.raises(LocalModelError, match="not a GGUF model file"):
        resolve_model(text)
    assert resolve_model(_gguf(tmp_path)) == tmp_path / "tiny.gguf"


async def test_the_server_is_started_answers_and_is_stopped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    monkeypatch.delenv("GOMP_SPINCOUNT", raising=False)
    log = tmp_path / "server.log"
    server = LocalModelServer(_settings(_gguf(tmp_path), log_file=log))
    async with server:
        pid = server.pid
        assert pid is not None and _alive(pid)
        assert server.base_url.startswith("http://127.0.0.1:")
        assert server.base_url.endswith("/v1")
        async with httpx.AsyncClient(trust_env=False) as client:
            answer = await client.get(server.base_url + "/models")
        assert answer.json()["data"][0]["id"] == "fake"
    assert not _alive(pid)
    assert "n_ctx 8192" in log.read_text()
    # The last token's logits only; requests in turn, none cut by the next; a prompt-state
    # cache of 1 GiB; batches of 128 tokens.
    assert (
        "logits_all false, interrupt_requests false, n_batch 128/128, cache true ram 1073741824"
        in log.read_text()
    )
    # Its threads spin briefly, then sleep, while they wait for each other.
    assert "OMP_WAIT_POLICY PASSIVE, GOMP_SPINCOUNT 2000" in log.read_text()


@pytest.mark.parametrize(
    ("chosen", "seen"),
    [
        ({"OMP_WAIT_POLICY": "ACTIVE"}, "OMP_WAIT_POLICY ACTIVE, GOMP_SPINCOUNT None"),
        ({"GOMP_SPINCOUNT": "0"}, "OMP_WAIT_POLICY PASSIVE, GOMP_SPINCOUNT 0"),
    ],
)
async def test_a_wait_policy_the_caller_chose_is_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chosen: dict[str, str], seen: str
) -> None:
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    monkeypatch.delenv("GOMP_SPINCOUNT", raising=False)
    for name, value in chosen.items():
        monkeypatch.setenv(name, value)
    log = tmp_path / "server.log"
    async with LocalModelServer(_settings(_gguf(tmp_path), log_file=log)):
        pass
    assert seen in log.read_text()


async def test_the_state_cache_and_the_batch_are_settings(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    settings = _settings(_gguf(tmp_path), log_file=log, state_cache_mb=None, batch_tokens=None)
    async with LocalModelServer(settings) as server:
        # Flushed per line: the log is whole while the server runs.
        assert "n_batch None/None, cache None" in log.read_text()
        assert server.pid is not None


async def test_a_server_that_dies_at_start_is_reported_with_its_last_words(
    tmp_path: Path,
) -> None:
    server = LocalModelServer(_settings(_gguf(tmp_path, tail=b"exit")))
    with pytest.raises(LocalModelError, match=r"exited with code 3.*refusing to load"):
        await server.start()


async def test_a_port_in_use_is_refused_before_starting(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        server = LocalModelServer(_settings(_gguf(tmp_path), port=port))
        with pytest.raises(LocalModelError, match=f"127.0.0.1:{port}.*another --port"):
            await server.start()
        assert server.pid is None


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "starharness.cli", "models", "serve-local", *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=cwd,
    )


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("--model", "missing.gguf"), "does not exist"),
        (("--model", "notes.txt"), "not a GGUF model file"),
        (("--host", "0.0.0.0"), "not a loopback address"),
    ],
)
def test_cli_errors_are_one_line(tmp_path: Path, args: tuple[str, ...], expected: str) -> None:
    (tmp_path / "notes.txt").write_text("hello")
    result = _cli(*args, cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1, result.stderr
    assert expected in result.stderr
    assert "Traceback" not in result.stderr


def test_without_the_model_package_the_error_says_how_to_install_it() -> None:
    with pytest.raises(LocalModelError) as caught:
        resolve_model(None, package="no_such_model_package")
    assert INSTALL_HINT in str(caught.value)
    assert "--model PATH" in str(caught.value)


async def test_a_server_that_answers_models_but_dies_computing_is_not_ready(
    tmp_path: Path,
) -> None:
    # A llama.cpp built for another CPU lists its model and dies of SIGSEGV on the first
    # completion; `ready` must not be reported for it.
    server = LocalModelServer(_settings(_gguf(tmp_path, tail=b"crash")))
    with pytest.raises(LocalModelError) as caught:
        await server.start()
    message = str(caught.value)
    assert "died on its first completion (killed by SIGSEGV)" in message
    assert "ggml_backend_amx_mul_mat" in message
    assert "\n" not in message
    assert server.pid is None or not _alive(server.pid)


async def test_every_core_is_used_by_default_and_the_chat_format_is_passed(
    tmp_path: Path,
) -> None:
    log = tmp_path / "server.log"
    settings = _settings(_gguf(tmp_path), log_file=log, chat_format="chatml")
    async with LocalModelServer(settings):
        pass
    cores = len(os.sched_getaffinity(0))
    assert f"{cores} threads ({cores} batch), chat chatml" in log.read_text()
    async with LocalModelServer(replace(settings, threads=1)):
        pass
    assert "1 threads (1 batch)" in log.read_text()


async def test_serving_ends_with_one_line_when_the_model_process_dies(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import asyncio

    from starharness.cli.models import _serve  # pyright: ignore[reportPrivateUsage]

    server = LocalModelServer(_settings(_gguf(tmp_path, tail=b"later")))
    serving = asyncio.ensure_future(_serve(server))
    printed = ""
    while "serving at" not in printed:
        await asyncio.sleep(0.05)
        printed += capsys.readouterr().out
    async with httpx.AsyncClient(trust_env=False) as client:
        with pytest.raises(httpx.HTTPError):
            await client.post(server.base_url + "/chat/completions", json={"messages": []})
    assert await asyncio.wait_for(serving, 30) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert "the model server died (killed by SIGSEGV)" in err
    assert "ggml_backend_amx_mul_mat" in err
