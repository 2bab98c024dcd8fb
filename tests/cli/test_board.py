"""`taskhand board` and `taskhand run --board`: the board goes on with the plan's run beside
it, so a move made on the board takes effect (the run finishes the task), attaches to a
supervisor already watching the plan, and refuses a second supervisor; `--open` opens it in
the browser; Ctrl-C stops it with no traceback."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from tests.board.test_app import call
from tests.pipeline.test_full import plan_repo, replay
from tests.run.test_supervisor import WAIT_SECONDS, read_until

ADDRESS = re.compile(r"board: http://127\.0\.0\.1:(\d+)/#token=(\S+)")


def start(repo: Path, env: dict[str, str], *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "taskhand", *args],
        cwd=repo,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def address(seen: list[str]) -> tuple[int, str]:
    found = ADDRESS.search("".join(seen))
    assert found, "".join(seen)
    return int(found[1]), found[2]


def lifecycle_of(port: int, token: str, task: str) -> str:
    status, plan = call(port, "GET", "/api/plan", token=token)
    assert status == 200
    return next(str(t["lifecycle"]) for t in plan["tasks"] if t["id"] == task)


def wait_for(port: int, token: str, task: str, wanted: str) -> None:
    deadline = time.monotonic() + WAIT_SECONDS
    while (shown := lifecycle_of(port, token, task)) != wanted:
        assert time.monotonic() < deadline, f"{task} stayed {shown}, not {wanted}"
        time.sleep(0.2)


def approve(port: int, token: str, task: str) -> Any:
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    return call(port, "POST", f"/api/tasks/{task}/approve", {}, **headers)


def stop(process: subprocess.Popen[str], seen: list[str]) -> str:
    process.send_signal(signal.SIGINT)
    out, _ = process.communicate(timeout=WAIT_SECONDS)
    text = "".join(seen) + out
    assert "Traceback" not in text, text
    return text


def test_a_move_on_the_board_is_carried_out_by_the_run_beside_it(
    tmp_path: Path, isolated_home: Path
) -> None:
    repo = plan_repo(tmp_path, "markdown", kind="logic")
    (repo / "plan" / "taskhand.toml").write_text('pipeline = "full"\n')
    script = replay(tmp_path, "T-001", {})
    env = {**os.environ, "TASKHAND_HOME": str(isolated_home)}
    # A run that stops at the plan's approval, and nothing watching it.
    done = subprocess.run(
        [sys.executable, "-m", "taskhand", "run", "plan", "--script", str(script)],
        cwd=repo, env=env, capture_output=True, text=True, timeout=WAIT_SECONDS,
    )  # fmt: skip
    assert "waits for a person" in done.stdout, done.stdout + done.stderr
    board = start(repo, env, "board", "plan")
    seen: list[str] = []
    try:
        read_until(board, "watching:", seen)
        port, token = address(seen)
        assert "goes on beside the board" in "".join(seen)
        assert lifecycle_of(port, token, "T-001") == "planned"
        # A second supervisor of the plan is refused, naming the first.
        second = subprocess.run(
            [sys.executable, "-m", "taskhand", "run", "plan", "--watch", "--script", str(script)],
            cwd=repo, env=env, capture_output=True, text=True, timeout=WAIT_SECONDS,
        )  # fmt: skip
        assert second.returncode != 0
        assert "supervisor of run" in second.stderr + second.stdout
        # Another board attaches to the one watching, and starts nothing.
        other = start(repo, env, "board", "plan")
        watched: list[str] = []
        try:
            read_until(other, "attached:", watched)
        finally:
            stop(other, watched)
        status, moved = approve(port, token, "T-001")
        assert status == 200, moved
        wait_for(port, token, "T-001", "done")  # the run beside the board did the work
    finally:
        text = stop(board, seen)
    assert "TaskTrack EXIT: Plan Completed" in text


def test_run_with_board_serves_it_and_open_opens_it(tmp_path: Path, isolated_home: Path) -> None:
    repo = plan_repo(tmp_path, "markdown", kind="logic")
    script = replay(tmp_path, "T-001", {})
    opened = tmp_path / "opened.txt"
    opener = tmp_path / "opener"
    opener.write_text(f'#!/bin/sh\nprintf "%s" "$1" > {opened}\n')
    opener.chmod(0o755)
    env = {**os.environ, "TASKHAND_HOME": str(isolated_home), "BROWSER": str(opener)}
    args = ("run", "plan", "--pipeline", "full", "--board", "--script", str(script), "--json")
    process = start(repo, env, *args)
    seen: list[str] = []
    try:
        read_until(process, "board: ", seen)
        port, token = address(seen)
        wait_for(port, token, "T-001", "planned")
        assert approve(port, token, "T-001")[0] == 200
        read_until(process, "the board stays up", seen)
        assert lifecycle_of(port, token, "T-001") == "done"
        # --json keeps standard output to the events: each line there is one.
        events = [line for line in seen if line.startswith("{")]
        assert events and all(json.loads(line)["kind"] for line in events)
    finally:
        stop(process, seen)
    board = start(repo, env, "board", "plan", "--open", "--no-run")
    shown: list[str] = []
    try:
        read_until(board, "board: ", shown)
        port, token = address(shown)
        deadline = time.monotonic() + WAIT_SECONDS
        while not opened.exists():
            assert time.monotonic() < deadline, "the browser was not opened"
            time.sleep(0.1)
        assert opened.read_text() == f"http://127.0.0.1:{port}/#token={token}"
        assert lifecycle_of(port, token, "T-001") == "done"
    finally:
        stop(board, shown)
