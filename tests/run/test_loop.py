"""Running plans end to end with the replay agent: TaskTrack files, gates, caps, human feedback."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from taskhand import config as runconfig
from taskhand.run import launch
from taskhand.state.paths import StateDir
from taskhand.state.store import Store
from tests.conftest import RunCli
from tests.plans import md_plan, md_task, tt_plan
from tests.runs import attempt, git, make_repo, run_plan, script, write

STAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")


def tasktrack_plan(tmp_path: Path, ids: list[str]) -> Path:
    folder = tmp_path / "plan"
    folder.mkdir()
    for name, text in tt_plan([[(i, "OPEN") for i in ids]]).items():
        (folder / name).write_text(str(text))
    return folder


def test_tasktrack_run_writes_the_spec_fields_and_messages(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    plan = tasktrack_plan(tmp_path, ["FOO-1", "FOO-2"])
    before = (plan / "FOO-1.md").read_text()
    replay = script(
        tmp_path,
        {
            "FOO-1": [attempt(write("one.txt", "one\n"), resolution="Wrote one.txt.")],
            "FOO-2": [attempt(write("two.txt", "two\n"), resolution="Wrote two.txt.")],
        },
    )
    summary, record = run_plan(plan, repo, replay)
    assert summary.status == "completed"
    per_task = [
        "TaskTrack STEP: Claim",
        "TaskTrack STEP: Execute",
        "TaskTrack STEP: Conclude",
    ]
    assert record.steps() == [
        "TaskTrack STEP: Recovery",
        "TaskTrack STEP: Screen",
        "TaskTrack STEP: Select Task FOO-1",
        *per_task,
        "TaskTrack FINISHED: Task FOO-1",
        "TaskTrack STEP: Complete",
        "TaskTrack STEP: Screen",
        "TaskTrack STEP: Select Task FOO-2",
        *per_task,
        "TaskTrack FINISHED: Task FOO-2",
        "TaskTrack STEP: Complete",
        "TaskTrack STEP: Screen",
        "TaskTrack EXIT: Plan Completed",
    ]
    after = (plan / "FOO-1.md").read_text()
    expected = before.replace("**Status**: OPEN", "**Status**: DONE") + (
        "\n**Resolution**: Wrote one.txt.\n"
    )
    assert STAMP.sub("T", after) == STAMP.sub("T", expected)
    assert "2026-12-01T09:00:00Z" not in after.split("**Updated**: ")[1][:20]
    overview = (plan / "FOO-TaskTrack.md").read_text()
    assert "* [DONE] FOO-1: Task FOO-1" in overview and "* [DONE] FOO-2: Task FOO-2" in overview
    log = git(repo, "log", "--format=%s", f"main..{summary.run_branch}").split("\n")
    assert log[:2] == ["FOO-2: Task FOO-2", "FOO-1: Task FOO-1"]


def test_waiting_task_continues_after_a_person_answers(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    plan = tasktrack_plan(tmp_path, ["FOO-1"])
    replay = script(
        tmp_path,
        {
            "FOO-1": [
                attempt(outcome="question", question="Which separator?", options=["comma", "tab"]),
                attempt(write("sep.txt", ",\n"), resolution="Used a comma, as answered."),
            ]
        },
    )
    summary, record = run_plan(plan, repo, replay)
    assert summary.status == "waiting"
    assert record.steps()[-1] == "TaskTrack EXIT: Waiting for Human Feedback"
    task_file = plan / "FOO-1.md"
    text = task_file.read_text()
    assert "**Status**: WAIT" in text
    assert text.rstrip().endswith(
        "**Request**: Which separator? Options: (A) comma (B) tab (the first is recommended)."
    )
    assert "* [WAIT] FOO-1" in (plan / "FOO-TaskTrack.md").read_text()

    # The person answers, as the spec's human feedback workflow says.
    task_file.write_text(
        text.replace("**Status**: WAIT", "**Status**: OPEN") + "\n**Response**: comma\n"
    )
    overview = plan / "FOO-TaskTrack.md"
    overview.write_text(overview.read_text().replace("[WAIT]", "[OPEN]"))
    summary2, _ = run_plan(plan, repo, replay)
    assert (summary2.run_id, summary2.status) == (summary.run_id, "completed")
    final = task_file.read_text()
    order = [final.index(f"**{f}**") for f in ("Request", "Response", "Resolution")]
    assert order == sorted(order)
    assert "**Status**: DONE" in final
    with Store.open(StateDir.for_repo(repo).database) as store:
        [unit] = [
            u
            for u in store.units(summary.run_id)
            if u.outcome == "done" and u.role == "implementer"
        ]
        prompt = json.loads(Path(str(unit.transcript)).read_text().splitlines()[0])["content"]
    assert "Asked: Which separator?" in prompt and "Answer: comma" in prompt


def markdown_repo(tmp_path: Path, task: str, extra: str = "") -> tuple[Path, Path]:
    """A repository whose committed plan holds T-001 with `task` as its criteria body."""
    files = {str(k): str(v) for k, v in md_plan().items()}
    body = f"## Description\nDo it.\n\n## Acceptance criteria\n{task}\n"
    files["T-001-task.md"] = (
        md_task("T-001", "Task T-001", body=body)
        if not extra
        else (md_task("T-001", "Task T-001", body=body, paths=extra))
    )
    repo = make_repo(
        tmp_path / "repo", {"README.md": "# p\n", **{f"plan/{k}": v for k, v in files.items()}}
    )
    return repo, repo / "plan"


@pytest.mark.parametrize(
    ("criteria", "paths", "bad", "good", "reason"),
    [
        (
            '- `$ python3 -c \'import sys; sys.exit(open("out.txt").read() != "ok")\'` ok',
            "",
            write("out.txt", "no"),
            write("out.txt", "ok"),
            "exited 1, expected 0",
        ),
        (
            "- `$ python3 -c 'import os,time; os.path.exists(\"slow\") and time.sleep(30)'` "
            "(timeout 1s) fast",
            "",
            write("slow", "x"),
            write("fast", "x"),
            "timed out after 1s",
        ),
        (
            "- it works",
            "",
            write("a.txt", "trailing space \n"),
            write("a.txt", "clean\n"),
            "trailing whitespace",
        ),
        (
            "- it works",
            "src/**",
            write("other.txt", "x\n"),
            write("src/a.txt", "x\n"),
            "other.txt: outside the allowed paths (src/**)",
        ),
        (
            "- it works",
            "",
            write("plan/overview.md", "# Feature\n\nMine now.\n"),
            write("a.txt", "x\n"),
            "plan/overview.md: inside the read-only path plan",
        ),
    ],
    ids=["exit-code", "timeout", "whitespace", "out-of-scope", "plan-folder"],
)
def test_each_gate_failure_reaches_the_next_attempt(
    tmp_path: Path,
    criteria: str,
    paths: str,
    bad: dict[str, str],
    good: dict[str, str],
    reason: str,
) -> None:
    repo, plan = markdown_repo(tmp_path, criteria, paths)
    replay = script(tmp_path, {"T-001": [attempt(bad), attempt(good)]})
    summary, record = run_plan(plan, repo, replay, max_attempts=2)
    assert summary.status == "completed", [e.data for e in record.of("attempt_failed")]
    [failed] = record.of("attempt_failed")
    assert reason in str(failed.data["reason"])
    with Store.open(StateDir.for_repo(repo).database) as store:
        attempts = store.attempts(summary.run_id, "T-001")
        second = store.units(summary.run_id, "T-001")[1]
        prompt = json.loads(Path(str(second.transcript)).read_text().splitlines()[0])["content"]
    assert [a.status for a in attempts] == ["failed", "passed"]
    assert reason in prompt
    assert git(repo, "rev-list", "--count", f"main..{summary.run_branch}").strip() == "1"


def test_attempts_are_capped(tmp_path: Path) -> None:
    repo, plan = markdown_repo(tmp_path, "- `$ false` never passes")
    replay = script(tmp_path, {"T-001": [attempt(write("a.txt", "x\n"))]})
    summary, record = run_plan(plan, repo, replay, max_attempts=2)
    assert summary.status == "failed"
    assert record.steps()[-1] == "TaskTrack EXIT: Failed Tasks"
    [concluded] = record.of("task_concluded")
    assert concluded.data["status"] == "FAIL"
    assert str(concluded.data["text"]).startswith("2 attempts failed; the last: `false` exited 1")
    assert len(record.of("attempt_started")) == 2


def test_task_spend_cap_fails_the_task_and_independent_tasks_go_on(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    plan = tasktrack_plan(tmp_path, ["FOO-1", "FOO-2"])
    replay = script(
        tmp_path,
        {
            "FOO-1": [attempt(write("a.txt", "x \n"), cost=0.6)],
            "FOO-2": [attempt(write("b.txt", "b\n"), cost=0.1)],
        },
    )
    summary, record = run_plan(plan, repo, replay, task_dollars=0.5)
    assert summary.status == "failed"
    statuses = {e.task_id: e.data["status"] for e in record.of("task_concluded")}
    assert statuses == {"FOO-1": "FAIL", "FOO-2": "DONE"}
    assert "the task's spend cap of $0.5 was reached" in (plan / "FOO-1.md").read_text()


def test_run_token_cap_stops_the_run_resumably(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    plan = tasktrack_plan(tmp_path, ["FOO-1", "FOO-2"])
    replay = script(
        tmp_path,
        {
            "FOO-1": [attempt(write("a.txt", "a\n"), tokens_in=900, tokens_out=200)],
            "FOO-2": [attempt(write("b.txt", "b\n"), tokens_in=10, tokens_out=10)],
        },
    )
    summary, _ = run_plan(plan, repo, replay, run_tokens=1000)
    assert (summary.status, summary.message) == (
        "capped",
        "the run's token cap of 1000 was reached",
    )
    assert "* [OPEN] FOO-2" in (plan / "FOO-TaskTrack.md").read_text()
    # A git killed mid-update leaves a lock file on the ref; the resumed run clears it.
    (repo / ".git" / "refs" / "heads" / f"{summary.run_branch}.lock").write_text("0" * 40)
    resumed, record = run_plan(plan, repo, replay, run_tokens=5000)
    assert (resumed.run_id, resumed.status) == (summary.run_id, "completed")
    assert any("stale lock" in str(e.data["message"]) for e in record.of("warning"))


def test_user_checkout_is_untouched_and_uncommitted_work_is_invisible(tmp_path: Path) -> None:
    from taskhand.workspace.snapshot import snapshot

    repo, plan = markdown_repo(tmp_path, "- `$ test ! -e scratch.txt` the scratch file is unseen")
    (repo / "README.md").write_text("# p\nedited, not committed\n")
    (repo / "staged.txt").write_text("staged\n")
    git(repo, "add", "staged.txt")
    (repo / "stashed.txt").write_text("stash me\n")
    git(repo, "add", "stashed.txt")
    git(repo, "stash", "push", "-q", "-m", "kept", "--", "stashed.txt")
    (repo / "scratch.txt").write_text("untracked\n")
    before = snapshot(repo)
    replay = script(tmp_path, {"T-001": [attempt(write("new.txt", "new\n"))]})
    summary, record = run_plan(plan, repo, replay)
    assert summary.status == "completed"
    assert snapshot(repo) == before
    [warning] = record.of("warning")
    assert "not visible to tasks" in str(warning.data["message"])
    assert git(repo, "worktree", "list", "--porcelain").count("worktree ") == 1


def test_stats_per_task(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    review = {"verdict": "accept", "tokens_in": 50, "tokens_out": 5, "cost": 0.0625}
    plan = tasktrack_plan(tmp_path, ["FOO-1", "FOO-2"])
    replay = script(
        tmp_path,
        {
            "FOO-1": [
                attempt(write("a.txt", "a \n"), tokens_in=100, tokens_out=10, cost=0.25),
                attempt(
                    write("a.txt", "a\n"), tokens_in=120, tokens_out=12, cost=0.5, review=review
                ),
            ],
            "FOO-2": [
                attempt(write("b.txt", "b\n"), tokens_in=7, tokens_out=3, cost=0.125, review=review)
            ],
        },
    )
    summary, _ = run_plan(plan, repo, replay)
    with Store.open(StateDir.for_repo(repo).database) as store:
        figures = store.stats(summary.run_id).as_json()
    rows = {r["task_id"]: r for r in figures["tasks"]}
    # FOO-1: two implementer units (the first fails its whitespace check) and one review.
    assert (rows["FOO-1"]["units"], rows["FOO-1"]["tokens_in"], rows["FOO-1"]["cost"]) == (
        3,
        270,
        0.8125,
    )
    assert (figures["total"]["units"], figures["total"]["tokens_out"]) == (5, 35)
    assert figures["total"]["cost"] == pytest.approx(1.0)


def test_bad_input_creates_nothing(tmp_path: Path, isolated_home: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    plan = tasktrack_plan(tmp_path, ["FOO-1"])
    replay = script(tmp_path, {"FOO-1": [attempt(write("a.txt", "a\n"))]})
    config = runconfig.RunConfig(agent="replay", script=str(replay))
    with pytest.raises(Exception, match=r"not a git repository: .*\(fix: "):
        launch.start(plan, config, print, plain)
    empty = tmp_path / "empty"
    empty.mkdir()
    git(empty, "init", "-q")
    with pytest.raises(launch.RunError, match=r"has no commits yet \(fix: make a first commit\)"):
        launch.start(plan, config, print, empty)
    repo = make_repo(tmp_path / "repo")
    bad_base = runconfig.RunConfig(agent="replay", script=str(replay), base_ref="nope")
    with pytest.raises(Exception, match=r"no commit named 'nope' .*\(fix: "):
        launch.start(plan, bad_base, print, repo)
    with pytest.raises(
        Exception, match=r"unknown agent 'gpt' \(fix: use one of claude, .*, openai, replay\)"
    ):
        launch.start(plan, runconfig.RunConfig(agent="gpt"), print, repo)
    with pytest.raises(Exception, match=r"needs a script"):
        launch.start(plan, runconfig.RunConfig(agent="replay"), print, repo)
    (plan / "FOO-1.md").write_text("# FOO-1: Task FOO-1\n")
    with pytest.raises(Exception, match=r"FOO-1\.md"):
        launch.start(plan, config, print, repo)
    assert git(repo, "branch", "--format=%(refname:short)").split() == ["main"]
    assert not isolated_home.joinpath("repos").exists() or not any(
        isolated_home.joinpath("repos").rglob("state.db")
    )


def test_a_second_run_of_a_live_plan_names_the_holder(tmp_path: Path) -> None:
    from taskhand.state import lock

    repo = make_repo(tmp_path / "repo")
    plan = tasktrack_plan(tmp_path, ["FOO-1"])
    replay = script(tmp_path, {"FOO-1": [attempt(write("a.txt", "a\n"))]})
    state = StateDir.for_repo(repo)
    with (
        lock.hold(state.lock(plan), plan, "run 1234"),
        pytest.raises(
            lock.LockedError, match=r"already being run by pid \d+ \(run 1234, since .*\(fix: wait"
        ),
    ):
        run_plan(plan, repo, replay)


def test_a_branch_the_run_did_not_make_is_left_alone(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    git(repo, "checkout", "-q", "-b", "taskhand/FOO-1-task-foo-1")
    (repo / "mine.txt").write_text("a person's work\n")
    git(repo, "add", "mine.txt")
    git(repo, "commit", "-q", "-m", "mine")
    mine = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "checkout", "-q", "main")
    plan = tasktrack_plan(tmp_path, ["FOO-1"])
    replay = script(tmp_path, {"FOO-1": [attempt(write("a.txt", "a\n"))]})
    summary, _ = run_plan(plan, repo, replay)
    assert summary.status == "completed"
    assert git(repo, "rev-parse", "taskhand/FOO-1-task-foo-1").strip() == mine
    assert git(repo, "rev-parse", f"taskhand/FOO-1-task-foo-1-{summary.run_id}").strip() == (
        git(repo, "rev-parse", summary.run_branch).strip()
    )


def test_a_users_branch_at_the_base_is_neither_taken_over_nor_cleaned(
    tmp_path: Path, run_cli: RunCli
) -> None:
    """A branch of the task's name that sits exactly at the base looks like the run's own:
    it is not, since this run never recorded a candidate on it."""
    repo = make_repo(tmp_path / "repo")
    base = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "branch", "taskhand/FOO-1-task-foo-1", base)
    plan = tasktrack_plan(tmp_path, ["FOO-1"])
    replay = script(tmp_path, {"FOO-1": [attempt(write("a.txt", "a\n"))]})
    summary, _ = run_plan(plan, repo, replay)
    assert summary.status == "completed"
    assert git(repo, "rev-parse", "taskhand/FOO-1-task-foo-1").strip() == base
    ours = f"taskhand/FOO-1-task-foo-1-{summary.run_id}"
    cleaned = run_cli("clean", summary.run_id, "--repo", repo)
    assert f"removed branch {ours}" in cleaned.output
    assert git(repo, "rev-parse", "taskhand/FOO-1-task-foo-1").strip() == base
    assert git(repo, "branch", "--list", ours) == ""


def test_a_task_branch_moved_by_someone_else_is_kept_by_clean(
    tmp_path: Path, run_cli: RunCli
) -> None:
    repo = make_repo(tmp_path / "repo")
    plan = tasktrack_plan(tmp_path, ["FOO-1"])
    replay = script(tmp_path, {"FOO-1": [attempt(write("a.txt", "a\n"))]})
    summary, _ = run_plan(plan, repo, replay)
    git(repo, "branch", "-f", "taskhand/FOO-1-task-foo-1", "main")  # a person reuses it
    cleaned = run_cli("clean", summary.run_id, "--repo", repo)
    assert "kept taskhand/FOO-1-task-foo-1: holds" in cleaned.output
    assert "this run did not put there" in cleaned.output
    assert git(repo, "rev-parse", "taskhand/FOO-1-task-foo-1") == git(repo, "rev-parse", "main")


def test_workspace_paths_in_a_ledger_text_become_relative(tmp_path: Path) -> None:
    from taskhand.pipeline.harness import workspace_relative as _workspace_relative

    worktree = tmp_path / "worktrees" / "T-1" / "attempt-2"
    copy = tmp_path / "worktrees" / "review-security"
    text = (
        f'File "{worktree}/tests/x.py", cwd {worktree}; a reviewer saw '
        f"{copy}/a.py; another attempt: {worktree}2/b.py"
    )
    assert _workspace_relative(text, worktree) == (
        f'File "tests/x.py", cwd .; a reviewer saw a.py; another attempt: {worktree}2/b.py'
    )
