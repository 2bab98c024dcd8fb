"""The `taskhand` command: its commands by name, loaded only when one is run, and the one
error style. Parsing and printing only; the library does the work.

`taskhand --help` lists every command from the table below without importing any of them, and
a plan command (validate, show, next) never imports the run machinery, an agent backend or rich.
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any, NamedTuple

import click

from taskhand.cli import errors as cli_errors
from taskhand.cli.errors import Failure
from taskhand.errors import UserError
from taskhand.plan.problems import PlanError

JSON_ERRORS = "taskhand.json_errors"  # in the context's meta: --json was asked for
# `taskhand` alone prints the help (exit 2); that is no error to restyle.
_SHOWS_HELP = getattr(click.exceptions, "NoArgsIsHelpError", ())
_NO_SUCH_COMMAND = getattr(click.exceptions, "NoSuchCommand", None)


class Entry(NamedTuple):
    """Where a command lives, and the first paragraph of its help, which `--help` lists."""

    module: str
    attribute: str
    summary: str


COMMANDS = {
    "author": Entry(
        "taskhand.cli.author",
        "author",
        "Write a plan into OUT from REQUIREMENTS with an agent, checked until it validates.",
    ),
    "board": Entry(
        "taskhand.cli.board",
        "board",
        "Serve PLAN's board: every task live, and a person's moves (with the printed token).",
    ),
    "accept": Entry(
        "taskhand.cli.moves",
        "accept",
        "Accept TASK's prototype: it is ready for its tests and code.",
    ),
    "answer": Entry(
        "taskhand.cli.moves",
        "answer",
        "Answer TASK's question Q (Q1, Q2, ...) with its OPTION (a, b, ...).",
    ),
    "approve": Entry(
        "taskhand.cli.moves",
        "approve",
        "Approve TASK's plan: a ui task goes on to its prototype, any other to ready.",
    ),
    "clean": Entry(
        "taskhand.cli.runs",
        "clean_command",
        "Remove what runs left once integrated or disposed and past retention; keep the rest.",
    ),
    "comment": Entry(
        "taskhand.cli.moves",
        "comment",
        "Leave TEXT for TASK's next unit; on a prototype awaiting review, ask for another round.",
    ),
    "convert": Entry(
        "taskhand.cli.convert",
        "convert_command",
        "Write PLAN in the other dialect into the new folder OUT; say what was not carried over.",
    ),
    "demo": Entry(
        "taskhand.cli.run",
        "demo_command",
        "Build a small project and plan in a temporary repository and run it with replay.",
    ),
    "import": Entry(
        "taskhand.cli.imports",
        "import_command",
        "Make a plan in --out from FILE: a Spec Kit tasks.md or a Taskmaster tasks.json.",
    ),
    "init": Entry(
        "taskhand.cli.plan",
        "init",
        "Create a plan in FOLDER: an overview and a first task to edit.",
    ),
    "integration": Entry(
        "taskhand.cli.integration",
        "integration",
        "Record and read what became of each result: integrated, rejected or superseded.",
    ),
    "ledger": Entry(
        "taskhand.cli.runs",
        "ledger",
        "What became of each attempt at TASK (default: every task): checks, verdicts, change.",
    ),
    "lint": Entry(
        "taskhand.cli.lint",
        "lint_command",
        "Check PLAN as an author should: validate's rules and the authoring checks, coded.",
    ),
    "new": Entry(
        "taskhand.cli.moves",
        "new",
        "Write a new task into PLAN as a draft, with the next free id.",
    ),
    "next": Entry(
        "taskhand.cli.plan",
        "next_command",
        "Print the task a run would select next (exit 3 when none is eligible).",
    ),
    "park": Entry(
        "taskhand.cli.moves",
        "park",
        "Stop TASK, saying WHY; reopen takes it up where it stopped.",
    ),
    "reopen": Entry(
        "taskhand.cli.moves",
        "reopen",
        "Retry a FAIL task, or take up a parked one where it stopped.",
    ),
    "respond": Entry(
        "taskhand.cli.moves",
        "respond",
        "Answer a WAIT task's question with TEXT and set it OPEN.",
    ),
    "revise": Entry(
        "taskhand.cli.moves",
        "revise",
        "Send TASK's plan back to the planner with TEXT: what to change.",
    ),
    "resume": Entry(
        "taskhand.cli.run",
        "resume",
        "Resume RUN (default: the latest run of this repository) where it stopped.",
    ),
    "run": Entry(
        "taskhand.cli.run",
        "run",
        "Work through PLAN: each task in its own worktree, gated, integrated into a run branch.",
    ),
    "runs": Entry(
        "taskhand.cli.runs",
        "runs",
        "List the runs of this repository, newest first.",
    ),
    "show": Entry(
        "taskhand.cli.plan",
        "show",
        "Show PLAN (phases, tasks, statuses, what is eligible), or one TASK of it.",
    ),
    "stats": Entry(
        "taskhand.cli.runs",
        "stats",
        "Units by role, agent time, tokens and dollars per task and in total for RUN.",
    ),
    "submit": Entry(
        "taskhand.cli.moves",
        "submit",
        "Send the draft TASK on to its pipeline's first stage.",
    ),
    "task": Entry(
        "taskhand.cli.task",
        "task",
        "Create a task from a JSON contract (task create), and show what became of it.",
    ),
    "validate": Entry(
        "taskhand.cli.plan",
        "validate_command",
        "Check PLAN against every rule of its dialect; list all problems at once.",
    ),
    "watch": Entry(
        "taskhand.cli.board",
        "watch",
        "Draw PLAN's board in the terminal, live: a column per status, a card per task.",
    ),
}


class Group(click.Group):
    """The commands of COMMANDS, each imported when it runs; any error in the one style
    (cli_errors), and TASKHAND_DEBUG=1 re-raises the unexpected ones."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        entry = COMMANDS.get(cmd_name)
        if entry is None:
            return None
        command: click.Command = getattr(importlib.import_module(entry.module), entry.attribute)
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The command list as click writes it, from the summaries: no command is imported."""
        stubs = [
            (name, click.Command(name, help=COMMANDS[name].summary)) for name in sorted(COMMANDS)
        ]
        limit = formatter.width - 6 - max(len(name) for name, _ in stubs)
        with formatter.section("Commands"):
            formatter.write_dl([(name, stub.get_short_help_str(limit)) for name, stub in stubs])

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        try:
            return super().resolve_command(ctx, args)
        except click.UsageError as exc:
            # click suggests close names from the commands it holds, and this group holds none
            # until one is asked for: suggest from the table.
            if _NO_SUCH_COMMAND is None or not isinstance(exc, _NO_SUCH_COMMAND):
                raise
            raise _NO_SUCH_COMMAND(exc.command_name, possibilities=COMMANDS, ctx=ctx) from None

    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: click.Context | None = None,
        **extra: Any,
    ) -> click.Context:
        as_json = cli_errors.wants_json(args)
        try:
            ctx = super().make_context(info_name, args, parent, **extra)
        except click.ClickException as exc:
            if isinstance(exc, _SHOWS_HELP):
                raise
            raise cli_errors.from_click(exc, as_json) from None
        ctx.meta[JSON_ERRORS] = as_json
        return ctx

    def invoke(self, ctx: click.Context) -> Any:
        as_json = bool(ctx.meta.get(JSON_ERRORS))
        try:
            return super().invoke(ctx)
        except click.ClickException as exc:
            raise cli_errors.from_click(exc, as_json) from None
        except (click.exceptions.Exit, click.Abort):
            raise
        except KeyboardInterrupt:
            # Ctrl-C outside a run (which handles it itself): the shell's code, not "Aborted!".
            click.echo("taskhand: interrupted", err=True)
            raise SystemExit(130) from None
        except BrokenPipeError:
            # The reader went away (`taskhand ledger | head`): stop quietly, as a filter does.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            raise SystemExit(141) from None
        except PlanError as exc:
            raise cli_errors.from_plan_error(exc, as_json) from None
        except UserError as exc:  # an expected failure: one line naming what and the fix
            raise cli_errors.from_user_error(exc, as_json) from None
        except Exception as exc:
            if os.environ.get("TASKHAND_DEBUG"):
                raise
            raise Failure(
                f"{type(exc).__name__}: {exc} (fix: set TASKHAND_DEBUG=1 for details)",
                as_json=as_json,
            ) from None


@click.group(name="taskhand", cls=Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="taskhand")
def cli() -> None:
    """Run coding agents through a plan of tasks."""


def main() -> None:
    cli(prog_name="taskhand")
