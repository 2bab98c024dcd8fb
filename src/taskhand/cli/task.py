"""The task contract's commands: `task create`, a task from a JSON contract written into a
contracts plan, and `task show`, its state, acceptance output and changed files.
"""

from __future__ import annotations

import shlex
from pathlib import Path

import click

from taskhand.cli.options import JSON, REPO
from taskhand.plan.problems import display_path
from taskhand.run import contract, task_report
from taskhand.text import dumps
from taskhand.views.terminal import echo
from taskhand.workspace import git

PLAN = click.option(
    "--plan",
    "plan",
    type=click.Path(path_type=Path),
    help="The contracts plan (default: the repository's, in its taskhand state folder).",
)


@click.group()
def task() -> None:
    """Create a task from a JSON contract (task create), and show what became of it."""


@task.command(name="create")
@click.option(
    "--file", "path", type=click.Path(path_type=Path), required=True, help="The contract."
)
@PLAN
@REPO
@JSON
def create(path: Path, plan: Path | None, repo: Path | None, as_json: bool) -> None:
    """Write the contract in --file as the next task of the contracts plan.

    The plan's taskhand.toml pins the contract's base ([run] base), so `taskhand run PLAN`
    starts every task there; a contract with another base needs another --plan.
    """
    made = contract.create(path, plan, repo)
    if as_json:
        shown = {"id": made.task_id, "file": str(made.file), "plan": str(made.plan)}
        click.echo(dumps(shown))
    else:
        echo(f"{made.task_id}: {display_path(made.file)}")
        echo(f"next: taskhand run {display_path(made.plan)}")


@task.command(name="show")
@click.argument("task_id", metavar="TASK")
@PLAN
@REPO
@JSON
def show(task_id: str, plan: Path | None, repo: Path | None, as_json: bool) -> None:
    """TASK's state, its latest acceptance output and the files its result changes."""
    root = plan or contract.default_plan(git.find_repo(repo or Path.cwd()))
    found = task_report.show(task_id, root, repo)
    if as_json:
        click.echo(dumps(found))
        return
    echo(f"{found['id']}: {found['status']} ({found['lifecycle']})")
    for gate in found["acceptance"]:
        what = shlex.join(gate["command"]) if "command" in gate else gate["name"]
        verdict = "ok" if gate["ok"] else "not ok"
        echo(f"  {what}: {verdict}, exit {gate['exit_code']}")
    for change in found["changed_files"]:
        echo(f"  {change['status']} {change['path']}")
    if found["disposition"]:
        echo(f"  disposition: {found['disposition']}")
