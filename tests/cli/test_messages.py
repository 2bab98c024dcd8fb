"""What the commands say of a file or an argument they cannot take, through the real command
line: JSON that is not a plan is called JSON, UTF-16 is read or named as such, counts of one
are singular, a task id says what is wrong with it, and a path with a comma works or is
refused in the same words everywhere."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from taskhand.plan.formats.markdown import PATH_SEPARATOR
from taskhand.plan.formats.tasktrack import RESOURCE_COMMA
from tests.conftest import RunCli
from tests.plan.imports import FIXTURES


def error_line(run_cli: RunCli, *args: str | Path) -> str:
    result = run_cli(*args)
    assert result.exit_code == 1, result.output
    [line] = result.stderr.splitlines()
    return line


@pytest.mark.parametrize(
    ("text", "kind"),
    [('"tasks"', "text"), ("42", "a number"), ("null", "null"), ("[1, 2]", "a list")],
)
def test_valid_json_that_is_not_a_plan_is_not_called_not_json(
    tmp_path: Path, run_cli: RunCli, text: str, kind: str
) -> None:
    source = tmp_path / "tasks.json"
    source.write_text(text + "\n")
    line = error_line(run_cli, "import", source, "--out", tmp_path / "plan")
    assert line == (
        f"taskhand: error: {source}: JSON, but not a Taskmaster tasks.json taskhand knows: "
        f"{kind} at the top, not an object (fix: give Taskmaster's .taskmaster/tasks/tasks.json)"
    )
    assert "not JSON" not in line
    prose = tmp_path / "notes.txt"
    prose.write_text("Buy milk.\n")
    assert "(not JSON)" in error_line(run_cli, "import", prose, "--out", tmp_path / "plan")


@pytest.mark.parametrize("codec", ["utf-16", "utf-16-le", "utf-16-be"])
def test_a_utf16_tasks_json_is_imported(tmp_path: Path, run_cli: RunCli, codec: str) -> None:
    """Windows tools save text as UTF-16, with a byte order mark or without one."""
    source = tmp_path / "tasks.json"
    text = (FIXTURES / "taskmaster-legacy.json").read_text(encoding="utf-8")
    source.write_bytes(text.encode(codec))
    result = run_cli("import", source, "--out", tmp_path / "plan")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[0].endswith(
        "(Taskmaster tasks.json): 8 tasks in 1 phase, 7 dependencies, 0 done"
    )


def test_a_utf16_plan_file_is_named_so(tmp_path: Path, run_cli: RunCli) -> None:
    plan = tmp_path / "plan"
    assert run_cli("import", FIXTURES / "taskmaster-legacy.json", "--out", plan).exit_code == 0
    task = next(plan.glob("T-001-*.md"))
    task.write_bytes(task.read_text(encoding="utf-8").encode("utf-16"))
    result = run_cli("validate", plan)
    assert result.exit_code == 1
    assert f"{task.relative_to(tmp_path)}: error: UTF-16 text; a plan file must be UTF-8 " in (
        result.output.replace(str(tmp_path) + "/", "")
    )
    assert "binary" not in result.output


def test_counts_of_one_are_singular(tmp_path: Path, run_cli: RunCli) -> None:
    source = tmp_path / "tasks.json"
    task = {"id": 1, "title": "Greet", "description": "Print hello.", "testStrategy": "`$ true`"}
    source.write_text(json.dumps({"tasks": [task]}))
    plan = tmp_path / "plan"
    imported = run_cli("import", source, "--out", plan)
    assert imported.exit_code == 0, imported.output
    assert imported.stdout.splitlines()[0].endswith(": 1 task in 1 phase, 0 dependencies, 0 done")
    result = run_cli("validate", plan)
    assert result.stdout.splitlines()[-1].startswith(
        f"{plan}: valid markdown plan, 1 task in 1 phase; critical path 1, width 1 (0 errors, "
    )
    shown = run_cli("show", plan).stdout
    assert "(markdown, 1 task)" in shown and "Critical path: 1 of 1 task (T-001)" in shown
    converted = run_cli("convert", plan, "--out", tmp_path / "tt", "--dialect", "tasktrack")
    assert ", 1 task in 1 phase (0 errors, 1 warning: " in (converted.stdout)


@pytest.mark.parametrize(
    ("dependency", "what"),
    [
        ("ABC-1234567890", "its number has 10 digits, more than the 9 an id may have"),
        ("ABC--1", "its number is negative; numbers count from 1"),
        ("ABC-0", "its number starts with 0; numbers count from 1, with no leading zero"),
        ("-1", "a number alone; an id is a plan code and a number from 1, like FOO-1"),
        ("1234567890", "a number alone; an id is a plan code and a number from 1, like FOO-1"),
        ("abc-1", "its code 'abc' is not 3 to 5 letters A-Z"),
    ],
)
def test_a_bad_task_id_says_what_is_wrong(
    tmp_path: Path, run_cli: RunCli, dependency: str, what: str
) -> None:
    plan = tmp_path / "plan"
    imported = run_cli(
        "import", FIXTURES / "taskmaster-legacy.json", "--out", plan,
        "--dialect", "tasktrack", "--code", "ABC",
    )  # fmt: skip
    assert imported.exit_code == 0, imported.output
    task = plan / "ABC-2.md"
    text = task.read_text(encoding="utf-8")
    task.write_text(text.replace("**Dependencies**: ABC-1", f"**Dependencies**: {dependency}"))
    result = run_cli("validate", plan)
    assert f"ABC-2.md:7: error: dependency {dependency!r} is not a task id: {what} " in (
        result.stdout
    )


def test_a_path_with_a_comma_is_refused_alike_by_every_command(
    tmp_path: Path, run_cli: RunCli
) -> None:
    """A TaskTrack plan lists its sources comma-separated: `import` and `author` refuse a
    source whose path holds a comma in the same words; a Markdown plan takes it."""
    folder = tmp_path / "a,b"
    folder.mkdir()
    source = folder / "tasks.json"
    shutil.copy(FIXTURES / "taskmaster-legacy.json", source)
    line = error_line(
        run_cli, "import", source, "--out", tmp_path / "tt", "--dialect", "tasktrack",
        "--code", "ABC",
    )  # fmt: skip
    assert line == (
        f"taskhand: error: {source}: {RESOURCE_COMMA} (fix: rename the file or its folder, or "
        "pass a copy without one)"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a,b"]
    requirements = folder / "requirements.md"
    requirements.write_text("# Requirements\n")
    line = error_line(
        run_cli, "author", requirements, "--out", tmp_path / "tt", "--dialect", "tasktrack",
        "--agent", "replay", "--script", tmp_path / "none.json", "--repo", tmp_path,
    )  # fmt: skip
    assert line.startswith(f"taskhand: error: {requirements}: {RESOURCE_COMMA} (fix: ")
    plan = tmp_path / "x,y" / "plan"
    assert run_cli("import", source, "--out", plan).exit_code == 0
    for command in (("validate", plan), ("show", plan), ("next", plan), ("lint", plan)):
        result = run_cli(*command)
        assert result.exit_code in (0, 1), result.output
        assert "taskhand: error" not in result.stderr, (command, result.stderr)


def test_a_path_with_a_comma_or_a_space_is_no_markdown_path(
    tmp_path: Path, run_cli: RunCli
) -> None:
    files = [
        {"path": "src/app.py", "action": "modify"},
        {"path": "src/a,b.py", "action": "create"},
        {"path": "docs/my notes.md", "action": "create"},
    ]
    task = {"id": 1, "title": "App", "description": "Write it.", "relevantFiles": files}
    source = tmp_path / "tasks.json"
    source.write_text(json.dumps({"tasks": [task]}))
    plan = tmp_path / "plan"
    result = run_cli("import", source, "--out", plan, "--json")
    assert result.exit_code == 0, result.output
    dropped = [d["what"] for d in json.loads(result.stdout)["dropped"]]
    assert f"1's path 'src/a,b.py' {PATH_SEPARATOR}" in dropped
    assert f"1's path 'docs/my notes.md' {PATH_SEPARATOR}" in dropped
    shown = json.loads(run_cli("show", plan, "T-001", "--json").stdout)
    assert shown["paths"] == ["src/app.py"]


@pytest.mark.parametrize(
    ("dialect", "task", "said"),
    [
        ("tasktrack", "ABC-1234567890", "its number has 10 digits, more than the 9 an id may have"),
        ("tasktrack", "1234567890", "a number alone; an id is a plan code and a number from 1"),
        ("tasktrack", "XYZ-1", "the plan's ids start with ABC-"),
        ("markdown", "-1", "an id is T- and a number, like T-001"),
    ],
)
def test_a_task_argument_that_is_no_id_says_why(
    tmp_path: Path, run_cli: RunCli, dialect: str, task: str, said: str
) -> None:
    plan = tmp_path / "plan"
    code = ("--code", "ABC") if dialect == "tasktrack" else ()
    made = run_cli("import", FIXTURES / "taskmaster-legacy.json", "--out", plan, "--dialect",
                   dialect, *code)  # fmt: skip
    assert made.exit_code == 0, made.output
    line = error_line(run_cli, "show", plan, "--", task)
    assert line.startswith(f"taskhand: error: no task {task} in {plan}, nor can there be: {said}")
    other = "ABC-99" if code else "T-099"
    assert f"error: no task {other} in {plan} (fix: " in error_line(
        run_cli, "show", plan, "--", other
    )
    # without '--', a negative number reads as an option: the message says it is neither
    result = run_cli("show", plan, "-1")
    assert result.exit_code == 2 and result.stderr.strip() == (
        "taskhand: error: -1 is no option, and no task id: ids count from 1 (fix: give an id "
        "like FOO-1 or T-001; put '--' before an argument that starts with '-')"
    )
