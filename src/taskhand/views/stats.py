"""What `taskhand stats` shows: a run's figures per task and in total, as a table whose
columns are declared once here.
"""

from __future__ import annotations

from collections.abc import Callable

from rich.table import Table

from taskhand.state.accounting import Stats, TaskStats
from taskhand.views.terminal import rich_text

# The columns: each heading, and how one task's figures (or the total's) fill it.
COLUMNS: list[tuple[str, Callable[[TaskStats], object]]] = [
    ("task", lambda row: row.task_id),
    ("units", lambda row: row.units),
    ("reviews", lambda row: row.reviews),
    ("prompt KB", lambda row: f"{row.prompt_bytes / 1024:.1f}"),
    ("agent s", lambda row: f"{row.seconds:.1f}"),
    ("tokens in", lambda row: row.tokens_in),
    ("tokens out", lambda row: row.tokens_out),
    ("cached", lambda row: row.tokens_cached),
    ("dollars", lambda row: f"{row.cost:.4f}" + (" (est.)" if row.estimated else "")),
]


def table(run_id: str, figures: Stats) -> Table:
    """Every task's row, then the total's."""
    shown = Table(*(heading for heading, _ in COLUMNS), title=rich_text(f"run {run_id}"), box=None)
    for row in [*figures.tasks, figures.total]:
        shown.add_row(*(rich_text(cell(row)) for _, cell in COLUMNS))
    return shown
