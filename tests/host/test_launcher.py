"""Limits on what one confined program may use: a fork bomb, a memory hog, a disk filler and a
huge file each end the program with the limit named, and the machine is left as it was; with
the sandbox and without it."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from taskhand.host import cgroups
from taskhand.host.launcher import Confined
from taskhand.host.process import Capture, Ran, run_group
from taskhand.host.sandbox import NONE, bwrap_problem, confine
from taskhand.unit import Limits, Sandbox
from tests.gates.test_checks import gone

needs_bwrap = pytest.mark.skipif(bool(bwrap_problem()), reason=f"no sandbox: {bwrap_problem()}")
BOXES = [
    pytest.param(Sandbox("bwrap"), id="bwrap", marks=needs_bwrap),
    pytest.param(NONE, id="none"),
]
grouped = pytest.mark.skipif(cgroups.hierarchy() is None, reason="no control group can be made")
PYTHON = sys.executable


def run(box: Sandbox, command: str, workspace: Path, limits: Limits, seconds: float = 60) -> Ran:
    argv = confine(box.with_limits(limits), ["sh", "-c", command], [workspace], workspace)
    env = {"PATH": os.environ["PATH"], "HOME": str(workspace)}
    return run_group(argv, workspace, env, time.monotonic() + seconds, stdout=Capture(1 << 16, 0))


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    folder.mkdir()
    return folder


@pytest.mark.parametrize("box", BOXES)
def test_a_fork_bomb_ends_at_the_process_limit(box: Sandbox, workspace: Path) -> None:
    bomb = "f() { f | f & }; f; sleep 2"
    ran = run(box, bomb, workspace, Limits(processes=64), seconds=30)
    if cgroups.hierarchy() is not None:
        assert "process limit (64)" in ran.limit
    assert not ran.timed_out
    assert _descendants_gone(ran.pid)


@grouped
@pytest.mark.parametrize("box", BOXES)
def test_a_memory_hog_is_killed_at_the_memory_limit(box: Sandbox, workspace: Path) -> None:
    hog = f"{PYTHON} -c 'x = bytearray(600 << 20); print(\"survived\")'"
    ran = run(box, hog, workspace, Limits(memory=200 << 20))
    assert "survived" not in ran.stdout
    assert "memory limit (200 MiB)" in ran.limit


def test_without_control_groups_memory_is_capped_per_process(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where no group can be made, rlimits hold each process's memory."""
    monkeypatch.setattr(cgroups, "make", lambda limits: None)
    hog = f"{PYTHON} -c 'x = bytearray(600 << 20); print(\"survived\")'"
    ran = run(NONE, hog, workspace, Limits(memory=200 << 20))
    assert "survived" not in ran.stdout
    assert ran.code != 0


@pytest.mark.parametrize("box", BOXES)
def test_a_disk_filler_is_stopped_at_the_disk_limit(box: Sandbox, workspace: Path) -> None:
    filler = "i=0; while true; do head -c 8000000 /dev/zero > f$i; i=$((i+1)); done"
    ran = run(box, filler, workspace, Limits(disk=64 << 20), seconds=60)
    assert "disk limit (64 MiB)" in ran.limit
    assert not ran.timed_out
    written = sum(p.stat().st_size for p in workspace.iterdir())
    assert written < 64 << 20 + 400 << 20  # stopped within a second or so of writing


@pytest.mark.parametrize("box", BOXES)
def test_one_huge_file_ends_at_the_size_limit(box: Sandbox, workspace: Path) -> None:
    ran = run(box, "head -c 50000000 /dev/zero > big", workspace, Limits(disk=16 << 20))
    assert (workspace / "big").stat().st_size <= 16 << 20
    assert ran.code != 0


@grouped
def test_groups_are_removed_after_the_program(workspace: Path) -> None:
    found = cgroups.hierarchy()
    assert found is not None
    before = _ours(found.parents)
    run(NONE, "sleep 0.1 & echo", workspace, Limits())
    assert _ours(found.parents) == before


def test_a_program_within_its_limits_is_untouched(workspace: Path) -> None:
    ran = run(NONE, "echo fine; ls", workspace, Limits())
    assert ran.code == 0 and ran.limit == "" and "fine" in ran.stdout


def test_a_trusted_program_runs_without_a_launcher(workspace: Path) -> None:
    deadline = time.monotonic() + 10
    ran = run_group(["sh", "-c", "echo $0"], workspace, None, deadline, stdout=Capture(100, 0))
    assert ran.stdout.strip() == "sh"
    assert isinstance(confine(NONE, ["true"], [], workspace), Confined)


def _ours(parents: tuple[Path, ...]) -> set[str]:
    mine = f"{cgroups.PREFIX}{os.getpid()}-"
    return {e.name for p in parents for e in os.scandir(p) if e.name.startswith(mine)}


def _descendants_gone(pid: int) -> bool:
    """No process of the program's group is left (a zombie waiting for init counts as gone)."""
    time.sleep(0.2)
    done = subprocess.run(["pgrep", "-g", str(pid)], capture_output=True, text=True)
    return all(gone(int(p)) for p in done.stdout.split())
