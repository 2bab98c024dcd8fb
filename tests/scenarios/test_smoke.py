"""The smallest promises: the example plans, and plans of both dialects, validate."""

from tests import ROOT
from tests.conftest import RunCli, WritePlan
from tests.plans import md_plan, tt_plan


def test_valid_plans_of_both_dialects_pass(write_plan: WritePlan, run_cli: RunCli) -> None:
    tasktrack = write_plan(tt_plan([[("FOO-1", "OPEN"), ("FOO-2", "OPEN")]]), "tt")
    markdown = write_plan(md_plan(("T-001", {}), ("T-002", {"depends": "T-001"})), "md")
    for folder, dialect in ((tasktrack, "tasktrack"), (markdown, "markdown")):
        result = run_cli("validate", folder)
        assert result.exit_code == 0, result.output
        assert f": valid {dialect} plan, 2 tasks" in result.output
        assert "(0 errors, 0 warnings)" in result.output


def test_examples_are_valid(run_cli: RunCli) -> None:
    demo = ROOT / "src" / "taskhand" / "demo" / "wordcount"
    for plan in (demo / "plan", demo / "plan-tasktrack"):
        result = run_cli("validate", plan)
        assert result.exit_code == 0, result.output
        assert ": valid " in result.output and "(0 errors, " in result.output
