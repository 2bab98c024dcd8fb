"""`taskhand stats` says, per run of several jobs, what running tasks side by side cost: the
unit-seconds of attempts lost to conflicts (their candidate conflicted with work that landed
meanwhile, or failed its checks once replayed onto it) and the re-gates (checks run again on a
replayed candidate)."""

from __future__ import annotations

import json
from pathlib import Path

from taskhand.state.paths import StateDir
from taskhand.state.store import Store
from tests.conftest import RunCli
from tests.plans import md_task
from tests.runs import attempt, make_repo, run_plan, script


def test_stats_count_the_units_conflicts_wasted_and_the_re_gates(
    tmp_path: Path, run_cli: RunCli
) -> None:
    """No task declares paths, so nothing is held back: T-002 and T-003 are replayed onto
    T-001's work and checked again; T-003's check fails there (it wants no f1.txt), so its
    attempt is lost; T-004 and T-005 change neighbouring lines, so one of them conflicts."""
    checks = {
        "T-001": "test -f f1.txt",
        "T-002": "test -f f2.txt",
        "T-003": "sh -c 'test -f f3.txt && test ! -f f1.txt'",
        "T-004": "grep -q FOUR notes.txt",
        "T-005": "grep -q FIVE notes.txt",
    }
    files = {"notes.txt": "four\nfive\n", "plan/overview.md": "# Work\n\n## Goal\nWork.\n"}
    for task_id, check in checks.items():
        body = f"## Description\nWork.\n\n## Acceptance criteria\n- `$ {check}` passes\n"
        files[f"plan/{task_id}-work.md"] = md_task(task_id, "Work", body, max_attempts="2")
    repo = make_repo(tmp_path / "repo", files)
    line = {"T-004": ("four", "FOUR"), "T-005": ("five", "FIVE")}
    tasks = {
        "T-001": [attempt({"write": "f1.txt", "text": "x\n"}, {"sleep": 0.2})],
        "T-002": [attempt({"write": "f2.txt", "text": "x\n"}, {"sleep": 1.0})],
        "T-003": [attempt({"write": "f3.txt", "text": "x\n"}, {"sleep": 1.0})] * 2,
        **{
            t: [attempt({"edit": "notes.txt", "old": f"{o}\n", "new": f"{n}\n"}, {"sleep": 0.6})]
            * 2
            for t, (o, n) in line.items()
        },
    }
    summary, recorder = run_plan(repo / "plan", repo, script(tmp_path, tasks), settings={"jobs": 5})
    assert summary.status == "failed", summary.message  # T-003 can never pass beside T-001
    with Store.open(StateDir.for_repo(repo).database) as store:
        outcomes = [(e.task_id, str(e.outcome)) for e in store.ledger(summary.run_id, None)]
    assert ("T-003", "checks_failed") in outcomes
    assert len([o for o in outcomes if o[1] == "conflict"]) == 1, outcomes

    data = json.loads(run_cli("stats", "--repo", repo, "--json").output)
    [queue] = data["queue"]
    # T-003's first attempt (lost after its replay) and the conflicted neighbour.
    assert queue["conflicts"] == 2
    assert queue["conflict_unit_seconds"] >= 1.0 + 0.6
    regated = recorder.of("gated")
    assert queue["regates"] == len(regated) >= 2
    assert queue["regate_seconds"] == round(sum(e.data["seconds"] for e in regated), 3)
    assert queue["regate_seconds"] > 0
    shown = run_cli("stats", "--repo", repo)
    assert shown.exit_code == 0, shown.output
    assert f"run {summary.run_id}: 2 attempts lost to conflicts (" in shown.output
    assert f"{queue['regates']} re-gates (" in shown.output
