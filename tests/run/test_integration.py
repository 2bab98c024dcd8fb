"""The integration ledger through real runs: the harness records `integrated` when a candidate
lands and `superseded` for the task's earlier results, each worker gets a verdict, and a
person's `taskhand integration set` records one disposition and refuses a second."""

from __future__ import annotations

import json
from pathlib import Path

from taskhand.state.paths import StateDir
from taskhand.state.records import Disposition, WorkerOutcome
from taskhand.state.store import Store
from tests.conftest import RunCli
from tests.plans import md_plan, md_task
from tests.runs import attempt, git, make_repo, run_plan, script, write

REJECT = {
    "verdict": "reject",
    "category": "acceptance_gap",
    "concern": "a.txt says too little.",
    "evidence": ["a.txt"],
    "next_step": "Say more in a.txt.",
}


def failing_plan_repo(tmp_path: Path) -> Path:
    """T-001 passes; T-002's acceptance command never does."""
    files = {str(k): str(v) for k, v in md_plan(("T-001", {})).items()}
    body = "## Description\nDo it.\n\n## Acceptance criteria\n- `$ false` never passes\n"
    files["T-002-task.md"] = md_task("T-002", "Task T-002", body=body)
    return make_repo(tmp_path / "repo", {f"plan/{k}": v for k, v in files.items()})


def ran(tmp_path: Path) -> tuple[Path, str, str]:
    """A finished run: T-001 rejected once, then integrated; T-002 failed with a result."""
    repo = failing_plan_repo(tmp_path)
    replay = script(
        tmp_path,
        {
            "T-001": [
                attempt(write("a.txt", "a\n"), review=REJECT),
                attempt(write("a.txt", "a, and more\n")),
            ],
            "T-002": [attempt(write("b.txt", "b\n"))],
        },
    )
    summary, record = run_plan(repo / "plan", repo, replay, max_attempts=1)
    assert summary.status == "failed"
    disposed = [(e.task_id, e.data["attempt"], e.data["status"]) for e in record.of("disposed")]
    assert disposed == [("T-001", 2, "integrated"), ("T-001", 1, "superseded")]
    return repo, summary.run_id, summary.run_branch


def test_the_harness_records_each_landing_once_and_judges_every_worker(tmp_path: Path) -> None:
    repo, run_id, branch = ran(tmp_path)
    head = git(repo, "rev-parse", branch).strip()
    with Store.open(StateDir.for_repo(repo).database) as store:
        rows = store.dispositions(run_id)
        verdicts = store.worker_verdicts(run_id)
        results = store.results(run_id)
    assert [(d.task_id, d.attempt, d.status, d.target_ref, d.recorded_by) for d in rows] == [
        ("T-001", 2, Disposition.INTEGRATED, branch, "harness"),
        ("T-001", 1, Disposition.SUPERSEDED, branch, "harness"),
    ]
    assert rows[0].target_sha == rows[0].candidate_sha == head
    assert [(r.attempt.task_id, r.attempt.number, r.disposition) for r in results][2] == (
        "T-002",
        1,
        None,
    )
    assert [(v.task_id, v.attempt, v.agent, v.attempts, v.outcome) for v in verdicts] == [
        ("T-001", 1, "replay", 1, WorkerOutcome.REJECTED),
        ("T-001", 2, "replay", 2, WorkerOutcome.ACCEPTED),
        ("T-002", 1, "replay", 1, WorkerOutcome.FAILED),
    ]


def test_integration_set_records_one_disposition_and_refuses_a_second(
    tmp_path: Path, run_cli: RunCli
) -> None:
    repo, run_id, _ = ran(tmp_path)
    done = run_cli(
        "integration", "set", "T-002", "--status", "rejected", "--note", "wrong approach",
        "--by", "ci", "--repo", repo, "--json",
    )  # fmt: skip
    assert done.exit_code == 0, done.output
    recorded = json.loads(done.stdout)
    assert (recorded["run"], recorded["attempt"], recorded["status"]) == (run_id, 1, "rejected")
    assert (recorded["recorded_by"], recorded["note"]) == ("ci", "wrong approach")

    again = run_cli("integration", "set", "T-002", "--status", "integrated", "--repo", repo)
    assert again.exit_code == 1
    assert again.stderr.count("\n") == 1
    assert (
        again.stderr.startswith("taskhand: error: T-002 attempt 1's result ")
        and "is rejected already (by ci, " in again.stderr
    )
    assert again.stderr.endswith(
        f"(fix: see it with taskhand integration show T-002 --run {run_id})\n"
    )
    harness = run_cli("integration", "set", "T-001", "--status", "rejected", "--repo", repo)
    assert harness.exit_code == 1
    assert "attempt 2's result " in harness.stderr and "is integrated into taskhand/run-" in (
        harness.stderr
    )
    nothing = run_cli("integration", "set", "T-404", "--status", "rejected", "--repo", repo)
    assert nothing.exit_code == 1
    assert "T-404 has no result in run" in nothing.stderr

    shown = json.loads(run_cli("integration", "show", "--repo", repo, "--json").stdout)
    assert shown["run"] == run_id
    assert [(r["task_id"], r["attempt"], r["disposition"]["status"]) for r in shown["results"]] == [
        ("T-001", 1, "superseded"),
        ("T-001", 2, "integrated"),
        ("T-002", 1, "rejected"),
    ]
    assert [(v["task_id"], v["outcome"]) for v in shown["verdicts"]] == [
        ("T-001", "rejected"),
        ("T-001", "accepted"),
        ("T-002", "failed"),
    ]
    text = run_cli("integration", "show", "T-002", "--repo", repo).stdout
    assert "T-002 attempt 1 (failed): " in text and ": rejected (by ci, " in text
    assert "note: wrong approach" in text and "worker replay failed on try 1" in text


def test_integration_show_names_the_command_for_an_undisposed_result(
    tmp_path: Path, run_cli: RunCli
) -> None:
    repo, run_id, _ = ran(tmp_path)
    text = run_cli("integration", "show", "T-002", "--repo", repo).stdout
    assert ": no disposition" in text
    assert (
        f"record one: taskhand integration set T-002 --run {run_id} --attempt 1 "
        "--status integrated|rejected|superseded"
    ) in text
    named = run_cli(
        "integration", "set", "T-002", "--attempt", "1", "--status", "integrated",
        "--target-ref", "main", "--repo", repo,
    )  # fmt: skip
    assert named.exit_code == 0, named.output
    assert "recorded T-002 attempt 1's result " in named.stdout and "integrated into main" in (
        named.stdout
    )
    missing = run_cli("integration", "set", "T-002", "--attempt", "7", "--status", "rejected",
                      "--repo", repo)  # fmt: skip
    assert missing.exit_code == 1
    assert "attempt 7 of T-002 in run " in missing.stderr and "left no result" in missing.stderr
