"""Problems found in a plan: what is wrong, where (file:line), and how to fix it.

Readers and rules collect problems as data; the CLI prints them at the edge.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"


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
        return {
            "path": display_path(self.path),
            "line": self.line,
            "severity": str(self.severity),
            "rule": self.rule,
            "message": printable(self.message),
            "fix": printable(self.fix),
        }


class PlanError(Exception):
    """A plan that cannot be used; carries every problem found."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        errors = [p for p in problems if p.is_error] or problems
        super().__init__(errors[0].render() if errors else "invalid plan")


def display_path(path: Path) -> str:
    """A path relative to the working directory when it lies below it, printable."""
    try:
        rel = os.path.relpath(path)
    except (ValueError, OSError):
        rel = ".."
    return printable(str(path) if rel.startswith("..") else rel)


def printable(text: str) -> str:
    """Escape line breaks, control characters and undecodable bytes of file names."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() or c == " " else _escape(c) for c in text)


def _escape(char: str) -> str:
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:  # a byte os.fsdecode could not decode
        return f"\\x{code - 0xDC00:02x}"
    return char.encode("unicode_escape").decode("ascii")


class Collector:
    """Gathers problems for one file so readers stay short."""

    def __init__(self, problems: list[Problem], path: Path) -> None:
        self.problems = problems
        self.path = path

    def error(self, line: int | None, message: str, fix: str, rule: str = "") -> None:
        self.problems.append(Problem(self.path, line, message, fix, Severity.ERROR, rule))

    def warn(self, line: int | None, message: str, fix: str, rule: str = "") -> None:
        self.problems.append(Problem(self.path, line, message, fix, Severity.WARNING, rule))
