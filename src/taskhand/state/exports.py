"""What a run leaves beside the database for people and other tools: its log as events.jsonl
and a Tilth-style task-status.json, each replaced whole so that a reader never sees half a file.
"""

from __future__ import annotations

import json
from pathlib import Path

from taskhand.plan.formats.files import write_atomic
from taskhand.plan.formats.markdown import TilthStatus
from taskhand.plan.model import Status
from taskhand.state.events import Event
from taskhand.state.records import TaskState
from taskhand.text import dumps

# What Tilth calls a status; OPEN and BUSY read as pending there, written as no entry at all.
TILTH_STATUS = {
    Status.DONE: TilthStatus.DONE,
    Status.FAIL: TilthStatus.FAILED,
    Status.WAIT: TilthStatus.WAITING,
}


def write_events(events: list[Event], path: Path) -> None:
    """The log as one JSON object per line, written as the CLI prints JSON: a person may well
    `cat` it to a terminal."""
    _write_atomically(path, "".join(dumps(e.as_json()) + "\n" for e in events))


def write_task_status(states: dict[str, TaskState], path: Path) -> None:
    """A flat map of the finished or waiting tasks to their Tilth status, in id order."""
    flat = {t: TILTH_STATUS[s.status] for t, s in states.items() if s.status in TILTH_STATUS}
    _write_atomically(path, json.dumps(flat, indent=2, ensure_ascii=False) + "\n")


def _write_atomically(path: Path, text: str) -> None:
    """Replace an export whole, readable by its owner only: its events quote what agents and
    checks printed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, text, mode=0o600)
