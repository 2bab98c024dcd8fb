"""A task's drawer on the board: what the lifecycle wrote for it (spec, criteria, plan,
questions), what became of each attempt (the ledger), each unit's role, agent, time and cost,
the pictures its stages left and qa's evidence per `[found]` criterion. Read from the store and
the task's documents, never kept apart from them. The diff and the transcripts are apart
(`board.diffs`, `board.transcripts`): they are read when a person asks for them.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

from taskhand.delivery.body import is_found, qa_screenshots
from taskhand.pipeline.lifecycle import plan_key
from taskhand.plan.model import Plan, Task
from taskhand.run.preflight import load
from taskhand.state import documents
from taskhand.state.documents import Documents
from taskhand.state.ledger import LedgerEntry
from taskhand.state.paths import StateDir
from taskhand.state.records import Attempt, Run, UnitRow
from taskhand.state.store import Store
from taskhand.unit import Role

PICTURE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,100}\.(png|svg)$")
EVIDENCE = re.compile(r"^found-\d+\.png$")  # qa's screenshots; every other picture is a prototype


@dataclass(frozen=True)
class Scope:
    """One task of the board's plan, and where its state lives."""

    plan: Plan
    task: Task
    state: StateDir


def scope(plan_root: Path, repo: Path, task_id: str) -> Scope | None:
    """The task `task_id` of the plan, or None when the plan has no such task."""
    plan = load(plan_root)
    task = plan.task(task_id)
    return None if task is None else Scope(plan, task, StateDir.for_repo(repo))


@contextmanager
def opened(found: Scope) -> Iterator[Store | None]:
    """The repository's store, or None before its first run."""
    if not found.state.database.exists():
        yield None
        return
    with Store.open(found.state.database) as store:
        yield store


def plan_runs(store: Store, plan: Plan) -> list[Run]:
    """The runs of this plan, oldest first."""
    runs = [r for r in store.runs() if r.plan_path == plan_key(plan)]
    return sorted(runs, key=lambda r: (r.created, r.id))


T = TypeVar("T", Attempt, UnitRow)


def one_of(
    plan_root: Path, repo: Path, task_id: str, listed: Callable[[Store, str], list[T]], id_: int
) -> tuple[Scope, T] | None:
    """The task's record `id_` among those `listed(store, run_id)` gives in this plan's runs
    (its attempts, its units); None when the plan, the task or the record is not there."""
    found = scope(plan_root, repo, task_id)
    if found is None:
        return None
    with opened(found) as store:
        if store is None:
            return None
        for run in plan_runs(store, found.plan):
            for record in listed(store, run.id):
                if record.id == id_:
                    return found, record
    return None


def task_details(plan_root: Path, repo: Path, task_id: str) -> dict[str, Any] | None:
    """The drawer of `task_id`, or None when the plan has no such task."""
    found = scope(plan_root, repo, task_id)
    if found is None:
        return None
    task = found.task
    docs = Documents(found.plan, found.state)
    folder = docs.folder(task.id)
    pictures = sorted(p.name for p in _pictures(folder))
    details: dict[str, Any] = {
        "id": task.id,
        "spec": docs.read(task, documents.SPEC),
        "plan": docs.read(task, documents.PLAN),
        "criteria": [_criterion(n, c) for n, c in enumerate(task.criteria, start=1)],
        "pictures": pictures,
        "prototypes": [name for name in pictures if not EVIDENCE.match(name)],
        "attempts": [],
        "units": [],
        "questions": [],
    }
    units: list[UnitRow] = []
    with opened(found) as store:
        if store is not None:
            for run in plan_runs(store, found.plan):
                ledger = {e.attempt_id: e for e in store.ledger(run.id, task.id)}
                details["attempts"] += [
                    _attempt(a, ledger.get(a.id)) for a in store.attempts(run.id, task.id)
                ]
                units += store.units(run.id, task.id)
            details["questions"] = [
                {"number": q.number, "text": q.text, "options": q.options, "choice": q.choice,
                 "note": q.note, "open": q.open}
                for q in store.questions(plan_key(found.plan), task.id)
            ]  # fmt: skip
    details["units"] = [_unit(u) for u in units]
    details["evidence"] = _evidence(folder, task, units)
    return details


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


def _criterion(number: int, criterion: Any) -> dict[str, Any]:
    check = criterion.check
    return {
        "number": number,  # as qa's prompt numbers them, and its screenshots found-N.png
        "text": criterion.text,
        "tag": criterion.tag or ("found" if is_found(criterion) else ""),
        "check": shlex.join(check.argv) if check is not None else None,
    }


def _attempt(attempt: Attempt, entry: LedgerEntry | None) -> dict[str, Any]:
    """An attempt and its ledger entry (None while it runs or waits at a person's gate)."""
    return {
        "id": attempt.id,
        "run_id": attempt.run_id,
        "number": attempt.number,
        "status": str(attempt.status),
        "reason": attempt.reason,
        "started": attempt.started,
        "ended": attempt.ended,
        "base_sha": attempt.base_sha,
        "candidate_sha": attempt.candidate_sha,
        "ledger": entry.as_json() if entry is not None else None,
    }


def _unit(unit: UnitRow) -> dict[str, Any]:
    return {
        "id": unit.id,
        "attempt_id": unit.attempt_id,
        "role": str(unit.role),
        "lens": unit.lens,
        "agent": unit.agent,
        "model": unit.model,
        "started": unit.started,
        "ended": unit.ended,
        "seconds": _seconds(unit.started, unit.ended),
        "outcome": str(unit.outcome) if unit.outcome else None,
        "tokens_in": unit.tokens_in,
        "tokens_out": unit.tokens_out,
        "tokens_cached": unit.tokens_cached,
        "tokens_cache_write": unit.tokens_cache_write,
        "tokens_thinking": unit.tokens_thinking,
        "cost": unit.cost,
        "cost_estimated": unit.cost_estimated,
        "transcript": bool(unit.transcript),  # its lines: board.transcripts, by the unit's id
    }


def _seconds(started: str, ended: str | None) -> float | None:
    """How long a unit took; None while it runs (or a time the store holds is unreadable)."""
    if not ended:
        return None
    try:
        return round(
            (datetime.fromisoformat(ended) - datetime.fromisoformat(started)).total_seconds(), 3
        )
    except ValueError:
        return None


def _evidence(folder: Path, task: Task, units: list[UnitRow]) -> dict[str, Any]:
    """Each `[found]` criterion with qa's screenshot of it (None: not walked), and whether a
    qa unit ran on the task at all."""
    shots = qa_screenshots(folder, task.criteria)
    found = [
        {
            "number": number,
            "text": c.text,
            "picture": shots[c.text].name if c.text in shots else None,
        }
        for number, c in enumerate(task.criteria, start=1)
        if is_found(c)
    ]
    return {"walked": any(u.role == Role.QA for u in units), "criteria": found}
