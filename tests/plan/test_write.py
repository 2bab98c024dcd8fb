"""Writing a whole plan into a new folder: canonical files, all or nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from taskhand.plan import templates
from taskhand.plan.formats import load
from taskhand.plan.model import Dialect
from taskhand.plan.validate import validate
from taskhand.plan.write import PlanWriteError, write_plan


def test_a_written_plan_reads_back_and_validates(tmp_path: Path) -> None:
    for dialect in Dialect:
        plan = templates.starter_plan(dialect, tmp_path / "x", "DEMO", "Demo")
        out = tmp_path / f"out-{dialect}"
        spec = tmp_path / "TaskTrack-v1.md"
        spec.write_text("# stand-in publication\n")
        written = write_plan(plan, out, spec if dialect is Dialect.TASKTRACK else None)
        assert all(p.parent == out and p.is_file() for p in written)
        back, problems = load(out)
        assert back is not None and not problems
        assert [t.id for t in back.tasks] == [t.id for t in plan.tasks]
        assert validate(out).ok(), validate(out).problems
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "TaskTrack-v1.md", "out-markdown", "out-tasktrack"
    ]  # fmt: skip  # no staging folder left beside them


def test_an_existing_folder_with_files_is_refused_and_left_alone(tmp_path: Path) -> None:
    out = tmp_path / "plan"
    out.mkdir()
    (out / "notes.txt").write_text("mine\n")
    plan = templates.starter_plan(Dialect.MARKDOWN, out, "DEMO", "Demo")
    with pytest.raises(PlanWriteError, match="exists and is not empty"):
        write_plan(plan, out)
    assert [p.name for p in out.iterdir()] == ["notes.txt"]
    empty = tmp_path / "empty"
    empty.mkdir()
    write_plan(plan, empty)  # an empty folder is taken
    assert (empty / "overview.md").is_file()


def test_a_failed_write_leaves_nothing(tmp_path: Path) -> None:
    plan = templates.starter_plan(Dialect.TASKTRACK, tmp_path / "x", "DEMO", "Demo")
    with pytest.raises(OSError):
        write_plan(plan, tmp_path / "plan", tmp_path / "TaskTrack-missing.md")
    assert list(tmp_path.iterdir()) == []
