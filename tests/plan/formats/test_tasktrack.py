"""TaskTrack files: canonical round trip, minimal edits, and each rule of the spec."""

from __future__ import annotations

from pathlib import Path

import pytest

from taskhand.plan import formats
from taskhand.plan.formats import tasktrack_edit
from taskhand.plan.model import Check, Criterion, Exchange, Phase, Plan, Status, Task
from taskhand.plan.problems import Problem
from tests.conftest import WritePlan
from tests.plans import TS, tt_plan, tt_task


def load(folder: Path) -> tuple[Plan, list[Problem]]:
    plan, problems = formats.load(folder)
    assert plan is not None
    return plan, problems


def errors(problems: list[Problem]) -> list[str]:
    return [p.render() for p in problems if p.is_error]


def full_task() -> Task:
    return Task(
        "FOO-3",
        "Parse the input",
        "Read the file.\n\nThen split it into records.",
        [
            Criterion("records are split"),
            Criterion("`$ pytest -q` passes", Check(("pytest", "-q"))),
        ],
        dependencies=["FOO-1", "FOO-2"],
        status=Status.DONE,
        updated=TS,
        exchanges=[Exchange("Which separator?", "A comma."), Exchange("Header row?", "Yes.")],
        resolution="Split on commas, skipping the header.",
    )


def test_canonical_plan_reads_and_writes_back_byte_identical(write_plan: WritePlan) -> None:
    task = full_task()
    other = [Task(f"FOO-{n}", f"Task {n}", "Do it.", [Criterion("ok")], updated=TS) for n in (1, 2)]
    plan = Plan(
        formats.Dialect.TASKTRACK,
        Path("."),
        "Demo plan",
        [*other, task],
        [Phase(1, "Setup", ["FOO-1", "FOO-2", "FOO-3"])],
        code="FOO",
        objective="Show every field.",
        created=TS,
        resources=["/srv/docs/req.md", "/srv/docs/design.md"],
    )
    files: dict[str, str | bytes] = {"FOO-TaskTrack.md": tasktrack_edit.render_overview(plan)}
    files |= {f"{t.id}.md": tasktrack_edit.render_task(t) for t in plan.tasks}
    files["TaskTrack-v1.md"] = "spec\n"
    folder = write_plan(files)
    read, problems = load(folder)
    assert errors(problems) == []
    assert tasktrack_edit.render_overview(read) == files["FOO-TaskTrack.md"]
    for t in read.tasks:
        assert tasktrack_edit.render_task(t) == files[f"{t.id}.md"]
    parsed = read.task("FOO-3")
    assert parsed is not None
    assert parsed.exchanges == task.exchanges
    assert parsed.criteria[1].check == Check(("pytest", "-q"))
    assert parsed.description == task.description
    assert read.resources == plan.resources


def test_reading_and_validating_never_writes(write_plan: WritePlan) -> None:
    folder = write_plan(tt_plan([[("FOO-1", "OPEN")]]))
    before = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in folder.iterdir()}
    load(folder)
    assert {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in folder.iterdir()} == before


def test_edits_touch_only_the_bytes_a_step_changes() -> None:
    text = tt_task("FOO-1", "First", tail="\n<!-- a person's note -->\n")
    edited = tasktrack_edit.update_task_text(
        text,
        status=Status.DONE,
        updated="2026-12-02T10:00:00Z",
        append=(("Resolution", "Built it."),),
    )
    assert edited == (
        text.replace("**Status**: OPEN", "**Status**: DONE")
        .replace(f"**Updated**: {TS}", "**Updated**: 2026-12-02T10:00:00Z")
        .rstrip("\n")
        + "\n\n**Resolution**: Built it.\n"
    )
    overview = "# FOO - P\n\n## 1: A\n\n* [OPEN] FOO-1: First\n- [OPEN] FOO-10: Tenth\n"
    assert tasktrack_edit.set_overview_status(overview, "FOO-1", Status.BUSY) == overview.replace(
        "[OPEN] FOO-1:", "[BUSY] FOO-1:"
    )
    with pytest.raises(ValueError, match="FOO-2"):
        tasktrack_edit.set_overview_status(overview, "FOO-2", Status.BUSY)


def test_ids_order_by_counter_as_numbers(write_plan: WritePlan) -> None:
    ids = [f"FOO-{n}" for n in (10, 2, 1)]
    folder = write_plan(tt_plan([[(i, "OPEN") for i in sorted(ids)]]))
    plan, _ = load(folder)
    assert [t.id for t in plan.tasks] == ["FOO-1", "FOO-2", "FOO-10"]


def test_multiline_fields_and_bullet_styles(write_plan: WritePlan) -> None:
    files = tt_plan([[("FOO-1", "OPEN")]])
    files["FOO-1.md"] = (
        "# FOO-1: Task FOO-1\n\n**Status**: OPEN\n\n**Updated**: 2026-12-01T09:00:00+00:00\n\n"
        "**Dependencies**: none\n\n**Description**: First line.\n  Second line.\n\n"
        "**Acceptance**:\n* star bullet\n- dash bullet\n  continued here\n"
    )
    plan, problems = load(write_plan(files))
    assert errors(problems) == []
    task = plan.tasks[0]
    assert task.description == "First line.\n  Second line."
    assert [c.text for c in task.criteria] == ["star bullet", "dash bullet continued here"]


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        ("code-lowercase", None, "3 to 5 letters"),
        ("heading", "FOO - Demo", "the first line must be '# CODE - Title'"),
        ("heading-code", "# BAR - Demo", "does not match"),
        ("created", "**Created**: yesterday", "not an ISO 8601 timestamp"),
        ("created-tz", "**Created**: 2026-12-01T09:00:00+02:00", "not in UTC"),
        ("resources", "**Resources**: docs/req.md", "not an absolute path"),
        ("phase-order", "## 3: Phase 1", "phase 3 follows phase 0"),
        ("status-code", "* [TODO] FOO-1: Task FOO-1", "is not one of OPEN"),
        ("entry-dup", "* [OPEN] FOO-1: Task FOO-1\n* [OPEN] FOO-1: Task FOO-1", "listed twice"),
        ("title", "* [OPEN] FOO-1: Another title", "title differs from the overview"),
        ("status", "* [DONE] FOO-1: Task FOO-1", "differs from the overview"),
        ("missing-file", "* [OPEN] FOO-1: Task FOO-1\n* [OPEN] FOO-2: Two", "has no task file"),
        ("no-objective", "", "has no **Objective** field"),
    ],
)
def test_overview_rules(write_plan: WritePlan, name: str, text: str | None, expected: str) -> None:
    files = tt_plan([[("FOO-1", "OPEN")]])
    overview = str(files["FOO-TaskTrack.md"])
    replacements = {
        "heading": ("# FOO - Demo plan", text),
        "heading-code": ("# FOO - Demo plan", text),
        "created": (f"**Created**: {TS}", text),
        "created-tz": (f"**Created**: {TS}", text),
        "resources": ("**Resources**: none", text),
        "phase-order": ("## 1: Phase 1", text),
        "status-code": ("* [OPEN] FOO-1: Task FOO-1", text),
        "entry-dup": ("* [OPEN] FOO-1: Task FOO-1", text),
        "title": ("* [OPEN] FOO-1: Task FOO-1", text),
        "status": ("* [OPEN] FOO-1: Task FOO-1", text),
        "missing-file": ("* [OPEN] FOO-1: Task FOO-1", text),
        "no-objective": ("**Objective**: Show the format.\n", text),
    }
    if name == "code-lowercase":
        files = {k.replace("FOO", "Foo"): v for k, v in files.items()}
    else:
        old, new = replacements[name]
        assert old in overview
        files["FOO-TaskTrack.md"] = overview.replace(old, str(new))
    _, problems = load(write_plan(files))
    found = errors(problems)
    assert any(expected in e for e in found), found


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ("# FOO-1: Task FOO-1", "# FOO-9: Task FOO-1", "heading names FOO-9"),
        ("# FOO-1: Task FOO-1", "FOO-1 Task", "the first line must be '# ID: Title'"),
        ("**Status**: OPEN", "**Status**: open", "is not one of OPEN"),
        (f"**Updated**: {TS}", "**Updated**: 2026-13-45T09:00:00Z", "not a valid date"),
        ("**Dependencies**: none", "**Dependencies**: first one", "is not a task id"),
        ("**Description**: Do task foo-1.", "**Description**:", "the description is empty"),
        ("**Dependencies**: none\n\n", "", "has no **Dependencies** field"),
        (
            "**Status**: OPEN\n\n**Updated**: " + TS,
            "**Updated**: " + TS + "\n\n**Status**: OPEN",
            "out of order",
        ),
        ("- it works", "it works", "must be a bullet list"),
        ("- it works", "- it works\n\n**Response**: ok", "without a **Request**"),
        (
            "- it works",
            "- it works\n\n**Resolution**: done",
            "only allowed when the status is DONE",
        ),
        ("- it works", "- it works\n\n**Failure**: no", "only allowed when the status is FAIL"),
        ("- it works", "- `$ run 'unterminated` works", "cannot be split"),
        ("**Status**: OPEN", "**Status**: DONE", "a DONE task needs a **Resolution**"),
    ],
)
def test_task_file_rules(write_plan: WritePlan, old: str, new: str, expected: str) -> None:
    files = tt_plan([[("FOO-1", "OPEN")]])
    text = str(files["FOO-1.md"])
    assert old in text
    files["FOO-1.md"] = text.replace(old, new)
    if "DONE" in new:
        files["FOO-TaskTrack.md"] = str(files["FOO-TaskTrack.md"]).replace("[OPEN]", "[DONE]")
    _, problems = load(write_plan(files))
    found = errors(problems)
    assert any(expected in e for e in found), found
    assert all("FOO-1.md:" in e for e in found if expected in e)


def test_criteria_know_the_line_of_their_bullet(write_plan: WritePlan) -> None:
    criteria = "- it works\n- `$ true` (exit 3) passes\n  on two lines\n- `$ run 'open` fails"
    files = tt_plan([[("FOO-1", "OPEN")]])
    files["FOO-1.md"] = tt_task("FOO-1", "Task FOO-1", criteria=criteria)
    folder = write_plan(files)
    plan, problems = load(folder)
    lines = (folder / "FOO-1.md").read_text().splitlines()
    assert [lines[c.line - 1] for c in plan.tasks[0].criteria if c.line] == [
        "- it works",
        "- `$ true` (exit 3) passes",
        "- `$ run 'open` fails",
    ]
    [problem] = [p for p in problems if "cannot be split" in p.message]
    assert lines[(problem.line or 0) - 1] == "- `$ run 'open` fails"


def test_wait_task_needs_an_open_request(write_plan: WritePlan) -> None:
    files = tt_plan([[("FOO-1", "WAIT")]])
    files["FOO-1.md"] = str(files["FOO-1.md"]) + "\n**Response**: Use commas.\n"
    _, problems = load(write_plan(files))
    assert any("WAIT task needs a **Request** without a response" in e for e in errors(problems))


def test_human_feedback_is_kept_in_order(write_plan: WritePlan) -> None:
    files = tt_plan([[("FOO-1", "OPEN")]])
    files["FOO-1.md"] = (
        str(files["FOO-1.md"]) + "\n**Request**: One?\n\n**Response**: Yes.\n\n**Request**: Two?\n"
        "\n**Response**: No.\n"
    )
    plan, problems = load(write_plan(files))
    assert errors(problems) == []
    assert plan.tasks[0].exchanges == [Exchange("One?", "Yes."), Exchange("Two?", "No.")]


def test_overview_busy_with_settled_task_file_is_recoverable(write_plan: WritePlan) -> None:
    files = tt_plan([[("FOO-1", "DONE")]])
    files["FOO-TaskTrack.md"] = str(files["FOO-TaskTrack.md"]).replace("[DONE]", "[BUSY]")
    plan, problems = load(write_plan(files))
    assert errors(problems) == []
    assert any("interrupted" in p.message for p in problems)
    assert plan.tasks[0].status is Status.DONE


def test_extra_and_foreign_files(write_plan: WritePlan) -> None:
    files = tt_plan([[("FOO-1", "OPEN")]])
    files["FOO-2.md"] = tt_task("FOO-2", "Stray")
    files["BAR-1.md"] = tt_task("BAR-1", "Elsewhere")
    _, problems = load(write_plan(files))
    assert any("FOO-2 is not listed in the overview" in e for e in errors(problems))
    assert any(p.path.name == "BAR-1.md" and not p.is_error for p in problems)


def test_missing_spec_publication_is_a_warning(write_plan: WritePlan) -> None:
    _, problems = load(write_plan(tt_plan([[("FOO-1", "OPEN")]], spec=False)))
    assert errors(problems) == []
    assert any("specification publication" in p.message for p in problems)


def test_unknown_fields_are_kept(write_plan: WritePlan) -> None:
    files = tt_plan([[("FOO-1", "OPEN")]])
    files["FOO-1.md"] = str(files["FOO-1.md"]).replace(
        "**Acceptance**", "**Owner**: Ada\n\n**Acceptance**"
    )
    plan, problems = load(write_plan(files))
    assert plan.tasks[0].extra == {"Owner": "Ada"}
    assert any("unknown field **Owner**" in p.message and not p.is_error for p in problems)


def test_edits_keep_crlf_line_endings() -> None:
    text = tt_task("FOO-1", "First").replace("\n", "\r\n")
    edited = tasktrack_edit.update_task_text(
        text, status=Status.WAIT, append=(("Request", "Which one?"),)
    )
    assert "\n" not in edited.replace("\r\n", "")
    assert "**Status**: WAIT\r\n" in edited
    assert edited.endswith("\r\n\r\n**Request**: Which one?\r\n")
