"""The plan model: plans, phases, tasks, statuses and criteria as plain data.

Both dialects read into these types and write from them; nothing here does I/O.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path


class Status(StrEnum):
    """The five TaskTrack status codes, used for both dialects."""

    OPEN = "OPEN"
    BUSY = "BUSY"
    WAIT = "WAIT"
    DONE = "DONE"
    FAIL = "FAIL"


class Dialect(StrEnum):
    TASKTRACK = "tasktrack"
    MARKDOWN = "markdown"


DEFAULT_CHECK_TIMEOUT = 600.0

_COUNTER_RE = re.compile(r"-(\d+)$")


# Cached: sorting and checking a big plan asks for the same ids' numbers many times over.
@functools.lru_cache(maxsize=1 << 16)
def counter(task_id: str) -> str:
    """The number of an id as canonical digits ("T-007" -> "7"); "" when it has none."""
    match = _COUNTER_RE.search(task_id)
    return (match.group(1).lstrip("0") or "0") if match else ""


def id_key(task_id: str) -> tuple[int, str, str]:
    """Order ids by their counter as a number (FOO-2 < FOO-10), then by text.

    Compares digit strings by length first, so any number of digits orders correctly
    without converting it to an int.
    """
    digits = counter(task_id)
    return (len(digits), digits, task_id)


@dataclass(frozen=True)
class Check:
    """A machine check attached to a criterion: run argv, expect an exit code in time."""

    argv: tuple[str, ...]
    timeout_seconds: float = DEFAULT_CHECK_TIMEOUT
    expected_exit_code: int = 0


@dataclass(frozen=True)
class Criterion:
    """One acceptance criterion as written, plus its command when it carries one."""

    text: str
    check: Check | None = None
    # Where the bullet was written, for problem reports; not part of what a criterion says.
    line: int | None = field(default=None, compare=False)
    # "closes" (a closing check: its command, run by the gate, qa and the judge), "found" (a
    # behaviour qa proves in the running app with a screenshot), or "" (a reviewer's call).
    tag: str = field(default="", compare=False)


@dataclass
class Exchange:
    """A request for human feedback and, once a person wrote it, the response."""

    request: str
    response: str | None = None


@dataclass
class Task:
    id: str
    title: str
    description: str = ""
    criteria: list[Criterion] = field(default_factory=list)
    phase: int = 1
    dependencies: list[str] = field(default_factory=list)
    status: Status = Status.OPEN
    updated: str | None = None
    exchanges: list[Exchange] = field(default_factory=list)
    resolution: str | None = None
    failure: str | None = None
    # Extensions (Markdown dialect frontmatter); None means "use the plan's default".
    paths: list[str] = field(default_factory=list)
    kind: str | None = None
    agent: str | None = None
    model: str | None = None
    timeout_seconds: float | None = None
    max_attempts: int | None = None
    pipeline: str | None = None  # default or full, over the plan's choice
    pr: str | None = None  # the pull request that delivered it, as delivery wrote it
    # Keys or fields this version does not know, kept in file order.
    extra: dict[str, str] = field(default_factory=dict)
    # What the lifecycle's stages wrote into a Markdown task file (spec, plan, questions), by
    # section name in lower case; kept apart from the description a person wrote.
    documents: dict[str, str] = field(default_factory=dict)
    source: Path | None = None
    line: int = 1
    # Where each part was written ("dependencies", "criteria", ...), for problem reports.
    lines: dict[str, int] = field(default_factory=dict)

    @property
    def checks(self) -> list[Check]:
        return [c.check for c in self.criteria if c.check is not None]


@dataclass
class Phase:
    number: int
    title: str
    task_ids: list[str] = field(default_factory=list)


@dataclass
class Plan:
    dialect: Dialect
    root: Path
    title: str
    tasks: list[Task]
    phases: list[Phase]
    code: str | None = None
    objective: str = ""
    created: str | None = None
    resources: list[str] = field(default_factory=list)
    overview_path: Path | None = None
    overview_text: str = ""
    spec_path: Path | None = None
    # TaskTrack overview fields this version does not know, kept in file order.
    extra: dict[str, str] = field(default_factory=dict)
    # TaskTrack keeps a second copy of each status in the overview; the task file wins.
    overview_statuses: dict[str, Status] = field(default_factory=dict)

    def task(self, task_id: str) -> Task | None:
        return self.by_id().get(task_id)

    def by_id(self) -> dict[str, Task]:
        return {t.id: t for t in self.tasks}

    def statuses(self) -> dict[str, Status]:
        return {t.id: t.status for t in self.tasks}


def phases_from_tasks(tasks: list[Task]) -> list[Phase]:
    """Phases for a dialect that declares them per task (numbers as titles)."""
    numbers = sorted({t.phase for t in tasks})
    phases = {n: Phase(n, f"Phase {n}") for n in numbers}
    for task in sorted(tasks, key=lambda t: id_key(t.id)):
        phases[task.phase].task_ids.append(task.id)
    return [phases[n] for n in numbers]
