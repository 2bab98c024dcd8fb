"""The visibility wall: what worker and reviewer prompts show, what they never show, and the
caps on every context source."""

from __future__ import annotations

import json
import re
from pathlib import Path

from taskhand import prompts
from taskhand.config import PromptCaps
from taskhand.gates import GateResult
from taskhand.plan.model import Criterion, Dialect, Plan, Status, Task
from taskhand.state.paths import StateDir, home
from taskhand.state.records import UnitRow
from taskhand.state.store import Store
from taskhand.text import CUT
from taskhand.unit import CaseReport, Evidence
from taskhand.workspace.diffs import Change
from tests.plans import md_plan, md_task
from tests.runs import attempt, make_repo, run_plan, script, write


def all_units(repo: Path) -> list[UnitRow]:
    with Store.open(StateDir.for_repo(repo).database) as store:
        return store.units(store.runs()[0].id)


def prompt_of(unit: UnitRow) -> str:
    first = Path(str(unit.transcript)).read_text().splitlines()[0]
    return str(json.loads(first)["content"])


def section(prompt: str, start: str, end: str) -> str:
    return prompt.split(start, 1)[1].split(end, 1)[0]


def test_prompts_never_show_the_machinery_or_another_tasks_ledger(tmp_path: Path) -> None:
    files = {str(k): str(v) for k, v in md_plan().items()}
    files["T-001-a.md"] = md_task("T-001", "Write a", body="Write a.txt.\n")
    # A check whose output names the workspace's absolute path, as a test runner's does.
    check = "`$ python3 -c \"import os; print(os.getcwd()); open('b.txt')\"`"
    body = f"## Description\nWrite b.txt.\n\n## Acceptance criteria\n- {check}\n"
    files["T-002-b.md"] = md_task("T-002", "Write b", body=body)
    repo = make_repo(tmp_path / "repo", {f"plan/{k}": v for k, v in files.items()})
    secret_concern = "Ledger note only for T-001: a.txt lacks a newline."
    reject = {
        "verdict": "reject",
        "category": "half_finished",
        "concern": secret_concern,
        "evidence": ["a.txt"],
        "next_step": "End a.txt with a newline.",
        "cost": 0.4321,
    }
    priced = {"cost": 0.4321, "tokens_in": 4321}
    replay = script(
        tmp_path,
        {
            "T-001": [
                attempt(write("a.txt", "a"), review=reject, **priced),
                attempt(write("a.txt", "a\n"), **priced),
            ],
            "T-002": [attempt(write("c.txt", "c\n"), **priced), attempt(write("b.txt", "b\n"))],
        },
    )
    summary, _ = run_plan(
        repo / "plan",
        repo,
        replay,
        max_attempts=31,
        bounces=29,
        unit_seconds=1234.5,
        task_tokens=987654,
        run_tokens=9876543,
        task_dollars=12.34,
        run_dollars=43.21,
    )
    assert summary.status == "completed"
    units = all_units(repo)
    assert len(units) == 7  # T-001: 2 workers, 2 reviewers; T-002: 2 workers, 1 reviewer
    state = StateDir.for_repo(repo)
    machinery = [
        "state.db",
        "events.jsonl",
        "task-status.json",
        "transcripts",
        "worktrees",
        "taskhand/run-",
        str(home()),
        str(state.root),
        summary.run_id,
        "taskhand.toml",
    ]
    caps_and_costs = ["1234.5", "987654", "9876543", "12.34", "43.21", "0.4321", "4321"]
    for unit in units:
        prompt = prompt_of(unit)
        for word in machinery + caps_and_costs:
            assert word not in prompt, (unit.task_id, unit.role, word)
        assert not re.search(r"\b(29|31)\b|\$\s*\d", prompt), (unit.task_id, unit.role)
        assert not re.search(r"\b(cost|budget|token|bounce)s?\b", prompt, re.IGNORECASE)
        if unit.task_id == "T-002":
            assert secret_concern not in prompt
    by_role = [(u.task_id, u.role) for u in units]
    retry_1 = prompt_of(units[by_role.index(("T-001", "implementer"), 1)])
    assert secret_concern in retry_1  # its own ledger, on its own retry
    retry_2 = prompt_of(units[by_role.index(("T-002", "implementer"), 5)])
    assert "Check command failed: `python3 -c" in retry_2 and "exited 1" in retry_2
    assert "FileNotFoundError" in retry_2 and "\n     .\n" in retry_2  # the cwd, as "."


def test_every_cap_is_respected(tmp_path: Path) -> None:
    caps = PromptCaps(
        overview_bytes=300, plan_bytes=200, context_bytes=250, diff_bytes=400, ledger_entries=2
    )
    files = {str(k): str(v) for k, v in md_plan().items()}
    files["overview.md"] = "# Feature\n\n" + "The goal, at length.\n" * 250 + "OVERVIEW-TAIL\n"
    for n in range(1, 9):
        files[f"T-00{n}-t.md"] = md_task(
            f"T-00{n}", f"Task number {n} of many", body="Do it.\n" * 20
        )
    repo = make_repo(
        tmp_path / "repo",
        {"AGENTS.md": "Convention.\n" * 400 + "AGENTS-TAIL\n", "CLAUDE.md": "CLAUDE-TAIL\n"}
        | {f"plan/{k}": v for k, v in files.items()},
    )
    big = "".join(f"line {n}\n" for n in range(2000)) + "DIFF-TAIL\n"
    work = [write("big.txt", big)] + [write(f"extra/f{n}.txt", f"{n}\n") for n in range(12)]
    rejects = [
        {
            "verdict": "reject",
            "category": "weak_test",
            "concern": f"Concern number {n}.",
            "evidence": ["big.txt"],
            "next_step": f"Fix number {n}.",
        }
        for n in (1, 2, 3)
    ]
    scripted = [
        attempt(*work, write("round.txt", f"{n}\n"), review=r) for n, r in enumerate(rejects)
    ]
    scripted.append(attempt(write("round.txt", "done\n")))
    others = {f"T-00{n}": [attempt(write(f"t{n}.txt", "x\n"))] for n in range(2, 9)}
    replay = script(tmp_path, {"T-001": scripted, **others})
    summary, _ = run_plan(repo / "plan", repo, replay, prompt_caps=caps, bounces=5)
    assert summary.status == "completed"
    units = [u for u in all_units(repo) if u.task_id == "T-001"]
    assert [u.role for u in units] == ["implementer", "evaluator"] * 4
    cut = len(CUT.encode()) + 1
    for unit in units:
        prompt = prompt_of(unit)
        assert unit.prompt_bytes == len(prompt.encode())
        for tail in ("OVERVIEW-TAIL", "AGENTS-TAIL", "CLAUDE-TAIL", "DIFF-TAIL"):
            assert tail not in prompt
        if unit.role == "implementer":
            overview = section(prompt, "## Overview\n\n", "\n\n## Project conventions")
            conventions = section(prompt, "## Project conventions\n\n", "\n\n## The plan")
            plan = section(prompt, "not work to do)\n\n", "\n\nWhere the tasks stand")
        else:
            overview = section(prompt, "scope boundaries)\n\n", "\n\n## Project conventions")
            conventions = section(prompt, "## Project conventions\n\n", "\n\n## The plan's")
            plan = section(prompt, "out of scope here)\n\n", "\n\n## Your focus")
            diff = section(prompt, "```diff\n", "\n```")
            assert len(diff.encode()) <= caps.diff_bytes + cut
            for n in range(12):  # the list of changed files is never cut
                assert f"- A extra/f{n}.txt" in prompt
        assert len(overview.encode()) <= caps.overview_bytes + cut
        assert len(plan.encode()) <= caps.plan_bytes + cut
        assert len(conventions.encode()) <= caps.context_bytes + cut
        assert CUT in overview and CUT in plan and CUT in conventions
    last_worker = prompt_of(units[6])
    assert "Concern number 2." in last_worker and "Concern number 3." in last_worker
    assert "Concern number 1." not in last_worker  # only the last two ledger entries


def task(**extra: object) -> Task:
    return Task("T-001", "Count words", "Add count().", [Criterion("count('') is 0")], **extra)  # type: ignore[arg-type]


def test_conventions_skip_links_and_read_at_most_the_cap(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("password=hunter2\n")
    work = tmp_path / "work"
    work.mkdir()
    (work / "AGENTS.md").symlink_to(secret)
    assert prompts.conventions(work, 1000) == ""
    (work / "CLAUDE.md").write_text("Use tabs.\n")
    assert prompts.conventions(work, 1000) == "Use tabs."
    (work / "AGENTS.md").unlink()
    (work / "AGENTS.md").write_text("Run make test.\n")
    both = prompts.conventions(work, 1000)
    assert both == "### AGENTS.md\n\nRun make test.\n\n### CLAUDE.md\n\nUse tabs."


def test_the_reviewer_sees_the_case_checks_files_and_a_safely_fenced_diff() -> None:
    plan = Plan(Dialect.MARKDOWN, Path("plan"), "Feature", [task(), Task("T-002", "Other")], [])
    plan.overview_text = "Ship word counting."
    context = prompts.Context(plan, {"T-001": Status.BUSY}, "Run pytest.")
    report = CaseReport([Evidence("count('') is 0", "wc.py:count")], ["kept a shim"], ["unicode?"])
    candidate = prompts.Candidate(
        "Added count().",
        report,
        [GateResult("command", True, "`pytest` exited 0 as expected")],
        [Change("A", "wc.py"), Change("R", "new.md", "old.md")],
        "+```python\n+x\n+````\n",
    )
    prompt = prompts.evaluator(task(), context, candidate, "tests")
    assert "Focus on the tests" in prompt
    assert "- T-001: Count words\n- T-002: Other" in prompt  # every task, the same each time
    assert "- count('') is 0 -> wc.py:count" in prompt and "kept a shim" in prompt
    assert "unicode?" in prompt and "- command: passed" in prompt
    assert "- A wc.py\n- R old.md -> new.md" in prompt
    assert "`````diff\n+```python" in prompt  # a fence longer than any inside the diff
    assert "Run pytest." in prompt


def test_what_earlier_tasks_did_shows_no_path_cap_cost_or_failure_reason(tmp_path: Path) -> None:
    """The progress section carries other tasks' outcomes in their own words, redacted, with
    no path into the harness's state, and a failure without its reason (a cap, here)."""
    files = {str(k): str(v) for k, v in md_plan().items()}
    for n, title in enumerate(["Write a", "Write b", "Ask", "Write d"], start=1):
        files[f"T-00{n}-t.md"] = md_task(f"T-00{n}", title)
    repo = make_repo(tmp_path / "repo", {f"plan/{k}": v for k, v in files.items()})
    state = StateDir.for_repo(repo)
    inside = f"{state.root}/runs/r-1/worktrees/T-009/attempt-1/a.txt"
    token = "ghp_" + "a1B2" * 9
    reject = {
        "verdict": "reject",
        "category": "weak_test",
        "concern": "No test for b.",
        "next_step": "Test b.",
    }
    replay = script(
        tmp_path,
        {
            "T-001": [attempt(write("a.txt", "a\n"), resolution=f"Wrote a.txt, {inside} {token}")],
            "T-002": [attempt(write("b.txt", "b\n"), review=reject, cost=0.4321)],
            "T-003": [attempt(outcome="question", question=f"May I edit {inside}?")],
            "T-004": [attempt(write("d.txt", "d\n"))],
        },
    )
    summary, _ = run_plan(repo / "plan", repo, replay, task_dollars=0.4)
    assert summary.status == "failed"  # T-002 failed, T-003 waits
    [last] = [prompt_of(u) for u in all_units(repo) if u.task_id == "T-004"][:1]
    shown = section(last, "## What earlier tasks did\n\n", "\n## Your task")
    assert "- T-001 Write a: done: Wrote a.txt, (a harness folder) [redacted]\n" in shown
    assert "- T-002 Write b: not finished; its work is not in the project\n" in shown
    assert "- T-003 Ask: waiting for a person\n" in shown and "May I" not in shown
    for word in [str(state.root), str(home()), summary.run_id, token, "spend cap", "0.4321"]:
        assert word not in last, word
    assert not re.search(r"\$\s*\d|\b0\.4\b", last)
    assert not re.search(r"\b(cost|budget|token|bounce|cap)s?\b", shown, re.IGNORECASE)
    with Store.open(state.database) as store:  # the cap's reason is kept for people
        assert "spend cap" in str(store.task_states(summary.run_id)["T-002"].reason)


def test_a_runs_prompts_of_one_role_begin_alike_so_prompt_caches_serve_them() -> None:
    """Stable first, moving last: a role's prompts for different tasks, at different points
    of the run, are the same up to where the plan's statuses begin (the worker) or the
    reviewer's focus (the reviewer); the task and its history come after."""
    first, second = task(), Task("T-002", "Other", "Add other().", [Criterion("it is other")])
    plan = Plan(Dialect.MARKDOWN, Path("plan"), "Feature", [first, second], [])
    plan.overview_text = "Ship word counting."
    before = prompts.Context(plan, {"T-001": Status.BUSY}, "Run pytest.")
    after = prompts.Context(plan, {"T-001": Status.DONE, "T-002": Status.BUSY}, "Run pytest.")
    one, two = prompts.worker(first, before), prompts.worker(second, after, building_on=1)
    shared = one.split("Where the tasks stand", 1)[0]
    assert two.startswith(shared) and "Ship word counting." in shared and "Run pytest." in shared
    assert "- T-001 Count words" in shared and "- T-002 Other" in shared
    assert "Where the tasks stand: done: T-001; busy: T-002 (this task)." in two
    assert len(shared) > len(one) / 2  # most of a short prompt is the part they share
    candidate = prompts.Candidate("Done.", CaseReport([], [], []), [], [Change("A", "x")], "+x\n")
    review = [prompts.evaluator(t, c, candidate) for t, c in ((first, before), (second, after))]
    shared = review[0].split("## Your focus", 1)[0]
    assert review[1].startswith(shared) and "## Your verdict" in shared
    assert "## The task" not in shared and "- T-002: Other" in shared
