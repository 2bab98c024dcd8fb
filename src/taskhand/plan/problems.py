"""Problems found in a plan: what is wrong, where (file:line), and how to fix it.

Readers and rules collect problems as data; the CLI prints them at the edge.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from taskhand.errors import UserError
from taskhand.text import printable


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"


NO_TASKS = "no-tasks"  # the rule of a plan with only its overview: `new` writes its first task


@dataclass(frozen=True)
class Problem:
    path: Path
    line: int | None
    message: str
    fix: str
    severity: Severity = Severity.ERROR
    rule: str = ""

    @property
    def is_error(self) -> bool:
        return self.severity is Severity.ERROR

    def location(self) -> str:
        shown = display_path(self.path)
        return f"{shown}:{self.line}" if self.line else shown

    def render(self) -> str:
        """One line, whatever the message quotes from the file."""
        text = f"{self.severity}: {self.message} (fix: {self.fix})"
        return f"{self.location()}: {printable(text)}"

    def as_json(self) -> dict[str, object]:
        """The problem as it is; the JSON writer escapes what a terminal must not see."""
        return {
            "path": relative_path(self.path),
            "line": self.line,
            "severity": str(self.severity),
            "rule": self.rule,
            "message": self.message,
            "fix": self.fix,
        }


class PlanError(UserError):
    """A plan that cannot be used; carries every problem found."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        errors = [p for p in problems if p.is_error] or problems
        super().__init__(errors[0].render() if errors else "invalid plan")


def relative_path(path: Path) -> str:
    """A path relative to the working directory when it lies below it, as it is."""
    try:
        rel = os.path.relpath(path)
    except (ValueError, OSError):
        rel = ".."
    return str(path) if rel.startswith("..") else rel


def display_path(path: Path) -> str:
    """`relative_path`, printable on one line."""
    return printable(relative_path(path))


class Collector:
    """Gathers problems for one file so readers stay short."""

    def __init__(self, problems: list[Problem], path: Path) -> None:
        self.problems = problems
        self.path = path

    def error(self, line: int | None, message: str, fix: str, rule: str = "") -> None:
        self.problems.append(Problem(self.path, line, message, fix, Severity.ERROR, rule))

    def warn(self, line: int | None, message: str, fix: str, rule: str = "") -> None:
        self.problems.append(Problem(self.path, line, message, fix, Severity.WARNING, rule))
