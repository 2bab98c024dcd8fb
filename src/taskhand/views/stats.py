"""What `taskhand stats` shows: per task, its units by role, agent time, prompt size, tokens
(cache reads, cache writes and thinking apart), API-equivalent dollars and pull request, and a
total row; then per agent and model, its units, tokens and dollars as it reported them; for one
run or summed over every run of a plan. The columns are declared once here.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TypeVar

from rich.table import Table

from taskhand.pipeline import standing
from taskhand.plan import formats
from taskhand.state import accounting
from taskhand.state.accounting import AgentStats, Stats, TaskStats
from taskhand.state.deliveries import RUN
from taskhand.state.records import DeliveryState, Run, UnitRow
from taskhand.state.store import Store
from taskhand.text import shorten
from taskhand.unit import Usage
from taskhand.views import happened
from taskhand.views.terminal import rich_text

TITLE_CHARS = 48


def pr_of(store: Store, run_id: str, task_id: str) -> str | None:
    """The address of the pull request that delivered `task_id` in run `run_id`, if any: its
    own, else the run's (one pull request per run)."""
    for delivered in (task_id, RUN):
        row = store.delivery(run_id, delivered)
        if row is not None and row.state is DeliveryState.OPENED and row.pr_url:
            return row.pr_url
    return None


def figures(store: Store, runs: list[Run]) -> Stats:
    """Every task's figures summed over `runs` (runs of one plan), with the plan's titles
    as its files say now and each task's newest pull request."""
    task_ids: dict[str, None] = {}
    units = []
    for run in runs:
        task_ids.update(dict.fromkeys(store.task_states(run.id)))
        units += store.units(run.id)
    prs: dict[str, str] = {}
    for run in sorted(runs, key=lambda r: (r.created, r.id), reverse=True):
        for task_id in task_ids:
            pr = None if task_id in prs else pr_of(store, run.id, task_id)
            if pr:
                prs[task_id] = pr
    titles, statuses, kinds = _titles({(r.plan_path, r.repo) for r in runs})
    shown = accounting.stats(list(task_ids), units, titles, prs, statuses)
    moves = happened.moves_of(store, [r.id for r in runs])
    keys = {t: str(Path(r.plan_path).resolve()) for r in runs for t in store.task_states(r.id)}
    by_task: dict[str, list[UnitRow]] = {}
    for unit in units:
        by_task.setdefault(unit.task_id, []).append(unit)
    told = [
        replace(
            row,
            kind=kinds.get(row.task_id, ""),
            happened=happened.story(
                store,
                keys.get(row.task_id, ""),
                row.task_id,
                moves.get(row.task_id, []),
                by_task.get(row.task_id, []),
            ),
        )
        for row in shown.tasks
    ]
    return replace(shown, tasks=told)


def _titles(
    plans: set[tuple[str, str]],
) -> tuple[dict[str, str], dict[str, str], dict[str, str]]:
    """The tasks' titles and kinds from the plans' files, and where each stands now (the
    reader of `show` and the board); none from a plan moved or unreadable."""
    titles: dict[str, str] = {}
    statuses: dict[str, str] = {}
    kinds: dict[str, str] = {}
    for path, repo in sorted(plans):
        plan, _ = formats.load(Path(path))
        if plan is None:
            continue
        titles.update({t.id: t.title for t in plan.tasks})
        kinds.update({t.id: t.kind for t in plan.tasks if t.kind})
        _, found = standing.read(plan, repo=Path(repo))
        statuses.update({t: str(s.life.status) for t, s in found.items()})
    return titles, statuses, kinds


def clock(seconds: float) -> str:
    """Agent time as m:ss, or h:mm:ss from an hour."""
    whole = round(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02}:{secs:02}" if hours else f"{minutes}:{secs:02}"


def count(n: int) -> str:
    """A token count as people read it: 950, 25.0k, 1.2M."""
    if n < 1000:
        return str(n)
    return f"{n / 1000:.1f}k" if n < 1_000_000 else f"{n / 1_000_000:.1f}M"


def dollars(row: TaskStats | Usage) -> str:
    """API-equivalent dollars; cents are too coarse for the cheap units."""
    shown = f"${row.cost:.2f}" if row.cost >= 1 or row.cost == 0 else f"${row.cost:.4f}"
    return shown + (" (est.)" if row.estimated else "")


def by_role(row: TaskStats) -> str:
    return ", ".join(f"{role} {n}" for role, n in row.roles.items()) or "-"


# The columns: each heading, and how one task's figures (or the total's) fill it.
COLUMNS: list[tuple[str, Callable[[TaskStats], object]]] = [
    ("task", lambda row: row.task_id),
    ("title", lambda row: shorten(row.title, TITLE_CHARS)),
    ("kind", lambda row: row.kind or "-"),
    ("status", lambda row: row.status or "-"),
    ("what happened", lambda row: row.happened or "-"),
    ("units", lambda row: row.units),
    ("by role", by_role),
    ("agent time", lambda row: clock(row.seconds)),
    ("prompt KB", lambda row: f"{row.prompt_bytes / 1024:.1f}"),
    ("tokens in", lambda row: count(row.tokens_in)),
    ("tokens out", lambda row: count(row.tokens_out)),
    ("cache reads", lambda row: count(row.tokens_cached)),
    ("cache writes", lambda row: count(row.tokens_cache_write)),
    ("thinking", lambda row: count(row.tokens_thinking)),
    ("API-equivalent", dollars),
    ("PR", lambda row: handle(row.pr) if row.pr else "-"),
]
Cell = TypeVar("Cell")  # how a column draws its row
# Shown only when some unit reported them: most agents report neither.
OPTIONAL = {
    "cache writes": lambda row: row.tokens_cache_write,
    "thinking": lambda row: row.tokens_thinking,
}


# Per agent: the same figures, as each agent reported them (dollars its own, or estimated).
AGENT_COLUMNS: list[tuple[str, Callable[[AgentStats], object]]] = [
    ("agent", lambda row: row.agent),
    ("model", lambda row: row.model or "-"),
    ("units", lambda row: row.units),
    ("tokens in", lambda row: count(row.usage.tokens_in)),
    ("tokens out", lambda row: count(row.usage.tokens_out)),
    ("cache reads", lambda row: count(row.usage.tokens_cached)),
    ("cache writes", lambda row: count(row.usage.tokens_cache_write)),
    ("thinking", lambda row: count(row.usage.tokens_thinking)),
    ("API-equivalent", lambda row: dollars(row.usage)),
]


def handle(url: str) -> str:
    """A pull request in a table cell: its number (#12), which no narrow terminal cuts; the
    whole address is listed under the table (`addresses`)."""
    number = re.search(r"/(\d+)/?$", url)
    return f"#{number.group(1)}" if number else "below"


def addresses(shown_figures: Stats) -> list[str]:
    """Each pull request's whole address, after the tasks it delivered: lines printed as they
    are, never cut to a terminal's width."""
    tasks: dict[str, list[str]] = {}
    for row in shown_figures.tasks:
        if row.pr:
            tasks.setdefault(row.pr, []).append(row.task_id)
    return [f"{handle(url)} {', '.join(ids)}: {url}" for url, ids in tasks.items()]


def agents_table(shown_figures: Stats) -> Table | None:
    """One row per agent and model that ran a unit; None when none has."""
    if not shown_figures.agents:
        return None
    columns = _reported(AGENT_COLUMNS, shown_figures.total)
    shown = Table(*(name for name, _ in columns), title="by agent", box=None)
    for row in shown_figures.agents:
        shown.add_row(*(rich_text(cell(row)) for _, cell in columns))
    return shown


def table(heading: str, shown_figures: Stats) -> Table:
    """Every task's row, then the total's."""
    total = shown_figures.total
    columns = _reported(COLUMNS, total)
    shown = Table(*(name for name, _ in columns), title=rich_text(heading), box=None)
    for row in [*shown_figures.tasks, total]:
        shown.add_row(*(rich_text(cell(row)) for _, cell in columns))
    return shown


def _reported(columns: list[tuple[str, Cell]], total: TaskStats) -> list[tuple[str, Cell]]:
    """The columns, less the OPTIONAL ones no unit reported."""
    return [(name, cell) for name, cell in columns if name not in OPTIONAL or OPTIONAL[name](total)]
