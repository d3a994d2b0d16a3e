"""The wheel works on its own: built, installed in a fresh venv outside the checkout, and run."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]


def _uv(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    uv = shutil.which("uv")
    if uv is None:
        pytest.fail("uv is not on PATH (.ci/run installs it)")
    return subprocess.run([uv, *args], cwd=cwd, capture_output=True, text=True, timeout=600)


def _ok(done: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    assert done.returncode == 0, f"{done.args}: {done.stderr[-2000:]}"
    return done


@pytest.mark.slow
def test_the_installed_wheel_runs_outside_the_checkout(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    _ok(_uv("build", "--wheel", "--out-dir", str(dist), cwd=REPO))
    (wheel,) = dist.glob("star_harness-*.whl")

    # The same dependency versions as the lock file, so the local cache usually has them all.
    requirements = tmp_path / "requirements.txt"
    _ok(
        _uv(
            "export",
            "--frozen",
            "--no-dev",
            "--no-emit-project",
            "--no-hashes",
            "--output-file",
            str(requirements),
            cwd=REPO,
        )
    )
    venv = tmp_path / "venv"
    _ok(_uv("venv", str(venv), "--python", "3.11", cwd=tmp_path))
    python = venv / "bin" / "python"
    install = ["pip", "install", "--python", str(python), "-r", str(requirements), str(wheel)]
    if _uv(*install, "--offline", cwd=tmp_path).returncode != 0:
        _ok(_uv(*install, cwd=tmp_path))  # something was not cached: ask the registry

    home = tmp_path / "home"
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME") and not key.startswith("UV_")
    }
    env.update(STAR_HARNESS_HOME=str(home), COLUMNS="120")
    script = venv / "bin" / "star-harness"

    def star_harness(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(script), *args], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
        )

    helped = _ok(star_harness("--help"))
    for command in ("play", "run", "config"):
        assert command in helped.stdout

    dumped = yaml.safe_load(_ok(star_harness("config", "--dump")).stdout)
    assert dumped["profile"] == "task"
    # The profile came from the installed package, not from this checkout.
    source = Path(dumped["source"]).resolve()
    assert source.is_relative_to(venv.resolve())
    assert [row["id"] for row in dumped["rows"]][-1] == "agents"
    for name in ("play", "serve", "godot"):
        assert yaml.safe_load(_ok(star_harness("config", "--dump", "--profile", name)).stdout)

    # The web UI's page ships inside the package (no build step, nothing fetched).
    probe = "from starharness.webui import STATIC; print(STATIC)"
    shown = _ok(
        subprocess.run(
            [str(python), "-c", probe], cwd=tmp_path, env=env, capture_output=True, text=True
        )
    )
    static = Path(shown.stdout.strip()).resolve()
    assert static.is_relative_to(venv.resolve())
    for name in ("index.html", "app.js", "rpc.js", "chat.js", "work.js", "godot.js", "style.css"):
        assert (static / name).is_file(), name
    assert "rpc" in _ok(star_harness("--help")).stdout
