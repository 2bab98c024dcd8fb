"""Parallelism never fails a task: with several jobs, a candidate that conflicts with work that
landed meanwhile, or whose checks fail only on top of it, is requeued, not failed. It does not
count against max_attempts (max_requeues caps it), its worker's verdict is `conflicted`, the
next attempt starts from the new head with a note of what landed, and the ledger, the events,
`taskhand ledger` and the board say "after the landing of T-00X"."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from taskhand.board.details import task_details
from taskhand.state.paths import StateDir
from taskhand.state.records import Attempt
from taskhand.state.store import Store
from tests.conftest import RunCli
from tests.plans import md_task
from tests.run.test_feedback import prompts
from tests.runs import attempt, git, make_repo, run_plan, script

CHANGELOG = "# Changelog\n\n## Unreleased\n\n## 1.0\n- first release\n"


def changelog_repo(tmp_path: Path, count: int) -> Path:
    """`count` independent tasks, each adding its line at one spot of CHANGELOG.md: at
    once, every one after the first to land conflicts with what landed before it."""
    files = {"CHANGELOG.md": CHANGELOG, "plan/overview.md": "# Notes\n\n## Goal\nLog.\n"}
    for n in range(1, count + 1):
        check = f"- `$ grep -qx -- '- entry {n}' CHANGELOG.md` passes\n"
        body = f"## Description\nLog entry {n}.\n\n## Acceptance criteria\n{check}"
        files[f"plan/T-00{n}-entry.md"] = md_task(f"T-00{n}", f"Entry {n}", body)
    return make_repo(tmp_path / "repo", files)


def insert_entry(n: int, sleep: float = 0.8) -> dict[str, Any]:
    """The insertion under the heading, which a requeued attempt redoes as it is on the new
    head (the replay agent repeats a task's last entry)."""
    edit = {
        "edit": "CHANGELOG.md",
        "old": "## Unreleased\n",
        "new": f"## Unreleased\n- entry {n}\n",
    }
    return attempt(edit, {"sleep": sleep})


def records(repo: Path, run_id: str) -> tuple[list[Attempt], dict[int, str]]:
    """The run's attempts, and the verdict on each attempt's worker."""
    with Store.open(StateDir.for_repo(repo).database) as store:
        verdicts = {v.attempt_id: str(v.outcome) for v in store.worker_verdicts(run_id)}
        return store.attempts(run_id), verdicts


def test_five_tasks_inserting_at_one_spot_all_land_with_five_jobs(tmp_path: Path) -> None:
    repo = changelog_repo(tmp_path, 5)
    replay = script(tmp_path, {f"T-00{n}": [insert_entry(n)] for n in range(1, 6)})
    # One attempt each: requeues are not attempts.
    summary, recorder = run_plan(repo / "plan", repo, replay, max_attempts=1, settings={"jobs": 5})
    assert summary.status == "completed", summary.message
    final = git(repo, "show", f"{summary.run_branch}:CHANGELOG.md")
    assert sorted(line for line in final.splitlines() if "entry" in line) == [
        f"- entry {n}" for n in range(1, 6)
    ]
    attempts, verdicts = records(repo, summary.run_id)
    assert {a.task_id for a in attempts if a.status == "passed"} == {
        f"T-00{n}" for n in range(1, 6)
    }
    assert [a for a in attempts if a.status == "failed"] == []
    requeued = [a for a in attempts if a.status == "requeued"]
    assert requeued, "five insertions at one spot from one base: some must conflict"
    for a in requeued:
        assert "after the landing of T-00" in (a.reason or ""), a.reason
        assert "its change conflicts with that work, in CHANGELOG.md" in (a.reason or "")
        assert verdicts[a.id] == "conflicted"
    events = recorder.of("attempt_requeued")
    assert len(events) == len(requeued)
    assert all(e.data["after"] and e.data["after"][0] != e.task_id for e in events)
    assert recorder.of("attempt_failed") == []


def two_tasks_one_count(tmp_path: Path) -> tuple[Path, Path]:
    """T-001 adds a part; T-002 adds another and an index saying how many parts there are.
    Alone, T-002's check passes; on top of T-001's landing, the index is one short. Its
    second entry writes the index for the head it starts from."""
    count_check = "- `$ sh count.sh` passes\n"
    files = {
        "count.sh": 'test "$(cat index.txt)" = "parts: $(ls parts | wc -l)"\n',
        "plan/overview.md": "# Parts\n\n## Goal\nCount them.\n",
        "plan/T-001-part.md": md_task(
            "T-001",
            "Part a",
            "## Description\nAdd a.\n\n## Acceptance criteria\n- `$ test -f parts/a.txt` passes\n",
        ),
        "plan/T-002-part.md": md_task(
            "T-002", "Part b", f"## Description\nAdd b.\n\n## Acceptance criteria\n{count_check}"
        ),
    }
    repo = make_repo(tmp_path / "repo", files)
    b = {"write": "parts/b.txt", "text": "b\n"}
    tasks = {
        "T-001": [attempt({"write": "parts/a.txt", "text": "a\n"})],
        "T-002": [
            attempt(b, {"write": "index.txt", "text": "parts: 1\n"}, {"sleep": 2.5}),
            attempt(b, {"write": "index.txt", "text": "parts: 2\n"}),
        ],
    }
    return repo, script(tmp_path, tasks)


def test_a_check_that_fails_only_after_another_landing_requeues_blaming_it(
    tmp_path: Path, run_cli: RunCli
) -> None:
    repo, replay = two_tasks_one_count(tmp_path)
    summary, recorder = run_plan(repo / "plan", repo, replay, max_attempts=1, settings={"jobs": 2})
    assert summary.status == "completed", summary.message
    attempts, verdicts = records(repo, summary.run_id)
    mine = [a for a in attempts if a.task_id == "T-002"]
    assert [a.status for a in mine] == ["requeued", "passed"]
    assert verdicts[mine[0].id] == "conflicted"
    # The event names whose landing it came after.
    (event,) = recorder.of("attempt_requeued")
    assert event.task_id == "T-002" and event.data["after"] == ["T-001"]
    assert event.data["reason"].startswith("requeued after the landing of T-001 (Part a)")
    # taskhand ledger says it, with the check that broke.
    shown = run_cli("ledger", "T-002", "--repo", repo).output
    assert (
        "T-002 attempt 1: broken_by_landing: requeued after the landing of T-001 (Part a): "
        "its checks passed on its own base and failed on top of that work"
    ) in shown, shown
    assert "check command failed" in shown
    entries = json.loads(run_cli("ledger", "T-002", "--repo", repo, "--json").output)["entries"]
    assert [(e["outcome"], e["after"]) for e in entries] == [
        ("broken_by_landing", ["T-001"]),
        ("accepted", []),
    ]
    # The next attempt's prompt says what landed and that it starts on top of it.
    second = prompts(repo, "T-002")[-1]
    assert "after the landing of T-001 (Part a)" in second
    assert "make this task's change again on top of it" in second
    # taskhand stats tells the task's way with it.
    rows = json.loads(run_cli("stats", "--repo", repo, "--json").output)["tasks"]
    told = {row["task_id"]: row["happened"] for row in rows}
    assert told["T-002"] == "requeued once by other tasks' landings", told
    assert told["T-001"] == "", told
    # The board's drawer shows the attempt as requeued, with the blame.
    details = task_details(repo / "plan", repo, "T-002")
    assert details is not None
    first = details["attempts"][0]
    assert first["status"] == "requeued"
    assert first["ledger"]["outcome"] == "broken_by_landing"
    assert "after the landing of T-001" in first["ledger"]["summary"]


def test_the_requeue_cap_stops_a_task_with_a_clear_reason(tmp_path: Path) -> None:
    """Three insertions at one spot with max_requeues 1: the first lands, the other two are
    requeued; of those, one lands and the last is requeued a second time: one past the cap,
    the task fails saying so (never by max_attempts)."""
    repo = changelog_repo(tmp_path, 3)
    replay = script(tmp_path, {f"T-00{n}": [insert_entry(n, 1.2)] for n in range(1, 4)})
    summary, _ = run_plan(repo / "plan", repo, replay, max_requeues=1, settings={"jobs": 3})
    assert summary.status == "failed", summary.message
    attempts, _ = records(repo, summary.run_id)
    assert [a for a in attempts if a.status == "failed"] == []
    with Store.open(StateDir.for_repo(repo).database) as store:
        states = store.task_states(summary.run_id)
    failed = [t for t, s in states.items() if s.status == "FAIL"]
    assert len(failed) == 1, states
    reason = states[failed[0]].reason or ""
    assert reason.startswith("other tasks' landings requeued it 2 times, past the requeue cap of 1")
    assert "--max-requeues" in reason and f"taskhand reopen {failed[0]}" in reason
    assert "after the landing of T-00" in reason
    assert [a.status for a in attempts if a.task_id == failed[0]] == ["requeued", "requeued"]


def test_a_conflict_is_blamed_on_the_landing_that_touched_its_paths(tmp_path: Path) -> None:
    """T-001 and T-002 land while T-003 works: T-003's insertion conflicts with T-001's line,
    not with T-002's file, and only T-001 is named."""
    repo = changelog_repo(tmp_path, 3)
    other = md_task(
        "T-002",
        "Other file",
        "## Description\nWrite it.\n\n## Acceptance criteria\n- `$ test -f other.txt` passes\n",
    )
    (repo / "plan" / "T-002-entry.md").write_text(other)
    git(repo, "commit", "-qam", "T-002 writes another file")
    tasks = {
        "T-001": [insert_entry(1, 0.0)],
        "T-002": [attempt({"write": "other.txt", "text": "x\n"})],
        "T-003": [insert_entry(3, 2.5)],
    }
    summary, recorder = run_plan(repo / "plan", repo, script(tmp_path, tasks), settings={"jobs": 3})
    assert summary.status == "completed", summary.message
    landed = [e.task_id for e in recorder.of("integrated")]
    assert landed.index("T-002") < landed.index("T-003"), landed  # both landed before it
    (event,) = recorder.of("attempt_requeued")
    assert event.task_id == "T-003" and event.data["after"] == ["T-001"], event.data
    assert event.data["reason"].startswith(
        "requeued after the landing of T-001 (Entry 1): its change conflicts with that work, "
        "in CHANGELOG.md"
    )
