"""`run --snapshot`: tasks start from the checkout as it is (staged, unstaged and untracked
changes, the plan's own uncommitted edits; never ignored files), the user's index, files,
stash, refs, HEAD and configuration stay byte for byte, and a resumed run keeps the snapshot."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from taskhand.run import launch
from taskhand.state.paths import StateDir
from taskhand.state.store import Store
from taskhand.workspace import snapshot_base
from taskhand.workspace.snapshot import snapshot
from tests.conftest import RunCli
from tests.plans import md_plan, md_task
from tests.runs import attempt, git, make_repo, run_plan, script, write

SEES_THE_CHECKOUT = (
    "- `$ cat notes/untracked.txt` the untracked file is there\n"
    "- `$ grep -q 'edited, not staged' README.md` the unstaged edit is there\n"
    "- `$ grep -q staged staged.txt` the staged file is there\n"
    "- `$ test ! -e build/out.o` the ignored file is not\n"
    "- `$ test -x run.sh` the executable bit holds\n"
    "- `$ test -L link` the link is a link\n"
    "- `$ cat plan/draft-notes.md` the plan's own uncommitted file is there\n"
)


def dirty_repo(tmp_path: Path, criteria: str = SEES_THE_CHECKOUT) -> tuple[Path, Path]:
    """A repository whose committed plan has T-001 checking `criteria`, and a checkout with
    staged, unstaged, untracked, ignored and stashed changes."""
    files = {str(k): str(v) for k, v in md_plan().items()}
    body = f"## Description\nDo it.\n\n## Acceptance criteria\n{criteria}"
    files["T-001-task.md"] = md_task("T-001", "Task T-001", body=body)
    committed = {"README.md": "# p\n", ".gitignore": "build/\n"}
    repo = make_repo(tmp_path / "repo", {**committed, **{f"plan/{k}": v for k, v in files.items()}})
    (repo / "stashed.txt").write_text("stash me\n")
    git(repo, "add", "stashed.txt")
    git(repo, "stash", "push", "-q", "-m", "kept", "--", "stashed.txt")
    (repo / "staged.txt").write_text("staged\n")
    git(repo, "add", "staged.txt")
    (repo / "README.md").write_text("# p\nedited, not staged\n")
    (repo / "notes").mkdir()
    (repo / "notes" / "untracked.txt").write_text("untracked\n")
    (repo / "build").mkdir()
    (repo / "build" / "out.o").write_text("ignored\n")
    (repo / "run.sh").write_text("#!/bin/sh\n")
    (repo / "run.sh").chmod(0o755)
    os.symlink("README.md", repo / "link")
    (repo / "plan" / "draft-notes.md").write_text("what the person is still writing\n")
    return repo, repo / "plan"


def user_state(repo: Path) -> dict[str, object]:
    """The checkout (index, files, stash, HEAD, status), every ref but the run's own (its
    branches and its snapshot ref), and the configuration's bytes."""
    refs = [
        line
        for line in git(repo, "for-each-ref", "--format=%(objectname) %(refname)").splitlines()
        if " refs/taskhand/" not in line and " refs/heads/taskhand/" not in line
    ]
    config = hashlib.sha256((repo / ".git" / "config").read_bytes()).hexdigest()
    return {**snapshot(repo), "refs": refs, "config": config}


def test_tasks_see_the_checkout_and_the_checkout_stays_as_it_was(tmp_path: Path) -> None:
    repo, plan = dirty_repo(tmp_path)
    before = user_state(repo)
    replay = script(tmp_path, {"T-001": [attempt(write("new.txt", "new\n"))]})
    summary, record = run_plan(plan, repo, replay, settings={"snapshot": True})
    assert summary.status == "completed", [e.data for e in record.of("gate")]
    assert user_state(repo) == before
    assert not record.of("warning")  # nothing uncommitted is invisible to the tasks
    [started] = record.of("run_started")
    base = str(started.data["base"])
    assert started.data["snapshot"] == f"refs/taskhand/snapshots/{summary.run_id}"
    assert snapshot_base.kept(repo, summary.run_id) == base
    assert git(repo, "rev-parse", f"{base}^").strip() == git(repo, "rev-parse", "HEAD").strip()
    subjects = git(repo, "log", "--format=%s", f"main..{summary.run_branch}").splitlines()
    assert subjects == ["T-001: Task T-001", "taskhand: snapshot of the working tree"]
    assert "build/out.o" not in git(repo, "ls-tree", "-r", "--name-only", base)


def test_without_snapshot_the_warning_names_it(tmp_path: Path) -> None:
    repo, plan = dirty_repo(tmp_path)
    replay = script(tmp_path, {"T-001": [attempt(write("new.txt", "new\n"))]})
    summary, record = run_plan(plan, repo, replay, max_attempts=1)
    assert summary.status == "failed"  # its checks look for what only a snapshot holds
    [warning] = record.of("warning")
    assert "not visible to tasks" in str(warning.data["message"])
    assert "--snapshot" in str(warning.data["message"])


def test_a_resumed_run_keeps_its_snapshot(tmp_path: Path, run_cli: RunCli) -> None:
    repo, plan = dirty_repo(tmp_path, "- `$ test ! -e later.txt` later changes stay unseen\n")
    replay = script(
        tmp_path,
        {
            "T-001": [
                attempt(outcome="question", question="Which?"),
                attempt(write("new.txt", "new\n")),
            ]
        },
    )
    first, _ = run_plan(plan, repo, replay, settings={"snapshot": True})
    assert first.status == "waiting"
    base = snapshot_base.kept(repo, first.run_id)
    assert base is not None
    (repo / "later.txt").write_text("after the snapshot\n")
    git(repo, "update-ref", "-d", snapshot_base.ref_of(first.run_id))  # as a kill would leave
    assert run_cli("respond", "T-001", "this one", plan).exit_code == 0
    summary = launch.resume(first.run_id, lambda event: None, repo)
    assert (summary.run_id, summary.status) == (first.run_id, "completed")
    assert snapshot_base.kept(repo, first.run_id) == base
    with Store.open(StateDir.for_repo(repo).database) as store:
        assert {a.base_sha for a in store.attempts(first.run_id)} == {base}


def test_a_continued_run_keeps_the_base_it_started_from(tmp_path: Path) -> None:
    repo, plan = dirty_repo(tmp_path, "- `$ test -e later.txt` only a new snapshot has it\n")
    replay = script(tmp_path, {"T-001": [attempt(outcome="question", question="Which?")]})
    first, _ = run_plan(plan, repo, replay)
    (repo / "later.txt").write_text("after the run started\n")
    again, record = run_plan(plan, repo, replay, settings={"snapshot": True})
    assert again.run_id == first.run_id
    said = [str(w.data["message"]) for w in record.of("warning")]
    assert any("applies to a new run (fix: taskhand run PLAN --new --snapshot)" in w for w in said)
    assert snapshot_base.kept(repo, first.run_id) is None


def test_snapshot_refuses_another_base_or_delivery(tmp_path: Path, run_cli: RunCli) -> None:
    repo, plan = dirty_repo(tmp_path)
    replay = script(tmp_path, {"T-001": [attempt(write("new.txt", "new\n"))]})
    before = user_state(repo)
    based = run_cli("run", plan, "--script", replay, "--snapshot", "--base", "main")
    assert based.exit_code == 1
    assert "cannot start from 'main' (fix: drop --base" in based.stderr
    delivered = run_cli("run", plan, "--script", replay, "--snapshot", "--deliver", "task")
    assert delivered.exit_code == 1
    assert "--snapshot cannot go with delivery" in delivered.stderr
    assert delivered.stderr.count("\n") == 1
    assert user_state(repo) == before
    assert not StateDir.for_repo(repo).database.exists()


@pytest.mark.parametrize("how", ["flag", "variable", "file"])
def test_snapshot_from_the_flag_the_variable_or_the_file(
    tmp_path: Path, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    _, plan = dirty_repo(tmp_path)
    replay = script(tmp_path, {"T-001": [attempt(write("new.txt", "new\n"))]})
    args: list[str | Path] = ["run", plan, "--script", replay]
    if how == "flag":
        args.append("--snapshot")
    elif how == "variable":
        monkeypatch.setenv("TASKHAND_SNAPSHOT", "1")
    else:
        (plan / "taskhand.toml").write_text("[run]\nsnapshot = true\n")
    result = run_cli(*args)
    assert result.exit_code == 0, result.output
    assert "from a snapshot of your checkout" in result.output
    assert "refs/taskhand/snapshots/" in result.output
