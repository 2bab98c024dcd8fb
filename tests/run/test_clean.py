"""Retention and pruning through real runs: an ended attempt's workspace stays, pruned of its
ignored rebuildable folders; `taskhand clean` removes it only past its retention and only once
its result has a disposition, says why it keeps the rest, and waits on a live run."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from datetime import UTC, datetime, timedelta
from pathlib import Path

from taskhand.plan.model import Status
from taskhand.state import lock
from taskhand.state.paths import StateDir
from taskhand.state.records import Attempt
from taskhand.state.store import Store
from taskhand.workspace.snapshot import tree_digests
from tests.conftest import RunCli
from tests.plans import md_plan, md_task
from tests.run.test_setup import SECRET, SETUP, repo_with_setup
from tests.runs import attempt, git, make_repo, run_plan, script, write

REJECT = {
    "verdict": "reject",
    "category": "acceptance_gap",
    "concern": "a.txt says too little.",
    "evidence": ["a.txt"],
    "next_step": "Say more in a.txt.",
}
BIG = 512 * 1024


def plan_repo(tmp_path: Path) -> Path:
    """T-001 passes; T-002, which depends on it, has an acceptance command that never does."""
    files = {str(k): str(v) for k, v in md_plan(("T-001", {})).items()}
    body = "## Description\nDo it.\n\n## Acceptance criteria\n- `$ false` never passes\n"
    files["T-002-task.md"] = md_task("T-002", "Task T-002", body=body, depends="T-001")
    files = {f"plan/{k}": v for k, v in files.items()}
    return make_repo(tmp_path / "repo", {**files, ".gitignore": "node_modules/\n"})


def finished_run(tmp_path: Path) -> tuple[Path, str]:
    """T-001: rejected once, then integrated, leaving node_modules behind each time; T-002:
    failed with a result nobody disposed of."""
    repo = plan_repo(tmp_path)
    modules = write("node_modules/dep/index.js", "x" * BIG)
    replay = script(
        tmp_path,
        {
            "T-001": [
                attempt(write("a.txt", "a\n"), modules, review=REJECT),
                attempt(write("a.txt", "a, and more\n"), modules),
            ],
            "T-002": [attempt(write("b.txt", "b\n"))],
        },
    )
    summary, record = run_plan(repo / "plan", repo, replay, max_attempts=1)
    assert summary.status == "failed"
    pruned = [
        (e.task_id, e.data["attempt"], e.data["folders"]) for e in record.of("workspace_pruned")
    ]
    assert pruned == [("T-001", 1, ["node_modules"]), ("T-001", 2, ["node_modules"])]
    assert all(e.data["bytes"] >= BIG for e in record.of("workspace_pruned"))
    return repo, summary.run_id


def attempts(repo: Path, run_id: str) -> dict[tuple[str, int], Attempt]:
    with Store.open(StateDir.for_repo(repo).database) as store:
        return {(a.task_id, a.number): a for a in store.attempts(run_id)}


def age(repo: Path, attempt_id: int, days: float) -> None:
    """Say the attempt ended `days` ago."""
    ended = datetime.now(UTC) - timedelta(days=days)
    stamp = ended.isoformat(timespec="milliseconds").replace("+00:00", "Z")
    with closing(sqlite3.connect(StateDir.for_repo(repo).database)) as conn, conn:
        conn.execute("UPDATE attempts SET ended = ? WHERE id = ?", (stamp, attempt_id))


def state_files(home: Path) -> dict[str, str]:
    """Every file of the state folder but the locks (a lock names its latest holder)."""
    return tree_digests(home, skip=lambda name: name.startswith("locks/"))


def branches(repo: Path) -> list[str]:
    return git(repo, "branch", "--format=%(refname:short)").split()


def test_an_ended_attempt_keeps_its_workspace_pruned(tmp_path: Path) -> None:
    repo, run_id = finished_run(tmp_path)
    tried = attempts(repo, run_id)
    for key in (("T-001", 1), ("T-001", 2), ("T-002", 1)):
        folder = Path(tried[key].worktree)
        assert folder.is_dir(), key
        assert not (folder / "node_modules").exists(), key
        assert (folder / "plan" / "overview.md").is_file(), key  # the source stays
    assert (Path(tried["T-001", 2].worktree) / "a.txt").read_text() == "a, and more\n"
    assert (Path(tried["T-002", 1].worktree) / "b.txt").read_text() == "b\n"
    landed = tried["T-001", 2].candidate_sha
    assert git(repo, "show", f"{landed}:a.txt") == "a, and more\n"
    assert not list(StateDir.for_repo(repo).run_dir(run_id).glob("indexes/*"))


def test_clean_keeps_an_undisposed_result_and_says_why(tmp_path: Path, run_cli: RunCli) -> None:
    repo, run_id = finished_run(tmp_path)
    tried = attempts(repo, run_id)
    failed = tried["T-002", 1]
    home = StateDir.for_repo(repo).root
    before, names = state_files(home), branches(repo)
    settle = (
        f"taskhand integration set T-002 --run {run_id} --attempt 1 "
        "--status integrated|rejected|superseded"
    )

    dry = run_cli("clean", "--repo", repo, "--dry-run", "--keep-done", "0", "--keep-failed", "0")
    assert dry.exit_code == 0, dry.output
    assert state_files(home) == before and branches(repo) == names  # nothing changed
    assert f"run {run_id}:" in dry.stdout
    assert (
        f"kept {failed.worktree}: T-002 attempt 1 (failed): its result "
        f"{failed.candidate_sha[:12]} has no disposition (fix: read it, then {settle})"
    ) in dry.stdout
    assert failed.branch not in names  # a result that did not land has no branch
    depot = StateDir.for_repo(repo).depot(run_id)
    assert (
        f"kept {depot}: the commits of T-002 attempt 1, which stay, are kept there"
    ) in dry.stdout
    for number in (1, 2):  # disposed by the harness (superseded, integrated), retention 0
        assert f"would remove workspace {tried['T-001', number].worktree} (T-001" in dry.stdout
    assert f"would remove branch {tried['T-001', 2].branch} (integrated into" in dry.stdout

    cleaned = run_cli("clean", "--repo", repo, "--keep-done", "0", "--keep-failed", "0")
    assert cleaned.exit_code == 0, cleaned.output
    assert Path(failed.worktree).is_dir() and depot.is_dir()
    assert not Path(tried["T-001", 2].worktree).exists()
    assert tried["T-001", 2].branch not in branches(repo)
    assert f"taskhand/run-{run_id}" in branches(repo)

    assert (
        run_cli("integration", "set", "T-002", "--status", "rejected", "--repo", repo).exit_code
        == 0
    )
    settled = run_cli("clean", run_id, "--repo", repo, "--keep-failed", "0")
    assert (
        f"removed workspace {failed.worktree} (T-002 attempt 1 (failed), ended " in settled.stdout
    )
    assert "its result rejected by person)" in settled.stdout
    assert f"removed depot {depot} (the objects of its attempts' commits; " in settled.stdout
    assert not Path(failed.worktree).exists() and not depot.exists()
    assert git(repo, "cat-file", "-t", tried["T-001", 2].candidate_sha).strip() == "commit"


def test_retention_keeps_passed_attempts_7_days_and_others_14(
    tmp_path: Path, run_cli: RunCli
) -> None:
    repo, run_id = finished_run(tmp_path)
    tried = attempts(repo, run_id)
    assert (
        run_cli("integration", "set", "T-002", "--status", "rejected", "--repo", repo).exit_code
        == 0
    )
    fresh = run_cli("clean", "--repo", repo, "--dry-run").stdout
    assert f"kept {tried['T-001', 2].worktree}: T-001 attempt 2 (passed): kept until " in fresh
    assert "passed attempts stay 7 days (--keep-done DAYS)" in fresh
    assert "attempts that did not pass stay 14 days (--keep-failed DAYS)" in fresh
    depot = StateDir.for_repo(repo).depot(run_id)
    assert f"kept {depot}: the commits of T-001 attempt 1, T-001 attempt 2, T-002 attempt 1" in (
        fresh
    )

    for key in (("T-001", 1), ("T-001", 2)):
        age(repo, tried[key].id, 8)
    age(repo, tried["T-002", 1].id, 15)
    cleaned = run_cli("clean", "--repo", repo).stdout
    assert not Path(tried["T-001", 2].worktree).exists()  # passed, 8 days > 7
    assert Path(tried["T-001", 1].worktree).is_dir()  # rejected, 8 days < 14
    assert f"kept {tried['T-001', 1].worktree}: T-001 attempt 1 (rejected): kept until " in cleaned
    assert not Path(tried["T-002", 1].worktree).exists()  # failed, 15 days > 14
    assert depot.is_dir()  # T-001 attempt 1's commit is only there

    (repo / "plan" / "taskhand.toml").write_text("[clean]\nkeep_failed = 7\n")
    assert run_cli("clean", "--repo", repo).exit_code == 0
    assert not Path(tried["T-001", 1].worktree).exists()  # the plan's own retention: 8 > 7
    assert not depot.exists()  # with the last workspace that needed it


def test_clean_waits_on_a_live_run(tmp_path: Path, run_cli: RunCli) -> None:
    repo, run_id = finished_run(tmp_path)
    tried = attempts(repo, run_id)
    for attempt_row in tried.values():
        age(repo, attempt_row.id, 30)
    state = StateDir.for_repo(repo)
    plan = (repo / "plan").resolve()
    with Store.open(state.database) as store:
        store.set_task(run_id, "T-002", Status.BUSY)  # the live run works on it again
    with lock.hold(state.lock(plan), plan, "a live run"):
        live = run_cli("clean", "--repo", repo)
    assert live.exit_code == 0, live.output
    assert f"waiting on run {run_id}: the run's plan is held by a live process (pid " in live.stdout
    assert "task branches and run branch wait until it ends (fix: clean again then)" in live.stdout
    for number in (1, 2):  # T-002 depends on T-001 and has not finished
        path = tried["T-001", number].worktree
        assert f"waiting on {path}: T-001 attempt {number} " in live.stdout
        assert "T-002 depends on it and has not finished in the live run" in live.stdout
        assert Path(path).is_dir()
    assert f"kept {tried['T-002', 1].worktree}: T-002 attempt 1 (failed): its result " in (
        live.stdout
    )
    assert tried["T-001", 2].branch in branches(repo)  # a live run's branches wait

    with Store.open(state.database) as store:
        store.set_task(run_id, "T-002", Status.FAIL)
    with lock.hold(state.lock(plan), plan, "a live run"):
        later = run_cli("clean", "--repo", repo)
    assert f"removed workspace {tried['T-001', 2].worktree} (T-001 attempt 2" in later.stdout
    assert not Path(tried["T-001", 2].worktree).exists()
    assert tried["T-001", 2].branch in branches(repo)


def test_the_setup_copies_leave_a_kept_workspace(tmp_path: Path) -> None:
    """A `.env` copied in is deleted, a tracked file copied over is put back as the result
    has it: the checkout's secrets are not kept for days in the state folder."""
    repo = repo_with_setup(tmp_path, ["T-001"])
    replay = script(tmp_path, {"T-001": [attempt(write("a.txt", "a\n"))]})
    summary, record = run_plan(repo / "plan", repo, replay, settings={"setup": SETUP})
    assert summary.status == "completed"
    [pruned] = record.of("workspace_pruned")
    assert pruned.data["dropped"] == [".env", "config/local.json"]
    assert pruned.data["folders"] == ["build"]  # what the setup command built
    folder = Path(attempts(repo, summary.run_id)["T-001", 1].worktree)
    assert not (folder / ".env").exists() and not (folder / "build").exists()
    assert (folder / "config" / "local.json").read_text() == '{"db": "example"}\n'
    assert (folder / "a.txt").read_text() == "a\n"
    assert SECRET in (repo / ".env").read_text()  # the checkout's own stays
