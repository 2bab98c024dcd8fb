"""`taskhand lint`: validate's problems and the authoring checks of plan/lint.py, each with
its rule's code, for a plan written by hand or by an agent. Parsing and printing only.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from taskhand.cli.options import JSON, summary
from taskhand.plan import lint as plan_lint
from taskhand.plan import validate
from taskhand.plan.problems import Problem, display_path, relative_path
from taskhand.text import dumps, plural, printable


@click.command(name="lint")
@click.argument("plan", type=click.Path(path_type=Path))
@JSON
@click.option("--strict", is_flag=True, help="Fail on warnings too.")
def lint_command(plan: Path, as_json: bool, strict: bool) -> None:
    """Check PLAN as an author should: validate's rules and the authoring checks, coded.

    Errors first, then warnings: dependencies across phases, cycles, needless serialization,
    missing criteria and criteria nothing could check. Exit 1 on an error, or on a warning
    with --strict."""
    from taskhand.run import preflight  # whether the plan can run here, as validate says

    with validate.collector_paused():
        report = plan_lint.extend(preflight.validate(plan))
    ok = report.ok(strict)
    if as_json:
        data: dict[str, Any] = summary(report, plan, ok)
        data["findings"] = [
            {**f.as_json(), "path": relative_path(p.path)}
            for p, f in zip(report.problems, plan_lint.findings(report), strict=True)
        ]
        click.echo(dumps(data, indent=2))
    else:
        for problem in report.problems:
            click.echo(_line(problem))
        counts = f"{plural(len(report.errors), 'error')}, {plural(len(report.warnings), 'warning')}"
        verdict = "clean" if not report.problems else ("ok" if ok else "not ok")
        click.echo(f"{display_path(plan)}: {verdict} ({counts})")
    sys.exit(0 if ok else 1)


def _line(problem: Problem) -> str:
    code = problem.rule or "format"
    text = f"{problem.severity} [{code}]: {problem.message} (fix: {problem.fix})"
    return f"{problem.location()}: {printable(text)}"
