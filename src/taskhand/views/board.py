"""The terminal board's frame: the plan as `show --json` gives it (the web board's data), drawn
as rich columns, one per lifecycle status that has tasks, in the lifecycle's order, with a card
per task, under a line of the merge queue while candidates wait in it. What a task or an agent
wrote goes in as printable Text, never as markup.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from rich.console import Console, ConsoleOptions, Group, RenderResult
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from taskhand.pipeline.lifecycle import FINAL, STOPPED
from taskhand.plan.model import Status
from taskhand.state.life import Lifecycle
from taskhand.text import printable
from taskhand.views.queue import State as QueueState
from taskhand.views.stats import clock

COLUMN_WIDTH = 28  # a column's least width; a narrower terminal wraps the columns into rows
# The columns a person always owns stand out; a card waiting for a person does in any column.
PERSONS_TURN = frozenset({Lifecycle.DRAFT, Lifecycle.NEEDS_INPUT})
TaskData = Mapping[str, Any]  # a task as show --json gives it
_WAITING = "waiting"  # show --json's field: a person's move is due


def columns(data: Mapping[str, Any]) -> list[tuple[Lifecycle, list[TaskData]]]:
    """The columns the frame shows: each lifecycle status that has tasks, in the lifecycle's
    order (the web board's), with its tasks in the plan's order."""
    placed: dict[Lifecycle, list[TaskData]] = {status: [] for status in Lifecycle}
    for task in data.get("tasks", []):
        placed[Lifecycle(task["lifecycle"])].append(task)
    return [(status, tasks) for status, tasks in placed.items() if tasks]


def waiting_for_a_person(data: Mapping[str, Any]) -> int:
    """How many tasks wait for a person's move: what the web board's title counts."""
    return sum(1 for task in data.get("tasks", []) if task.get(_WAITING))


def header(data: Mapping[str, Any]) -> Text:
    """The plan's title, how many tasks it has, and how many wait for a person."""
    count, waiting = len(data.get("tasks", [])), waiting_for_a_person(data)
    shown = Text(printable(str(data.get("title") or data.get("path") or "")), style="bold")
    shown.append(f"  {count} task{'' if count == 1 else 's'}; ")
    waits = f"{waiting} wait{'s' if waiting == 1 else ''} for a person"
    shown.append(waits, style="bold magenta" if waiting else "dim")
    return shown


# How each state of a merge queue's entry stands out (views/queue.py's states).
QUEUE_STYLES: dict[str, str] = {
    QueueState.GATING: "bold yellow",
    QueueState.PASSED: "green",
    QueueState.FAILED: "red",
    QueueState.WAITS: "dim",
}


def merge_queue(data: Mapping[str, Any], now: datetime) -> Text | None:
    """The merge queue in a line, front first, while it has entries: `merge queue: T-003
    gating on top of T-001, T-002 0:12 · T-004 waits` (a gate's time so far)."""
    entries = data.get("queue") or []
    if not entries:
        return None
    shown = Text("merge queue: ", style="bold")
    for index, entry in enumerate(entries):
        if index:
            shown.append(" · ", style="dim")
        words = f"{printable(str(entry['task_id']))} {queue_text(entry, now)}"
        shown.append(words, style=QUEUE_STYLES.get(str(entry.get("state")), ""))
    return shown


def queue_text(entry: Mapping[str, Any], now: datetime) -> str:
    """Where an entry stands (`gating on top of T-001 0:12`), with its gate's time so far."""
    text = printable(str(entry.get("text") or entry.get("state") or ""))
    if entry.get("state") != QueueState.GATING:
        return text
    try:
        started = datetime.fromisoformat(str(entry.get("since")))
    except ValueError:
        return text
    return f"{text} {clock(max(0.0, (now - started).total_seconds()))}"


def card(
    task: TaskData,
    now: datetime,
    done: frozenset[str] = frozenset(),
    queued: Mapping[str, Any] | None = None,
) -> Text:
    """One task, as the web board's card shows it: id and kind, title, the working badge (role,
    time so far), where it stands in the merge queue (`queued`, its entry), what it waits for
    (a person's move, else its dependencies not in `done`), the dollars its units cost so far
    in the plan's latest run, its pull request."""
    shown = Text(printable(str(task["id"])), style="bold")
    if task.get("kind"):
        shown.append(f"  {printable(str(task['kind']))}", style="dim")
    shown.append("\n" + printable(str(task.get("title") or "")))
    if task.get("working"):
        shown.append("\n" + working_badge(task.get("unit"), now), style="bold yellow")
    if queued is not None:
        style = QUEUE_STYLES.get(str(queued.get("state")), "")
        shown.append(f"\nmerge queue: {queue_text(queued, now)}", style=style)
    waits = waits_on(task, done)
    if waits:
        shown.append("\n" + waits, style="bold magenta" if task.get(_WAITING) else "magenta")
    if task.get("cost"):
        shown.append(f"\n{dollars(float(task['cost']))} so far", style="dim")
    if task.get("pr"):
        shown.append("\nPR " + printable(str(task["pr"])), style="cyan")
    return shown


def waits_on(task: TaskData, done: frozenset[str]) -> str:
    """What the task waits on, as the web board's card says it: a person's move, else its
    dependencies not done yet (none while a unit works on it)."""
    if task.get("waits_for"):
        return f"waits for {printable(str(task['waits_for']))}"
    ahead = [str(d) for d in task.get("dependencies") or [] if d not in done]
    return f"waits on {printable(', '.join(ahead))}" if ahead and not task.get("working") else ""


def working_badge(unit: Mapping[str, Any] | None, now: datetime) -> str:
    """The badge of a task a unit works on: the unit's role and how long it has run (just
    "working" between two units)."""
    if not unit:
        return "> working"
    role = printable(str(unit.get("role") or "a unit"))
    try:
        started = datetime.fromisoformat(str(unit.get("started")))
    except ValueError:
        return f"> {role} working"
    seconds = max(0.0, (now - started).total_seconds())
    return f"> {role} {clock(seconds)}"


def dollars(cost: float) -> str:
    """API-equivalent dollars as `stats` shows them: cents are too coarse for cheap units."""
    return f"${cost:.2f}" if cost >= 1 else f"${cost:.4f}"


def column(
    status: Lifecycle,
    tasks: list[TaskData],
    now: datetime,
    done: frozenset[str] = frozenset(),
    queued: Mapping[str, Mapping[str, Any]] | None = None,
) -> Panel:
    """A status's column: its name and count on the border, its cards a blank line apart;
    `queued` holds the merge queue's entries by task."""
    cards: list[Text] = []
    for task in tasks:
        drawn = card(task, now, done, (queued or {}).get(task["id"]))
        cards += [Text(""), drawn] if cards else [drawn]
    title = Text(f"{status} ({len(tasks)})", style="bold")
    return Panel(Group(*cards), title=title, title_align="left", border_style=_style(status))


def _style(status: Lifecycle) -> str:
    if status in FINAL:
        return "green"
    if status in STOPPED:
        return "red"
    return "magenta" if status in PERSONS_TURN else "blue"


@dataclass(frozen=True)
class Frame:
    """The whole board at `now`; `note` is a line under it (when it was read, a plan that
    cannot be read now). Lays its columns out for the width it is drawn at, so a terminal
    resized (a tmux pane split) gets as many columns side by side as fit."""

    data: Mapping[str, Any]
    now: datetime
    note: Text | None = None

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield header(self.data)
        line = merge_queue(self.data, self.now)
        if line is not None:
            yield line
        shown = columns(self.data)
        done = frozenset(t["id"] for t in self.data.get("tasks", []) if t["status"] == Status.DONE)
        queued = {str(e["task_id"]): e for e in self.data.get("queue") or []}
        across = max(1, min(len(shown), options.max_width // COLUMN_WIDTH))
        for start in range(0, len(shown), across):
            row = Table.grid(expand=True)
            for _ in range(across):
                row.add_column(ratio=1)
            panels = [
                column(s, ts, self.now, done, queued) for s, ts in shown[start : start + across]
            ]
            row.add_row(*panels, *[Text("")] * (across - len(panels)))
            yield row
        if not shown:
            yield Text("no tasks", style="dim")
        if self.note is not None:
            yield self.note
