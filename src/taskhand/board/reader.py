"""What the boards read, the web page and the terminal alike: the plan as `show --json` gives it,
the plan's events after a given one, and what the store adds for a card (the unit working on a
task now, the dollars its units cost so far). Read afresh each time; nothing is kept apart.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

from taskhand.pipeline import standing
from taskhand.run.preflight import load
from taskhand.state.events import Event
from taskhand.state.paths import StateDir
from taskhand.state.records import Run
from taskhand.state.store import Store
from taskhand.views import plan as views


def plan_data(plan_root: Path, repo: Path) -> dict[str, Any]:
    """The plan as `taskhand show PLAN --json` gives it, from the same reader, with each task's
    file named from the repository's root (whatever the current folder). A plan edited into
    something invalid raises its PlanError."""
    plan = load(plan_root)
    statuses, standings = standing.read(plan, repo=repo)
    data = views.plan_json(plan, statuses, standings)
    for task, shown in zip(plan.tasks, data["tasks"], strict=True):
        if task.source is not None:
            shown["file"] = str(task.source.resolve().relative_to(repo))
    return data


def events_after(plan_root: Path, repo: Path, after: int) -> list[Event]:
    """Every event of the plan's runs with an id above `after`, oldest first."""
    database = StateDir.for_repo(repo).database
    if not database.exists():
        return []
    with Store.open(database) as store:
        found = [e for r in _runs(store, plan_root) for e in store.events(r.id, after)]
    return sorted(found, key=lambda e: e.id)


def newest_event(plan_root: Path, repo: Path) -> int:
    """The id of the newest event of the plan's runs (0: none yet), read without the events."""
    database = StateDir.for_repo(repo).database
    if not database.exists():
        return 0
    with Store.open(database) as store:
        return max((store.newest_event(r.id) for r in _runs(store, plan_root)), default=0)


def activity(plan_root: Path, repo: Path) -> dict[str, dict[str, Any]]:
    """Per task, what a card shows beyond `show --json`: `unit`, the role and start (ISO time)
    of the newest run's unit still open on it; `cost`, the dollars of its units over every run
    of the plan (`stats --plan`'s sum). A unit counts as working only where `show --json` says
    the task is `working`: an open unit of a run that died is no one's work."""
    database = StateDir.for_repo(repo).database
    if not database.exists():
        return {}
    found: defaultdict[str, dict[str, Any]] = defaultdict(dict)
    with Store.open(database) as store:
        runs = sorted(_runs(store, plan_root), key=lambda r: (r.created, r.id))
        for run in runs:
            for unit in store.units(run.id):
                shown = found[unit.task_id]
                shown["cost"] = shown.get("cost", 0.0) + unit.cost
                if run is runs[-1] and unit.ended is None:  # units come oldest first
                    shown["unit"] = {"role": str(unit.role), "started": unit.started}
    return dict(found)


def _runs(store: Store, plan_root: Path) -> list[Run]:
    wanted = str(plan_root.resolve())
    return [r for r in store.runs() if r.plan_path == wanted]
