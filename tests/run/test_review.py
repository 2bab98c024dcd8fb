"""The review stage: a reviewer in a fresh context and its own copy judges each candidate that
passed its checks; rejections go back to the worker through the task's ledger, within caps."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from taskhand import config
from taskhand.plan.model import Status
from taskhand.state.ledger import LedgerEntry
from taskhand.state.paths import StateDir
from taskhand.state.records import UnitRow
from taskhand.state.store import Store
from tests.conftest import RunCli
from tests.fakes.scripted_openai import ScriptedOpenAI, reply, tool_call
from tests.plans import md_plan, md_task
from tests.runs import attempt, git, make_repo, run_plan, script, write

REJECT = {
    "verdict": "reject",
    "category": "acceptance_gap",
    "concern": "count() fails on empty text instead of returning 0.",
    "evidence": ["wc.py:count"],
    "next_step": "Return 0 from count() when the text is empty.",
}
ACCEPT = {"verdict": "accept", "concern": "Both criteria hold.", "evidence": ["wc.py:count"]}

COUNT_BODY = """## Description
Add count(text) to wc.py: the number of words in text.

## Acceptance criteria
- count("a b") returns 2
- count("") returns 0
- `$ test -s wc.py`
"""


def call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    usage = {"prompt_tokens": 100, "completion_tokens": 10}
    return reply(tool_calls=[tool_call(name, arguments)], usage=usage)


def plan_repo(tmp_path: Path, tasks: dict[str, str], extra: dict[str, str] | None = None) -> Path:
    """A repository whose committed Markdown plan (in plan/) has one task per (id, body)."""
    files = {str(k): str(v) for k, v in md_plan().items()}
    for task_id, body in tasks.items():
        files[f"{task_id}-task.md"] = md_task(task_id, f"Task {task_id}", body=body)
    files.update(extra or {})
    return make_repo(
        tmp_path / "repo", {"README.md": "# p\n"} | {f"plan/{k}": v for k, v in files.items()}
    )


def units_and_ledger(repo: Path, task_id: str) -> tuple[list[UnitRow], list[LedgerEntry]]:
    with Store.open(StateDir.for_repo(repo).database) as store:
        run = store.runs()[0]
        return store.units(run.id, task_id), store.ledger(run.id, task_id)


def prompt_of(unit: UnitRow) -> str:
    first = Path(str(unit.transcript)).read_text().splitlines()[0]
    return str(json.loads(first)["content"])


def user_message(body: dict[str, Any]) -> str:
    return next(str(m["content"]) for m in body["messages"] if m["role"] == "user")


def test_a_rejected_candidate_goes_back_with_the_verdict_and_the_fix_is_accepted(
    tmp_path: Path, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = plan_repo(tmp_path, {"T-001": COUNT_BODY})
    first = "def count(text):\n    return len(text.split(' '))\n"
    with ScriptedOpenAI(
        call("write", {"path": "wc.py", "content": first}),
        call("submit_case", {"case": "done", "resolution": "Added count()."}),
        call("submit_verdict", REJECT),
        call(
            "edit", {"path": "wc.py", "old": "return len(", "new": "return 0 if not text else len("}
        ),
        call("submit_case", {"case": "done", "resolution": "count('') is 0 now."}),
        call("submit_verdict", ACCEPT),
    ) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-local-test-key")
        result = run_cli("run", repo / "plan", "--agent", "openai", "--model", "m")
        bodies = server.bodies
    assert result.exit_code == 0, result.output
    assert "reviewer rejected as acceptance_gap" in result.output
    tools = [sorted(t["function"]["name"] for t in b["tools"]) for b in bodies]
    assert (
        "submit_verdict" in tools[2] and "write" not in tools[2] and "submit_case" not in tools[2]
    )
    assert "submit_case" in tools[3] and "submit_verdict" not in tools[3]

    review = user_message(bodies[2])
    assert 'count("") returns 0' in review and "Added count()." in review
    assert "- A wc.py" in review and "+def count(text):" in review
    assert "command: passed" in review  # the checks' results
    retry = user_message(bodies[3])
    for shown in (REJECT["category"], REJECT["concern"], "wc.py:count", REJECT["next_step"]):
        assert shown in retry
    assert "already holds the changes of attempt 1" in retry
    second_review = user_message(bodies[5])
    assert "Your earlier verdicts on this task" in second_review
    assert REJECT["concern"] in second_review and "return 0 if not text" in second_review

    branch = git(repo, "branch", "--list", "taskhand/run-*", "--format=%(refname:short)").strip()
    assert git(repo, "show", f"{branch}:wc.py") == first.replace(
        "return len(", "return 0 if not text else len("
    )
    assert git(repo, "rev-list", "--count", f"main..{branch}").strip() == "1"

    units, ledger = units_and_ledger(repo, "T-001")
    assert [(e.iteration, e.outcome) for e in ledger] == [(1, "rejected"), (2, "accepted")]
    assert [v.as_json() for v in ledger[0].verdicts] == [{"lens": "general", **REJECT}]
    assert ledger[0].diff_summary == "1 file changed (+2 -0): wc.py"
    assert ledger[0].case is not None and ledger[0].case.resolution == "Added count()."
    assert [g.name for g in ledger[0].gates] == ["command", "whitespace", "scope"]
    assert ledger[1].verdicts[0].accepted
    assert [u.role for u in units] == ["implementer", "evaluator"] * 2
    for unit, body in zip(units, (bodies[0], bodies[2], bodies[3], bodies[5]), strict=True):
        size = len(user_message(body).encode())
        assert (unit.prompt_bytes, unit.prompt_tokens) == (size, (size + 3) // 4)


def test_a_reviewer_that_writes_to_the_candidate_is_caught_and_replaced(tmp_path: Path) -> None:
    repo = plan_repo(tmp_path, {"T-001": "Write a.txt.\n"})
    marker = tmp_path / "escaped-once"
    # The reviewer's copy lies near the candidate's worktree: it climbs out and writes there,
    # and leaves a scratch file in its own copy.
    escape = f"[ -e {marker} ] || {{ touch {marker}; echo hacked >> ../T-001/attempt-1/a.txt; }}"
    look = (
        f"pwd >> {tmp_path}/where; ls -A | tr '\\n' ' ' >> {tmp_path}/seen; echo >> {tmp_path}/seen"
    )
    review = {
        "verdict": "accept",
        "actions": [{"run": ["sh", "-c", f"{look}; touch scratch.txt; {escape}"]}],
    }
    replay = script(tmp_path, {"T-001": [attempt(write("a.txt", "a\n"), review=review)]})
    # Without the sandbox, which refuses such a write outright (test_hostile_agents.py).
    summary, record = run_plan(repo / "plan", repo, replay, sandbox="none")
    assert summary.status == "completed"
    [violation] = record.of("reviewer_write_violation")
    assert violation.data["lens"] == "general"
    assert "a.txt was modified" in violation.data["changes"]
    [attempt_row] = Store.open(StateDir.for_repo(repo).database).attempts(summary.run_id)
    candidate = attempt_row.candidate_sha
    assert [e.data["sha"] for e in record.of("integrated")] == [candidate]
    assert git(repo, "show", f"{candidate}:a.txt") == "a\n"
    assert git(repo, "show", f"{summary.run_branch}:a.txt") == "a\n"
    wrote = (tmp_path / "where").read_text().split()
    assert [Path(w).name for w in wrote] == ["review-general"] * 2
    # Each try starts from a clean checkout of the candidate: the first one's scratch file
    # is gone; and the copy goes with the run.
    assert (tmp_path / "seen").read_text().splitlines() == [".git README.md a.txt plan "] * 2
    assert not Path(wrote[0]).exists()
    units, _ = units_and_ledger(repo, "T-001")
    assert [u.role for u in units] == ["implementer", "evaluator", "evaluator"]


def test_a_reviewer_that_keeps_writing_fails_the_task_and_others_go_on(tmp_path: Path) -> None:
    repo = plan_repo(tmp_path, {"T-001": "Write a.txt.\n", "T-002": "Write b.txt.\n"})
    escape = {"run": ["sh", "-c", "echo hacked >> ../T-001/attempt-1/a.txt"]}
    replay = script(
        tmp_path,
        {
            "T-001": [
                attempt(write("a.txt", "a\n"), review={"verdict": "accept", "actions": [escape]})
            ],
            "T-002": [attempt(write("b.txt", "b\n"))],
        },
    )
    summary, record = run_plan(repo / "plan", repo, replay, sandbox="none")
    assert len(record.of("reviewer_write_violation")) == 2
    concluded = {e.task_id: e.data for e in record.of("task_concluded")}
    assert concluded["T-001"]["status"] == str(Status.FAIL)
    assert concluded["T-001"]["text"].startswith("reviewer_write_violation: the general reviewer")
    assert concluded["T-002"]["status"] == str(Status.DONE)
    assert git(repo, "show", f"{summary.run_branch}:b.txt") == "b\n"
    assert "a.txt" not in git(repo, "ls-tree", "--name-only", summary.run_branch)


def test_bounce_cap_stops_the_task_and_independent_tasks_continue(tmp_path: Path) -> None:
    repo = plan_repo(tmp_path, {"T-001": "Write a.txt.\n", "T-002": "Write b.txt.\n"})
    reject = {**REJECT, "concern": "Still wrong."}
    replay = script(
        tmp_path,
        {
            "T-001": [attempt(write("a.txt", "a\n"), review=reject)],
            "T-002": [attempt(write("b.txt", "b\n"))],
        },
    )
    summary, record = run_plan(repo / "plan", repo, replay, bounces=2, max_attempts=5)
    concluded = {e.task_id: e.data for e in record.of("task_concluded")}
    assert concluded["T-001"]["status"] == str(Status.FAIL)
    assert "the reviewer rejected 2 attempts, the bounce cap" in concluded["T-001"]["text"]
    assert concluded["T-002"]["status"] == str(Status.DONE)
    assert summary.message == "TaskTrack EXIT: Failed Tasks"
    units, ledger = units_and_ledger(repo, "T-001")
    assert [e.outcome for e in ledger] == ["rejected", "rejected"]
    assert [u.role for u in units] == ["implementer", "evaluator"] * 2


def test_an_empty_change_is_rejected_without_a_reviewer(tmp_path: Path) -> None:
    repo = plan_repo(tmp_path, {"T-001": "Write a.txt.\n"})
    replay = script(tmp_path, {"T-001": [attempt(), attempt(write("a.txt", "a\n"))]})
    summary, _ = run_plan(repo / "plan", repo, replay)
    assert summary.status == "completed"
    units, ledger = units_and_ledger(repo, "T-001")
    assert [u.role for u in units] == ["implementer", "implementer", "evaluator"]
    assert [e.outcome for e in ledger] == ["no_changes", "accepted"]
    assert ledger[0].verdicts[0].category == "acceptance_gap"
    assert "no work was performed" in ledger[0].verdicts[0].concern
    assert "no work was performed" in prompt_of(units[1])


def test_a_campaign_runs_each_lens_in_its_own_copy_and_blocking_findings_go_back(
    tmp_path: Path,
) -> None:
    toml = '[review]\nlenses = ["correctness", "security"]\n'
    repo = plan_repo(tmp_path, {"T-001": "Write a.txt.\n"}, {"taskhand.toml": toml})
    where = {"run": ["sh", "-c", f"pwd >> {tmp_path}/where"]}
    insecure = {
        "verdict": "reject",
        "category": "spec_violation",
        "concern": "a.txt is world-writable.",
        "evidence": ["a.txt"],
        "next_step": "Drop the chmod.",
        "actions": [where],
    }
    first = attempt(
        write("a.txt", "a\n"),
        review={"verdict": "accept", "actions": [where]},
        reviews={"security": insecure},
    )
    second = attempt(write("a.txt", "a!\n"), review={"verdict": "accept", "actions": [where]})
    replay = script(tmp_path, {"T-001": [first, second]})
    lenses = config.build(repo / "plan", env={}).lenses
    # Unconfined, so the reviewers can note where they work in a file outside their copies.
    summary, record = run_plan(repo / "plan", repo, replay, lenses=lenses, sandbox="none")
    assert summary.status == "completed"
    assert [(e.data["lens"], e.data["verdict"]) for e in record.of("verdict")] == [
        ("correctness", "accept"),
        ("security", "reject"),
        ("correctness", "accept"),
        ("security", "accept"),
    ]
    copies = [Path(c).name for c in (tmp_path / "where").read_text().split()]
    assert copies == ["review-correctness", "review-security"] * 2  # a copy per lens
    units, ledger = units_and_ledger(repo, "T-001")
    assert [[v.lens for v in e.verdicts] for e in ledger] == [["correctness", "security"]] * 2
    assert [u.lens for u in units] == ["", "correctness", "security", "", "correctness", "security"]
    assert "Focus on security" in prompt_of(units[2]) and "Focus on security" not in prompt_of(
        units[1]
    )
    retry = prompt_of(units[3])
    assert "Rejected (security review) as spec_violation: a.txt is world-writable." in retry
    assert "Drop the chmod." in retry
    assert git(repo, "show", f"{summary.run_branch}:a.txt") == "a!\n"


def test_a_task_whose_spend_passes_its_budget_stops_before_review_and_others_go_on(
    tmp_path: Path,
) -> None:
    repo = plan_repo(tmp_path, {"T-001": "Write a.txt.\n", "T-002": "Write b.txt.\n"})
    replay = script(
        tmp_path,
        {
            "T-001": [attempt(write("a.txt", "a\n"), cost=0.75)],
            "T-002": [
                attempt(write("b.txt", "b\n"), cost=0.25, review={"verdict": "accept", "cost": 0.1})
            ],
        },
    )
    summary, record = run_plan(repo / "plan", repo, replay, task_dollars=0.5)
    concluded = {e.task_id: e.data for e in record.of("task_concluded")}
    assert concluded["T-001"] == {
        "status": "FAIL",
        "text": "the task's spend cap of $0.5 was reached",
    }
    assert concluded["T-002"]["status"] == "DONE"
    units, ledger = units_and_ledger(repo, "T-001")
    assert [u.role for u in units] == ["implementer"]  # no reviewer was paid for
    assert [e.outcome for e in ledger] == ["capped"]
    assert summary.message == "TaskTrack EXIT: Failed Tasks"


def test_a_worker_that_rewrites_its_git_link_does_not_reach_the_user(tmp_path: Path) -> None:
    """The harness never reads a workspace through its .git: a worker that aims it at the
    user's repository changes nothing there, and its files are taken as they are."""
    repo = plan_repo(tmp_path, {"T-001": "Write a.txt.\n"})
    (repo / "mine.txt").write_text("the user's work\n")
    git(repo, "add", "mine.txt")
    aim = {"run": ["sh", "-c", f"rm -rf .git; echo 'gitdir: {repo / '.git'}' > .git"]}
    replay = script(tmp_path, {"T-001": [attempt(write("a.txt", "a\n"), aim)]})
    summary, _ = run_plan(repo / "plan", repo, replay, sandbox="none")
    assert summary.status == "completed"
    assert git(repo, "show", f"{summary.run_branch}:a.txt") == "a\n"
    assert git(repo, "ls-tree", "--name-only", summary.run_branch, ".git") == ""
    assert git(repo, "status", "--porcelain") == "A  mine.txt\n"  # the user's index as it was
    assert git(repo, "worktree", "list", "--porcelain").count("worktree ") == 1


def test_a_run_cap_reached_by_the_worker_stops_before_the_review_resumably(
    tmp_path: Path,
) -> None:
    repo = plan_repo(tmp_path, {"T-001": "Write a.txt.\n"})
    replay = script(tmp_path, {"T-001": [attempt(write("a.txt", "a\n"), cost=0.75)]})
    summary, record = run_plan(repo / "plan", repo, replay, run_dollars=0.5)
    assert (summary.status, summary.message) == (
        "capped",
        "the run's spend cap of $0.5 was reached",
    )
    units, ledger = units_and_ledger(repo, "T-001")
    assert [u.role for u in units] == ["implementer"] and ledger == []
    assert [e.data["attempt"] for e in record.of("attempt_paused")] == [1]
    resumed, again = run_plan(repo / "plan", repo, replay, run_dollars=5.0)
    assert (resumed.run_id, resumed.status) == (summary.run_id, "completed")
    # The worker's paid-for candidate is reviewed, not made (and paid for) a second time.
    units, ledger = units_and_ledger(repo, "T-001")
    assert [u.role for u in units] == ["implementer", "evaluator"]
    assert [(e.iteration, e.outcome) for e in ledger] == [(1, "accepted")]
    assert [e.data["attempt"] for e in again.of("attempt_resumed")] == [1]
    with Store.open(StateDir.for_repo(repo).database) as store:  # no second attempt opened
        assert [(a.number, a.status) for a in store.attempts(resumed.run_id)] == [(1, "passed")]
    assert git(repo, "show", f"{resumed.run_branch}:a.txt") == "a\n"
