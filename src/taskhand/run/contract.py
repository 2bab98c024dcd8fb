"""The JSON task contract (`taskhand task create`): a delegated task's title, text, base,
allowed paths, acceptance commands and routing, checked field by field, and written as a
Markdown task file into a contracts plan whose taskhand.toml pins the base every run starts at.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from taskhand.config.file import FILE as SETTINGS
from taskhand.config.file import read_file
from taskhand.errors import UserError
from taskhand.plan import drafts, validate
from taskhand.plan.formats import markdown, prose
from taskhand.plan.formats.criteria import CriterionError, parse_criterion
from taskhand.plan.model import Criterion, Task
from taskhand.plan.problems import Problem, display_path
from taskhand.plan.templates import slug
from taskhand.plan.validate import Report
from taskhand.run.addition import add_files
from taskhand.state.paths import StateDir
from taskhand.text import printable
from taskhand.workspace import git

FIELDS = (
    "title",
    "objective",
    "instructions",
    "task_class",
    "write_policy",
    "base_ref",
    "base_sha",
    "allowed_paths",
    "acceptance",
    "routing",
    "timeout_seconds",
    "max_attempts",
    "integration_policy",
    "depends_on",
)
CHECK_FIELDS = ("kind", "command", "timeout_seconds", "expected_exit_code")
_OVERVIEW = "# Contracts\n\nTasks written from JSON contracts by `taskhand task create`.\n"


class ContractError(UserError):
    """A contract that cannot become a task; nothing was written."""


@dataclass(frozen=True)
class Contract:
    """A checked contract: what the task file and the plan's pinned base are made of."""

    title: str
    text: str
    base: str  # the base_sha when given (authoritative), else base_ref
    paths: list[str]
    criteria: list[Criterion]
    depends: list[str] = field(default_factory=list)
    agent: str | None = None
    model: str | None = None
    timeout_seconds: float | None = None
    max_attempts: int | None = None


@dataclass(frozen=True)
class Created:
    task_id: str
    file: Path
    plan: Path


def read(path: Path, repo: Path) -> Contract:
    """The contract at `path`, checked; ContractError naming the file, the field and the fix."""
    where = display_path(path)

    def bad(name: str, what: str, fix: str) -> ContractError:
        return ContractError(f"{name}: {what}", where=where, fix=fix)

    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ContractError(f"cannot read it: {exc}", where=where, fix="give a JSON file") from None
    if not isinstance(data, dict):
        raise ContractError("not a JSON object", where=where, fix='write {"title": ...}')
    for key in data:
        if key not in FIELDS:
            raise bad(printable(str(key)), "unknown field", f"use {', '.join(FIELDS)}")
    title = data.get("title")
    if not isinstance(title, str) or not title.strip():
        raise bad("title", "missing or empty", 'give a title: "title": "..."')
    parts = [_text(data, k, bad) for k in ("objective", "instructions")]
    if not any(parts):
        raise bad("objective", "no objective or instructions", "say what the worker must do")
    if data.get("write_policy") != "repo_write":
        what = f"{data.get('write_policy')!r} cannot run as a task"
        raise bad("write_policy", what, 'use "repo_write"; other work stays with the resident')
    if data.get("integration_policy", "branch_only") != "branch_only":
        what = f"{data['integration_policy']!r} is not supported"
        raise bad("integration_policy", what, 'use "branch_only"')
    return Contract(
        title=" ".join(title.split()),
        text="\n\n".join(p for p in parts if p),
        base=_base(data, repo, bad),
        paths=_paths(data.get("allowed_paths"), bad),
        criteria=_acceptance(data.get("acceptance"), bad),
        depends=_strings(data, "depends_on", bad),
        agent=_routing(data, "agent", bad),
        model=_routing(data, "model", bad),
        timeout_seconds=_number(data, "timeout_seconds", bad),
        max_attempts=_count(data, "max_attempts", bad),
    )


def create(path: Path, plan_root: Path | None, repo: Path | None = None) -> Created:
    """Write the contract at `path` as the next task of the contracts plan (made when missing,
    pinned to the contract's base); refused whole, with nothing written, when anything is off:
    a field, or a plan that the task would leave unable to run (run/preflight.py)."""
    root = git.find_repo(repo or Path.cwd())
    contract = read(path, root)
    plan_root = plan_root or default_plan(root)
    where = display_path(path)
    settings = plan_root / SETTINGS
    run_table = read_file(plan_root).get("run") if plan_root.is_dir() else None
    pinned = (run_table or {}).get("base")
    files: dict[Path, str] = {}
    if run_table is not None and pinned is None:  # a second [run] table would be no TOML
        raise ContractError(
            f"base: {display_path(settings)} has a [run] table without base",
            where=where,
            fix=f'add base = "{contract.base}" to its [run], or give another --plan',
        )
    if pinned is None:
        files[settings] = _pin(settings, contract.base)
        if not (plan_root / markdown.OVERVIEW).exists():
            files[plan_root / markdown.OVERVIEW] = _OVERVIEW
    elif pinned != contract.base:
        raise ContractError(
            f"base: {display_path(plan_root)} runs from {pinned}, the contract from "
            f"{contract.base}",
            where=where,
            fix="give another --plan for this base",
        )
    plan = validate.validate(plan_root).plan if plan_root.is_dir() else None
    tasks = plan.tasks if plan is not None else []
    known = {t.id for t in tasks}
    for dep in contract.depends:
        if dep not in known:
            raise ContractError(
                f"depends_on: {printable(dep)} is no task of {display_path(plan_root)}",
                where=where,
                fix="name tasks created before this one",
            )
    task = Task(
        drafts.next_id(plan) if plan is not None else "T-001",
        contract.title,
        contract.text,
        list(contract.criteria),
        dependencies=list(contract.depends),
        paths=list(contract.paths),
        agent=contract.agent,
        model=contract.model,
        timeout_seconds=contract.timeout_seconds,
        max_attempts=contract.max_attempts,
    )
    task_file = plan_root / f"{task.id}-{slug(contract.title)}.md"
    files[task_file] = markdown.render_task(task)

    def judge(report: Report, new: list[Problem]) -> None:
        if new:
            first = new[0]
            field = _field_of(first, task_file.name, files[task_file])
            raise ContractError(f"{field}: {first.message}", where=where, fix=first.fix)
        written = report.plan.task(task.id) if report.plan is not None else None
        differs = _differs(task, written)
        if differs:
            raise ContractError(
                f"{differs}: reads back otherwise from the task file",
                where=where,
                fix="give it without line breaks, commas or spaces where a list is read",
            )

    try:
        add_files(plan_root, files, judge)
    except OSError as exc:
        raise ContractError(
            f"cannot write the plan {display_path(plan_root)}: {exc.strerror or exc}",
            where=where,
            fix="make its folder writable, or give another --plan",
        ) from None
    return Created(task.id, task_file, plan_root)


def default_plan(repo: Path) -> Path:
    """The contracts plan of `repo` when none is named: in its state folder, outside the
    checkout (one plan per base: a contract with another base names its own --plan)."""
    return StateDir.for_repo(repo).contracts


def _pin(settings: Path, base: str) -> str:
    """The settings file with `[run] base` added (kept as it was otherwise)."""
    old = settings.read_text(encoding="utf-8") if settings.exists() else ""
    return f"{old.rstrip()}\n\n[run]\nbase = {json.dumps(base)}\n".lstrip()


# A front matter key of the task file, by the contract's field it was written from.
_FROM_FIELD = {
    "title": "title",
    "depends": "depends_on",
    "paths": "allowed_paths",
    "agent": "routing.agent",
    "model": "routing.model",
    "timeout": "timeout_seconds",
    "max_attempts": "max_attempts",
}


def _field_of(problem: Problem, task_file: str, text: str) -> str:
    """The contract's field a problem of the would-be plan comes from, by where it is."""
    if problem.path.name == SETTINGS:
        return "base"
    if problem.path.name != task_file or problem.line is None:
        return "the task"
    lines = text.split("\n")
    index = problem.line - 1
    if 0 < index < lines.index("---", 1):
        return _FROM_FIELD.get(lines[index].partition(":")[0], "the task")
    criteria = lines.index("## Acceptance criteria")
    return f"acceptance[{index - criteria - 1}].command" if index > criteria else "objective"


def _differs(task: Task, written: Task | None) -> str:
    """The contract's field whose part of `task` the file reads back otherwise, or ""."""
    if written is None:
        return "title"

    def checks(t: Task) -> list[object]:
        return [(c.text, c.check) for c in t.criteria]

    parts = [
        ("title", task.title, written.title),
        ("objective", prose.normal(task.description), written.description),
        ("acceptance", checks(task), checks(written)),
        ("depends_on", task.dependencies, written.dependencies),
        ("allowed_paths", task.paths, written.paths),
        ("routing.agent", task.agent, written.agent),
        ("routing.model", task.model, written.model),
        ("timeout_seconds", task.timeout_seconds, written.timeout_seconds),
        ("max_attempts", task.max_attempts, written.max_attempts),
        ("the task", ({}, {}), (written.documents, written.extra)),
    ]
    return next((name for name, wanted, got in parts if wanted != got), "")


Bad = Any  # the `bad(field, what, fix)` maker of read()


def _text(data: dict[str, Any], key: str, bad: Bad) -> str:
    value = data.get(key, "")
    if not isinstance(value, str):
        raise bad(key, "not text", f'write "{key}": "..."')
    return value.strip()


def _base(data: dict[str, Any], repo: Path, bad: Bad) -> str:
    """The base_sha when given (it must name a commit of the repository), else base_ref."""
    sha = data.get("base_sha")
    if sha is not None:
        if not isinstance(sha, str) or len(sha) != 40 or not _is_commit(repo, sha):
            what = f"{printable(str(sha))!r} is no commit of this repository"
            raise bad("base_sha", what, "give the full sha of a commit here, or use base_ref")
        return sha
    ref = data.get("base_ref", "HEAD")
    if not isinstance(ref, str) or not ref or not _is_commit(repo, ref):
        raise bad("base_ref", f"{printable(str(ref))!r} names no commit", 'use "HEAD" or a ref')
    return ref


def _is_commit(repo: Path, ref: str) -> bool:
    if ref.startswith("-"):
        return False
    try:
        git.resolve(repo, ref)
    except git.GitError:
        return False
    return True


def _paths(value: object, bad: Bad) -> list[str]:
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise bad("allowed_paths", "not a list of globs", 'e.g. ["src/*.py"]')
    for glob in value:
        pure = PurePosixPath(glob)
        if not glob.strip() or pure.is_absolute() or ".." in pure.parts:
            fix = "give globs relative to the repository, inside it"
            raise bad("allowed_paths", f"{printable(glob)!r} leaves the repository", fix)
        if "," in glob or any(c.isspace() for c in glob):  # a task's paths are split at them
            fix = "give one glob per entry, without commas or spaces; a ? matches one"
            raise bad("allowed_paths", f"{printable(glob)!r} holds a comma or a space", fix)
    return list(value)


def _acceptance(value: object, bad: Bad) -> list[Criterion]:
    if not isinstance(value, list) or not value:
        raise bad("acceptance", "no checks", 'give [{"kind": "command", "command": [...]}]')
    found = []
    for n, check in enumerate(value):
        name = f"acceptance[{n}]"
        if not isinstance(check, dict) or check.get("kind") != "command":
            raise bad(name, "not a command check", 'give {"kind": "command", ...}')
        unknown = [k for k in check if k not in CHECK_FIELDS]
        if unknown:
            raise bad(f"{name}.{printable(str(unknown[0]))}", "unknown field", "drop it")
        argv = check.get("command")
        if not isinstance(argv, list) or not argv or not all(isinstance(a, str) for a in argv):
            raise bad(f"{name}.command", "not an argv list", 'e.g. ["pytest", "-q"]')
        seconds = _number(check, "timeout_seconds", bad, name) or 180.0
        code = check.get("expected_exit_code", 0)
        if not isinstance(code, int) or isinstance(code, bool) or not 0 <= code <= 255:
            raise bad(f"{name}.expected_exit_code", f"{code!r}", "a number from 0 to 255")
        # A criterion is one line of its task file: an argv with a line break cannot be one.
        text = prose.one_line(f"`$ {shlex.join(argv)}` (exit {code}, timeout {seconds:g}s) passes")
        try:
            criterion = parse_criterion(text)
        except CriterionError as exc:
            raise bad(f"{name}.command", str(exc), "give a plainer argv") from None
        if criterion.check is None or list(criterion.check.argv) != argv:
            fix = "give it without backticks or line breaks in its words"
            raise bad(f"{name}.command", "cannot be written as a criterion", fix)
        found.append(criterion)
    return found


def _strings(data: dict[str, Any], key: str, bad: Bad) -> list[str]:
    value = data.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise bad(key, "not a list of task ids", 'e.g. ["T-001"]')
    return list(value)


def _routing(data: dict[str, Any], key: str, bad: Bad) -> str | None:
    routing = data.get("routing", {})
    if not isinstance(routing, dict) or any(k not in ("agent", "model") for k in routing):
        raise bad("routing", "not {agent, model}", 'e.g. {"agent": "claude"}')
    value = routing.get(key)
    if value is not None and (not isinstance(value, str) or value.split() != [value]):
        raise bad(f"routing.{key}", f"{printable(repr(value))}", "give a name, without spaces")
    return value


def _number(data: dict[str, Any], key: str, bad: Bad, prefix: str = "") -> float | None:
    value = data.get(key)
    name = f"{prefix}.{key}" if prefix else key
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise bad(name, f"{value!r}", "a number of seconds above zero")
    return float(value)


def _count(data: dict[str, Any], key: str, bad: Bad) -> int | None:
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise bad(key, f"{value!r}", "a whole number, 1 or more")
    return value
