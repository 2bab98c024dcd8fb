from tests import ROOT
from tests.conftest import RunCli, WritePlan
from tests.plans import md_plan, tt_plan


def test_valid_plans_of_both_dialects_pass(write_plan: WritePlan, run_cli: RunCli) -> None:
    tasktrack = write_plan(tt_plan([[("FOO-1", "OPEN"), ("FOO-2", "OPEN")]]), "tt")
    markdown = write_plan(md_plan(("T-001", {}), ("T-002", {"depends": "T-001"})), "md")
    for folder in (tasktrack, markdown):
        result = run_cli("validate", folder)
        assert result.exit_code == 0, result.output
        assert "valid" in result.output


def test_examples_are_valid(run_cli: RunCli) -> None:
    demo = ROOT / "src" / "taskhand" / "demo" / "wordcount"
    for plan in (demo / "plan", demo / "plan-tasktrack"):
        assert run_cli("validate", plan).exit_code == 0
