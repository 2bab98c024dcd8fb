"""Plan dialects: detect which one a folder holds and read it into the plan model."""

from __future__ import annotations

from pathlib import Path

from taskhand.plan.formats import markdown, tasktrack, tasktrack_task
from taskhand.plan.formats.files import list_folder
from taskhand.plan.model import Dialect, Plan
from taskhand.plan.problems import Collector, Problem


def plan_folder(path: Path) -> Path:
    """The plan folder for a path that names the folder or its overview file."""
    if path.is_file() and (path.name == markdown.OVERVIEW or path.name.endswith("-TaskTrack.md")):
        return path.parent
    return path


def load(path: Path) -> tuple[Plan | None, list[Problem]]:
    """Read the plan at `path` in whichever dialect it is written; never raises on bad input."""
    problems: list[Problem] = []
    try:
        return _load(path, problems)
    except OSError as exc:  # the path itself is unusable: too long, looping, vanished
        Collector(problems, path).error(
            None, f"cannot read the plan: {exc.strerror or exc}", "check the path"
        )
        return None, problems


def _load(path: Path, problems: list[Problem]) -> tuple[Plan | None, list[Problem]]:
    out = Collector(problems, path)
    root = plan_folder(path)
    if not root.exists():
        out.error(None, "no such plan folder", "check the path, or create one: taskhand init DIR")
        return None, problems
    if not root.is_dir():
        out.error(None, "not a folder", "give the plan folder (holding the overview file)")
        return None, problems
    try:
        listing = list_folder(root)
    except OSError as exc:
        out.error(None, f"cannot list the folder: {exc.strerror or exc}", "check permissions")
        return None, problems
    dialect = detect(listing.names)
    if dialect is None:
        out.error(
            None,
            "not a plan folder: no [CODE]-TaskTrack.md and no overview.md or T-*.md",
            "point at a plan folder, or create one: taskhand init DIR",
            "dialect",
        )
        return None, problems
    reader = tasktrack if dialect is Dialect.TASKTRACK else markdown
    return reader.load(listing, problems), problems


def detect(names: list[str]) -> Dialect | None:
    """The dialect of a folder holding files `names`.

    A well-named TaskTrack overview decides; a Markdown plan next comes first, so that a
    Tilth folder holding some `NOTES-TaskTrack.md` still reads as Tilth reads it; a badly
    named TaskTrack overview alone still reads as TaskTrack, to report its name.
    """
    overviews = tasktrack.overview_names(names)
    if any(tasktrack.CODE_RE.match(tasktrack.code_of(n)) for n in overviews):
        return Dialect.TASKTRACK
    if markdown.is_markdown_plan(names):
        return Dialect.MARKDOWN
    return Dialect.TASKTRACK if overviews else None


def unknown_task(plan: Plan, task_id: str, where: str) -> str:
    """Why `task_id` names no task of `plan` (shown as `where`): what is wrong with it as an
    id of the plan's dialect, or that the plan has none such."""
    if plan.dialect is Dialect.TASKTRACK:
        problem = tasktrack_task.id_problem(task_id)
        if not problem and plan.code and not task_id.startswith(f"{plan.code}-"):
            problem = f"the plan's ids start with {plan.code}-"
    else:
        problem = "" if markdown.ID_RE.match(task_id) else "an id is T- and a number, like T-001"
    return f"no task {task_id} in {where}" + (f", nor can there be: {problem}" if problem else "")
