"""The real local model (SmolLM2 on llama.cpp), served once for every test marked `realmodel`."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from realmodel_support import ServedModel, require_real_model

_URL = re.compile(r"local model serving at (http://\S+/v1) \(llama.cpp server pid (\d+)\)")


@pytest.fixture(scope="module")
def llama() -> Iterator[Any]:
    """SmolLM2 loaded in this process (llama-cpp-python's `Llama`), for one test module."""
    path = require_real_model()
    from llama_cpp import Llama

    model = Llama(model_path=str(path), n_ctx=2048, n_threads=2, verbose=False)
    yield model
    model.close()


@pytest.fixture(scope="session")
def real_model(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServedModel]:
    """SmolLM2 served by `models serve-local` on a free port, stopped with Ctrl-C at the end."""
    require_real_model()
    log = tmp_path_factory.mktemp("llama") / "server.log"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "starharness.cli",
            "models",
            "serve-local",
            "--port",
            "0",
            "--log-file",
            str(log),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert process.stdout is not None
    printed: list[str] = []
    started = time.perf_counter()
    found = None
    while found is None:
        line = process.stdout.readline()
        if not line:
            pytest.fail(f"serve-local exited before serving: {''.join(printed)}")
        printed.append(line)
        found = _URL.search(line)
    served = ServedModel(process, found.group(1), int(found.group(2)), log)
    print(f"serve-local ready in {time.perf_counter() - started:.1f} s at {served.base_url}")
    try:
        yield served
    finally:
        process.send_signal(signal.SIGINT)
        rest, _ = process.communicate(timeout=60)
        assert process.returncode == 0, "".join(printed) + rest
        assert "local model server stopped" in rest
        assert not Path(f"/proc/{served.child}").exists(), "Ctrl-C left the llama.cpp server"
