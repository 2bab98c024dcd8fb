"""`taskhand convert`: the new folder, the id map and the notes; a JSON summary; one-line
errors that leave no folder behind."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import RunCli, WritePlan
from tests.plans import md_task, tt_plan


def test_converting_prints_the_folder_ids_and_notes(
    write_plan: WritePlan, run_cli: RunCli, tmp_path: Path
) -> None:
    source = write_plan(tt_plan([[("FOO-1", "DONE"), ("FOO-2", "OPEN")]], {"FOO-2": "FOO-1"}))
    out = tmp_path / "md"
    result = run_cli("convert", source, "--out", out, "--dialect", "markdown")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].endswith("md: a markdown plan, 2 tasks in 1 phase (0 errors, 0 warnings: "
                             f"taskhand validate {out})")  # fmt: skip
    assert lines[1:3] == ["  FOO-1 -> T-001", "  FOO-2 -> T-002"]
    assert any(line.startswith("note: the spec publication TaskTrack-v1.md") for line in lines)
    assert sorted(p.name for p in out.iterdir()) == [
        "T-001-task-foo-1.md", "T-002-task-foo-2.md", "overview.md"
    ]  # fmt: skip


def test_json_summary(write_plan: WritePlan, run_cli: RunCli, tmp_path: Path) -> None:
    source = write_plan({"overview.md": "# F\n\nGoal.\n", "T-001-a.md": md_task("T-001")})
    spec = tmp_path / "TaskTrack-v1.md"
    spec.write_text("# stand-in publication\n")
    out = tmp_path / "tt"
    result = run_cli(
        "convert", source, "--out", out, "--dialect", "tasktrack", "--code", "ABC",
        "--spec", spec, "--json",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert (data["from"], data["to"], data["code"], data["ids"]) == (
        "markdown", "tasktrack", "ABC", {"T-001": "ABC-1"}
    )  # fmt: skip
    assert (data["errors"], data["warnings"]) == (0, 0)
    assert [Path(f).name for f in data["files"]] == [
        "ABC-TaskTrack.md", "ABC-1.md", "TaskTrack-v1.md"
    ]  # fmt: skip


def test_bad_input_is_one_line_and_leaves_no_folder(
    write_plan: WritePlan, run_cli: RunCli, tmp_path: Path
) -> None:
    source = write_plan({"overview.md": "# F\n", "T-001-a.md": md_task("T-001")})
    out = tmp_path / "out"

    def refused(*args: str | Path) -> str:
        result = run_cli("convert", *args)
        assert result.exit_code == 1 and result.stdout == ""
        [line] = result.stderr.splitlines()
        assert not out.exists()
        return line

    assert refused(tmp_path / "nothing", "--out", out, "--dialect", "tasktrack") == (
        f"{tmp_path / 'nothing'}: error: no such plan folder (fix: check the path, or create "
        "one: taskhand init DIR)"
    )
    assert refused(source, "--out", out, "--dialect", "tasktrack", "--code", "x1") == (
        "taskhand: error: plan code 'x1' must be 3 to 5 letters A-Z (fix: --code FOO)"
    )
    assert "already a markdown plan" in refused(source, "--out", out, "--dialect", "markdown")
    broken = write_plan({"overview.md": "# F\n", "T-001-a.md": "no frontmatter\n"}, "broken")
    assert "missing frontmatter" in refused(broken, "--out", out, "--dialect", "tasktrack")
    out.mkdir()
    (out / "mine.txt").write_text("mine\n")
    result = run_cli("convert", source, "--out", out, "--dialect", "tasktrack", "--code", "ABC")
    assert result.exit_code == 1
    assert result.stderr == (
        f"taskhand: error: {out} exists and is not empty (fix: give a new folder, or remove "
        "that one first)\n"
    )
    assert [p.name for p in out.iterdir()] == ["mine.txt"]
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith("taskhand")) == [
        "broken", "out", "plan"
    ]  # fmt: skip


def test_a_plan_validate_rejects_is_refused_with_validates_errors(
    run_cli: RunCli, tmp_path: Path
) -> None:
    plan, out = tmp_path / "plan", tmp_path / "out"
    assert run_cli("init", plan).exit_code == 0  # the template's text is still in it
    validated = run_cli("validate", plan)
    assert validated.exit_code == 1
    errors = [line for line in validated.stdout.splitlines() if ": error: " in line]
    assert len(errors) == 3
    result = run_cli("convert", plan, "--out", out, "--dialect", "tasktrack", "--code", "ABC")
    assert result.exit_code == 1 and result.stdout == ""
    assert result.stderr.splitlines() == errors
    assert not out.exists()


def test_a_hand_written_init_plan_comes_back_byte_for_byte(run_cli: RunCli, tmp_path: Path) -> None:
    spec = tmp_path / "TaskTrack-v1.md"
    spec.write_text("# stand-in publication\n")
    plan = tmp_path / "plan"
    assert run_cli("init", plan, "--dialect", "tasktrack", "--code", "NOTE", "--spec", spec)
    overview, task = plan / "NOTE-TaskTrack.md", plan / "NOTE-1.md"
    overview.write_text(
        overview.read_text().replace(
            "The overall goal of this plan, with the background an agent needs.",
            "Notes from the command line.\n\n### Notes\n\n### Risks\n\nNone yet.",
        )
    )
    text = task.read_text().replace(
        "What to build, in the worker's voice. Name real paths and symbols "
        "(pkg/module.py:func), not 'the entrypoint'.",
        "Add notes.py:add.\n\n### Notes\n\nKeep it small.",
    )
    task.write_text(text.replace("An externally checkable behaviour", "prints the note"))
    assert run_cli("validate", plan).exit_code == 0
    for args in ((plan, "md", "markdown"), (tmp_path / "md", "back", "tasktrack", "--spec", spec)):
        result = run_cli("convert", args[0], "--out", tmp_path / args[1], "--dialect", *args[2:])
        assert result.exit_code == 0, result.output
        assert "would not give back" not in result.stdout
    for name in ("NOTE-TaskTrack.md", "NOTE-1.md", "TaskTrack-v1.md"):
        assert (tmp_path / "back" / name).read_bytes() == (plan / name).read_bytes(), name
    assert sorted(p.name for p in (tmp_path / "back").iterdir()) == sorted(
        p.name for p in plan.iterdir()
    )
