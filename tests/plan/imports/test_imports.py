"""`taskhand import` at the command line: what it prints and writes, and every bad input
refused in one line with nothing left behind."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from taskhand.plan import templates
from taskhand.plan.imports import ImportFileError, _write
from taskhand.plan.imports.source import MAX_BYTES
from taskhand.plan.model import Dialect
from tests.conftest import RunCli
from tests.plan.imports import FIXTURES


def refused(run_cli: RunCli, where: Path, source: Path, *options: str) -> str:
    """The one line `import` prints for a file it refuses; nothing is left in `where`."""
    before = sorted(p.name for p in where.iterdir())
    result = run_cli("import", source, "--out", where / "plan", *options)
    assert result.exit_code == 1, result.output
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("taskhand: error: "), result.stderr
    assert sorted(p.name for p in where.iterdir()) == before  # no plan, no staging folder
    return lines[0].removeprefix("taskhand: error: ")


def test_an_import_prints_what_it_made_and_what_it_dropped(tmp_path: Path, run_cli: RunCli) -> None:
    out = tmp_path / "plan"
    result = run_cli(
        "import",
        FIXTURES / "speckit-kanban.md",
        "--out",
        out,
        "--dialect",
        "tasktrack",
        "--code",
        "KAN",
    )
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].endswith(
        "speckit-kanban.md (Spec Kit tasks.md): 19 tasks in 6 phases, 10 dependencies, 0 done"
    )
    assert lines[1] == f"wrote 20 files into {out} (tasktrack)"
    assert lines[2:4] == [
        "dropped (1: no home in the plan):",
        "  speckit-kanban.md:44: T014 depends on T016 of a later phase; phases run in order, "
        "so the dependency cannot hold",
    ]
    assert lines[-2].startswith("spec: none in ")
    assert (out / "KAN-TaskTrack.md").is_file() and (out / "KAN-19.md").is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plan"]  # nothing staged is left


def test_json_gives_the_ids_and_what_was_dropped(tmp_path: Path, run_cli: RunCli) -> None:
    spec = tmp_path / "TaskTrack-v1.md"
    spec.write_text("# stand-in publication\n")
    result = run_cli(
        "import", FIXTURES / "taskmaster-legacy.json", "--out", tmp_path / "plan",
        "--dialect", "tasktrack", "--code", "NOTE", "--spec", spec, "--json",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["format"] == "taskmaster" and data["dialect"] == "tasktrack"
    assert data["ids"] == {
        "1": "NOTE-1", "2.1": "NOTE-2", "2.2": "NOTE-3", "2": "NOTE-4",
        "3.1": "NOTE-5", "3.2": "NOTE-6", "3": "NOTE-7", "4": "NOTE-8",
    }  # fmt: skip
    assert {"where": "$.tasks[3]", "what": "4 depends on 9, which is no task"} in data["dropped"]
    assert not [w for w in data["warnings"] if w["rule"] != "criteria-missing"]
    assert (tmp_path / "plan" / "TaskTrack-v1.md").is_file()


def test_missing_empty_binary_and_huge_files_are_refused(tmp_path: Path, run_cli: RunCli) -> None:
    missing = tmp_path / "tasks.md"
    assert refused(run_cli, tmp_path, missing) == f"{missing}: no such file (fix: check the path)"
    empty = tmp_path / "empty.md"
    empty.write_text("\n  \n")
    assert refused(run_cli, tmp_path, empty).endswith(
        "the file is empty (fix: give a Spec Kit tasks.md or a Taskmaster tasks.json)"
    )
    binary = tmp_path / "tasks.json"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    assert "a binary file, not text" in refused(run_cli, tmp_path, binary)
    latin = tmp_path / "latin.md"
    latin.write_bytes("- [ ] T001 Caf\u00e9".encode("latin-1"))
    assert "not UTF-8 text (byte 14) (fix: save it as UTF-8)" in refused(run_cli, tmp_path, latin)
    huge = tmp_path / "huge.md"
    huge.write_text("- [ ] T001 a\n" * (MAX_BYTES // 13 + 1))
    assert "over the 4 MiB an import reads" in refused(run_cli, tmp_path, huge)
    (tmp_path / "specs").mkdir()
    assert "not a file" in refused(run_cli, tmp_path, tmp_path / "specs")


def test_malformed_and_unknown_files_are_refused(tmp_path: Path, run_cli: RunCli) -> None:
    broken = tmp_path / "tasks.json"
    broken.write_text('{\n  "tasks": [\n    {"id": 1, "title": "x",}\n  ]\n}\n')
    assert refused(run_cli, tmp_path, broken) == (
        f"{broken}:3:28: malformed JSON: Expecting property name enclosed in double quotes "
        "(fix: repair the JSON at that place, or restore the file from a backup)"
    )
    prose = tmp_path / "notes.md"
    prose.write_text("# Notes\n\n- [ ] buy milk\n")
    assert "neither a Spec Kit tasks.md" in refused(run_cli, tmp_path, prose)
    other = tmp_path / "other.json"
    other.write_text('{"items": [{"name": "x"}]}')
    assert "not a Taskmaster tasks.json taskhand knows" in refused(run_cli, tmp_path, other)
    newer = tmp_path / "newer.json"
    newer.write_text('{"tasks": [{"id": 1, "title": "x"}], "metadata": {"version": "2.0.0"}}')
    assert refused(run_cli, tmp_path, newer).startswith(
        f"{newer} at $.metadata.version: Taskmaster format version 2.0.0, which taskhand does "
        "not know (it reads version 1.x)"
    )
    remote = tmp_path / "remote.json"
    remote.write_text('{"master": {"tasks": [{"id": "HAM-12", "title": "x"}]}}')
    assert refused(run_cli, tmp_path, remote).startswith(
        f'{remote} at $.master.tasks[0].id: task id "HAM-12" is not a whole number'
    )
    for raw, what in [(-1, "is negative"), (1234567890, "has 10 digits, more than the 9")]:
        remote.write_text(json.dumps({"master": {"tasks": [{"id": raw, "title": "x"}]}}))
        assert f"task id {raw} {what}" in refused(run_cli, tmp_path, remote)
    remote.write_text('{"tasks": [{"id": 1, "title": ["x"]}]}')
    assert refused(run_cli, tmp_path, remote).startswith(
        f"{remote} at $.tasks[0].title: not a Taskmaster task: its title is a list, not text"
    )
    no_tasks = tmp_path / "none.json"
    no_tasks.write_text('{"master": {"tasks": []}}')
    assert "no tasks in this Taskmaster tasks.json" in refused(run_cli, tmp_path, no_tasks)
    tagged = FIXTURES / "taskmaster-tagged.json"
    assert refused(run_cli, tmp_path, tagged, "--tag", "nope").endswith(
        "no tag 'nope' in the file (fix: use one of: master, feature-meal-plans)"
    )


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (("--dialect", "tasktrack", "--code", "toolong"), "plan code 'toolong' is not 3 to 5"),
        (("--spec", "TaskTrack-v1.md"), "--spec applies to TaskTrack plans"),
        (("--dialect", "tasktrack", "--spec", "spec.md"), "no such spec file"),
    ],
)
def test_bad_options_are_refused_before_anything_is_read(
    tmp_path: Path, run_cli: RunCli, options: tuple[str, ...], message: str
) -> None:
    assert message in refused(run_cli, tmp_path, FIXTURES / "speckit-albums.md", *options)


def test_a_folder_that_holds_files_is_refused_and_left_alone(
    tmp_path: Path, run_cli: RunCli
) -> None:
    out = tmp_path / "plan"
    out.mkdir()
    (out / "notes.txt").write_text("mine\n")
    result = run_cli("import", FIXTURES / "speckit-albums.md", "--out", out)
    assert result.exit_code == 1
    assert result.stderr == (
        f"taskhand: error: {out} exists and is not empty (fix: give a new folder, or remove "
        "that one first)\n"
    )
    assert [p.name for p in out.iterdir()] == ["notes.txt"]
    empty = tmp_path / "empty"
    empty.mkdir()
    assert run_cli("import", FIXTURES / "speckit-albums.md", "--out", empty).exit_code == 0
    assert (empty / "overview.md").is_file()


def test_a_folder_that_cannot_be_made_is_refused(tmp_path: Path, run_cli: RunCli) -> None:
    (tmp_path / "notes.txt").write_text("a file, not a folder\n")
    out = tmp_path / "notes.txt" / "plan"
    result = run_cli("import", FIXTURES / "speckit-albums.md", "--out", out)
    assert result.exit_code == 1
    assert result.stderr == (
        f"taskhand: error: {out}: cannot write the plan: File exists (fix: give a path "
        "under a folder you can write)\n"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


def test_a_plan_that_would_not_validate_is_never_moved_in(tmp_path: Path) -> None:
    # No file of either format makes such a plan today; the check is the last guard.
    plan = templates.starter_plan(Dialect.TASKTRACK, tmp_path / "x", "DEMO", "Demo")
    plan.tasks[0].dependencies = ["DEMO-7"]
    plan.resources = [str(FIXTURES / "speckit-albums.md")]
    with pytest.raises(ImportFileError, match="would not validate: DEMO-1 depends on DEMO-7"):
        _write(plan, tmp_path / "plan", None)
    assert list(tmp_path.iterdir()) == []
