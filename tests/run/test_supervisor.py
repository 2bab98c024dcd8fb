"""`taskhand run --watch`: a run that waits for a person exits waiting, the supervisor idles
without starting runs, and goes on as soon as a move makes a task workable."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from taskhand.pipeline.lifecycle import plan_key
from taskhand.run import moves
from taskhand.run.preflight import load
from taskhand.state.life import Lifecycle
from taskhand.state.paths import StateDir
from taskhand.state.store import Store
from tests.pipeline.test_full import plan_repo, replay

WAIT_SECONDS = 60.0


def read_until(process: subprocess.Popen[str], marker: str, seen: list[str]) -> None:
    deadline = time.monotonic() + WAIT_SECONDS
    assert process.stdout is not None
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        seen.append(line)
        if marker in line:
            return
    raise AssertionError(f"no {marker!r} in:\n{''.join(seen)}")


def supervise(repo: Path, script: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    """`taskhand run plan --watch` in `repo` as a person starts it, its output one stream."""
    command = [sys.executable, "-m", "taskhand", "run", "plan", "--watch", "--script", str(script)]
    return subprocess.Popen(
        command, cwd=repo, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )


def test_the_supervisor_waits_for_the_approval_then_finishes(
    tmp_path: Path, isolated_home: Path
) -> None:
    repo = plan_repo(tmp_path, "markdown", kind="logic")
    (repo / "plan" / "taskhand.toml").write_text('pipeline = "full"\n')
    script = replay(tmp_path, "T-001", {})
    process = supervise(repo, script, {**os.environ, "TASKHAND_HOME": str(isolated_home)})
    seen: list[str] = []
    try:
        read_until(process, "watching:", seen)
        text = "".join(seen)
        assert "TaskTrack EXIT: Waiting for Human Feedback" in text
        assert "T-001: plan -> planned (waits for a person)" in text
        database = StateDir.for_repo(repo).database
        with Store.open(database) as store:
            run = store.latest_run()
            assert run is not None
            time.sleep(2.5)  # a few polls: nothing is workable, so no run starts
            assert store.events(run.id)[-1].kind == "run_finished"
            # The approval, as `taskhand approve` records it.
            store.set_life(plan_key(load(repo / "plan")), "T-001", Lifecycle.READY)
            store.set_task(run.id, "T-001", "OPEN")
        out, _ = process.communicate(timeout=WAIT_SECONDS)
    finally:
        process.kill()
    text = "".join(seen) + out
    assert process.returncode == 0, text
    assert text.count("run_resumed") == 0 and "resumed" in text  # the same run went on
    assert "TaskTrack EXIT: Plan Completed" in text
    assert "T-001: judge -> done" in text


def test_while_the_supervisor_idles_it_names_the_draft_and_a_move_says_it_goes_on(
    tmp_path: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = plan_repo(tmp_path, "markdown", kind="logic")
    (repo / "plan" / "taskhand.toml").write_text('pipeline = "full"\n')
    monkeypatch.setenv("TASKHAND_HOME", str(isolated_home))
    draft = moves.new(repo / "plan", "Dark mode", "A toggle.").task
    script = replay(tmp_path, "T-001", {})
    process = supervise(repo, script, dict(os.environ))
    seen: list[str] = []
    try:
        read_until(process, "watching:", seen)
        text = "".join(seen)
        # What waits for a person, the draft too, each with the move that takes it on.
        assert f"{draft} waits for a person to submit the draft\n" in text
        assert f"  next: taskhand submit {draft} plan\n" in text
        assert "T-001 waits for approval of the plan (or a revise)\n" in text
        # A move made meanwhile: the idle supervisor goes on with it, no resume is asked for.
        approved = moves.approve("T-001", repo / "plan", repo)
        assert (approved.next, approved.taken_up_by) == (
            "",
            "the supervisor (taskhand run --watch)",
        )
        read_until(process, "T-001: judge -> done", seen)
    finally:
        process.kill()
        process.communicate()
