"""The terminal board (`taskhand watch`, `taskhand board --tui`): the plan's columns drawn with
rich from what the web board reads, drawn again as the plan's events arrive and each second (a
working unit's time ticks), in place in the terminal, so it works in tmux. Ctrl-C ends it.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.live import Live
from rich.text import Text

from taskhand.board import reader
from taskhand.errors import UserError
from taskhand.text import printable
from taskhand.views.board import Frame

POLL_SECONDS = 0.5  # how often it looks for the plan's new events
TICK_SECONDS = 1.0  # how often it draws again without any: the working time ticks
READ_SECONDS = 10.0  # how often it reads the plan without any: a person may edit its files


def draw_once(plan_root: Path, repo: Path, console: Console) -> None:
    """One frame, printed: for scripts, pipes and tests."""
    console.print(Frame(reader.plan_data(plan_root, repo), _now()))


def never() -> bool:
    return False


@dataclass
class _Watched:
    """What the live board last read, and from which event on it reads next."""

    plan_root: Path
    repo: Path
    after: int = 0  # the newest event seen
    data: dict[str, Any] = field(default_factory=dict)
    read_at: datetime = field(default_factory=lambda: _now())
    trouble: str = ""  # why the latest read failed; the board keeps the last good one

    def start(self) -> None:
        """Read once; a plan that cannot be read at the start is the command's error."""
        self.after = reader.newest_event(self.plan_root, self.repo)
        self.data, self.read_at = reader.plan_data(self.plan_root, self.repo), _now()

    def moved(self) -> bool:
        """Whether events arrived since the last look (the plan is read again if so)."""
        try:
            found = reader.events_after(self.plan_root, self.repo, self.after)
        except sqlite3.Error as exc:  # the store busy or being moved: look again next time
            self.trouble = f"cannot read the events now: {exc}"
            return False
        if found:
            self.after = found[-1].id
        return bool(found)

    def read_again(self) -> None:
        try:
            self.data = reader.plan_data(self.plan_root, self.repo)
        except (UserError, sqlite3.Error) as exc:  # an edit half made: show it, keep watching
            self.trouble = f"cannot read the plan now: {exc}"
        else:
            self.trouble = ""
        self.read_at = _now()

    def frame(self) -> Frame:
        note = Text(f"read at {self.read_at.astimezone():%H:%M:%S}; Ctrl-C ends", style="dim")
        if self.trouble:
            note = Text(printable(self.trouble), style="bold red")
        return Frame(self.data, _now(), note)


def watch(
    plan_root: Path,
    repo: Path,
    console: Console,
    *,
    screen: bool = False,
    poll: float = POLL_SECONDS,
    tick: float = TICK_SECONDS,
    reread: float = READ_SECONDS,
    stop: Callable[[], bool] = never,
) -> None:
    """Draw the board live until Ctrl-C (or `stop` says so, looked at before each poll): it
    looks for events each `poll` seconds, draws each `tick` and reads the plan each `reread`.
    `screen`: on the terminal's alternate screen, given back on exit, as full-screen programs
    do; else in place, where the last frame stays in the scrollback."""
    watched = _Watched(plan_root, repo)
    watched.start()
    last_read = last_drawn = time.monotonic()
    try:
        with Live(
            watched.frame(),
            console=console,
            screen=screen,
            auto_refresh=False,  # drawn when something changed or the clock ticked, not 4x/s
            redirect_stdout=False,
            redirect_stderr=False,
        ) as live:
            while not stop():
                time.sleep(poll)
                if watched.moved() or time.monotonic() - last_read >= reread:
                    watched.read_again()
                    last_read = time.monotonic()
                elif time.monotonic() - last_drawn < tick:
                    continue
                live.update(watched.frame(), refresh=True)
                last_drawn = time.monotonic()
    except KeyboardInterrupt:  # the way to leave it: no traceback, no error
        return


def _now() -> datetime:
    return datetime.now(UTC)
