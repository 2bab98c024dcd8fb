"""What the boards read, the web page and the terminal alike: the plan as `show --json` gives it
(each task's status, what it waits for, the unit working on it, its cost, its PR) with its
latest run's merge queue, and the plan's events after a given one. Read afresh each time;
nothing is kept apart.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from taskhand.delivery.gh import is_web_address
from taskhand.pipeline import standing
from taskhand.run.preflight import load
from taskhand.state.events import Event
from taskhand.state.paths import StateDir
from taskhand.state.records import Run
from taskhand.state.store import Store
from taskhand.views import plan as views
from taskhand.views import queue


def plan_data(plan_root: Path, repo: Path) -> dict[str, Any]:
    """The plan as `taskhand show PLAN --json` gives it, from the same reader, with each task's
    file named from the repository's root (whatever the current folder) and its pull request
    only when its address is http(s) (a store written before delivery refused others may hold
    a `javascript:` one), and its latest run's merge queue (`queue`, front first). A plan
    edited into something invalid raises its PlanError."""
    plan = load(plan_root)
    statuses, standings = standing.read(plan, repo=repo)
    data = views.plan_json(plan, statuses, standings)
    for task, shown in zip(plan.tasks, data["tasks"], strict=True):
        if task.source is not None:
            shown["file"] = str(task.source.resolve().relative_to(repo))
        if shown.get("pr") and not is_web_address(str(shown["pr"])):
            shown["pr"] = None
    data["queue"] = merge_queue(plan_root, repo)
    return data


def merge_queue(plan_root: Path, repo: Path) -> list[dict[str, Any]]:
    """The merge queue of the plan's latest run, front first: empty when nothing waits to
    land (or the run is over)."""
    database = StateDir.for_repo(repo).database
    if not database.exists():
        return []
    with Store.open(database) as store:
        run = store.latest_run(str(plan_root.resolve()))
        return [] if run is None else queue.of_run(store, run.id, datetime.now(UTC)).as_json()


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


def _runs(store: Store, plan_root: Path) -> list[Run]:
    wanted = str(plan_root.resolve())
    return [r for r in store.runs() if r.plan_path == wanted]
