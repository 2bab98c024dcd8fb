"""What a run's agent units consumed: usage summed over units, and the per-task figures that
`taskhand stats` shows (units, reviews, prompt bytes, agent time, tokens, dollars).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

from taskhand.plan.model import id_key
from taskhand.state.records import UnitRow
from taskhand.unit import Role, Usage

TOTAL = "TOTAL"  # the task id of the row that sums every task


@dataclass(frozen=True)
class TaskStats:
    task_id: str
    units: int  # units started, finished or not
    reviews: int  # of those, the reviewers' units
    prompt_bytes: int  # the prompts of all those units
    seconds: float  # agent time of finished units
    tokens_in: int
    tokens_out: int
    tokens_cached: int
    cost: float
    estimated: bool


@dataclass(frozen=True)
class Stats:
    tasks: list[TaskStats]
    total: TaskStats

    def as_json(self) -> dict[str, Any]:
        return {"tasks": [asdict(t) for t in self.tasks], "total": asdict(self.total)}


def usage(units: list[UnitRow]) -> Usage:
    """What the finished units among `units` consumed (a running one has used nothing yet)."""
    return sum((u.usage for u in units if u.ended is not None), Usage())


def stats(task_ids: list[str], units: list[UnitRow]) -> Stats:
    """Figures for every task in `task_ids` or with a unit, in id order, and their total."""
    by_task: dict[str, list[UnitRow]] = {t: [] for t in task_ids}
    for unit in units:
        by_task.setdefault(unit.task_id, []).append(unit)
    tasks = [_task_stats(t, by_task[t]) for t in sorted(by_task, key=id_key)]
    # Summed in the order grouped, as earlier versions did: floats add up the same.
    return Stats(tasks, _task_stats(TOTAL, [u for us in by_task.values() for u in us]))


def _task_stats(task_id: str, units: list[UnitRow]) -> TaskStats:
    finished = [(u, u.ended) for u in units if u.ended is not None]
    seconds = round(sum(_seconds_between(u.started, ended) for u, ended in finished), 3)
    s = usage(units)
    counts = (s.tokens_in, s.tokens_out, s.tokens_cached, s.cost, s.estimated)
    reviews = sum(u.role is Role.EVALUATOR for u in units)
    prompt_bytes = sum(u.prompt_bytes for u in units)
    return TaskStats(task_id, len(units), reviews, prompt_bytes, seconds, *counts)


def _seconds_between(start: str, end: str) -> float:
    return (datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds()
