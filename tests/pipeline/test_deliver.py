"""The deliver stage in whole runs, against a bare repository as the remote and the stand-in
gh: one pull request per task (stacked on unmerged work below it) or one per run, the body
ticked, nothing opened twice after a failure or a SIGKILL, and a retry that redoes only the
delivery."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from taskhand.config import AppConfig, Delivery
from taskhand.plan.model import Status
from taskhand.plan.validate import validate
from taskhand.run import moves
from taskhand.state.life import Lifecycle
from taskhand.state.paths import StateDir
from taskhand.state.records import DeliveryState
from taskhand.state.store import Store
from tests.agents.pictures import APP_PAGE, SERVE, assert_shows_the_app, needs_browser
from tests.conftest import RunCli
from tests.delivery.remotes import Remote, with_remote
from tests.pipeline import test_full as full
from tests.pipeline import test_full_browser as browser
from tests.plans import md_plan, md_task
from tests.runs import attempt, git, make_repo, run_plan, script, write

CRASHING_RUN = Path(__file__).resolve().parents[1] / "scenarios" / "crashing_run.py"
ALLOWED = (["auth", "status"], ["pr", "view"], ["pr", "create"])
TASK = {"deliver": Delivery("task")}
RUN = {"deliver": Delivery("run")}


def body(text: str, command: str) -> str:
    return (
        f"## Description\n{text}\n\n## Acceptance criteria\n"
        f"- `$ {command}` passes\n- the file reads well\n"
    )


def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Remote, Path]:
    """T-001 writes a.txt; T-002 (after T-001) b.txt; T-003 (independent) c.txt."""
    files = {str(k): str(v) for k, v in md_plan().items()}
    files["T-001-a.md"] = md_task("T-001", "Write a", body=body("Write a.txt.", "test -s a.txt"))
    files["T-002-b.md"] = md_task(
        "T-002", "Write b", body=body("Write b.txt.", "test -s b.txt"), depends="T-001"
    )
    files["T-003-c.md"] = md_task("T-003", "Write c", body=body("Write c.txt.", "test -s c.txt"))
    repo = make_repo(
        tmp_path / "repo", {"README.md": "# p\n"} | {f"plan/{k}": v for k, v in files.items()}
    )
    remote = with_remote(repo, tmp_path, monkeypatch)
    replay = script(
        tmp_path,
        {
            "T-001": [attempt(write("a.txt", "a\n"), resolution="Wrote a.txt.")],
            "T-002": [attempt(write("b.txt", "b\n"), resolution="Wrote b.txt.")],
            "T-003": [attempt(write("c.txt", "c\n"), resolution="Wrote c.txt.")],
        },
    )
    return repo, remote, replay


def store_of(repo: Path) -> Store:
    return Store.open(StateDir.for_repo(repo).database)


def branches(repo: Path) -> dict[str, str]:
    with store_of(repo) as store:
        return {a.task_id: a.branch for a in store.attempts(store.runs()[0].id)}


def only_allowed_calls(remote: Remote) -> bool:
    return all(any(call[: len(a)] == a for a in ALLOWED) for call in remote.calls())


def creates(remote: Remote) -> int:
    return sum(call[:2] == ["pr", "create"] for call in remote.calls())


def test_each_task_gets_one_pull_request_stacked_on_the_unmerged_work_below_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_cli: RunCli
) -> None:
    repo, remote, replay = project(tmp_path, monkeypatch)
    summary, record = run_plan(repo / "plan", repo, replay, settings=TASK)
    assert summary.status == "completed", summary.message
    names = branches(repo)
    prs = {pr["head"]: pr for pr in remote.prs()}
    assert sorted(prs) == sorted(names.values()) and len(remote.prs()) == 3
    one, two, three = (prs[names[t]] for t in ("T-001", "T-002", "T-003"))
    # Each branch is on the remote with the run's commits up to its own.
    assert remote.subjects(f"main..{names['T-001']}") == ["T-001: Write a"]
    assert remote.subjects(f"{names['T-001']}..{names['T-002']}") == ["T-002: Write b"]
    assert remote.subjects(f"{names['T-002']}..{names['T-003']}") == ["T-003: Write c"]
    # T-001 goes into main; the others stand on the pull request below theirs.
    assert (one["base"], two["base"], three["base"]) == ("main", names["T-001"], names["T-002"])
    assert "Stacked" not in one["body"]
    assert f"It goes into T-001's branch ({one['url']})" in two["body"]
    assert "T-001 is a dependency of T-002" in two["body"]
    assert "T-002 ran before T-003, so this branch holds its commit" in three["body"]
    # The body: the goal, each criterion ticked with its command or left for a person, the
    # reviewer's verdict with its unit, the task's own commit.
    assert one["title"] == "T-001: Write a"
    assert "## Goal\n\nWrite a.txt." in one["body"]
    assert "- [x] ✓ `$ test -s a.txt` passes\n- [ ] the file reads well" in one["body"]
    with store_of(repo) as store:
        run_id = store.runs()[0].id
        unit = [u.id for u in store.units(run_id, "T-001") if u.role == "evaluator"][-1]
        rows = {d.task_id: d for d in store.deliveries(run_id)}
        life = store.life(str((repo / "plan").resolve()), "T-001")
        resolution = store.task_states(run_id)["T-001"].reason
    assert f"- ✓ reviewer (unit {unit}) accepts" in one["body"]
    assert one["body"].split("## Commits\n\n")[1].startswith("- `")
    assert "T-001: Write a" in one["body"].split("## Commits")[1]
    assert "T-002" not in one["body"].split("## Commits")[1]
    body_file = StateDir.for_repo(repo).artifacts(repo / "plan", "T-001") / "pr-body.md"
    assert body_file.read_text() == one["body"]
    # Recorded where show and stats read it; nothing but the three calls; nothing merged.
    assert {t: (r.state, r.pr_url) for t, r in rows.items()} == {
        t: (DeliveryState.OPENED, prs[names[t]]["url"]) for t in ("T-001", "T-002", "T-003")
    }
    assert resolution == f"Wrote a.txt. (delivered: {one['url']})"
    assert f"\npr: {one['url']}\n---\n" in (repo / "plan" / "T-001-a.md").read_text()
    assert life is not None and (life.status, life.pr) == (Lifecycle.DELIVERED, one["url"])
    assert [e.data["url"] for e in record.of("delivered")] == [one["url"], two["url"], three["url"]]
    assert only_allowed_calls(remote) and creates(remote) == 3
    assert remote.tip("main") == git(repo, "rev-parse", "main").strip()
    # Where a person reads it: show's resolution, stats' PR column.
    shown = json.loads(run_cli("show", repo / "plan", "--json").output)
    assert shown["tasks"][0]["resolution"] == resolution
    stats = json.loads(run_cli("stats", "--repo", repo, "--json").output)
    assert {r["task_id"]: r["pr"] for r in stats["tasks"]} == {
        t: prs[names[t]]["url"] for t in ("T-001", "T-002", "T-003")
    }


def test_a_gh_failure_fails_the_task_and_reopen_retries_only_the_delivery(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo, remote, replay = project(tmp_path, monkeypatch)
    monkeypatch.setenv("FAKE_GH_FAIL", "pr create")
    first, _ = run_plan(repo / "plan", repo, replay, settings=TASK)
    assert first.status == "failed"
    with store_of(repo) as store:
        state = store.task_states(first.run_id)["T-001"]
        units = len(store.units(first.run_id, "T-001"))
    assert state.status is Status.FAIL
    assert state.reason == (
        "deliver: gh pr create failed: HTTP 502: Bad Gateway (https://api.github.example/graphql)"
    )
    assert remote.tip(branches(repo)["T-001"]) is not None and remote.prs() == []
    monkeypatch.delenv("FAKE_GH_FAIL")
    for task_id in ("T-001", "T-003"):  # T-003 ran too (it needs nothing of T-001), and failed
        moves.reopen(task_id, repo / "plan", repo)
    second, record = run_plan(repo / "plan", repo, replay, settings=TASK)
    assert (second.run_id, second.status) == (first.run_id, "completed")
    with store_of(repo) as store:
        assert len(store.units(first.run_id, "T-001")) == units  # no agent worked on it again
    assert [e.task_id for e in record.of("attempt_started")] == ["T-002"]
    # T-002 ran on top of T-003's work (landed in the first run): it goes into T-003's
    # branch, whose own pull request opened after it.
    assert [e.task_id for e in record.of("delivered")] == ["T-001", "T-002", "T-003"]
    prs = {pr["head"]: pr for pr in remote.prs()}
    names = branches(repo)
    assert len(remote.prs()) == 3 and creates(remote) == 2 + 3  # the 2 that failed made none
    assert prs[names["T-002"]]["base"] == names["T-003"]
    assert (
        "its own pull request is not open yet: taskhand reopen T-003"
        in (prs[names["T-002"]]["body"])
    )
    assert prs[names["T-003"]]["base"] == names["T-001"]
    assert git(repo, "log", "--format=%s", f"main..{second.run_branch}").splitlines() == [
        "T-002: Write b",
        "T-003: Write c",
        "T-001: Write a",
    ]


def test_a_commit_a_person_added_to_a_task_branch_is_theirs_and_the_task_stops_for_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo, remote, replay = project(tmp_path, monkeypatch)
    monkeypatch.setenv("FAKE_GH_FAIL", "pr create")
    assert run_plan(repo / "plan", repo, replay, settings=TASK)[0].status == "failed"
    monkeypatch.delenv("FAKE_GH_FAIL")
    branch = branches(repo)["T-001"]
    left = git(repo, "rev-parse", branch).strip()
    mine = tmp_path / "mine"  # the person works on the task's branch in a checkout of theirs
    git(repo, "worktree", "add", "-q", str(mine), branch)
    write_file = mine / "mine.txt"
    write_file.write_text("mine\n")
    git(mine, "add", "mine.txt")
    git(mine, "commit", "-q", "-m", "T-001: my own fix")
    git(repo, "worktree", "remove", str(mine))
    theirs = git(repo, "rev-parse", branch).strip()
    for task_id in ("T-001", "T-003"):  # T-003 stands on T-001's branch
        moves.reopen(task_id, repo / "plan", repo)
    second, record = run_plan(repo / "plan", repo, replay, settings=TASK)
    # Named as the person's, never as an agent's reach; kept where they put it; not delivered.
    assert second.status == "failed" and "reached outside" not in second.message
    assert record.of("violation") == []
    assert git(repo, "rev-parse", branch).strip() == theirs
    with store_of(repo) as store:
        reason = store.task_states(second.run_id)["T-001"].reason or ""
    assert reason.startswith(
        f"a commit was added to its branch {branch} after the run left it ({theirs[:12]} "
        "'T-001: my own fix'): a person's, not the run's (fix: keep it on a branch of your own"
    )
    assert branch not in {pr["head"] for pr in remote.prs()}
    # Nor does a task stacked on that branch publish the commit: it waits for the person too.
    assert remote.tip(branch) == left
    with store_of(repo) as store:
        stacked = store.task_states(second.run_id)["T-003"].reason or ""
    assert stacked.startswith("deliver: T-003 stands on T-001's branch, and a commit was added")
    # How to go on, as the reason says: the run delivers the task's own work.
    git(repo, "branch", "mine-T-001", theirs)
    git(repo, "branch", "-f", branch, left)
    assert f"git branch -f {branch} {left[:12]}; then taskhand reopen T-001" in reason
    for task_id in ("T-001", "T-003"):
        moves.reopen(task_id, repo / "plan", repo)
    third, _ = run_plan(repo / "plan", repo, replay, settings=TASK)
    assert third.status == "completed", third.message
    assert remote.tip(branch) == left


@pytest.mark.parametrize("point", ["pr view", "pr create:after"])
def test_a_run_killed_inside_delivery_resumes_without_a_second_pull_request(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, point: str
) -> None:
    """Killed between the push and gh pr create, or between create and recording it."""
    repo, remote, replay = project(tmp_path, monkeypatch)
    monkeypatch.setenv("FAKE_GH_KILL", point)
    args = ["start", str(repo / "plan"), str(repo), str(replay), "--deliver", "task"]
    killed = subprocess.run([sys.executable, str(CRASHING_RUN), *args], capture_output=True)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert len(remote.prs()) == (1 if point == "pr create:after" else 0)
    with store_of(repo) as store:
        [row] = store.deliveries(store.runs()[0].id)
    assert row.state is DeliveryState.PUSHED  # the record a kill leaves: pushed, no address
    resumed, _ = run_plan(repo / "plan", repo, replay, settings=TASK)
    assert resumed.status == "completed", resumed.message
    assert len(remote.prs()) == 3 and creates(remote) == 3
    assert len({pr["head"] for pr in remote.prs()}) == 3


def test_one_pull_request_for_the_run_once_every_task_is_done(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_cli: RunCli
) -> None:
    repo, remote, replay = project(tmp_path, monkeypatch)
    monkeypatch.setenv("FAKE_GH_FAIL", "pr create")
    failed, _ = run_plan(repo / "plan", repo, replay, settings=RUN)
    assert (failed.status, remote.prs()) == ("failed", [])
    assert failed.message.startswith("deliver: gh pr create failed: HTTP 502")
    monkeypatch.delenv("FAKE_GH_FAIL")
    summary, record = run_plan(repo / "plan", repo, replay, settings=RUN)
    assert (summary.run_id, summary.status) == (failed.run_id, "completed")
    [pr] = remote.prs()
    assert summary.message.endswith(f": {pr['url']}")
    assert (pr["head"], pr["base"]) == (summary.run_branch, "main")
    assert remote.subjects(f"main..{summary.run_branch}") == [
        "T-003: Write c",
        "T-002: Write b",
        "T-001: Write a",
    ]
    assert "## Tasks\n\n### T-001: Write a\n\n- [x] ✓ `$ test -s a.txt` passes" in pr["body"]
    assert "### T-003: Write c" in pr["body"] and pr["title"] == "Feature"
    assert record.of("attempt_started") == []  # the retry delivered; no task was redone
    with store_of(repo) as store:
        [row] = store.deliveries(summary.run_id)
        lives = store.lives(str((repo / "plan").resolve()))
    assert (row.task_id, row.state, row.pr_url) == ("", DeliveryState.OPENED, pr["url"])
    assert {t: life.status for t, life in lives.items()} == dict.fromkeys(
        ("T-001", "T-002", "T-003"), Lifecycle.DELIVERED
    )
    assert only_allowed_calls(remote)
    stats = json.loads(run_cli("stats", "--repo", repo, "--json").output)
    assert {r["pr"] for r in stats["tasks"]} == {pr["url"]}
    text = run_cli("stats", "--repo", repo).output  # the table names it; the address is whole
    number = pr["url"].rsplit("/", 1)[1]
    assert f"\npull requests:\n  #{number} T-001, T-002, T-003: {pr['url']}\n" in text
    assert json.loads((remote.state / "prs.json").read_text())[0]["state"] == "OPEN"


@pytest.mark.parametrize("dialect", ["markdown", "tasktrack"])
def test_the_full_pipeline_delivers_with_its_spec_plan_and_verdicts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, dialect: str
) -> None:
    repo = full.plan_repo(tmp_path, dialect, kind="logic")
    remote = with_remote(repo, tmp_path, monkeypatch)
    task = full.task_id(dialect)
    roles = {
        "writer": [{"resolution": "# Spec\n\nA toggle in the header."}],
        "planner": [{"resolution": "1. Write toggle.txt."}],
    }
    script_path = full.replay(tmp_path, task, roles)
    settings = {"pipeline": "full", "autonomy": "full", "deliver": Delivery("task")}
    summary, _ = run_plan(repo / "plan", repo, script_path, settings=settings)
    assert summary.status == "completed", summary.message
    [pr] = remote.prs()
    assert "## Goal\n\n# Spec\n\nA toggle in the header." in pr["body"]
    assert "## Plan\n\n1. Write toggle.txt." in pr["body"]
    assert "- [x] ✓ `$ test -f toggle.txt` passes" in pr["body"]
    assert "- [ ] [found] the toggle shows in the header" in pr["body"]
    assert "qa walked 0 of 1 [found] criteria in the browser." in pr["body"]
    with store_of(repo) as store:
        units = {str(u.role): u.id for u in store.units(summary.run_id, task)}
        life = store.life(str((repo / "plan").resolve()), task)
    assert f"- ✓ qa (unit {units['qa']}) accepts" in pr["body"]
    assert f"- ✓ judge (unit {units['judge']}) accepts" in pr["body"]
    assert life is not None and (life.status, life.pr) == (Lifecycle.DELIVERED, pr["url"])
    if dialect == "tasktrack":  # the Resolution field carries the address, the file stays valid
        text = (repo / "plan" / "FOO-1.md").read_text()
        assert f"(delivered: {pr['url']})" in text.split("**Resolution**:")[1]
    else:  # a Markdown task says so in its front matter, and reads it back
        text = (repo / "plan" / "T-001-toggle.md").read_text()
        assert text.startswith(
            f"---\nid: T-001\ntitle: Dark mode toggle\nkind: logic\npr: {pr['url']}\n---\n"
        )
        loaded = validate(repo / "plan").require().task(task)
        assert loaded is not None and loaded.pr == pr["url"]
    assert validate(repo / "plan").ok()


@needs_browser
def test_the_pull_request_lists_qas_screenshots_of_the_found_criteria(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    body_text = f"## Description\nA search box.\n\n## Acceptance criteria\n{browser.FOUND}"
    repo = make_repo(
        tmp_path / "repo",
        {
            "index.html": APP_PAGE,
            "plan/overview.md": "# Bookmarks\n\n## Goal\nFind bookmarks.\n",
            "plan/T-001-search.md": md_task("T-001", "Search box", body_text, kind="logic"),
        },
    )
    remote = with_remote(repo, tmp_path, monkeypatch)
    shots = [{"screenshot": "found-2"}, {"screenshot": "found-3"}]
    qa = [{"actions": shots, "verdict": "accept", "concern": "Both behaviours show."}]
    tasks = {"T-001": [{"actions": [write("search.txt", "on\n")], "resolution": "Added it."}]}
    replay = tmp_path / "replay.json"
    replay.write_text(json.dumps({"tasks": tasks, "roles": {"T-001": {"qa": qa}}}))
    settings = {
        "pipeline": "full",
        "autonomy": "full",
        "app": AppConfig(start=SERVE),
        "deliver": Delivery("task"),
    }
    summary, record = run_plan(repo / "plan", repo, replay, settings=settings)
    assert summary.status == "completed", record.steps()
    [pr] = remote.prs()
    assert (
        "- [x] ✓ [found] the page shows how many bookmarks are saved (screenshot: `found-2.png`)\n"
        "- [x] ✓ [found] a search shows its results (screenshot: `found-3.png`)\n\n"
        "qa walked 2 of 2 [found] criteria in the browser."
    ) in pr["body"]
    artifacts = StateDir.for_repo(repo).artifacts(repo / "plan", "T-001")
    assert_shows_the_app(artifacts / "found-2.png")
