"""Provider units: bubblewrap argv, Landlock rules and system-call structures, Seatbelt profiles."""

from __future__ import annotations

import os
import struct
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sandbox_support import needs_landlock

from starharness.runtime.sandbox import (
    BubblewrapProvider,
    SandboxChain,
    SandboxPolicy,
    SandboxUnavailableError,
    SeatbeltProvider,
    Tier,
    beneath_except,
    confined_env,
    landlock_exec,
    landlock_rules,
    seatbelt_profile,
)
from starharness.runtime.sandbox.landlock import split_folders


def _policy(tmp_path: Path, tier: Tier, **extra: object) -> SandboxPolicy:
    workspace = tmp_path / "ws"
    temp = tmp_path / "tmp"
    workspace.mkdir(exist_ok=True)
    temp.mkdir(exist_ok=True)
    return SandboxPolicy(tier=tier, workspace=workspace, temp_dir=temp, **extra)  # type: ignore[arg-type]


# -- bubblewrap ---------------------------------------------------------------------------------


def test_bwrap_drops_capabilities_and_network_and_binds_by_tier(tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.mkdir()
    bwrap = BubblewrapProvider("/usr/bin/true")
    read_only = bwrap.confine(["ls"], _policy(tmp_path, Tier.READ_ONLY, hidden=(secret,)))
    assert read_only[:7] == [
        "/usr/bin/true",
        "--unshare-all",
        "--new-session",
        "--die-with-parent",
        "--cap-drop",
        "ALL",
        "--ro-bind",
    ]
    assert "--share-net" not in read_only
    joined = " ".join(read_only)
    assert f"--ro-bind {tmp_path / 'ws'} {tmp_path / 'ws'}" in joined
    assert f"--tmpfs {secret} --remount-ro {secret}" in joined
    assert read_only[-2:] == ["--", "ls"]
    write = " ".join(bwrap.confine(["ls"], _policy(tmp_path, Tier.WORKSPACE_WRITE)))
    assert f"--bind {tmp_path / 'ws'} {tmp_path / 'ws'}" in write
    full = bwrap.confine(["ls"], _policy(tmp_path, Tier.FULL, network=True))
    assert "--share-net" in full
    assert " ".join(full).count("--bind / /") == 1


def test_bwrap_missing_is_a_reason_not_a_crash() -> None:
    assert BubblewrapProvider("/nonexistent/bwrap").probe() == (
        "bwrap not found in /nonexistent/bwrap (install Debian's bubblewrap package)"
    )


async def test_the_chain_takes_the_first_working_provider_and_keeps_the_reasons() -> None:
    from starharness.runtime.sandbox import UnconfinedProvider

    chain = SandboxChain([BubblewrapProvider("/nonexistent/bwrap"), UnconfinedProvider()])
    assert (await chain.provider()).name == "none"
    assert list(chain.reasons) == ["bubblewrap"]
    empty = SandboxChain([BubblewrapProvider("/nonexistent/bwrap")])
    with pytest.raises(SandboxUnavailableError, match="bubblewrap: bwrap not found"):
        await empty.provider()


# -- Landlock -----------------------------------------------------------------------------------


def test_landlock_rules_by_tier(tmp_path: Path) -> None:
    assert landlock_rules(_policy(tmp_path, Tier.FULL)).to_args() == ["--full"]
    read_only = landlock_rules(_policy(tmp_path, Tier.READ_ONLY, hidden=()))
    assert read_only.read == ["/"]
    assert str(tmp_path / "ws") not in read_only.write
    assert str(tmp_path / "tmp") in read_only.write
    write = landlock_rules(_policy(tmp_path, Tier.WORKSPACE_WRITE, hidden=(), network=True))
    assert str(tmp_path / "ws") in write.write
    assert write.network is True


@given(
    st.lists(st.text(min_size=1).filter(lambda t: "\x00" not in t), max_size=4),
    st.lists(st.text(min_size=1).filter(lambda t: "\x00" not in t), max_size=4),
    st.booleans(),
    st.booleans(),
    st.lists(st.text(min_size=1), min_size=1, max_size=3),
)
def test_launcher_arguments_round_trip(
    read: list[str], write: list[str], network: bool, full: bool, command: list[str]
) -> None:
    rules = landlock_exec.Rules(read, write, network, full, list=write[:1])
    parsed, argv = landlock_exec.parse_args([*rules.to_args(), "--", *command])
    assert parsed == rules
    assert argv == command


def test_beneath_except_covers_everything_but_the_hidden(tmp_path: Path) -> None:
    for name in ("a/x", "a/y/secret", "a/y/ok", "b"):
        (tmp_path / name).mkdir(parents=True)
    hidden = [tmp_path / "a" / "y" / "secret"]
    assert beneath_except(tmp_path, hidden) == [
        str(tmp_path / "a" / "x"),
        str(tmp_path / "a" / "y" / "ok"),
        str(tmp_path / "b"),
    ]
    assert split_folders(tmp_path, hidden) == [tmp_path, tmp_path / "a", tmp_path / "a" / "y"]
    assert beneath_except(tmp_path, []) == [str(tmp_path)]
    assert beneath_except(tmp_path, [tmp_path]) == []


@given(st.integers(min_value=1, max_value=9))
def test_ruleset_attr_has_the_size_of_each_abi(abi: int) -> None:
    attr = landlock_exec.ruleset_attr(abi, handle_fs=True, handle_net=True)
    assert len(attr) == (24 if abi >= 6 else 16 if abi >= 4 else 8)
    fs = struct.unpack_from("=Q", attr)[0]
    assert fs & landlock_exec.FS_WRITE_FILE
    assert bool(fs & landlock_exec.FS_REFER) is (abi >= 2)
    assert bool(fs & landlock_exec.FS_TRUNCATE) is (abi >= 3)
    if abi >= 4:
        assert struct.unpack_from("=Q", attr, 8)[0] == (
            landlock_exec.NET_BIND_TCP | landlock_exec.NET_CONNECT_TCP
        )


def test_the_socket_filter_allows_only_unix_sockets() -> None:
    program = landlock_exec.seccomp_program("x86_64")
    instructions = [struct.unpack_from("=HBBI", program, i) for i in range(0, len(program), 8)]
    assert len(instructions) == 11
    # Every jump lands inside the program.
    for index, (code, jt, jf, _k) in enumerate(instructions):
        if code & 0x07 == 0x05:  # BPF_JMP
            assert index + 1 + max(jt, jf) < len(instructions)
    assert instructions[-1] == (0x06, 0, 0, 0x00050001)  # errno EPERM
    assert instructions[-2] == (0x06, 0, 0, 0x7FFF0000)  # allow
    with pytest.raises(landlock_exec.SetupError, match="no socket filter"):
        landlock_exec.seccomp_program("sparc")


@needs_landlock
def test_this_kernel_reports_a_landlock_abi() -> None:
    assert landlock_exec.abi_version() >= 1


# -- Seatbelt -----------------------------------------------------------------------------------


def test_seatbelt_profile_denies_by_default_and_passes_paths_as_parameters(
    tmp_path: Path,
) -> None:
    secret = tmp_path / 'we"ird) (allow file-write* (subpath "/'
    secret.mkdir()
    policy = _policy(tmp_path, Tier.WORKSPACE_WRITE, hidden=(secret,))
    profile, params = seatbelt_profile(policy)
    assert profile.startswith("(version 1)\n(deny default)\n")
    assert '(deny file-read* file-write* (subpath (param "HIDDEN_0")))' in profile
    assert (
        '(allow file-write* (subpath (param "WRITABLE_0")) (subpath (param "WRITABLE_1")))'
        in profile
    )
    assert "(allow network* (local unix) (remote unix))" in profile
    assert "(allow network*)\n" not in profile
    assert str(secret) not in profile  # paths never enter the profile text
    assert params == {
        "HIDDEN_0": str(secret),
        "WRITABLE_0": str(tmp_path / "tmp"),
        "WRITABLE_1": str(tmp_path / "ws"),
    }


def test_seatbelt_tiers_and_network(tmp_path: Path) -> None:
    read_only, params = seatbelt_profile(_policy(tmp_path, Tier.READ_ONLY, hidden=()))
    assert list(params) == ["WRITABLE_0"]
    full, _ = seatbelt_profile(_policy(tmp_path, Tier.FULL, network=True))
    assert "(allow file-read* file-write*)" in full
    assert "(allow network*)" in full
    assert "file-write*" in read_only


def test_seatbelt_argv_and_probe(tmp_path: Path) -> None:
    provider = SeatbeltProvider(platform="darwin", executable="/usr/bin/sandbox-exec")
    argv = provider.confine(["make", "test"], _policy(tmp_path, Tier.READ_ONLY, hidden=()))
    assert argv[:2] == ["/usr/bin/sandbox-exec", "-p"]
    assert argv[3:5] == ["-D", f"WRITABLE_0={tmp_path / 'tmp'}"]
    assert argv[-3:] == ["--", "make", "test"]
    assert SeatbeltProvider(platform="linux").probe() == (
        "Seatbelt exists only on macOS (this is linux)"
    )


# -- environment --------------------------------------------------------------------------------


def test_the_environment_is_an_allow_list(tmp_path: Path) -> None:
    policy = _policy(tmp_path, Tier.READ_ONLY)
    env = confined_env(
        policy,
        {"PATH": "/bin", "HOME": "/h", "DEEPSEEK_API_KEY": "sk", "LC_ALL": "C", "GODOT": "/g"},
        passed=["GODOT"],
    )
    assert env == {
        "PATH": "/bin",
        "HOME": "/h",
        "LC_ALL": "C",
        "GODOT": "/g",
        "TMPDIR": str(tmp_path / "tmp"),
        "TMP": str(tmp_path / "tmp"),
        "TEMP": str(tmp_path / "tmp"),
    }


# -- only some paths readable (code mode) -------------------------------------------------------


def _readable_policy(tmp_path: Path) -> tuple[SandboxPolicy, Path, Path, Path]:
    tools = tmp_path / "tools"
    (tools / "private").mkdir(parents=True)
    (tools / "bin").mkdir()
    link = tmp_path / "lib"
    link.symlink_to("tools")
    missing = tmp_path / "nowhere"
    policy = _policy(
        tmp_path,
        Tier.READ_ONLY,
        readable=(tools, link, missing),
        hidden=(tools / "private", tmp_path / "outside"),
    )
    return policy, tools, link, missing


def test_only_the_read_only_tier_can_limit_what_is_readable(tmp_path: Path) -> None:
    for tier in (Tier.WORKSPACE_WRITE, Tier.FULL):
        with pytest.raises(ValueError, match=f"not {tier}"):
            _policy(tmp_path, tier, readable=(tmp_path,))


def test_bwrap_mounts_only_the_readable_paths_and_starts_in_the_temp_folder(
    tmp_path: Path,
) -> None:
    (tmp_path / "outside").mkdir()
    policy, tools, link, missing = _readable_policy(tmp_path)
    argv = BubblewrapProvider("/usr/bin/true").confine(["ls"], policy)
    joined = " ".join(argv)
    assert "--ro-bind / /" not in joined and str(policy.workspace) + " " not in joined
    assert f"--ro-bind {tools} {tools}" in joined
    assert f"--symlink tools {link}" in joined  # a link stays a link
    assert str(missing) not in joined
    assert f"--tmpfs {tools / 'private'}" in joined  # hidden inside a readable path
    assert str(tmp_path / "outside") not in joined  # outside every readable path: not there
    assert f"--bind {policy.temp_dir} {policy.temp_dir}" in joined
    assert argv[argv.index("--chdir") + 1] == str(policy.temp_dir)
    assert argv[argv.index("--chdir") - 2 : argv.index("--chdir")] == ["--remount-ro", "/"]


def test_landlock_reads_only_the_readable_paths(tmp_path: Path) -> None:
    policy, tools, _link, _missing = _readable_policy(tmp_path)
    rules = landlock_rules(policy)
    # The link is followed (Landlock allows by the real folder); the hidden folder is left out.
    assert rules.read == [str(tools / "bin"), str(tools / "bin")]
    assert rules.list == [] and str(policy.workspace) not in rules.read + rules.write
    assert rules.write[0] == str(policy.temp_dir)


def test_seatbelt_reads_only_the_readable_paths(tmp_path: Path) -> None:
    policy, tools, _link, _missing = _readable_policy(tmp_path)
    profile, params = seatbelt_profile(policy)
    assert "(allow file-read*)\n" not in profile
    assert "(allow file-read-metadata)" in profile
    assert (
        '(allow file-read* (subpath (param "READABLE_0")) (subpath (param "READABLE_1"))'
        ' (subpath (param "READABLE_2")))' in profile
    )
    # Real paths: the link is followed.
    assert [params[f"READABLE_{i}"] for i in range(3)] == [
        os.path.realpath(tools),
        os.path.realpath(tools),
        os.path.realpath(policy.temp_dir),
    ]
