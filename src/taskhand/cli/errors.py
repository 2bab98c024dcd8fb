"""How the command line reports an error: one style for ours and click's alike.

Text: `taskhand: error: what (fix: how)` on stderr, a plan's problems one line each. With
`--json` anywhere in the arguments: one JSON object on stderr. The exit code is the error's own.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import click

from taskhand.errors import UserError, split_fix
from taskhand.plan.problems import PlanError, Problem
from taskhand.text import dumps, printable

JSON_FLAG = "--json"
_SUGGESTION = re.compile(r"\.?\s*Did you mean (?P<names>.+?)\?$", re.DOTALL)


class Failure(click.ClickException):
    """An error for the user, shown in the one style; exit code 1."""

    def __init__(
        self, message: str, as_json: bool = False, problems: Sequence[Problem] = ()
    ) -> None:
        super().__init__(message)
        self.as_json = as_json
        self.problems = list(problems)

    def show(self, file: Any = None) -> None:
        if self.as_json:
            click.echo(dumps(self.as_data()), err=True)
        elif self.problems:
            for problem in self.problems:
                click.echo(problem.render(), err=True)
        else:
            click.echo(f"taskhand: error: {printable(self.message)}", err=True)

    def as_data(self) -> dict[str, Any]:
        """The error as it is; the JSON writer escapes what a terminal must not see."""
        what, fix = split_fix(self.message)
        data: dict[str, Any] = {"error": what, "fix": fix}
        if self.problems:
            data["problems"] = [p.as_json() for p in self.problems]
        return data


class UsageFailure(Failure):
    """A command line click could not parse (an unknown option, a bad value); exit code 2."""

    exit_code = 2


class SetupFailure(Failure):
    """A setup a run cannot start in (delivery's remote, `gh`, the base branch); exit code 2."""

    exit_code = 2


def from_user_error(exc: UserError, as_json: bool) -> Failure:
    """An expected failure in the one style, with the exit code the error asks for."""
    shape = SetupFailure if exc.exit_code == SetupFailure.exit_code else Failure
    return shape(str(exc), as_json)


def wants_json(args: Sequence[str]) -> bool:
    """Whether the command line asks for JSON (before any `--` that ends the options)."""
    options = list(args)
    if "--" in options:
        options = options[: options.index("--")]
    return JSON_FLAG in options


def from_plan_error(exc: PlanError, as_json: bool) -> Failure:
    errors = [p for p in exc.problems if p.is_error] or exc.problems
    first = errors[0] if errors else None
    message = f"{first.location()}: {first.message} (fix: {first.fix})" if first else str(exc)
    return Failure(message, as_json, exc.problems)


def from_click(exc: click.ClickException, as_json: bool) -> Failure:
    """Click's own errors (usage, bad values) and plain ClickExceptions, in our style."""
    if isinstance(exc, Failure):
        exc.as_json = exc.as_json or as_json
        return exc
    message = exc.format_message().strip()
    if isinstance(exc, click.UsageError):
        return UsageFailure(_usage_message(exc, message), as_json)
    return Failure(message, as_json)


def _usage_message(exc: click.UsageError, message: str) -> str:
    """'No such option '--jsn'. Did you mean '--json'?' -> one line that names the fix."""
    if " (fix: " in message:
        return _lower_first(message)
    if isinstance(exc, click.NoSuchOption) and re.fullmatch(r"-[0-9]+", exc.option_name):
        # `taskhand show PLAN -1`: a negative number, not a misspelt option
        return (
            f"{exc.option_name} is no option, and no task id: ids count from 1 (fix: give an id "
            "like FOO-1 or T-001; put '--' before an argument that starts with '-')"
        )
    help_command = f"{exc.ctx.command_path if exc.ctx else 'taskhand'} --help"
    suggestion = _SUGGESTION.search(message)
    if suggestion:
        message = message[: suggestion.start()]
        fix = f"use {suggestion.group('names')}, or see '{help_command}'"
    else:
        fix = f"see '{help_command}'"
    what = " ".join(message.split()).rstrip(".")
    return f"{_lower_first(what)} (fix: {fix})"


def _lower_first(text: str) -> str:
    # "No such option" reads as one of ours; an acronym ("TOML ...") keeps its case.
    if len(text) > 1 and text[0].isupper() and text[1].islower():
        return text[0].lower() + text[1:]
    return text
