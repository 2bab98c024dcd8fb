"""What a run's agent units consumed: usage summed over units, and the per-task figures that
`taskhand stats` shows (units by role, agent time, prompt bytes, tokens, dollars, the PR).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any

from taskhand.plan.model import id_key
from taskhand.state.records import UnitRow
from taskhand.unit import Role, Usage

TOTAL = "TOTAL"  # the task id of the row that sums every task
# Roles in the order a task meets them, so "planner 2, implementer 3, qa 1" reads as its story.
ROLE_ORDER = (
    Role.WRITER,
    Role.EXPLORER,
    Role.PLANNER,
    Role.DESIGNER,
    Role.TESTER,
    Role.IMPLEMENTER,
    Role.EVALUATOR,
    Role.QA,
    Role.JUDGE,
)

JUDGING = {role.value for role in Role if role.judges}


@dataclass(frozen=True)
class TaskStats:
    task_id: str
    units: int  # units started, finished or not
    reviews: int  # of those, the units that judge a candidate (reviewers, qa, the judge)
    prompt_bytes: int  # the prompts of all those units
    seconds: float  # agent time of finished units
    tokens_in: int
    tokens_out: int
    tokens_cached: int  # prompt-cache reads, among tokens_in
    cost: float  # API-equivalent dollars: what the tokens cost on the API
    estimated: bool  # some unit's cost came from a price table
    title: str = ""
    roles: dict[str, int] = field(default_factory=dict)  # units per role, in ROLE_ORDER
    pr: str | None = None  # the pull request's address, once delivered
    status: str = ""  # where the task stands now, as `show` and the board say
    tokens_cache_write: int = 0  # prompt-cache writes, among tokens_in
    tokens_thinking: int = 0  # thinking (reasoning) tokens, among tokens_out
    kind: str = ""  # the task's kind (ui, logic, vague), as its file says
    happened: str = ""  # what happened on its way, in a line (views/happened.py)


@dataclass(frozen=True)
class AgentStats:
    """What one agent on one model consumed over the units it ran, as it reported it."""

    agent: str
    model: str | None  # None: the agent's own choice
    units: int
    usage: Usage


@dataclass(frozen=True)
class Stats:
    tasks: list[TaskStats]
    total: TaskStats
    agents: list[AgentStats] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {
            "tasks": [asdict(t) for t in self.tasks],
            "total": asdict(self.total),
            "agents": [asdict(a) for a in self.agents],
        }


def usage(units: list[UnitRow]) -> Usage:
    """What the finished units among `units` consumed (a running one has used nothing yet)."""
    return sum((u.usage for u in units if u.ended is not None), Usage())


def stats(
    task_ids: list[str],
    units: list[UnitRow],
    titles: Mapping[str, str] | None = None,
    prs: Mapping[str, str] | None = None,
    statuses: Mapping[str, str] | None = None,
) -> Stats:
    """Figures for every task in `task_ids` or with a unit, in id order, and their total.

    `units` may come from several runs of one plan: a task's figures sum them all.
    """
    titles, prs, statuses = titles or {}, prs or {}, statuses or {}
    by_task: dict[str, list[UnitRow]] = {t: [] for t in task_ids}
    for unit in units:
        by_task.setdefault(unit.task_id, []).append(unit)
    tasks = [
        _task_stats(t, by_task[t], titles.get(t, ""), prs.get(t), statuses.get(t, ""))
        for t in sorted(by_task, key=id_key)
    ]
    # Summed in the order grouped, as earlier versions did: floats add up the same.
    total = _task_stats(TOTAL, [u for us in by_task.values() for u in us])
    return Stats(tasks, total, by_agent(units))


def by_agent(units: list[UnitRow]) -> list[AgentStats]:
    """Each agent and model's units and usage, in the order they first ran."""
    grouped: dict[tuple[str, str | None], list[UnitRow]] = {}
    for unit in units:
        grouped.setdefault((unit.agent, unit.model), []).append(unit)
    return [AgentStats(a, m, len(us), usage(us)) for (a, m), us in grouped.items()]


def _task_stats(
    task_id: str, units: list[UnitRow], title: str = "", pr: str | None = None, status: str = ""
) -> TaskStats:
    finished = [(u, u.ended) for u in units if u.ended is not None]
    seconds = round(sum(_seconds_between(u.started, ended) for u, ended in finished), 3)
    s = usage(units)
    counts = (s.tokens_in, s.tokens_out, s.tokens_cached, s.cost, s.estimated)
    reviews = sum(str(u.role) in JUDGING for u in units)
    prompt_bytes = sum(u.prompt_bytes for u in units)
    figures = (len(units), reviews, prompt_bytes, seconds, *counts)
    return TaskStats(
        task_id,
        *figures,
        title=title,
        roles=_roles(units),
        pr=pr,
        status=status,
        tokens_cache_write=s.tokens_cache_write,
        tokens_thinking=s.tokens_thinking,
    )


def _roles(units: list[UnitRow]) -> dict[str, int]:
    """How many units each role ran, in the order a task meets the roles."""
    counted = {role.value: 0 for role in ROLE_ORDER}
    for unit in units:
        counted[str(unit.role)] = counted.get(str(unit.role), 0) + 1
    return {role: n for role, n in counted.items() if n}


def _seconds_between(start: str, end: str) -> float:
    return (datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds()
