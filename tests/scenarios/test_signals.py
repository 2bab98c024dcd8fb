"""Signals and a closed stdout, from the command line, with real processes.

`taskhand run` runs in a child process. A signal stops it while an agent unit or an acceptance
check runs a program that leaves a child behind beating into a file: taskhand must exit with
128 + the signal, say how to resume, leave no process of the unit or check alive, and the
resumed run must complete. A run killed with SIGKILL must show as interrupted and be cleanable
and resumable; a reader that closes stdout (`| head -1`) must not stop a run.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from taskhand.host.sandbox import bwrap_problem
from taskhand.state.paths import StateDir
from taskhand.state.store import Store
from tests.plans import md_plan, md_task
from tests.runs import attempt, git, make_repo, script, write

pytestmark = pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs /proc")

TIMEOUT = 120.0
# A program an agent or a check runs: unless FOLDER/done exists, it starts a child that
# appends to FOLDER/heartbeat every 0.1 s, writes both pids to FOLDER/pids, and sleeps long.
# Every process of it has FOLDER in its command line, so a survivor can be found.
SPAWNER = """
import os, subprocess, sys, time
folder = sys.argv[1]
if len(sys.argv) > 2:
    while True:
        with open(os.path.join(folder, "heartbeat"), "a") as beat:
            beat.write("beat\\n")
        time.sleep(0.1)
if os.path.exists(os.path.join(folder, "done")):
    sys.exit(0)
child = subprocess.Popen([sys.executable, __file__, folder, "beat"])
with open(os.path.join(folder, "pids"), "a") as pids:
    pids.write(f"{os.getpid()}\\n{child.pid}\\n")
time.sleep(600)
"""
# For the sandbox, where nothing can be written outside the workspace: a program that starts a
# child in a session of its own (as a daemon does), and both sleep with FOLDER in their argv.
SLEEPER = """
import subprocess, sys, time
if len(sys.argv) < 3:
    subprocess.Popen([sys.executable, __file__, sys.argv[1], "child"], start_new_session=True)
time.sleep(600)
"""
RESUME_LINE = re.compile(
    r"^run (\S+) interrupted by (SIG[A-Z]+); resume it with: taskhand resume (\S+)$"
)


def _default_signals() -> None:
    # A test runner started in the background may ignore SIGINT, and taskhand keeps a signal
    # its parent ignores ignored: give the child the dispositions a terminal would.
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, signal.SIG_DFL)


class Taskhand:
    """`taskhand ARGS` in a child process, its output in files."""

    def __init__(self, folder: Path, cwd: Path, *args: str | Path, **popen: Any) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.out, self.err = folder / "stdout", folder / "stderr"
        with self.out.open("wb") as out, self.err.open("wb") as err:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "taskhand", *map(str, args)],
                cwd=cwd,
                stdin=subprocess.DEVNULL,
                stdout=popen.pop("stdout", out),
                stderr=err,
                preexec_fn=_default_signals,
                **popen,
            )

    def wait(self) -> int:
        try:
            return self.process.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            self.process.kill()
            raise

    def stderr(self) -> str:
        return self.err.read_text()

    def stdout(self) -> str:
        return self.out.read_text()


def taskhand(cwd: Path, *args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "taskhand", *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )


def wait_for(path: Path, what: str, process: Taskhand) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not path.exists():
        code = process.process.poll()
        assert code is None, f"taskhand exited {code} before {what}:\n{process.stderr()}"
        assert time.monotonic() < deadline, f"no {what} after {TIMEOUT}s"
        time.sleep(0.05)


def survivors(folder: Path) -> list[str]:
    """Processes (not zombies) whose command line names `folder`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        if str(folder) in cmdline and stat[stat.rfind(")") + 2] not in "ZX":
            found.append(f"{entry.name}: {cmdline}")
    return found


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2] not in "ZX"


def assert_all_stopped(folder: Path) -> None:
    pids = [int(p) for p in (folder / "pids").read_text().split()]
    assert len(pids) == 2
    size = (folder / "heartbeat").stat().st_size
    time.sleep(0.5)  # five beats, were the child alive
    assert (folder / "heartbeat").stat().st_size == size, "the child still writes"
    assert [p for p in pids if alive(p)] == []
    assert survivors(folder) == []


def kill_leftovers(folder: Path) -> None:
    for line in survivors(folder):
        pid = int(line.split(":")[0])
        os.kill(pid, signal.SIGKILL)


@pytest.fixture
def spawner(tmp_path: Path) -> Path:
    path = tmp_path / "spawner.py"
    path.write_text(SPAWNER)
    return path


def plan_repo(tmp_path: Path, criteria: str = "- it works") -> Path:
    files = {str(k): str(v) for k, v in md_plan(("T-001", {})).items()}
    body = f"## Description\nDo it.\n\n## Acceptance criteria\n{criteria}\n"
    files["T-002-task.md"] = md_task("T-002", "Task T-002", body=body)
    return make_repo(tmp_path / "repo", {f"plan/{k}": v for k, v in files.items()})


def run_branch_subjects(repo: Path) -> list[str]:
    branch = git(repo, "branch", "--list", "taskhand/run-*", "--format=%(refname:short)").strip()
    return git(repo, "log", "--reverse", "--format=%s", f"main..{branch}").splitlines()


def runs_json(repo: Path) -> list[dict[str, Any]]:
    listed = taskhand(repo, "runs", "--json")
    assert listed.returncode == 0, listed.stderr
    rows: list[dict[str, Any]] = json.loads(listed.stdout)
    return rows


def interrupted_line(stderr: str, signum: signal.Signals) -> str:
    """The run id from taskhand's last line, which must say how to resume."""
    assert "Aborted!" not in stderr and "Traceback" not in stderr, stderr
    last = stderr.strip().splitlines()[-1]
    found = RESUME_LINE.match(last)
    assert found, f"not a resume line: {last!r}"
    assert found.group(2) == signum.name and found.group(1) == found.group(3)
    return found.group(1)


def stop_and_resume(
    tmp_path: Path, repo: Path, replay: Path, folder: Path, signum: signal.Signals
) -> None:
    run = Taskhand(
        tmp_path / "first", repo, "run", repo / "plan", "--script", replay, "--sandbox", "none"
    )
    try:
        wait_for(folder / "heartbeat", "the child's first beat", run)
        run.process.send_signal(signum)
        code = run.wait()
        assert code == 128 + signum, f"exit {code}:\n{run.stderr()}"
        run_id = interrupted_line(run.stderr(), signum)
        assert_all_stopped(folder)
    finally:
        kill_leftovers(folder)
    [row] = runs_json(repo)
    assert (row["id"], row["status"]) == (run_id, "interrupted")
    with Store.open(StateDir.for_repo(repo).database) as store:
        attempts = store.attempts(run_id)
    assert [(a.task_id, a.status) for a in attempts] == [("T-001", "interrupted")]

    (folder / "done").touch()  # from now on the program ends at once
    resumed = taskhand(repo, "resume", run_id)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert f"run {run_id}: completed" in resumed.stdout
    assert run_branch_subjects(repo) == ["T-001: Task T-001", "T-002: Task T-002"]
    assert git(repo, "worktree", "list").count("\n") == 1


@pytest.mark.skipif(bool(bwrap_problem()), reason=f"no sandbox: {bwrap_problem()}")
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
@pytest.mark.parametrize("where", ["unit", "check"])
def test_under_the_sandbox_a_signal_leaves_no_process_behind(
    tmp_path: Path, signum: signal.Signals, where: str
) -> None:
    """Inside bubblewrap the program cannot write outside its workspace: it is watched through
    /proc instead. Its child daemonizes (a session of its own): only the sandbox's process
    namespace, gone with the unit, takes it down."""
    folder = tmp_path / f"{where}-child"
    folder.mkdir()
    # In the repository, so in the workspace: the sandbox shows nothing else of yours.
    command = [sys.executable, "sleeper.py", str(folder)]
    if where == "check":
        repo = plan_repo(tmp_path, f"- `$ {shlex.join(command)}` passes")
        actions = [write("a.txt", "a\n")]
    else:
        repo = plan_repo(tmp_path)
        actions = [write("a.txt", "a\n"), {"run": command}]
    (repo / "sleeper.py").write_text(SLEEPER)
    git(repo, "add", "sleeper.py")
    git(repo, "commit", "-qm", "the sleeper")
    replay = script(
        tmp_path,
        {"T-001": [attempt(*actions)], "T-002": [attempt(write("b.txt", "b\n"))]},
    )
    run = Taskhand(tmp_path / "first", repo, "run", repo / "plan", "--script", replay)
    try:
        deadline = time.monotonic() + TIMEOUT
        while len(survivors(folder)) < 2:  # the program and its daemonized child
            assert run.process.poll() is None, run.stderr()
            assert time.monotonic() < deadline, "the program never started"
            time.sleep(0.05)
        run.process.send_signal(signum)
        assert run.wait() == 128 + signum, run.stderr()
        run_id = interrupted_line(run.stderr(), signum)
        # Gone with the namespace: at once, give or take the kernel's teardown on a busy
        # machine (the namespace's first process reaps every other before it is gone).
        deadline = time.monotonic() + 5
        while survivors(folder) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert survivors(folder) == [], "a process of the sandboxed program survived"
    finally:
        kill_leftovers(folder)
    with Store.open(StateDir.for_repo(repo).database) as store:
        assert [a.status for a in store.attempts(run_id)][-1] == "interrupted"


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_a_signal_during_an_agent_unit_stops_it_resumably(
    tmp_path: Path, spawner: Path, signum: signal.Signals
) -> None:
    repo = plan_repo(tmp_path)
    folder = tmp_path / "agent-child"
    folder.mkdir()
    spawn = {"run": [sys.executable, str(spawner), str(folder)]}
    replay = script(
        tmp_path,
        {
            "T-001": [attempt(write("a.txt", "a\n"), spawn)],
            "T-002": [attempt(write("b.txt", "b\n"))],
        },
    )
    stop_and_resume(tmp_path, repo, replay, folder, signum)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_a_signal_during_a_check_stops_it_resumably(
    tmp_path: Path, spawner: Path, signum: signal.Signals
) -> None:
    folder = tmp_path / "check-child"
    folder.mkdir()
    repo = plan_repo(tmp_path)
    task = md_task(
        "T-001",
        "Task T-001",
        body=f"## Description\nDo it.\n\n## Acceptance criteria\n"
        f"- `$ {sys.executable} {spawner} {folder}` passes\n",
    )
    (repo / "plan" / "T-001-task.md").write_text(task)
    git(repo, "commit", "-qam", "a check")
    replay = script(
        tmp_path,
        {"T-001": [attempt(write("a.txt", "a\n"))], "T-002": [attempt(write("b.txt", "b\n"))]},
    )
    stop_and_resume(tmp_path, repo, replay, folder, signum)


def test_a_closed_stdout_does_not_stop_the_run(tmp_path: Path) -> None:
    repo = plan_repo(tmp_path)
    # The reader leaves after the first line; the run writes on long after that.
    pause = {"sleep": 1.0}
    replay = script(
        tmp_path,
        {
            "T-001": [attempt(pause, write("a.txt", "a\n"))],
            "T-002": [attempt(write("b.txt", "b\n"))],
        },
    )
    run = Taskhand(
        tmp_path / "piped",
        repo,
        "run",
        repo / "plan",
        "--script",
        replay,
        "--sandbox",
        "none",
        stdout=subprocess.PIPE,
    )
    assert run.process.stdout is not None
    first = run.process.stdout.readline()
    run.process.stdout.close()  # what `| head -1` does
    assert first.startswith(b"run ")
    code = run.wait()
    assert code == 0, run.stderr()
    assert run.stderr() == ""  # no traceback, no "Exception ignored" at exit
    assert run_branch_subjects(repo) == ["T-001: Task T-001", "T-002: Task T-002"]


def test_a_run_killed_with_sigkill_shows_interrupted_and_is_cleaned_and_resumed(
    tmp_path: Path, spawner: Path
) -> None:
    repo = plan_repo(tmp_path)
    folder = tmp_path / "agent-child"
    folder.mkdir()
    spawn = {"run": [sys.executable, str(spawner), str(folder)]}
    replay = script(
        tmp_path,
        {
            "T-001": [attempt(write("a.txt", "a\n"), spawn)],
            "T-002": [attempt(write("b.txt", "b\n"))],
        },
    )
    run = Taskhand(
        tmp_path / "first", repo, "run", repo / "plan", "--script", replay, "--sandbox", "none"
    )
    try:
        wait_for(folder / "heartbeat", "the child's first beat", run)
        [live] = runs_json(repo)
        assert live["status"] == "running"
        waited = taskhand(repo, "clean", live["id"])  # a live run's work waits
        assert waited.returncode == 0, waited.stderr
        assert (
            f"waiting on run {live['id']}: the run's plan is held by a live process "
            f"(pid {run.process.pid} "
        ) in waited.stdout
        assert "removed" not in waited.stdout
        run.process.kill()
        assert run.wait() == -signal.SIGKILL
    finally:
        kill_leftovers(folder)  # SIGKILL gave taskhand no chance to stop them

    [row] = runs_json(repo)
    assert (row["id"], row["status"]) == (live["id"], "interrupted")
    assert f"taskhand resume {live['id']}" in row["reason"]
    text = taskhand(repo, "runs")
    assert re.search(rf"{live['id']}\s+interrupted\s", text.stdout), text.stdout
    with Store.open(StateDir.for_repo(repo).database) as store:
        recorded = store.get_run(live["id"])
    assert recorded is not None and recorded.status == "running"  # as the killed process left it

    cleaned = taskhand(repo, "clean", live["id"])
    assert cleaned.returncode == 0, cleaned.stderr
    assert "removed workspace " in cleaned.stdout
    assert git(repo, "worktree", "list").count("\n") == 1

    (folder / "done").touch()
    resumed = taskhand(repo, "resume", live["id"])
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert run_branch_subjects(repo) == ["T-001: Task T-001", "T-002: Task T-002"]
    assert [r["status"] for r in runs_json(repo)] == ["completed"]


def test_a_live_run_records_a_dead_one_of_its_plan_as_interrupted(
    tmp_path: Path, spawner: Path
) -> None:
    """The plan's lock tells a live run from a dead one only while nobody holds it: a run that
    takes the lock records older runs of its plan still marked running as interrupted."""
    repo = plan_repo(tmp_path)
    folder = tmp_path / "agent-child"
    folder.mkdir()
    spawn = {"run": [sys.executable, str(spawner), str(folder)]}
    replay = script(
        tmp_path,
        {
            "T-001": [attempt(spawn, write("a.txt", "a\n"))],
            "T-002": [attempt(write("b.txt", "b\n"))],
        },
    )
    first = Taskhand(
        tmp_path / "first", repo, "run", repo / "plan", "--script", replay, "--sandbox", "none"
    )
    try:
        wait_for(folder / "heartbeat", "the child's first beat", first)
        first.process.kill()
        first.wait()
    finally:
        kill_leftovers(folder)
    # Its worktree holds the task's branch; a new run could not check that out.
    assert taskhand(repo, "clean").returncode == 0
    (folder / "heartbeat").unlink()
    second = Taskhand(
        tmp_path / "second",
        repo,
        "run",
        repo / "plan",
        "--script",
        replay,
        "--sandbox",
        "none",
        "--new",
    )
    try:
        wait_for(folder / "heartbeat", "the child's first beat", second)
        assert [r["status"] for r in runs_json(repo)] == ["running", "interrupted"]
        second.process.send_signal(signal.SIGTERM)
        assert second.wait() == 128 + signal.SIGTERM
    finally:
        kill_leftovers(folder)
    assert [r["status"] for r in runs_json(repo)] == ["interrupted", "interrupted"]
