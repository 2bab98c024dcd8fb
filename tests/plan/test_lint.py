"""Plan lint: each authoring rule fires on a plan that breaks it and stays quiet on a good one,
and its findings come back as data with stable codes."""

from __future__ import annotations

from pathlib import Path

import pytest

from taskhand.plan.lint import RULES, findings, lint, to_fix, uncheckable
from taskhand.plan.problems import Severity
from tests.conftest import WritePlan
from tests.plans import md_plan, md_task, tt_plan

GOOD_BODY = (
    "## Description\nDo the thing.\n\n## Acceptance criteria\n"
    "- `$ python -m pytest -q` passes\n- prints the total on one line\n"
)


def good_markdown(write_plan: WritePlan) -> Path:
    """Two independent tasks, then one that uses both: the shape the spec asks for."""
    files = md_plan()
    files["T-001-a.md"] = md_task("T-001", "A", GOOD_BODY, paths="src/a.py")
    files["T-002-b.md"] = md_task("T-002", "B", GOOD_BODY, paths="src/b.py")
    files["T-003-c.md"] = md_task("T-003", "C", GOOD_BODY, phase="2", paths="src/c.py")
    return write_plan(files, "good")


def codes(folder: Path) -> list[str]:
    return [f.code for f in findings(lint(folder))]


def test_a_good_plan_has_no_findings(write_plan: WritePlan) -> None:
    assert codes(good_markdown(write_plan)) == []
    tasktrack = write_plan(tt_plan([[("FOO-1", "OPEN"), ("FOO-2", "OPEN")], [("FOO-3", "OPEN")]]))
    assert codes(tasktrack) == []


def test_a_dependency_across_tasktrack_phases_is_an_error_with_its_place(
    write_plan: WritePlan,
) -> None:
    folder = write_plan(tt_plan([[("FOO-1", "OPEN")], [("FOO-2", "OPEN")]], {"FOO-2": "FOO-1"}))
    [finding] = findings(lint(folder))
    assert (finding.code, finding.severity, finding.file, finding.line) == (
        "cross-phase-dependency", Severity.ERROR, "FOO-2.md", 7
    )  # fmt: skip
    assert finding.text.startswith("FOO-2.md:7: error [cross-phase-dependency]: FOO-2 (phase 2)")
    assert "(fix: drop it" in finding.text


def test_markdown_dependencies_across_phases(write_plan: WritePlan) -> None:
    later = write_plan(md_plan(("T-001", {"depends": "T-002"}), ("T-002", {"phase": "2"})), "l")
    assert codes(later) == ["cross-phase-dependency"]
    earlier = write_plan(md_plan(("T-001", {}), ("T-002", {"phase": "2", "depends": "T-001"})))
    assert codes(earlier) == ["redundant-dependency"]  # phase order already runs it first


def test_a_cycle_comes_first_as_an_error(write_plan: WritePlan) -> None:
    files = md_plan(("T-001", {"depends": "T-002"}), ("T-002", {"depends": "T-001"}))
    files["T-003-task.md"] = md_task("T-003", body="## Description\nDo it.\n")
    report = lint(write_plan(files))
    assert [f.code for f in findings(report)] == ["cycle", "criteria-missing"]
    assert not report.ok()


def test_a_phase_that_is_one_chain_is_serialized(write_plan: WritePlan) -> None:
    folder = write_plan(
        md_plan(("T-001", {}), ("T-002", {"depends": "T-001"}), ("T-003", {"depends": "T-002"}))
    )
    assert codes(folder) == ["serialized"]  # validate's own rule, reported once


def test_a_plan_of_one_task_per_phase_is_serialized_as_a_whole(write_plan: WritePlan) -> None:
    folder = write_plan(tt_plan([[("FOO-1", "OPEN")], [("FOO-2", "OPEN")], [("FOO-3", "OPEN")]]))
    [finding] = findings(lint(folder))
    assert finding.code == "serialized" and finding.file == "FOO-TaskTrack.md"
    assert "critical path 3 of 3, width 1" in finding.message
    two = write_plan(tt_plan([[("FOO-1", "OPEN")], [("FOO-2", "OPEN")]]), "two")
    assert codes(two) == []  # two tasks in a row is no chain worth a word


def test_a_dependency_between_disjoint_paths_is_flagged(write_plan: WritePlan) -> None:
    files = md_plan()
    files["T-001-a.md"] = md_task("T-001", "A", GOOD_BODY, paths="src/a.py, tests/test_a.py")
    files["T-002-b.md"] = md_task("T-002", "B", GOOD_BODY, paths="src/b/*.py", depends="T-001")
    [finding] = findings(lint(write_plan(files)))
    assert (finding.code, finding.file, finding.line) == ("disjoint-dependency", "T-002-b.md", 5)
    assert "disjoint paths (src/b/*.py and src/a.py, tests/test_a.py)" in finding.message


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("src/a.py", "src/a.py"),
        ("src/", "src/a.py"),
        ("src/*.py", "src/a.py"),
        ("src/**", "src/deep/x.py"),
        ("tests/test_*.py", "tests"),
        ("./src/a.py", "src/a.py"),
    ],
)
def test_paths_that_may_overlap_keep_a_dependency_quiet(
    write_plan: WritePlan, first: str, second: str
) -> None:
    files = md_plan()
    files["T-001-a.md"] = md_task("T-001", "A", GOOD_BODY, paths=first)
    files["T-002-b.md"] = md_task("T-002", "B", GOOD_BODY, paths=second, depends="T-001")
    assert codes(write_plan(files)) == []


def test_a_dependency_without_paths_on_either_side_is_not_judged(write_plan: WritePlan) -> None:
    files = md_plan()
    files["T-001-a.md"] = md_task("T-001", "A", GOOD_BODY, paths="src/a.py")
    files["T-002-b.md"] = md_task("T-002", "B", GOOD_BODY, depends="T-001")
    assert codes(write_plan(files)) == []


def test_a_task_without_criteria(write_plan: WritePlan) -> None:
    files = md_plan(("T-001", {}))
    files["T-001-task.md"] = md_task("T-001", body="## Description\nDo it.\n")
    [finding] = findings(lint(write_plan(files)))
    assert finding.code == "criteria-missing" and finding.severity is Severity.WARNING


@pytest.mark.parametrize(
    "text",
    [
        "The code is clean and works well",
        "Handles edge cases as appropriate",
        "Supports CSV, JSON, etc.",
        "Error handling is robust",
        "The page is user-friendly",
        "Dates are handled properly",
    ],
)
def test_vague_criteria_are_uncheckable(text: str) -> None:
    assert uncheckable(text) is not None


@pytest.mark.parametrize(
    "text",
    [
        "`$ pytest -q` passes",
        "Prints a clean error message for a missing file",
        "`report.py` output is clean",
        "Robust to a 10 MB input",
        "Returns 404 for an unknown id",
        "The README explains the install steps",
        "Cleans up the temporary folder it made",
        'Shows "saved" after the form is sent, robustly',
        "Works offline",
    ],
)
def test_criteria_with_an_observable_are_checkable(text: str) -> None:
    assert uncheckable(text) is None


def test_an_uncheckable_criterion_names_its_line(write_plan: WritePlan) -> None:
    body = "## Description\nDo it.\n\n## Acceptance criteria\n- `$ true` passes\n- works well\n"
    folder = write_plan({"overview.md": "# F\n", "T-001-a.md": md_task("T-001", body=body)})
    [finding] = findings(lint(folder))
    assert (finding.code, finding.line) == ("uncheckable-criterion", 11)
    assert "'works well'" in finding.message


def test_every_code_is_documented_and_unreadable_plans_report_format(
    write_plan: WritePlan, tmp_path: Path
) -> None:
    broken = write_plan({"overview.md": "# F\n", "T-001-a.md": "no frontmatter\n"})
    found = findings(lint(broken))
    assert found and {f.code for f in found} <= {"frontmatter", "format"}
    assert [f.code for f in findings(lint(tmp_path / "missing"))] == ["format"]
    assert set(RULES) >= {"cycle", "serialized", "uncheckable-criterion"}
    assert all(f.as_json()["code"] for f in found)


def test_what_goes_back_to_an_author_is_errors_and_authoring_warnings(
    write_plan: WritePlan,
) -> None:
    files = tt_plan([[("FOO-1", "OPEN")], [("FOO-2", "OPEN")]], {"FOO-2": "FOO-1"}, spec=False)
    files["FOO-1.md"] = str(files["FOO-1.md"]).replace("- it works", "- it works well")
    report = lint(write_plan(files))
    assert [f.code for f in findings(report)] == [
        "cross-phase-dependency", "spec", "uncheckable-criterion"
    ]  # fmt: skip
    assert [f.code for f in to_fix(report)] == ["cross-phase-dependency", "uncheckable-criterion"]
