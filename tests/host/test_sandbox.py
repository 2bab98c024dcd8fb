"""The sandbox: what a confined process may write, see and leave behind; and the choice of it."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest

from taskhand.host import sandbox
from taskhand.host.sandbox import NONE, SandboxError, bwrap_problem, choose, confine
from taskhand.unit import Sandbox

needs_bwrap = pytest.mark.skipif(bool(bwrap_problem()), reason=f"no sandbox: {bwrap_problem()}")


def confined(command: str, workspace: Path) -> str:
    """`command` in the sandbox; the test's folder (under /tmp, private inside) shown read-only."""
    box = Sandbox("bwrap").with_readable([workspace.parent])
    done = subprocess.run(
        confine(box, ["sh", "-c", command], [workspace], workspace),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return done.stdout + done.stderr


@needs_bwrap
def test_only_the_workspace_is_writable(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    said = confined(f"echo in > in.txt; echo out > {outside}/out.txt; echo $? ", workspace)
    assert (workspace / "in.txt").read_text() == "in\n"
    assert not (outside / "out.txt").exists()
    assert "Read-only file system" in said


@needs_bwrap
def test_tmp_is_private_and_gone_after(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    marker = f"taskhand-sandbox-test-{time.monotonic_ns()}"
    assert confined(f"echo x > /tmp/{marker} && cat /tmp/{marker}", workspace).strip() == "x"
    assert not Path("/tmp", marker).exists()
    assert "TMPDIR=/tmp" in confined("env", workspace)


@needs_bwrap
def test_home_credentials_are_hidden(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text("the key\n")
    (home / ".netrc").write_text("machine x password y\n")
    (home / "notes.txt").write_text("readable\n")
    monkeypatch.setenv("HOME", str(home))
    workspace = tmp_path / "ws"
    workspace.mkdir()
    said = confined(f"cat {home}/.ssh/id_ed25519 {home}/.netrc {home}/notes.txt", workspace)
    assert "the key" not in said and "password" not in said
    assert "readable" in said  # the rest of the home folder is there, read-only


@needs_bwrap
def test_no_process_outlives_the_sandbox(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    token = f"taskhand-outlive-{time.monotonic_ns()}"
    # A daemon in a session of its own, as `setsid` makes one: the namespace takes it down.
    confined(f"setsid sh -c 'sleep 30; echo {token}' > /dev/null 2>&1 < /dev/null &", workspace)
    time.sleep(0.5)
    survivors = subprocess.run(["pgrep", "-f", token], capture_output=True, text=True)
    assert survivors.stdout == ""


def test_none_runs_the_command_as_it_is(tmp_path: Path) -> None:
    assert confine(NONE, ["true"], [tmp_path], tmp_path) == ["true"]
    assert choose("none") == (NONE, "")


def test_an_unknown_choice_names_the_valid_ones() -> None:
    with pytest.raises(SandboxError, match=r"unknown sandbox 'jail' \(fix: one of auto, bwrap"):
        choose("jail")


def test_without_bwrap_auto_warns_and_bwrap_refuses(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    sandbox.bwrap_problem.cache_clear()
    try:
        box, warning = choose("auto")
        assert box is NONE
        assert "agents run WITHOUT a sandbox: bwrap is not installed" in warning
        assert "--sandbox none" in warning
        with pytest.raises(SandboxError, match=r"install bubblewrap"):
            choose("bwrap")
    finally:
        monkeypatch.undo()
        sandbox.bwrap_problem.cache_clear()
