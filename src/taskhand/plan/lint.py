"""Plan lint: the authoring checks, on any plan, as findings an author (a person or an agent)
can act on. `validate`'s problems come first, errors before warnings; then what a valid plan
can still get wrong: a plan that runs as one chain, a dependency between tasks that change
disjoint paths, a criterion that neither a command nor a reviewer could check.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from taskhand.plan import paths, schedule
from taskhand.plan.model import Dialect, Plan, Task
from taskhand.plan.problems import Collector, Problem, Severity
from taskhand.plan.validate import Report, validate

# Each rule's stable code, and what it means; `validate` names the first five.
RULES = {
    "cross-phase-dependency": "a dependency between tasks of different phases (TaskTrack "
    "forbids it; in a Markdown plan, one on a later phase can never be met)",
    "redundant-dependency": "a dependency that phase order or other dependencies already imply",
    "cycle": "tasks that depend on each other, so none can start",
    "serialized": "a phase, or the whole plan, that runs as a single chain of tasks",
    "criteria-missing": "a task with no acceptance criteria",
    "disjoint-dependency": "a dependency between tasks of one phase that change disjoint paths",
    "uncheckable-criterion": "a criterion with a vague word and nothing to observe",
    "paths-open": "an imported Markdown task whose paths the import could not tell",
}
# The findings an authoring loop sends back to its agent, beside every error.
AUTHORING = frozenset(RULES)

# Words that promise quality without saying what to observe. Kept short on purpose: each one
# is flagged only when the criterion has no command and nothing observable beside it.
VAGUE = re.compile(
    r"\b(?:works?\s+well|clean(?:ly|er)?\b(?!\s+up)|as\s+(?:appropriate|needed|necessary)"
    r"|etc\b\.?|robust(?:ly|ness)?|properly|user[- ]friendly)",
    re.IGNORECASE,
)
# What a reviewer can look at: code or a command, a number, a quoted text, a path or file
# name, or a verb naming something seen.
OBSERVABLE = re.compile(
    r"`|\d|\"|“|\b[\w.-]+/[\w./-]*|\b\w+\.(?:py|js|ts|md|json|toml|ya?ml|txt|html|css|sh|rs|go)\b"
    r"|\b(?:return|print|exit|show|display|raise|report|reject|refus|write|creat|contain|list"
    r"|pass|fail|respond|log|output|remov|delet|match|equal|build|install|load|save|render)\w*",
    re.IGNORECASE,
)
# How an importer says, in a task's own text, that it could not tell the task's paths (and so
# gave it none, not a scope narrower than its work); lint names the task until paths are set.
PATHS_OPEN = "Imported with no paths: "
MIN_CHAIN = 3  # fewer tasks in a row than this is no serialization worth a word


@dataclass(frozen=True)
class Finding:
    """One problem as data for a program: a stable code, where, what, and the fix."""

    code: str
    severity: Severity
    file: str  # relative to the plan folder when inside it
    line: int | None
    message: str
    fix: str

    @property
    def is_error(self) -> bool:
        return self.severity is Severity.ERROR

    @property
    def text(self) -> str:
        """One line for an agent's prompt."""
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"{where}: {self.severity} [{self.code}]: {self.message} (fix: {self.fix})"

    def as_json(self) -> dict[str, object]:
        return {
            "code": self.code,
            "severity": str(self.severity),
            "file": self.file,
            "line": self.line,
            "message": self.message,
            "fix": self.fix,
        }


def lint(folder: Path) -> Report:
    """The plan at `folder` checked by `validate` and the authoring rules, errors first."""
    return extend(validate(folder))


def extend(report: Report) -> Report:
    """`report` (validate's, or preflight's) with the authoring rules' findings added, and
    every problem ordered errors first, then in file and line order."""
    problems = list(report.problems)
    already = {p.rule for p in problems}
    if "cycle" in already:  # the shape leaves out the tasks of a cycle: its widths mislead
        problems = [p for p in problems if p.rule != "serialized"]
    if report.plan is not None and report.shape is not None:
        problems += check(report.plan, report.shape, serialized="serialized" in already)
    ordered = sorted(problems, key=lambda p: (not p.is_error, str(p.path), p.line or 0))
    return Report(report.path, report.plan, ordered, report.shape)


def findings(report: Report) -> list[Finding]:
    """The report's problems as findings, in its order; the code of a reader's problem that
    names no rule is `format`."""
    root = report.plan.root if report.plan is not None else report.path
    return [_finding(p, root) for p in report.problems]


def to_fix(report: Report) -> list[Finding]:
    """What an authoring loop hands back to its agent: every error, and the warnings of the
    authoring rules (not, say, a missing spec publication, which the harness adds)."""
    return [f for f in findings(report) if f.is_error or f.code in AUTHORING]


def _finding(problem: Problem, root: Path) -> Finding:
    try:
        file = str(problem.path.relative_to(root)) if problem.path != root else "."
    except ValueError:
        file = problem.path.name
    return Finding(
        problem.rule or "format",
        problem.severity,
        file,
        problem.line,
        problem.message,
        problem.fix,
    )


def check(plan: Plan, shape: schedule.Shape, serialized: bool = False) -> list[Problem]:
    """The authoring rules `validate` does not have, on a plan whose files have been read;
    `serialized`: validate already reported a phase that runs as one chain."""
    problems: list[Problem] = []
    if not serialized and not schedule.find_cycles(plan.tasks):
        _check_whole_chain(plan, shape, problems)
    _check_disjoint_dependencies(plan, problems)
    _check_criteria_text(plan, problems)
    _check_open_paths(plan, problems)
    return problems


def _check_open_paths(plan: Plan, problems: list[Problem]) -> None:
    if plan.dialect is not Dialect.MARKDOWN:  # TaskTrack has no paths to gate a result by
        return
    for task in plan.tasks:
        said = [line for line in task.description.splitlines() if line.startswith(PATHS_OPEN)]
        if said and not task.paths:
            Collector(problems, task.source or plan.root).warn(
                task.line,
                f"{task.id}: the import could not tell its paths "
                f"({said[0].removeprefix(PATHS_OPEN).rstrip('.')}); it runs unscoped",
                "name the files and folders it changes in `paths` (the scope gate holds it "
                "to them), or delete the line 'Imported with no paths' to leave it unscoped",
                "paths-open",
            )


def _check_whole_chain(plan: Plan, shape: schedule.Shape, problems: list[Problem]) -> None:
    count = len(plan.tasks)
    if count >= MIN_CHAIN and len(shape.critical_path) == count:
        Collector(problems, plan.overview_path or plan.root).warn(
            None,
            f"the plan's {count} tasks run one after another (critical path {count} of "
            f"{count}, width 1): no two can ever run at once",
            "put tasks that do not use each other's work into one phase without a "
            "dependency between them",
            "serialized",
        )


def _check_disjoint_dependencies(plan: Plan, problems: list[Problem]) -> None:
    by_id = plan.by_id()
    for task in plan.tasks:
        for dep in dict.fromkeys(task.dependencies):
            other = by_id.get(dep)
            if other is None or other is task or other.phase != task.phase:
                continue  # validate's rules speak of these
            if task.paths and other.paths and not paths.meet(task.paths, other.paths):
                Collector(problems, task.source or plan.root).warn(
                    task.lines.get("dependencies", task.line),
                    f"{task.id} depends on {dep}, yet they change disjoint paths "
                    f"({', '.join(task.paths)} and {', '.join(other.paths)}), so this "
                    "dependency alone keeps them from running at once",
                    f"drop it if {task.id} does not use {dep}'s work; if it does, move "
                    f"{task.id} to a later phase",
                    "disjoint-dependency",
                )


def uncheckable(text: str) -> str | None:
    """The vague word of a criterion's text that nothing observable backs, or None."""
    vague = VAGUE.search(text)
    if vague is None or OBSERVABLE.search(text):
        return None
    return vague.group(0)


def _check_criteria_text(plan: Plan, problems: list[Problem]) -> None:
    for task in plan.tasks:
        for criterion in task.criteria:
            word = None if criterion.check is not None else uncheckable(criterion.text)
            if word is not None:
                _warn_vague(task, criterion.line, word, plan, problems)


def _warn_vague(
    task: Task, line: int | None, word: str, plan: Plan, problems: list[Problem]
) -> None:
    Collector(problems, task.source or plan.root).warn(
        line or task.lines.get("criteria", task.line),
        f"{task.id}: criterion says {word!r} with nothing a command or a reviewer could observe",
        "say what to observe (an output, a file, an exit code, a number), or give a "
        "command: `$ pytest -q tests/test_x.py` passes",
        "uncheckable-criterion",
    )
