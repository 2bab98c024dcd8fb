"""The run commands from the command line: demo, run --json, runs, stats, clean, errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from taskhand.config import PromptCaps, RunConfig
from taskhand.state.paths import StateDir
from taskhand.state.store import Store
from tests.conftest import RunCli
from tests.plans import md_plan, md_task
from tests.runs import attempt, git, make_repo, run_plan, script, write


def repo_with_plan(tmp_path: Path, second_criteria: str = "- it works") -> Path:
    files = {str(k): str(v) for k, v in md_plan(("T-001", {})).items()}
    body = f"## Description\nDo it.\n\n## Acceptance criteria\n{second_criteria}\n"
    files["T-002-task.md"] = md_task("T-002", "Task T-002", body=body)
    return make_repo(tmp_path / "repo", {f"plan/{k}": v for k, v in files.items()})


def test_demo_runs_to_the_end(tmp_path: Path, run_cli: RunCli) -> None:
    (tmp_path / "demo").mkdir()  # an empty folder is as good as a new one
    result = run_cli("demo", "--dir", tmp_path / "demo")
    assert result.exit_code == 0, result.output
    assert "TaskTrack EXIT: Plan Completed" in result.output
    assert "T-002: attempt not accepted: `python3 -m unittest tests/test_cli.py` exited 1" in (
        result.output
    )
    assert "T-003: reviewer rejected as acceptance_gap: main() returns" in result.output
    repo = tmp_path / "demo" / "wordcount"
    branch = git(repo, "branch", "--list", "taskhand/run-*", "--format=%(refname:short)").strip()
    subjects = git(repo, "log", "--reverse", "--format=%s", f"main..{branch}").splitlines()
    assert subjects == [
        "T-001: Counting functions",
        "T-002: Command line",
        "T-003: Missing files",
        "T-004: Usage in the README",
    ]
    assert "def main(argv" in git(repo, "show", f"{branch}:wc.py")


def test_run_json_streams_events(tmp_path: Path, run_cli: RunCli) -> None:
    repo = repo_with_plan(tmp_path)
    replay = script(
        tmp_path,
        {"T-001": [attempt(write("a.txt", "a\n"))], "T-002": [attempt(write("b.txt", "b\n"))]},
    )
    result = run_cli("run", repo / "plan", "--script", replay, "--json")
    assert result.exit_code == 0, result.output
    events = [json.loads(line) for line in result.output.splitlines()]
    assert events[0]["kind"] == "run_started"
    assert events[-1]["kind"] == "run_finished" and events[-1]["status"] == "completed"
    assert [e["task_id"] for e in events if e["kind"] == "integrated"] == ["T-001", "T-002"]

    runs = json.loads(run_cli("runs", "--repo", repo, "--json").output)
    assert [(r["status"], r["done"], r["tasks"]) for r in runs] == [("completed", 2, 2)]
    stats = json.loads(run_cli("stats", "--repo", repo, "--json").output)
    assert [t["task_id"] for t in stats["tasks"]] == ["T-001", "T-002"]
    assert (stats["total"]["units"], stats["total"]["reviews"]) == (4, 2)  # one of each a task
    assert stats["total"]["prompt_bytes"] > 0
    text = run_cli("stats", "--repo", repo).output
    assert "TOTAL" in text and "tokens in" in text


def test_clean_keeps_unintegrated_work(tmp_path: Path, run_cli: RunCli) -> None:
    repo = repo_with_plan(tmp_path, "- `$ false` never passes")
    replay = script(
        tmp_path,
        {"T-001": [attempt(write("a.txt", "a\n"))], "T-002": [attempt(write("b.txt", "b\n"))]},
    )
    result = run_cli("run", repo / "plan", "--script", replay, "--max-attempts", "1")
    assert result.exit_code == 1, result.output
    assert "TaskTrack EXIT: Failed Tasks" in result.output
    branches = git(repo, "branch", "--format=%(refname:short)").split()
    dry = run_cli("clean", "--repo", repo, "--dry-run")
    assert dry.exit_code == 0
    assert "would remove branch taskhand/T-001-task-t-001 (integrated into" in dry.output
    # T-002's work never landed: no branch of it in the repository, its commit in the depot.
    assert "taskhand/T-002-task-t-002" not in branches
    assert ": T-002 attempt 1 (failed): its result " in dry.output
    [kept] = [line for line in dry.output.splitlines() if "/depot: the commits of " in line]
    assert "T-002 attempt 1" in kept and kept.endswith(", which stay, are kept there")
    assert git(repo, "branch", "--format=%(refname:short)").split() == branches
    done = run_cli("clean", "--repo", repo)
    assert done.exit_code == 0
    left = git(repo, "branch", "--format=%(refname:short)").split()
    assert "taskhand/T-001-task-t-001" not in left
    assert any(b.startswith("taskhand/run-") for b in left)
    assert "would remove depot" not in dry.output and "removed depot" not in done.output


def test_run_errors_are_one_line(tmp_path: Path, run_cli: RunCli) -> None:
    repo = repo_with_plan(tmp_path)
    unknown = run_cli("run", repo / "plan", "--agent", "robot")
    assert unknown.exit_code == 1
    assert unknown.stderr.startswith("taskhand: error: unknown agent 'robot' (fix: use one of ")
    assert unknown.stderr.endswith(", openai, replay)\n") and unknown.stderr.count("\n") == 1
    missing = run_cli("run", repo / "plan", "--script", tmp_path / "nope.toml")
    assert missing.exit_code == 1
    assert missing.stderr.count("\n") == 1 and "nope.toml" in missing.stderr
    assert "Traceback" not in missing.output
    no_runs = run_cli("resume", "--repo", repo)
    assert no_runs.exit_code == 1
    assert "no runs for" in no_runs.stderr and "(fix: start one" in no_runs.stderr


def test_review_options_are_checked_before_anything_is_made(
    tmp_path: Path, run_cli: RunCli
) -> None:
    repo = repo_with_plan(tmp_path)
    lens = run_cli("run", repo / "plan", "--review", "correctness,style")
    assert lens.exit_code == 2
    assert "--review" in lens.stderr and "(fix: distinct names from general, correctness" in (
        lens.stderr
    )
    replay = script(tmp_path, {})
    evaluator = run_cli("run", repo / "plan", "--script", replay, "--evaluator", "robot")
    assert evaluator.exit_code == 1
    assert evaluator.stderr.startswith("taskhand: error: unknown agent 'robot'")
    (repo / "plan" / "taskhand.toml").write_text("[review]\nbounces = 0\n")
    bad = run_cli("run", repo / "plan")
    assert bad.exit_code == 1 and bad.stderr.count("\n") == 1
    assert "[review] bounces = 0 (fix: a whole number >= 1)" in bad.stderr
    assert git(repo, "branch", "--format=%(refname:short)").split() == ["main"]
    assert not StateDir.for_repo(repo).database.exists()


def test_review_options_reach_the_run(tmp_path: Path, run_cli: RunCli) -> None:
    repo = repo_with_plan(tmp_path)
    (repo / "plan" / "taskhand.toml").write_text(
        "[review]\nbounces = 4\n[prompts]\nplan_bytes = 900\n"
    )
    replay = script(
        tmp_path,
        {"T-001": [attempt(write("a.txt", "a\n"))], "T-002": [attempt(write("b.txt", "b\n"))]},
    )
    result = run_cli("run", repo / "plan", "--script", replay, "--review", "tests,security")
    assert result.exit_code == 0, result.output
    with Store.open(StateDir.for_repo(repo).database) as store:
        run = store.runs()[0]
        lenses = [u.lens for u in store.units(run.id, "T-001")]
    config = RunConfig.from_json(run.config)
    assert (config.lenses, config.caps.bounces, config.prompt_caps.plan_bytes) == (
        ["tests", "security"],
        4,
        900,
    )
    assert lenses == ["", "tests", "security"]


def test_settings_come_from_variables_under_the_flags(
    tmp_path: Path, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = repo_with_plan(tmp_path)
    (repo / "plan" / "taskhand.toml").write_text("[review]\nbounces = 4\n")
    replay = script(
        tmp_path,
        {"T-001": [attempt(write("a.txt", "a\n"))], "T-002": [attempt(write("b.txt", "b\n"))]},
    )
    monkeypatch.setenv("TASKHAND_REVIEW", "tests")
    monkeypatch.setenv("TASKHAND_BOUNCES", "6")
    monkeypatch.setenv("TASKHAND_SCRIPT", str(replay))
    result = run_cli("run", repo / "plan", "--bounces", "5", "--sandbox", "none")
    assert result.exit_code == 0, result.output
    with Store.open(StateDir.for_repo(repo).database) as store:
        config = RunConfig.from_json(store.runs()[0].config)
    assert (config.lenses, config.caps.bounces, config.sandbox) == (["tests"], 5, "none")
    assert config.script == str(replay.resolve())


def test_a_bad_variable_or_flag_is_one_line_before_anything_is_made(
    tmp_path: Path, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = repo_with_plan(tmp_path)
    timeout = run_cli("run", repo / "plan", "--unit-timeout", "0")
    assert timeout.exit_code == 2 and timeout.stderr.count("\n") == 1
    assert timeout.stderr.startswith(
        "taskhand: error: invalid value for '--unit-timeout': 0.0 is below 1 "
        "(fix: a number of seconds >= 1)"
    )
    monkeypatch.setenv("TASKHAND_SANDBOX", "docker")
    sandbox = run_cli("run", repo / "plan")
    assert sandbox.exit_code == 1
    assert sandbox.stderr == (
        "taskhand: error: TASKHAND_SANDBOX = 'docker' is not a sandbox taskhand knows "
        "(fix: auto, bwrap, none, or unset it)\n"
    )
    assert git(repo, "branch", "--format=%(refname:short)").split() == ["main"]
    assert not StateDir.for_repo(repo).database.exists()


def test_a_run_started_before_reviews_existed_resumes_with_the_defaults() -> None:
    old = {"agent": "replay", "model": None, "script": None, "base_ref": "HEAD"}
    old["caps"] = {"max_attempts": 2, "unit_seconds": 60.0}  # type: ignore[assignment]
    config = RunConfig.from_json(old)
    assert (config.caps.max_attempts, config.caps.bounces, config.lenses) == (2, 3, ["general"])
    assert config.prompt_caps == PromptCaps() and config.evaluator_agent == "replay"


def test_ledger_shows_what_became_of_each_attempt(tmp_path: Path, run_cli: RunCli) -> None:
    repo = repo_with_plan(tmp_path)
    reject = {
        "verdict": "reject",
        "category": "weak_test",
        "concern": "No test reads a.txt.",
        "evidence": ["a.txt"],
        "next_step": "Add a test.",
    }
    replay = script(
        tmp_path,
        {
            "T-001": [
                attempt(write("a.txt", "a\n"), review=reject),
                attempt(write("t.txt", "t\n")),
            ],
            "T-002": [attempt(write("b.txt", "b\n"))],
        },
    )
    assert run_cli("run", repo / "plan", "--script", replay).exit_code == 0
    shown = run_cli("ledger", "T-001", "--repo", repo)
    assert shown.exit_code == 0, shown.output
    lines = shown.output.splitlines()
    assert lines[0] == "T-001 attempt 1: rejected: rejected as weak_test: No test reads a.txt."
    assert "  general review: reject as weak_test: No test reads a.txt." in lines
    assert "    next step: Add a test." in lines and "T-002" not in shown.output
    assert "T-001 attempt 2: accepted: did it" in lines
    assert "  change: 2 files changed (+2 -0): a.txt, t.txt" in lines  # built on attempt 1
    data = json.loads(run_cli("ledger", "--repo", repo, "--json").output)
    assert [(e["task_id"], e["outcome"]) for e in data["entries"]] == [
        ("T-001", "rejected"),
        ("T-001", "accepted"),
        ("T-002", "accepted"),
    ]


def test_demo_refuses_a_folder_that_holds_anything(tmp_path: Path, run_cli: RunCli) -> None:
    folder = tmp_path / "busy"
    folder.mkdir()
    (folder / "notes.txt").write_text("mine\n")
    result = run_cli("demo", "--dir", folder)
    assert result.exit_code == 1
    assert result.stderr == (
        f"taskhand: error: {folder} is not empty (fix: give a new or empty folder to --dir, "
        "or leave --dir out for a temporary one)\n"
    )
    assert [p.name for p in folder.iterdir()] == ["notes.txt"]


def test_show_reads_the_status_export_of_a_real_run(tmp_path: Path, run_cli: RunCli) -> None:
    repo = make_repo(
        tmp_path / "repo",
        {f"plan/{k}": str(v) for k, v in md_plan(("T-001", {}), ("T-002", {})).items()},
    )
    replay = script(
        tmp_path,
        {
            "T-001": [attempt(write("a.txt", "a\n"))],
            "T-002": [attempt(outcome="question", question="Tabs or commas?")],
        },
    )
    summary, _ = run_plan(repo / "plan", repo, replay)
    export = summary.state / "task-status.json"
    assert json.loads(export.read_text()) == {"T-001": "done", "T-002": "waiting"}
    result = run_cli("show", repo / "plan", "--json", "--status-file", export)
    assert result.exit_code == 0, result.stderr
    shown = json.loads(result.stdout)
    assert [(t["id"], t["status"]) for t in shown["tasks"]] == [
        ("T-001", "DONE"),
        ("T-002", "WAIT"),
    ]
    assert shown["exit"]["reason"] == "waiting"


def test_run_refuses_a_plan_that_cannot_run_before_making_anything(
    tmp_path: Path, run_cli: RunCli
) -> None:
    repo = repo_with_plan(tmp_path, "- `$ pytest -q | tee log.txt` passes")
    result = run_cli("run", repo / "plan", "--script", script(tmp_path, {}), "--json")
    assert result.exit_code == 1 and result.stdout == ""
    refusal = json.loads(result.stderr)
    assert "has a pipe (|), but no shell runs it" in refusal["error"]
    assert refusal["fix"].startswith("run it through a shell: `$ sh -c 'pytest -q | tee log.txt'`")
    assert [p["rule"] for p in refusal["problems"]] == ["shell-syntax"]
    text = run_cli("run", repo / "plan", "--script", script(tmp_path, {}))
    assert text.exit_code == 1 and text.stderr.count("\n") == 1
    assert "T-002-task.md:10: error: T-002's check `pytest -q | tee log.txt` has a pipe" in (
        text.stderr
    )
    assert git(repo, "branch", "--format=%(refname:short)").split() == ["main"]
    assert not StateDir.for_repo(repo).database.exists()
