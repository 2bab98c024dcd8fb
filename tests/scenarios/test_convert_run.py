"""A converted plan runs: a Markdown plan converted to TaskTrack is worked through by the
replay agent, the run writes its statuses the spec's way, and converting the finished plan
back keeps what the run wrote."""

from __future__ import annotations

from pathlib import Path

from taskhand.plan.convert import convert_folder
from taskhand.plan.formats import load
from taskhand.plan.model import Dialect, Status
from tests.plans import md_task
from tests.runs import attempt, make_repo, run_plan, script, write


def test_a_markdown_plan_converted_to_tasktrack_runs_and_converts_back(tmp_path: Path) -> None:
    source = tmp_path / "md"
    source.mkdir()
    (source / "overview.md").write_text("# Greetings\n\n## Goal\nTwo files.\n")
    body = "## Description\nWrite {0}.\n\n## Acceptance criteria\n- `$ test -f {0}` passes\n"
    (source / "T-001-one.md").write_text(md_task("T-001", "One", body.format("one.txt")))
    two = md_task("T-002", "Two", body.format("two.txt"), phase="2", paths="two.txt")
    (source / "T-002-two.md").write_text(two)
    spec = tmp_path / "TaskTrack-v1.md"
    spec.write_text("# stand-in publication\n")
    convert_folder(source, tmp_path / "tt", Dialect.TASKTRACK, code="GRT", spec=spec)

    repo = make_repo(tmp_path / "repo")
    replay = script(
        tmp_path,
        {
            "GRT-1": [attempt(write("one.txt", "one\n"), resolution="Wrote one.txt.")],
            "GRT-2": [attempt(write("two.txt", "two\n"), resolution="Wrote two.txt.")],
        },
    )
    summary, _ = run_plan(tmp_path / "tt", repo, replay)
    assert summary.status == "completed"
    ran, _ = load(tmp_path / "tt")
    assert ran is not None and [t.status for t in ran.tasks] == [Status.DONE, Status.DONE]

    convert_folder(tmp_path / "tt", tmp_path / "back", Dialect.MARKDOWN)
    back, problems = load(tmp_path / "back")
    assert back is not None and problems == []
    assert [(t.id, t.phase, t.paths) for t in back.tasks] == [
        ("T-001", 1, []), ("T-002", 2, ["two.txt"])
    ]  # fmt: skip
    record = back.tasks[0].documents["tasktrack record"]  # apart from the description
    assert "- Status: DONE" in record and "- Resolution: Wrote one.txt." in record
    assert back.tasks[0].description == "Write one.txt."
    assert [c.check.argv for c in back.tasks[1].criteria if c.check] == [("test", "-f", "two.txt")]
