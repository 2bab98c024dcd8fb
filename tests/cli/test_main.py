"""The `taskhand` command end to end: init, validate, show and next on real folders; its
commands listed without being imported, and what a plan command loads."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import click
import pytest

from taskhand.cli.main import COMMANDS, cli
from taskhand.plan import templates
from tests import runs
from tests.conftest import SPEC_SOURCE, RunCli, WritePlan
from tests.plans import md_plan, tt_plan


def fill_in(folder: Path) -> None:
    """Replace every placeholder `taskhand init` wrote, as a person editing the plan would."""
    example = templates.FIRST_CRITERIA[0].text
    for path in folder.iterdir():
        text = path.read_text()
        for placeholder in (*templates.OVERVIEW_PLACEHOLDERS, templates.FIRST_DESCRIPTION):
            text = text.replace(placeholder, "Count the words of README.md in src/count.py.")
        path.write_text(text.replace(example, "README.md's word count is printed"))


@pytest.mark.parametrize("dialect", ["markdown", "tasktrack"])
def test_init_writes_a_plan_that_validates_once_edited(
    tmp_path: Path, run_cli: RunCli, dialect: str
) -> None:
    folder = tmp_path / "newplan"
    result = run_cli("init", folder, "--dialect", dialect)
    assert result.exit_code == 0, result.output
    assert "created" in result.output
    unedited = run_cli("validate", folder, "--json")
    assert unedited.exit_code == 1
    problems = json.loads(unedited.output)["problems"]
    errors = [p for p in problems if p["severity"] == "error"]
    assert {p["rule"] for p in errors} == {"template"} and len(errors) == 3
    assert all(p["line"] and p["fix"] for p in errors)
    assert any("overview still holds the init template's text" in p["message"] for p in errors)
    # The plan still reads: show and next work on it; only run refuses it.
    assert run_cli("show", folder).exit_code == 0
    fill_in(folder)
    assert run_cli("validate", folder).exit_code == 0
    again = run_cli("init", folder, "--dialect", dialect)
    assert again.exit_code == 1
    assert "already holds a plan" in again.stderr


def test_init_copies_the_spec_publication(tmp_path: Path, run_cli: RunCli) -> None:
    spec = tmp_path / "TaskTrack-v1_draft.md"
    spec.write_text(SPEC_SOURCE.read_text() if SPEC_SOURCE.exists() else "# TaskTrack\n")
    folder = tmp_path / "tt"
    result = run_cli("init", folder, "--dialect", "tasktrack", "--code", "ABC", "--spec", spec)
    assert result.exit_code == 0, result.output
    assert (folder / spec.name).read_bytes() == spec.read_bytes()
    assert sorted(p.name for p in folder.iterdir()) == ["ABC-1.md", "ABC-TaskTrack.md", spec.name]
    fill_in(folder)
    report = run_cli("validate", folder, "--strict")
    assert report.exit_code == 0, report.output


def test_init_rejects_a_bad_code(tmp_path: Path, run_cli: RunCli) -> None:
    result = run_cli("init", tmp_path / "x", "--dialect", "tasktrack", "--code", "AB1")
    assert result.exit_code == 1
    assert result.stderr.strip() == (
        "taskhand: error: plan code 'AB1' must be 3 to 5 letters A-Z (fix: --code FOO)"
    )
    assert not (tmp_path / "x").exists()


def test_validate_json(write_plan: WritePlan, run_cli: RunCli) -> None:
    folder = write_plan(md_plan(("T-001", {"depends": "T-404"})))
    result = run_cli("validate", folder, "--json")
    assert result.exit_code == 1
    data = json.loads(result.output)
    assert data["ok"] is False and data["errors"] == 1
    [problem] = data["problems"]
    assert problem["line"] == 4 and problem["rule"] == "unknown-dependency"
    assert problem["path"].endswith("T-001-task.md")


def test_strict_fails_on_warnings(write_plan: WritePlan, run_cli: RunCli) -> None:
    folder = write_plan(tt_plan([[("FOO-1", "OPEN")]], spec=False))
    assert run_cli("validate", folder).exit_code == 0
    assert run_cli("validate", folder, "--strict").exit_code == 1


def test_show_json_reports_eligibility_and_shape(write_plan: WritePlan, run_cli: RunCli) -> None:
    folder = write_plan(
        tt_plan(
            [[("FOO-1", "DONE"), ("FOO-2", "OPEN"), ("FOO-3", "OPEN")], [("FOO-4", "OPEN")]],
            {"FOO-3": "FOO-2"},
        )
    )
    result = run_cli("show", folder, "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["code"] == "FOO" and data["dialect"] == "tasktrack"
    assert data["eligible"] == ["FOO-2"] and data["next"] == "FOO-2"
    assert data["active_phase"] == 1 and data["exit"] is None
    assert data["critical_path"] == ["FOO-2", "FOO-3", "FOO-4"]
    assert data["remaining"] == {"critical_path": ["FOO-2", "FOO-3", "FOO-4"], "width": 1}
    assert [t["status"] for t in data["tasks"]] == ["DONE", "OPEN", "OPEN", "OPEN"]
    assert [t["eligible"] for t in data["tasks"]] == [False, True, False, False]
    assert data["phases"][1] == {"number": 2, "title": "Phase 2", "tasks": ["FOO-4"]}


def test_show_one_task(write_plan: WritePlan, run_cli: RunCli) -> None:
    folder = write_plan(tt_plan([[("FOO-1", "WAIT")]]))
    data = json.loads(run_cli("show", folder, "FOO-1", "--json").output)
    assert data["requests"] == [{"request": "Decide something.", "response": None}]
    text = run_cli("show", folder, "FOO-1").output
    assert "Request: Decide something." in text
    missing = run_cli("show", folder, "FOO-9")
    assert missing.exit_code == 1
    assert "no task FOO-9" in missing.stderr and "FOO-1" in missing.stderr


@pytest.mark.parametrize(
    ("phases", "reason", "message"),
    [
        ([[("FOO-1", "DONE")]], "plan_completed", "TaskTrack EXIT: Plan Completed"),
        (
            [[("FOO-1", "FAIL")], [("FOO-2", "OPEN")]],
            "failed_tasks",
            "TaskTrack EXIT: Failed Tasks",
        ),
        ([[("FOO-1", "WAIT")]], "waiting", "TaskTrack EXIT: Waiting for Human Feedback"),
        (
            [[("FOO-1", "BUSY")], [("FOO-2", "OPEN")]],
            "no_eligible",
            "TaskTrack EXIT: No Eligible Tasks",
        ),
    ],
)
def test_next_exit_rules(
    write_plan: WritePlan,
    run_cli: RunCli,
    phases: list[list[tuple[str, str]]],
    reason: str,
    message: str,
) -> None:
    folder = write_plan(tt_plan(phases))
    result = run_cli("next", folder, "--json")
    assert result.exit_code == 3
    data = json.loads(result.output)
    assert data["next"] is None and data["eligible"] == []
    assert data["exit"] == {"reason": reason, "message": message}
    assert run_cli("next", folder).output.strip() == message


def test_next_all_lists_the_frontier(write_plan: WritePlan, run_cli: RunCli) -> None:
    folder = write_plan(tt_plan([[("FOO-1", "OPEN"), ("FOO-2", "OPEN"), ("FOO-10", "OPEN")]]))
    result = run_cli("next", folder, "--all")
    assert result.exit_code == 0
    assert result.output.split() == ["FOO-1", "FOO-2", "FOO-10"]
    assert json.loads(run_cli("next", folder, "--json").output)["next"] == "FOO-1"


def test_status_file_overlays_markdown_plans(
    write_plan: WritePlan, run_cli: RunCli, tmp_path: Path
) -> None:
    folder = write_plan(md_plan(("T-001", {}), ("T-002", {"phase": "2"})))
    status = tmp_path / "task-status.json"
    status.write_text('{"T-001": "done"}')
    data = json.loads(run_cli("next", folder, "--json", "--status-file", status).output)
    assert data["next"] == "T-002" and data["active_phase"] == 2


def test_invalid_plan_refuses_show_and_next(write_plan: WritePlan, run_cli: RunCli) -> None:
    folder = write_plan(md_plan(("T-001", {"depends": "T-002"}), ("T-002", {"depends": "T-001"})))
    for command in ("show", "next"):
        result = run_cli(command, folder)
        assert result.exit_code == 1
        assert "dependency cycle" in result.stderr
        assert "Traceback" not in result.output


def test_console_script_runs(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "taskhand", "validate", str(tmp_path / "absent")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 1
    assert "no such plan folder (fix:" in result.stdout


ONE_LINE_ERROR = re.compile(r"taskhand: error: [^\n]+ \(fix: [^\n]+\)\n")


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["show", "--bogus"], "no such option '--bogus' (fix: see 'taskhand show --help')"),
        (["show"], "missing argument 'PLAN' (fix: see 'taskhand show --help')"),
        (["bogus"], "no such command 'bogus' (fix: see 'taskhand --help')"),
        (["--bogus"], "no such option '--bogus' (fix: see 'taskhand --help')"),
        (["shw", "x"], "no such command 'shw' (fix: use 'show', or see 'taskhand --help')"),
        (["next", "x", "--jsn"], "no such option '--jsn' (fix: use '--json', or see 'taskhand"),
        (["init", "--dialect", "rst"], "invalid value for '--dialect': 'rst' is not one of"),
        (["run", "plan", "--max-attempts", "0"], "invalid value for '--max-attempts': 0 is"),
    ],
)
def test_usage_errors_come_in_the_one_style(run_cli: RunCli, args: list[str], says: str) -> None:
    result = run_cli(*args)
    assert result.exit_code == 2  # click's code for a usage error, unchanged
    assert result.stdout == ""
    assert ONE_LINE_ERROR.fullmatch(result.stderr), result.stderr
    assert result.stderr.startswith(f"taskhand: error: {says}")


def test_taskhand_alone_still_prints_the_help(run_cli: RunCli) -> None:
    result = run_cli()
    assert "Usage: taskhand [OPTIONS] COMMAND" in result.output
    assert "taskhand: error" not in result.output


@pytest.mark.parametrize(
    ("args", "code", "error"),
    [
        (["show", "{plan}", "T-404", "--json"], 1, "no task T-404 in "),
        (["next", "--json", "{plan}", "--bogus"], 2, "no such option '--bogus'"),
        (["show", "{missing}", "--json"], 1, "no such plan folder"),
        (["runs", "--repo", "{repo}", "--json"], 1, "no runs for "),
    ],
)
def test_json_errors_are_json_on_stderr(
    tmp_path: Path,
    write_plan: WritePlan,
    run_cli: RunCli,
    args: list[str],
    code: int,
    error: str,
) -> None:
    plan = write_plan(md_plan(("T-001", {})))
    paths = {"plan": plan, "missing": tmp_path / "missing", "repo": runs.make_repo(tmp_path / "r")}
    result = run_cli(*(a.format(**paths) for a in args))
    assert result.exit_code == code
    assert result.stdout == ""
    data = json.loads(result.stderr)
    assert error in data["error"] and data["fix"], data
    if "missing" in " ".join(args):
        [problem] = data["problems"]
        assert problem["message"] == "no such plan folder" and problem["fix"]


def test_plan_errors_keep_their_lines_in_text(write_plan: WritePlan, run_cli: RunCli) -> None:
    folder = write_plan(md_plan(("T-001", {"depends": "T-404"}), ("T-002", {"phase": "x"})))
    result = run_cli("next", folder)
    assert result.exit_code == 1
    lines = result.stderr.splitlines()
    assert len(lines) == 2 and all(": error: " in line and "(fix: " in line for line in lines)


def test_usage_errors_from_the_installed_command(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "taskhand", "validate", "--strictly", str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 2
    assert result.stderr == (
        "taskhand: error: no such option '--strictly' (fix: use '--strict', or see "
        "'taskhand validate --help')\n"
    )


@pytest.mark.parametrize("width", [60, 80, 120])
def test_help_lists_every_command_as_click_would(width: int) -> None:
    # The lazy group lists its commands from a table, without importing them; the listing
    # must read exactly as click makes it from the commands' own help.
    ctx = click.Context(cli, info_name="taskhand")
    loaded = {name: cli.get_command(ctx, name) for name in cli.list_commands(ctx)}
    assert all(loaded.values()) and set(loaded) == set(COMMANDS)
    eager = click.Group("taskhand", commands=loaded)
    lazy_help, eager_help = click.HelpFormatter(width=width), click.HelpFormatter(width=width)
    cli.format_commands(ctx, lazy_help)
    eager.format_commands(ctx, eager_help)
    assert lazy_help.getvalue() == eager_help.getvalue()
    # The column is as wide as the longest name (integration) needs.
    assert re.search(r"\n  validate +Check PLAN against every rule", lazy_help.getvalue())


# Run in a fresh interpreter: which modules a command leaves loaded.
LOADED = """
import json, sys
from taskhand.cli.main import main
sys.argv[1:] = json.loads(sys.argv[1])
try:
    main()
except SystemExit:
    pass
print(json.dumps(sorted(sys.modules)), file=sys.stderr)
"""
PLAN_COMMANDS = ("validate", "show", "next")
RUN_MACHINERY = (
    *("rich", "openai", "acp", "httpx"),
    *("taskhand.run.loop", "taskhand.run.launch", "taskhand.run.feedback", "taskhand.run.attempt"),
    *("taskhand.pipeline", "taskhand.prompts", "taskhand.agents.executor"),
    *("taskhand.agents.cli", "taskhand.agents.acp", "taskhand.agents.openai"),
    *("taskhand.agents.replay", "taskhand.cli.run", "taskhand.cli.runs", "taskhand.views.progress"),
)


# The lifecycle's table and each task's standing are data that `show` reads; no stage is.
READ_BY_SHOW = ("taskhand.pipeline", "taskhand.pipeline.lifecycle", "taskhand.pipeline.standing")


def among(loaded: list[str], packages: tuple[str, ...]) -> list[str]:
    """The loaded modules that are one of `packages` or inside one (the data `show` reads
    aside)."""
    inside = tuple(f"{p}." for p in packages)
    return [m for m in loaded if (m in packages or m.startswith(inside)) and m not in READ_BY_SHOW]


def modules_loaded(args: list[str], cwd: Path) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", LOADED, json.dumps(args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    )
    loaded: list[str] = json.loads(done.stderr.splitlines()[-1])
    return loaded


def test_plan_commands_do_not_load_the_run_machinery(tmp_path: Path) -> None:
    repo = runs.make_repo(tmp_path / "repo")
    (repo / "plan").mkdir()
    for name, text in md_plan(("T-001", {}), ("T-002", {"agent": "replay"})).items():
        (repo / "plan" / name).write_text(str(text))
    replay = runs.script(tmp_path, {"T-001": [runs.attempt(runs.write("a.txt", "a\n"))]})
    runs.run_plan(repo / "plan", repo, replay, sandbox="none", max_attempts=1)
    commands = ("taskhand.cli.plan", "taskhand.cli.moves")
    reading = ("taskhand.plan.formats", "taskhand.plan.validate", "taskhand.state")
    assert among(modules_loaded(["--help"], repo), (*RUN_MACHINERY, *commands, *reading)) == []
    loaded = {command: modules_loaded([command, "plan"], repo) for command in PLAN_COMMANDS}
    for command, modules in loaded.items():
        assert "taskhand.cli.plan" in modules and among(modules, RUN_MACHINERY) == [], command
    # validate checks the agents a plan names against the registry's names, not its backends;
    # show and next read the run's statuses from the store, which validate never opens.
    assert "taskhand.agents" in loaded["validate"]
    assert "taskhand.state.store" in loaded["show"] and "taskhand.state.store" in loaded["next"]
    assert "taskhand.state.store" not in loaded["validate"]
