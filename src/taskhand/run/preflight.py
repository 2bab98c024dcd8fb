"""Preflight rules: what would make every attempt of a well-formed plan fail or waste money.

Checks that cannot run as written (runnable.py), scope paths outside the repository, an agent
taskhand does not have, and the `init` template's placeholder text. `validate` reports them
with the plan's own problems; their errors stop `run`; `show` and `next` still read such a plan.
"""

from __future__ import annotations

import dataclasses
import os
import posixpath
from pathlib import Path
from typing import TYPE_CHECKING

from taskhand.agents import NAMES as AGENTS
from taskhand.gates.runnable import Repo, check_commands
from taskhand.plan import templates
from taskhand.plan import validate as plan_validation
from taskhand.plan.model import Plan
from taskhand.plan.problems import Collector, Problem

if TYPE_CHECKING:  # validate loads no config: only a run's check needs it
    from taskhand.config import RunConfig

RULES = frozenset(
    {"program", "shell-syntax", "scope-path", "agent", "settings", "template", "setup"}
)
# The plan's settings file, as config.FILE names it (a test holds the two equal): a plan without
# one is checked without loading config and the run's vocabulary (a tenth of validate's start).
SETTINGS_FILE = "taskhand.toml"


def validate(path: Path) -> plan_validation.Report:
    """Every problem of the plan at `path`: its own, and whether it can run here. What
    `taskhand validate` reports, and what a run checks before it starts."""
    with plan_validation.collector_paused():
        report = plan_validation.validate(path)
        return report if report.plan is None else report.adding(check(report.plan))


def load(path: Path) -> Plan:
    """The plan at `path` as a run needs it: its own rules and the preflight rules passed, or a
    PlanError that lists every problem found."""
    return validate(path).require()


def check_delivery(repo: Path, config: RunConfig) -> RunConfig:
    """With delivery on: `config` naming the branch pull requests go into, once a remote, `gh`
    logged in and that branch on the remote are there; else a delivery.SetupError (exit 2)."""
    if not config.deliver.on:
        return config
    from taskhand.delivery import preflight as delivery  # only a run that delivers loads it

    base = delivery.check(repo, config.deliver, config.base_ref)
    return dataclasses.replace(config, deliver=dataclasses.replace(config.deliver, base=base))


def check(plan: Plan) -> list[Problem]:
    """Every preflight problem of `plan`, whose files have been read."""
    problems: list[Problem] = []
    repo = Repo(plan.root)
    _check_agents(plan, repo, problems)
    _check_paths(plan, repo, problems)
    check_commands(plan, repo, problems)
    _check_template(plan, problems)
    return problems


def _check_agents(plan: Plan, repo: Repo, problems: list[Problem]) -> None:
    valid = ", ".join(AGENTS)
    for task in plan.tasks:
        if task.agent and task.agent not in AGENTS:
            Collector(problems, task.source or plan.root).error(
                task.lines.get("agent", task.line),
                f"{task.id} asks for agent {task.agent!r}, which taskhand does not have",
                f"use one of {valid}",
                "agent",
            )
    path = plan.root / SETTINGS_FILE
    if not path.is_file():
        return  # no settings, no agents named there
    from taskhand import config

    out = Collector(problems, path)
    try:
        data = config.read_file(plan.root)
    except config.SettingsError as exc:
        line = exc.where.removeprefix(f"{path}:")
        out.error(int(line) if line.isdigit() else None, exc.what, exc.fix, "settings")
        return
    tables = [("run", data.get("run", {}))]
    tables += [(f"roles.{name}", spec) for name, spec in data.get("roles", {}).items()]
    for section, table in tables:
        agent = table.get("agent")
        if agent is not None and agent not in AGENTS:
            out.error(
                config.line_of(path, section, "agent"),
                f"[{section}] agent = {agent!r} is not an agent taskhand has",
                f"use one of {valid}",
                "agent",
            )
    _check_copies(path, data.get("setup", {}).get("copy", []), repo, out)


def _check_copies(path: Path, copies: list[str], repo: Repo, out: Collector) -> None:
    """Each file `[setup] copy` names must be a regular file of the checkout, reached
    through no link: a workspace gets its bytes, never a place it points to."""
    if not copies or repo.root is None:
        return
    from taskhand import config
    from taskhand.workspace.setup_files import source_problem

    for entry in copies:
        problem = source_problem(repo.root, entry)
        if problem:
            what, line = f"[setup] copy: {entry} {problem}", config.line_of(path, "setup", "copy")
            fix = "make it a regular file inside the repository, or take it out of [setup] copy"
            out.error(line, what, fix, "setup")


def _check_paths(plan: Plan, repo: Repo, problems: list[Problem]) -> None:
    for task in (t for t in plan.tasks if t.paths):
        out = Collector(problems, task.source or plan.root)
        line = task.lines.get("paths", task.line)
        for entry in task.paths:
            found = _path_problem(entry, repo)
            if found:
                what, fix = found
                out.error(line, f"{task.id}'s paths entry {entry!r} {what}", fix, "scope-path")


def _path_problem(entry: str, repo: Repo) -> tuple[str, str] | None:
    segments = [s for s in entry.split("/") if s and s != "."]
    relative = "paths are globs relative to the repository root"
    if any(s.lower() == ".git" for s in segments):
        return "points inside .git, which no task may change", "remove it"
    if ".." in segments:
        normal = posixpath.normpath(entry.lstrip("/"))
        if normal == ".." or normal.startswith("../"):
            return "leaves the repository", f"{relative}; a task changes only files inside it"
        return "has a '..' segment, which no changed path has", f"write it as {normal}"
    if not entry.startswith("/") or not segments:
        return None
    root = repo.root
    if root is not None and (entry == str(root) or entry.startswith(f"{root}/")):
        inside = entry[len(str(root)) :].strip("/") or "."
        return "is an absolute path", f"{relative}: write {inside}"
    # A leading '/' anchors a path at the repository root, unless it names a place outside.
    at_top = root is not None and os.path.lexists(root / segments[0])
    if not at_top and os.path.lexists(f"/{segments[0]}"):
        return "lies outside the repository", f"{relative}; a task changes only files inside it"
    return None


def _check_template(plan: Plan, problems: list[Problem]) -> None:
    """The text `taskhand init` wrote for a person to replace: no agent should work from it."""
    overview = f"{plan.objective}\n{plan.overview_text}"
    placeholder = next((p for p in templates.OVERVIEW_PLACEHOLDERS if p in overview), None)
    if placeholder and plan.overview_path:
        Collector(problems, plan.overview_path).error(
            _line_of(plan.overview_path, placeholder),
            f"the overview still holds the init template's text ({placeholder!r})",
            "write the plan's real goal, context and scope in its place",
            "template",
        )
    example = templates.FIRST_CRITERIA[0].text
    for task in plan.tasks:
        out = Collector(problems, task.source or plan.root)
        if templates.FIRST_DESCRIPTION in task.description:
            out.error(
                _line_of(task.source, templates.FIRST_DESCRIPTION[:40]) or task.line,
                f"{task.id}'s description is still the init template's example",
                "describe the real work, naming the paths and symbols it touches",
                "template",
            )
        for criterion in task.criteria:
            if criterion.text == example:
                out.error(
                    criterion.line or task.line,
                    f"{task.id}'s criterion {example!r} is still the init template's example",
                    "replace it with an outcome a reviewer can check",
                    "template",
                )


def _line_of(path: Path | None, text: str) -> int | None:
    """The first line of the file at `path` that holds `text` (read only to place a report)."""
    if path is None:
        return None
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    return next((n for n, line in enumerate(lines, start=1) if text in line), None)
