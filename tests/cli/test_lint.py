"""`taskhand lint`: one line per finding with its code, exit codes, and JSON a program reads."""

from __future__ import annotations

import json

from tests.conftest import RunCli, WritePlan
from tests.plans import md_plan, md_task, tt_plan


def test_a_clean_plan_exits_0(write_plan: WritePlan, run_cli: RunCli) -> None:
    folder = write_plan(tt_plan([[("FOO-1", "OPEN"), ("FOO-2", "OPEN")]]))
    result = run_cli("lint", folder)
    assert result.exit_code == 0, result.output
    assert result.stdout.endswith(": clean (0 errors, 0 warnings)\n")


def test_warnings_exit_0_unless_strict(write_plan: WritePlan, run_cli: RunCli) -> None:
    body = "## Description\nDo it.\n\n## Acceptance criteria\n- the code is clean\n"
    folder = write_plan({"overview.md": "# F\n", "T-001-a.md": md_task("T-001", body=body)})
    result = run_cli("lint", folder)
    assert result.exit_code == 0
    first, summary = result.stdout.splitlines()
    assert "plan/T-001-a.md:10: warning [uncheckable-criterion]: T-001: criterion" in first
    assert summary.endswith(": ok (0 errors, 1 warning)")
    assert run_cli("lint", folder, "--strict").exit_code == 1


def test_errors_exit_1_and_come_first(write_plan: WritePlan, run_cli: RunCli) -> None:
    files = md_plan(("T-001", {"depends": "T-002"}), ("T-002", {"depends": "T-001"}))
    files["T-003-task.md"] = md_task("T-003", body="## Description\nDo it.\n")
    result = run_cli("lint", write_plan(files))
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert "error [cycle]: dependency cycle: T-001 -> T-002 -> T-001" in lines[0]
    assert "warning [criteria-missing]" in lines[1]
    assert lines[-1].endswith(": not ok (1 error, 1 warning)")


def test_json_lists_findings_with_codes(write_plan: WritePlan, run_cli: RunCli) -> None:
    folder = write_plan(tt_plan([[("FOO-1", "OPEN")], [("FOO-2", "OPEN")]], {"FOO-2": "FOO-1"}))
    result = run_cli("lint", folder, "--json")
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    assert (data["ok"], data["dialect"], data["errors"], data["warnings"]) == (
        False, "tasktrack", 1, 0
    )  # fmt: skip
    [finding] = data["findings"]
    assert finding["code"] == "cross-phase-dependency"
    assert (finding["file"], finding["line"]) == ("FOO-2.md", 7)


def test_a_missing_plan_is_one_finding(tmp_path: object, run_cli: RunCli) -> None:
    result = run_cli("lint", "no-such-plan")
    assert result.exit_code == 1
    assert result.stdout.splitlines()[0] == (
        "no-such-plan: error [format]: no such plan folder (fix: check the path, or create "
        "one: taskhand init DIR)"
    )


def test_validate_lint_adds_the_authoring_checks(write_plan: WritePlan, run_cli: RunCli) -> None:
    folder = write_plan(tt_plan([[("FOO-1", "OPEN")], [("FOO-2", "OPEN")], [("FOO-3", "OPEN")]]))
    assert "serialized" not in run_cli("validate", folder, "--json").stdout
    result = run_cli("validate", folder, "--lint", "--json")
    assert result.exit_code == 0
    [problem] = json.loads(result.stdout)["problems"]
    assert problem["rule"] == "serialized" and "critical path 3 of 3" in problem["message"]
    assert run_cli("validate", folder, "--lint", "--strict").exit_code == 1
