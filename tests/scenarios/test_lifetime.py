"""Nothing of a run outlives taskhand, however it ends: `kill -9` at any instant (a unit's
bubblewrap just starting included) leaves no process of the run alive a second later, with
the sandbox and without it; a resumed run ends what an earlier process left when even its
watcher died; a signal in taskhand's first moments is a clean stop, never a traceback.
"""

from __future__ import annotations

import os
import random
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from taskhand.host.sandbox import bwrap_problem
from tests.plans import md_plan
from tests.runs import attempt, make_repo, script, write
from tests.scenarios.test_signals import survivors

pytestmark = pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs /proc")
needs_bwrap = pytest.mark.skipif(bool(bwrap_problem()), reason=f"no sandbox: {bwrap_problem()}")
SANDBOXES = [pytest.param("bwrap", marks=needs_bwrap), "none"]
PY = sys.executable
TIMEOUT = 60.0


def sleepers(token: str) -> dict[str, list[str]]:
    """A command that leaves three sleepers named by `token`: one in the background, one in a
    session of its own (a daemon), one in the foreground."""
    sleep = f"{PY} -c 'import time; time.sleep(600)' {token}"
    return {"run": ["sh", "-c", f"{sleep} & setsid {sleep} & {sleep}"]}


def start(repo: Path, replay: Path, box: str) -> subprocess.Popen[bytes]:
    """`taskhand run` in a child process; what it says on stderr goes to repo/../stderr."""
    with (repo.parent / "stderr").open("wb") as err:
        return subprocess.Popen(
            [PY, "-m", "taskhand", "run", "plan", "--script", str(replay), "--sandbox", box],
            cwd=repo,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=err,
            start_new_session=True,
        )


def said(repo: Path) -> str:
    return (repo.parent / "stderr").read_text()


def plan_with(tmp_path: Path, *actions: dict[str, object]) -> tuple[Path, Path]:
    """A repository with a one-task plan, and the replay script whose T-001 does `actions`."""
    plan = {f"plan/{k}": str(v) for k, v in md_plan(("T-001", {})).items()}
    repo = make_repo(tmp_path / "repo", plan)
    return repo, script(tmp_path, {"T-001": [attempt(write("a.txt", "a\n"), *actions)]})


def wait_for_survivors(token: str, count: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + TIMEOUT
    while len(survivors_of(token)) < count:
        assert process.poll() is None, "taskhand ended before the program started"
        assert time.monotonic() < deadline, f"the program never started {count} sleepers"
        time.sleep(0.02)


def survivors_of(token: str) -> list[str]:
    return [line for line in survivors(Path(token)) if "pytest" not in line]


def gone_within(token: str, seconds: float) -> list[str]:
    deadline = time.monotonic() + seconds
    while (left := survivors_of(token)) and time.monotonic() < deadline:
        time.sleep(0.02)
    return left


@pytest.mark.parametrize("box", SANDBOXES)
def test_sigkill_while_a_unit_runs_leaves_nothing_alive(tmp_path: Path, box: str) -> None:
    token = f"taskhand-lifetime-{time.monotonic_ns()}"
    repo, replay = plan_with(tmp_path, sleepers(token))
    run = start(repo, replay, box)
    try:
        wait_for_survivors(token, 3, run)
        run.kill()
        run.wait(TIMEOUT)
        assert gone_within(token, 1.0) == [], "a process of the killed run is still alive"
    finally:
        _kill(token)


@pytest.mark.parametrize("box", SANDBOXES)
def test_sigkill_at_any_instant_leaves_nothing_alive(tmp_path: Path, box: str) -> None:
    """Aimed kills: from taskhand's first moments to a unit's bubblewrap starting."""
    randomly = random.Random(22)
    for n in range(8):
        token = f"taskhand-aimed-{n}-{time.monotonic_ns()}"
        repo, replay = plan_with(tmp_path / str(n), sleepers(token))
        run = start(repo, replay, box)
        try:
            # Up to the moment the first sleeper shows, then a little after it, at random.
            deadline = time.monotonic() + randomly.uniform(0.0, 1.5)
            while time.monotonic() < deadline and not survivors_of(token):
                time.sleep(0.001)
            time.sleep(randomly.choice([0.0, 0.0005, 0.002, 0.01]))
            run.kill()
            run.wait(TIMEOUT)
            assert gone_within(token, 1.0) == [], f"kill {n}: a process of the run survived"
        finally:
            _kill(token)


def test_a_resumed_run_ends_what_a_killed_one_left(tmp_path: Path) -> None:
    """Without the sandbox, taskhand and its watcher killed at once (as an out-of-memory kill
    might) leave the unit's programs behind; the resumed run ends them before it goes on."""
    token = f"taskhand-leftover-{time.monotonic_ns()}"
    flag = tmp_path / "sleep-please"
    flag.write_text("")
    sleep = f"{PY} -c 'import time; time.sleep(600)' {token}"
    once = {"run": ["sh", "-c", f"if [ -e {flag} ]; then setsid {sleep} & {sleep}; fi"]}
    repo, replay = plan_with(tmp_path, once)
    run = start(repo, replay, "none")
    try:
        wait_for_survivors(token, 2, run)
        killed = [run.pid, *_watchers_of(run.pid)]
        for pid in killed:  # stopped first, so none sees another die and ends the unit
            os.kill(pid, signal.SIGSTOP)
        for pid in killed:
            os.kill(pid, signal.SIGKILL)
        run.wait(TIMEOUT)
        time.sleep(0.3)
        assert len(survivors_of(token)) >= 2  # the watcher was gone too: they live on
        flag.unlink()
        resumed = subprocess.run(
            [PY, "-m", "taskhand", "resume"], cwd=repo, capture_output=True, text=True, timeout=120
        )
        assert resumed.returncode == 0, resumed.stderr
        assert re.search(r"ended \d+ process\(es\) an earlier taskhand", resumed.stdout)
        assert survivors_of(token) == []
    finally:
        _kill(token)


@pytest.mark.parametrize("delay", [0.0, 0.01, 0.03, 0.08, 0.15, 0.25, 0.4])
def test_a_sigterm_in_the_first_moments_is_a_clean_stop(tmp_path: Path, delay: float) -> None:
    """From the first instant taskhand can catch a signal (its handler is set before any
    import that takes time; the interpreter's own start is the only moment before it)."""
    repo, replay = plan_with(tmp_path, {"sleep": 2.0})
    run = start(repo, replay, "none")
    deadline = time.monotonic() + TIMEOUT
    while not _catches(run.pid, signal.SIGTERM) and time.monotonic() < deadline:
        time.sleep(0.0005)
    time.sleep(delay)
    run.send_signal(signal.SIGTERM)
    assert run.wait(TIMEOUT) == 128 + signal.SIGTERM, said(repo)
    assert "Traceback" not in said(repo)
    assert len(said(repo).strip().splitlines()) == 1  # one line: stopped, or how to resume
    again = subprocess.run(
        [PY, "-m", "taskhand", "run", "plan", "--script", str(replay), "--sandbox", "none"],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert again.returncode == 0, again.stderr  # whatever the stop left, the run goes on


def _catches(pid: int, signum: int) -> bool:
    """Whether `pid` has a handler for `signum` (SigCgt of /proc/PID/status)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    caught = next(line.split()[1] for line in status.splitlines() if line.startswith("SigCgt"))
    return bool(int(caught, 16) >> (signum - 1) & 1)


def _watchers_of(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if (
                any(arg.endswith(b"host/reaper.py") for arg in cmdline)
                and str(pid).encode() in cmdline
            ):
                found.append(int(entry.name))
    return found


def _kill(token: str) -> None:
    for line in survivors_of(token):
        os.kill(int(line.split(":")[0]), signal.SIGKILL)
