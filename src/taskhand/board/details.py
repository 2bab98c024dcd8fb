"""A task's drawer on the board: what the lifecycle wrote for it (spec, plan), what became of
each attempt (the ledger), each unit's role, agent, time and cost, and the pictures its stages
left. Read from the store and the task's documents, never kept apart from them.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from taskhand.pipeline.lifecycle import plan_key
from taskhand.run.preflight import load
from taskhand.state import documents
from taskhand.state.documents import Documents
from taskhand.state.paths import StateDir
from taskhand.state.store import Store

PICTURE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,100}\.(png|svg)$")


def task_details(plan_root: Path, repo: Path, task_id: str) -> dict[str, Any] | None:
    """The drawer of `task_id`, or None when the plan has no such task."""
    plan = load(plan_root)
    task = plan.task(task_id)
    if task is None:
        return None
    state = StateDir.for_repo(repo)
    docs = Documents(plan, state)
    found: dict[str, Any] = {
        "id": task.id,
        "spec": docs.read(task, documents.SPEC),
        "plan": docs.read(task, documents.PLAN),
        "pictures": sorted(p.name for p in _pictures(docs.folder(task.id))),
        "attempts": [],
        "units": [],
        "questions": [],
    }
    if not state.database.exists():
        return found
    with Store.open(state.database) as store:
        runs = [r for r in store.runs() if r.plan_path == plan_key(plan)]
        for run in sorted(runs, key=lambda r: (r.created, r.id)):
            found["attempts"] += [e.as_json() for e in store.ledger(run.id, task.id)]
            found["units"] += [_unit(u) for u in store.units(run.id, task.id)]
        found["questions"] = [
            {"number": q.number, "text": q.text, "options": q.options, "choice": q.choice,
             "note": q.note, "open": q.open}
            for q in store.questions(plan_key(plan), task.id)
        ]  # fmt: skip
    return found


def picture(plan_root: Path, repo: Path, task_id: str, name: str) -> Path | None:
    """The picture `name` of the task's artifacts, when it is one (a plain name, a regular
    file in that folder, never a link out of it)."""
    if not PICTURE.match(name):
        return None
    plan = load(plan_root)
    if plan.task(task_id) is None:
        return None
    folder = Documents(plan, StateDir.for_repo(repo)).folder(task_id)
    path = folder / name
    if path.is_symlink() or not path.is_file() or path.resolve().parent != folder.resolve():
        return None
    return path


def _pictures(folder: Path) -> list[Path]:
    if not folder.is_dir():
        return []
    return [
        p for p in folder.iterdir() if PICTURE.match(p.name) and p.is_file() and not p.is_symlink()
    ]


def _unit(unit: Any) -> dict[str, Any]:
    return {
        "id": unit.id,
        "role": str(unit.role),
        "agent": unit.agent,
        "model": unit.model,
        "started": unit.started,
        "ended": unit.ended,
        "outcome": str(unit.outcome) if unit.outcome else None,
        "tokens_in": unit.tokens_in,
        "tokens_out": unit.tokens_out,
        "cost": unit.cost,
    }
