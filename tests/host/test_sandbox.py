"""The sandbox: what a confined process may write, see, reach and leave behind, as root and as
a user alike; and the choice of it. Each test is an attack a hostile agent's shell would try.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from taskhand.host import sandbox
from taskhand.host.process import Capture, run_group
from taskhand.host.sandbox import NONE, SandboxError, bwrap_problem, choose, confine
from taskhand.unit import Limits, Sandbox

needs_bwrap = pytest.mark.skipif(bool(bwrap_problem()), reason=f"no sandbox: {bwrap_problem()}")
PYTHON = sys.executable


def confined(command: str, workspace: Path, box: Sandbox | None = None) -> str:
    """`command` run by sh in the sandbox, writing only `workspace`, with the environment an
    agent's shell gets (PATH and HOME); what it printed."""
    box = box or Sandbox("bwrap")
    argv = confine(box, ["sh", "-c", command], [workspace], workspace)
    env = {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/")}
    ran = run_group(argv, workspace, env, time.monotonic() + 60, stdout=Capture(1 << 20, 0))
    return ran.stdout


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    folder.mkdir()
    return folder


@needs_bwrap
def test_only_the_workspace_is_writable(tmp_path: Path, workspace: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    said = confined(
        f"echo in > in.txt; echo out > {outside}/out.txt; touch /evil /etc/evil /usr/evil; "
        "mkdir /new; echo done",
        workspace,
    )
    assert (workspace / "in.txt").read_text() == "in\n"
    assert not (outside / "out.txt").exists()
    assert not any(Path(p).exists() for p in ("/evil", "/etc/evil", "/usr/evil", "/new"))
    assert "done" in said


@needs_bwrap
def test_no_capability_and_no_way_to_get_one(workspace: Path) -> None:
    """As root too: every capability set is empty, no_new_privs holds, no mount can be undone
    or made writable, and no user namespace can be made to get capabilities back."""
    said = confined(
        "grep -E '^(Cap(Inh|Prm|Eff|Bnd|Amb)|NoNewPrivs)' /proc/self/status; "
        "umount -l /tmp 2>&1; echo umount=$?; "
        "mount -o remount,bind,rw / 2>&1; echo remount=$?; "
        "mount -t tmpfs none /usr 2>&1; echo mount=$?; "
        "unshare -U -r true 2>&1; echo unshare=$?",
        workspace,
    )
    for name in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"):
        assert f"{name}:\t0000000000000000" in said
    assert "NoNewPrivs:\t1" in said
    for step in ("umount", "remount", "mount", "unshare"):
        assert f"{step}=0" not in said


@needs_bwrap
def test_the_home_folder_and_the_checkout_are_not_there(
    tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Your home is a private empty folder; a hidden checkout stays hidden even when a program
    folder inside it is shown, and nothing but that folder of it shows."""
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text("the key\n")
    (home / ".bash_history").write_text("mysql -p hunter2\n")
    (home / ".claude").mkdir()
    (home / ".claude" / ".credentials.json").write_text('{"token": "sk-ant-oat-secret"}')
    monkeypatch.setenv("HOME", str(home))
    checkout = tmp_path / "checkout"
    (checkout / "tools" / "bin").mkdir(parents=True)
    (checkout / "tools" / "bin" / "hello").write_text("shown\n")
    (checkout / ".env").write_text("API_KEY=untracked-secret\n")
    box = Sandbox("bwrap", readable=(checkout / "tools",), hidden=(checkout,))
    said = confined(
        f"cat ~/.ssh/id_ed25519 ~/.bash_history ~/.claude/.credentials.json; ls -a ~; "
        f"cat {checkout}/.env; cat {checkout}/tools/bin/hello; ls {checkout}; "
        "echo x > ~/scratch && cat ~/scratch",
        workspace,
        box,
    )
    for secret in ("the key", "hunter2", "sk-ant-oat-secret", "untracked-secret"):
        assert secret not in said
    assert "shown" in said  # the program folder alone
    assert ".env" not in said.replace(f"{checkout}/.env", "")
    assert "x" in said.splitlines()  # a private home it can write, gone after
    assert not (home / "scratch").exists()


@needs_bwrap
def test_a_readable_path_that_holds_the_checkout_is_not_shown(
    tmp_path: Path, workspace: Path
) -> None:
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    (checkout / "plan.md").write_text("secret plan\n")
    box = Sandbox("bwrap", readable=(tmp_path,), hidden=(checkout,))
    assert "secret plan" not in confined(f"cat {checkout}/plan.md", workspace, box)


@needs_bwrap
def test_system_secrets_are_masked(workspace: Path) -> None:
    said = confined("cat /etc/shadow /etc/gshadow 2>/dev/null | wc -c; ls /root /run", workspace)
    assert said.split()[0] == "0"


@needs_bwrap
def test_no_process_outside_is_seen(workspace: Path) -> None:
    """Only the sandbox's own processes are in its /proc: not taskhand, not its environment."""
    os.environ["TASKHAND_TEST_SECRET"] = "environ-secret"
    try:
        said = confined(
            f"ls /proc | grep -x {os.getpid()}; cat /proc/*/environ 2>/dev/null | tr '\\0' '\\n'",
            workspace,
        )
    finally:
        del os.environ["TASKHAND_TEST_SECRET"]
    assert str(os.getpid()) not in said.split()
    assert "environ-secret" not in said


@needs_bwrap
def test_tiocsti_and_ptrace_are_refused(workspace: Path) -> None:
    """No typing into a terminal (even one it opened itself) and no reading another process."""
    script = workspace / "attack.py"
    script.write_text(
        "import ctypes, fcntl, os, pty, termios\n"
        "main, tty = pty.openpty()\n"
        "try:\n    fcntl.ioctl(tty, termios.TIOCSTI, b'x'); print('typed')\n"
        "except OSError as e:\n    print('tiocsti', e.errno)\n"
        "child = os.fork()\n"
        "if child == 0:\n    os.execvp('sleep', ['sleep', '5'])\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "print('ptrace', libc.ptrace(16, child, 0, 0), ctypes.get_errno())\n"
        "os.kill(child, 9)\n"
    )
    said = confined(f"{PYTHON} attack.py; echo x > /dev/tty || echo no-terminal", workspace)
    assert "no-terminal" in said  # no controlling terminal to reach
    assert "typed" not in said
    assert "tiocsti 1" in said  # EPERM
    assert "ptrace -1 1" in said


@needs_bwrap
def test_tmp_is_private_capped_and_gone_after(workspace: Path) -> None:
    marker = f"taskhand-sandbox-test-{time.monotonic_ns()}"
    assert confined(f"echo x > /tmp/{marker} && cat /tmp/{marker}", workspace).strip() == "x"
    assert not Path("/tmp", marker).exists()
    assert "TMPDIR=/tmp" in confined("env", workspace)
    small = Sandbox("bwrap", limits=Limits(tmp=8 << 20))
    said = confined(
        "head -c 20000000 /dev/zero > /tmp/big; echo rc=$?; wc -c < /tmp/big", workspace, small
    )
    assert "rc=0" not in said
    assert int(said.split()[-1]) <= 8 << 20


@needs_bwrap
def test_no_process_outlives_the_sandbox(workspace: Path) -> None:
    token = f"taskhand-outlive-{time.monotonic_ns()}"
    # A daemon in a session of its own, as `setsid` makes one: the namespace takes it down.
    confined(f"setsid sh -c 'sleep 30; echo {token}' > /dev/null 2>&1 < /dev/null &", workspace)
    time.sleep(0.5)
    survivors = subprocess.run(["pgrep", "-f", token], capture_output=True, text=True)
    assert survivors.stdout == ""


def test_without_the_sandbox_a_daemon_still_ends_with_its_program(workspace: Path) -> None:
    """With --sandbox none a process in a session of its own is found by its mark."""
    token = f"taskhand-outlive-none-{time.monotonic_ns()}"
    confined(
        f"setsid sh -c 'sleep 30; echo {token}' > /dev/null 2>&1 < /dev/null &", workspace, NONE
    )
    time.sleep(0.3)
    survivors = subprocess.run(["pgrep", "-f", token], capture_output=True, text=True)
    assert survivors.stdout == ""


def test_none_runs_the_command_as_it_is(tmp_path: Path) -> None:
    assert list(confine(NONE, ["true"], [tmp_path], tmp_path)) == ["true"]
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
