"""Plan-wide rules: dependencies, cycles, busy tasks, criteria, serialization; all in one pass."""

from __future__ import annotations

from taskhand.plan.validate import validate
from tests.conftest import WritePlan
from tests.plans import md_plan, md_task, tt_plan


def messages(folder: object) -> list[str]:
    report = validate(folder)  # type: ignore[arg-type]
    return [p.render() for p in report.problems]


def test_unknown_dependency_names_file_line_and_fix(write_plan: WritePlan) -> None:
    folder = write_plan(md_plan(("T-001", {"depends": "T-009"})))
    [problem] = [m for m in messages(folder) if "T-009" in m]
    assert "plan/T-001-task.md:4: error:" in problem
    assert "T-001 depends on T-009, which is not in the plan" in problem
    assert "(fix: fix the id or remove the dependency)" in problem


def test_dependency_cycle(write_plan: WritePlan) -> None:
    folder = write_plan(
        md_plan(("T-001", {"depends": "T-002"}), ("T-002", {"depends": "T-001"}), ("T-003", {}))
    )
    assert any("dependency cycle: T-001 -> T-002 -> T-001" in m for m in messages(folder))


def test_tasktrack_dependency_on_another_phase_names_both(write_plan: WritePlan) -> None:
    folder = write_plan(tt_plan([[("FOO-1", "OPEN")], [("FOO-2", "OPEN")]], {"FOO-2": "FOO-1"}))
    [problem] = [m for m in messages(folder) if "phase" in m and "error" in m]
    assert "FOO-2 (phase 2) depends on FOO-1 (phase 1)" in problem
    assert "FOO-2.md:7:" in problem
    folder = write_plan(
        tt_plan([[("FOO-1", "OPEN")], [("FOO-2", "OPEN")]], {"FOO-1": "FOO-2"}), "later"
    )
    assert any("FOO-1 (phase 1) depends on FOO-2 (phase 2)" in m for m in messages(folder))


def test_markdown_dependency_on_earlier_phase_is_only_redundant(write_plan: WritePlan) -> None:
    folder = write_plan(md_plan(("T-001", {}), ("T-002", {"phase": "2", "depends": "T-001"})))
    report = validate(folder)
    assert report.errors == []
    assert any("phase order already guarantees" in p.message for p in report.warnings)


def test_more_than_one_busy_task_is_a_warning(write_plan: WritePlan) -> None:
    """Beyond the spec's one at a time, but what a run of several jobs leaves: readable, and
    resumable, with a warning that says how to settle it."""
    folder = write_plan(tt_plan([[("FOO-1", "BUSY"), ("FOO-2", "BUSY")]]))
    report = validate(folder)
    assert report.errors == []
    [warning] = [p.render() for p in report.warnings if "BUSY" in p.message]
    assert "2 tasks are BUSY (FOO-1, FOO-2)" in warning and "taskhand resume" in warning


def test_missing_criteria_is_a_warning(write_plan: WritePlan) -> None:
    files = md_plan(("T-001", {}))
    files["T-001-task.md"] = md_task("T-001", body="## Description\nDo it.\n")
    report = validate(write_plan(files))
    assert report.errors == []
    assert [p.rule for p in report.warnings] == ["criteria-missing"]
    assert not report.ok(strict=True)
    assert report.ok()


def test_needless_serialization_and_redundant_dependencies(write_plan: WritePlan) -> None:
    folder = write_plan(
        md_plan(
            ("T-001", {}),
            ("T-002", {"depends": "T-001"}),
            ("T-003", {"depends": "T-002, T-001"}),
        )
    )
    report = validate(folder)
    rules = sorted(p.rule for p in report.warnings)
    assert rules == ["redundant-dependency", "serialized"]
    serialized = next(p for p in report.warnings if p.rule == "serialized")
    assert "critical path 3 of 3 tasks, width 1" in serialized.message


def test_every_problem_is_reported_in_one_run(write_plan: WritePlan) -> None:
    files = md_plan(("T-001", {"depends": "T-404"}), ("T-002", {"phase": "zero"}))
    files["T-003-x.md"] = "---\nid: T-003\n"
    files["T-004-y.md"] = md_task("T-001")
    report = validate(write_plan(files))
    rendered = " | ".join(p.render() for p in report.errors)
    for expected in ("T-404", "phase: 'zero'", "not closed", "duplicate id T-001"):
        assert expected in rendered
    assert len(report.errors) == 4


def test_tasktrack_counters_should_be_consecutive(write_plan: WritePlan) -> None:
    report = validate(write_plan(tt_plan([[("FOO-1", "OPEN"), ("FOO-3", "OPEN")]])))
    assert report.errors == []
    assert any("not consecutive (no FOO-2)" in p.message for p in report.warnings)


def test_markdown_ids_of_mixed_widths_are_flagged(write_plan: WritePlan) -> None:
    report = validate(write_plan(md_plan(("T-2", {}), ("T-10", {}))))
    assert report.errors == []
    [warning] = [p for p in report.warnings if p.rule == "counters"]
    assert "ids have different widths (T-2, T-10)" in warning.message
    assert [t.id for t in report.plan.tasks] == ["T-2", "T-10"]  # type: ignore[union-attr]


def test_a_heading_whose_id_has_no_number_is_an_error_not_a_crash(write_plan: WritePlan) -> None:
    files = tt_plan([[("FOO-1", "DONE"), ("FOO-2", "OPEN")]], {"FOO-2": "FOO-1"})
    text = str(files["FOO-1.md"])
    files["FOO-1.md"] = text.replace("# FOO-1: ", "# F:OO-1: ", 1)  # found by hypothesis
    report = validate(write_plan(files))
    assert any("heading names F but the file is FOO-1.md" in p.render() for p in report.errors)
