"""New plans: the starter files `taskhand init` writes for either dialect."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from taskhand.errors import UserError
from taskhand.plan.formats import detect, markdown, tasktrack, tasktrack_edit
from taskhand.plan.formats.files import list_folder, write_atomic
from taskhand.plan.model import Criterion, Dialect, Phase, Plan, Task

MARKDOWN_OVERVIEW = """\
# {title}

## Goal
What this plan delivers and why now, in one to three sentences.

## Context
The modules and files it touches (real paths), and what a worker must know first.

## Scope boundaries
- In scope: ...
- Out of scope: ...

## Notes for the reviewer
Risks, open questions and assumptions to check before merging.
"""

OBJECTIVE = "The overall goal of this plan, with the background an agent needs."
FIRST_DESCRIPTION = (
    "What to build, in the worker's voice. Name real paths and symbols "
    "(pkg/module.py:func), not 'the entrypoint'."
)
FIRST_CRITERIA = [
    Criterion("An externally checkable behaviour"),
    Criterion("`$ python -m pytest -q` passes"),
]

# The text a person must replace: a plan still holding any of it is not ready to run.
OVERVIEW_PLACEHOLDERS = (
    OBJECTIVE,
    *(
        line
        for line in MARKDOWN_OVERVIEW.splitlines()
        if line and not line.startswith("#") and "{" not in line
    ),
)


class InitError(UserError, ValueError):
    """The folder cannot take a new plan; the message says why and what to do."""


def default_code(folder: Path) -> str:
    letters = re.sub(r"[^A-Za-z]", "", folder.resolve().name).upper()
    return letters[:5] if len(letters) >= 3 else "PLAN"


def starter_plan(dialect: Dialect, folder: Path, code: str, title: str) -> Plan:
    """A new plan with one task, for the person to edit."""
    if dialect is Dialect.TASKTRACK and not tasktrack.CODE_RE.match(code):
        raise InitError(f"plan code {code!r} must be 3 to 5 letters A-Z (fix: --code FOO)")
    task_id = "T-001" if dialect is Dialect.MARKDOWN else f"{code}-1"
    task = Task(task_id, "First task", FIRST_DESCRIPTION, list(FIRST_CRITERIA))
    return Plan(
        dialect,
        folder,
        title,
        [task],
        [Phase(1, "First phase", [task.id])],
        code=code if dialect is Dialect.TASKTRACK else None,
        objective=OBJECTIVE,
        overview_text=MARKDOWN_OVERVIEW.format(title=title),
    )


def render_files(plan: Plan) -> dict[str, str]:
    """File name -> text of every file of a new plan, in its dialect's canonical form."""
    if plan.dialect is Dialect.MARKDOWN:
        files = {markdown.OVERVIEW: plan.overview_text}
        for task in plan.tasks:
            files[f"{task.id}-{slug(task.title)}.md"] = markdown.render_task(task)
        return files
    files = {f"{plan.code}{tasktrack.OVERVIEW_SUFFIX}": tasktrack_edit.render_overview(plan)}
    files |= {f"{task.id}.md": tasktrack_edit.render_task(task) for task in plan.tasks}
    return files


def slug(title: str) -> str:
    words = re.findall(r"[a-z0-9]+", title.lower())
    return "-".join(words)[:40].strip("-") or "task"


def init_plan(
    folder: Path, dialect: Dialect, code: str | None, title: str | None, spec: Path | None
) -> list[Path]:
    """Create a plan in `folder`, refusing to touch one that already holds a plan."""
    if folder.exists() and not folder.is_dir():
        raise InitError(f"{folder} is a file (fix: give a folder path)")
    if folder.is_dir() and detect(list_folder(folder).names) is not None:
        raise InitError(f"{folder} already holds a plan (fix: choose an empty folder)")
    if spec is not None:
        if dialect is not Dialect.TASKTRACK:
            raise InitError("--spec applies to TaskTrack plans (fix: add --dialect tasktrack)")
        if not spec.is_file():
            raise InitError(f"{spec}: no such spec file (fix: give a TaskTrack-*.md file)")
        if not tasktrack.SPEC_RE.match(spec.name):
            raise InitError(
                f"{spec.name}: a spec publication is named TaskTrack-<REVISION>.md (fix: rename it)"
            )
    plan = starter_plan(
        dialect, folder, code or default_code(folder), title or folder.resolve().name
    )
    files = render_files(plan)
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in files.items():
        write_atomic(folder / name, text)
        written.append(folder / name)
    if spec is not None:
        shutil.copyfile(spec, folder / spec.name)
        written.append(folder / spec.name)
    return written
