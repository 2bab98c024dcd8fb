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
