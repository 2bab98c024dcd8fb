"""A failed delivery and its retry, in both pipelines and both dialects: the task stops with
the reason (parked in the full pipeline, failed in the default one), `reopen` makes its pull
request due again, and the next run (or the supervisor going on) delivers it, asking
`gh pr view` first so that a pull request gh opened before failing is recorded, never opened
twice. The plan validates at every step; the Request a parked TaskTrack task gets, and the
body of a pull request stacked on one not open yet, say a reopen retries, and it does."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from taskhand.config import Delivery, RunConfig
from taskhand.plan.model import Status
from taskhand.plan.validate import validate
from taskhand.run import launch, moves
from taskhand.state.life import Lifecycle
from tests.conftest import RunCli
from tests.delivery.remotes import Remote, with_remote
from tests.pipeline import test_full as full
from tests.pipeline.test_deliver import branches, creates
from tests.plans import md_task
from tests.run.test_supervisor import WAIT_SECONDS, read_until, supervise
from tests.runs import Recorder, git, make_repo, run_plan, write

GH_502 = "gh pr create failed: HTTP 502: Bad Gateway (https://api.github.example/graphql)"
ROLES = {
    "writer": [{"resolution": "# Spec\n\nA toggle in the header."}],
    "planner": [{"resolution": "1. Write toggle.txt."}],
}


def settings(pipeline: str) -> dict[str, Any]:
    return {"pipeline": pipeline, "autonomy": "full", "deliver": Delivery("task")}


def assert_valid(repo: Path) -> None:
    report = validate(repo / "plan")
    assert report.ok(), [p.message for p in report.errors]


def task_file(repo: Path, task: str) -> str:
    return (repo / "plan" / f"{task}.md").read_text()


def shown(run_cli: RunCli, repo: Path) -> dict[str, Any]:
    task: dict[str, Any] = json.loads(run_cli("show", repo / "plan", "--json").output)["tasks"][0]
    return task


@pytest.mark.parametrize("dialect", ["markdown", "tasktrack"])
@pytest.mark.parametrize("pipeline", ["full", "default"])
def test_reopen_retries_a_failed_delivery_and_the_plan_stays_valid(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_cli: RunCli, pipeline: str, dialect: str
) -> None:
    repo = full.plan_repo(tmp_path, dialect, kind="logic")
    remote = with_remote(repo, tmp_path, monkeypatch)
    task = full.task_id(dialect)
    script = full.replay(tmp_path, task, ROLES)
    monkeypatch.setenv("FAKE_GH_FAIL", "pr create")
    first, _ = run_plan(repo / "plan", repo, script, settings=settings(pipeline))
    parks = pipeline == "full"  # the default pipeline fails the task instead
    assert first.status == ("waiting" if parks else "failed"), first.message
    stopped = full.life(repo, task)
    assert (stopped.status, stopped.waiting) == (
        Lifecycle.PARKED if parks else Lifecycle.FAILED,
        True,
    )
    assert stopped.reason == f"deliver: {GH_502}"
    assert (remote.prs(), creates(remote)) == ([], 1)
    assert_valid(repo)
    if dialect == "tasktrack" and parks:  # what the file tells its person to do
        text = task_file(repo, task)
        assert "**Status**: WAIT" in text
        request = f"**Request**: Parked: deliver: {GH_502}. To retry: taskhand reopen {task}.\n"
        assert request in text
    monkeypatch.delenv("FAKE_GH_FAIL")

    # As the Request says: by the task's id alone, the plan being the repository's latest.
    moved = moves.reopen(task, None, repo)
    assert moved.after is (Lifecycle.DONE if parks else Lifecycle.READY)
    assert (moved.status, moved.next) == (Status.OPEN, f"taskhand resume {first.run_id}")
    assert_valid(repo)
    now = shown(run_cli, repo)
    assert now["status"] == "OPEN" and now["moves"] == ["comment", "park"]
    if dialect == "tasktrack":
        text = task_file(repo, task)
        assert "**Status**: OPEN" in text and "**Resolution**" not in text
        assert ("**Response**: Reopened." in text) is parks  # a Response answers a Request

    second, record = run_plan(repo / "plan", repo, script, settings=settings(pipeline))
    assert (second.run_id, second.status) == (first.run_id, "completed"), second.message
    assert record.of("attempt_started") == []  # only the delivery was redone
    [pr] = remote.prs()
    assert creates(remote) == 2 and pr["base"] == "main"
    assert [e.data["url"] for e in record.of("delivered")] == [pr["url"]]
    delivered = full.life(repo, task)
    assert (delivered.status, delivered.pr) == (Lifecycle.DELIVERED, pr["url"])
    assert_valid(repo)
    assert shown(run_cli, repo)["moves"] == []  # finished now
    if dialect == "tasktrack":
        text = task_file(repo, task)
        assert "**Status**: DONE" in text
        assert f"(delivered: {pr['url']})" in text.split("**Resolution**:")[1]


@pytest.mark.parametrize("pipeline", ["full", "default"])
def test_a_pull_request_gh_opened_before_failing_is_found_not_opened_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pipeline: str
) -> None:
    repo = full.plan_repo(tmp_path, "markdown", kind="logic")
    remote = with_remote(repo, tmp_path, monkeypatch)
    script = full.replay(tmp_path, "T-001", ROLES)
    monkeypatch.setenv("FAKE_GH_FAIL", "pr create:after")  # opened, but its answer is lost
    first, _ = run_plan(repo / "plan", repo, script, settings=settings(pipeline))
    assert first.status in ("waiting", "failed")
    [opened] = remote.prs()
    assert (
        full.life(repo, "T-001").reason == "deliver: gh pr create failed: HTTP 504: Gateway Timeout"
    )
    monkeypatch.delenv("FAKE_GH_FAIL")
    before = len(remote.calls())
    moves.reopen("T-001", repo / "plan", repo)
    second, _ = run_plan(repo / "plan", repo, script, settings=settings(pipeline))
    assert second.status == "completed", second.message
    retry = [call[:2] for call in remote.calls()[before:]]
    assert retry == [["auth", "status"], ["pr", "view"]]  # found: no second create
    assert remote.prs() == [opened] and creates(remote) == 1
    life = full.life(repo, "T-001")
    assert (life.status, life.pr) == (Lifecycle.DELIVERED, opened["url"])


def test_the_supervisor_retries_a_delivery_once_it_is_reopened(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, isolated_home: Path
) -> None:
    repo = full.plan_repo(tmp_path, "markdown", kind="logic")
    remote = with_remote(repo, tmp_path, monkeypatch)
    (repo / "plan" / "taskhand.toml").write_text(
        'pipeline = "full"\nautonomy = "full"\n\n[deliver]\npr = true\nper = "task"\n'
    )
    script = full.replay(tmp_path, "T-001", ROLES)
    env = {**os.environ, "TASKHAND_HOME": str(isolated_home), "FAKE_GH_FAIL_ONCE": "pr create"}
    process = supervise(repo, script, env)
    seen: list[str] = []
    try:
        read_until(process, "watching:", seen)
        assert "TaskTrack EXIT: Waiting for Human Feedback" in "".join(seen)
        assert full.life(repo, "T-001").status is Lifecycle.PARKED and remote.prs() == []
        moves.reopen("T-001", repo / "plan", repo)
        out, _ = process.communicate(timeout=WAIT_SECONDS)
    finally:
        process.kill()
    text = "".join(seen) + out
    assert process.returncode == 0, text
    assert "TaskTrack EXIT: Plan Completed" in text
    [pr] = remote.prs()
    assert creates(remote) == 2
    life = full.life(repo, "T-001")
    assert (life.status, life.pr) == (Lifecycle.DELIVERED, pr["url"])


def two_tasks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Remote, Path]:
    """T-001 writes a.txt, T-002 (independent, run after it) b.txt; the full pipeline."""
    criteria = "## Acceptance criteria\n- `$ test -s {}` passes\n"
    files = {
        "plan/overview.md": "# Files\n\n## Goal\nTwo files.\n",
        "plan/T-001-a.md": md_task(
            "T-001", "Write a", "## Description\nA.\n\n" + criteria.format("a.txt")
        ),
        "plan/T-002-b.md": md_task(
            "T-002", "Write b", "## Description\nB.\n\n" + criteria.format("b.txt")
        ),
    }
    repo = make_repo(tmp_path / "repo", files)
    remote = with_remote(repo, tmp_path, monkeypatch)
    script = tmp_path / "replay.json"
    tasks = {
        t: [{"actions": [write(f, f"{f}\n")], "resolution": f"Wrote {f}."}]
        for t, f in (("T-001", "a.txt"), ("T-002", "b.txt"))
    }
    script.write_text(json.dumps({"tasks": tasks}))
    return repo, remote, script


def test_a_stacked_pull_request_says_reopen_opens_the_one_below_and_it_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo, remote, script = two_tasks(tmp_path, monkeypatch)
    monkeypatch.setenv("FAKE_GH_FAIL_ONCE", "pr create")  # T-001's fails, T-002's opens
    first, _ = run_plan(repo / "plan", repo, script, settings=settings("full"))
    assert first.status == "waiting", first.message
    names = branches(repo)
    [two] = remote.prs()
    assert (two["head"], two["base"]) == (names["T-002"], names["T-001"])
    said = "its own pull request is not open yet: taskhand reopen T-001 opens it"
    assert said in two["body"]
    assert full.life(repo, "T-001").status is Lifecycle.PARKED
    assert full.life(repo, "T-002").status is Lifecycle.DELIVERED

    moves.reopen("T-001", None, repo)  # exactly what the body says
    second, record = run_plan(repo / "plan", repo, script, settings=settings("full"))
    assert second.status == "completed", second.message
    assert [e.task_id for e in record.of("delivered")] == ["T-001"]
    one = next(pr for pr in remote.prs() if pr["head"] == names["T-001"])
    assert one["base"] == "main" and len(remote.prs()) == 2 and creates(remote) == 3
    assert remote.subjects(f"main..{names['T-001']}") == ["T-001: Write a"]
    life = full.life(repo, "T-001")
    assert (life.status, life.pr) == (Lifecycle.DELIVERED, one["url"])


def test_a_branch_contract_park_says_push_then_reopen_and_following_it_delivers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The run starts from a commit of main nobody pushed: the contract parks the task,
    and its TaskTrack Request says what to do; doing it delivers."""
    repo = full.plan_repo(tmp_path, "tasktrack", kind="logic")
    remote = with_remote(repo, tmp_path, monkeypatch)
    (repo / "NOTES.md").write_text("local\n")
    git(repo, "add", "NOTES.md")
    git(repo, "commit", "-q", "-m", "a local commit")
    script = full.replay(tmp_path, "FOO-1", ROLES)
    first, _ = run_plan(repo / "plan", repo, script, settings=settings("full"))
    assert first.status == "waiting", first.message
    text = task_file(repo, "FOO-1")
    assert "**Status**: WAIT" in text and remote.prs() == []
    request = text.split("**Request**: ")[-1]
    assert "(fix: push main first, then retry). To retry: taskhand reopen FOO-1.\n" in request
    assert_valid(repo)
    git(repo, "push", "-q", "origin", "main")  # what the Request asks, in its order
    moves.reopen("FOO-1", None, repo)
    assert_valid(repo)
    second, _ = run_plan(repo / "plan", repo, script, settings=settings("full"))
    assert second.status == "completed", second.message
    [pr] = remote.prs()
    assert pr["base"] == "main" and full.life(repo, "FOO-1").pr == pr["url"]
    assert "**Status**: DONE" in task_file(repo, "FOO-1")
    assert_valid(repo)


def test_a_response_written_in_the_task_file_retries_the_delivery(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The TaskTrack spec's own way: a Response below the Request, the task OPEN again."""
    repo = full.plan_repo(tmp_path, "tasktrack", kind="logic")
    remote = with_remote(repo, tmp_path, monkeypatch)
    script = full.replay(tmp_path, "FOO-1", ROLES)
    monkeypatch.setenv("FAKE_GH_FAIL", "pr create")
    first, _ = run_plan(repo / "plan", repo, script, settings=settings("full"))
    assert first.status == "waiting", first.message
    monkeypatch.delenv("FAKE_GH_FAIL")
    path = repo / "plan" / "FOO-1.md"
    text = path.read_text().replace("**Status**: WAIT", "**Status**: OPEN")
    path.write_text(text.rstrip("\n") + "\n\n**Response**: Pushed the fix; go on.\n")
    overview = repo / "plan" / "FOO-TaskTrack.md"
    overview.write_text(overview.read_text().replace("[WAIT] FOO-1", "[OPEN] FOO-1"))
    assert_valid(repo)
    second, record = run_plan(repo / "plan", repo, script, settings=settings("full"))
    assert second.status == "completed", second.message
    assert record.of("attempt_started") == []
    [pr] = remote.prs()
    assert full.life(repo, "FOO-1").pr == pr["url"]
    assert "**Status**: DONE" in path.read_text()
    assert_valid(repo)


class Reopening(Recorder):
    """A person reopens T-001 (`taskhand reopen`, a process of its own) while the run's
    implementer works on T-002."""

    def __init__(self, repo: Path) -> None:
        super().__init__()
        self.repo = repo
        self.result: subprocess.CompletedProcess[str] | None = None

    def __call__(self, event: Any) -> None:
        super().__call__(event)
        worker = event.kind == "unit_started" and event.data.get("role") == "implementer"
        if worker and event.task_id == "T-002" and self.result is None:
            reopen = [sys.executable, "-m", "taskhand", "reopen", "T-001", "plan"]
            env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
            self.result = subprocess.run(
                reopen, cwd=self.repo, capture_output=True, text=True, env=env
            )


def test_a_reopen_while_the_run_goes_on_is_delivered_by_that_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo, remote, script = two_tasks(tmp_path, monkeypatch)
    monkeypatch.setenv("FAKE_GH_FAIL_ONCE", "pr create")  # T-001's fails, the rest open
    recorder = Reopening(repo)
    config = RunConfig(agent="replay", script=str(script), **settings("full"))
    summary = launch.start(repo / "plan", config, recorder, repo)
    assert recorder.result is not None and recorder.result.returncode == 0, recorder.result
    said = recorder.result.stdout
    assert "reopened T-001: parked -> done (OPEN); its pull request is due" in said
    assert "next: the run under way takes it up" in said
    assert summary.status == "completed", summary.message  # no second run needed
    assert [e.task_id for e in recorder.of("delivered")] == ["T-002", "T-001"]
    names = branches(repo)
    prs = {pr["head"]: pr for pr in remote.prs()}
    assert prs[names["T-001"]]["base"] == "main" and prs[names["T-002"]]["base"] == names["T-001"]
    assert creates(remote) == 3
