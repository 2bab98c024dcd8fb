"""Watching a run: its events as lines for a person, or as JSON lines for a program.

On a terminal a status line at the bottom shows the task, stage, attempt and elapsed time.
Text from the plan and the agents is printed through `terminal`, never raw.
Output is only a view: a reader that goes away (`taskhand run PLAN | head`) never stops a run.
"""

from __future__ import annotations

import errno
import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TextIO

from rich.console import Console
from rich.status import Status as Spinner

from taskhand.state.records import Event
from taskhand.text import dumps
from taskhand.views.terminal import rich_text

# A pipe whose reader left, and a terminal that was closed (a hung-up SSH session).
GONE = (errno.EPIPE, errno.EIO)


@contextmanager
def reader_may_leave() -> Iterator[None]:
    """Writes to stdout in the block may find its reader gone: from then on what taskhand
    prints goes to /dev/null, and the work goes on (and exits with its own code)."""
    try:
        yield
    except OSError as exc:
        if exc.errno not in GONE:
            raise
        discard_stdout()


def discard_stdout() -> None:
    """Point stdout at /dev/null, so later writes, and the flush at exit, succeed."""
    try:
        fd = sys.stdout.fileno()
    except (OSError, ValueError):
        return  # not a real file (a test's capture): nothing is left to flush into a pipe
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, fd)
    finally:
        os.close(devnull)


class _Console(Console):
    """A rich Console that goes quiet when its reader leaves; rich's own exits the program."""

    def on_broken_pipe(self) -> None:
        self.quiet = True
        discard_stdout()


class JsonLines:
    """Every event as one JSON object per line on stdout."""

    def __init__(self, out: TextIO | None = None) -> None:
        self.out = out or sys.stdout

    def __call__(self, event: Event) -> None:
        with reader_may_leave():
            self.write(event)

    def write(self, event: Event) -> None:
        record: dict[str, Any] = {
            "id": event.id,
            "ts": event.ts,
            "kind": event.kind,
            "task_id": event.task_id,
            **event.data,
        }
        self.out.write(dumps(record) + "\n")
        self.out.flush()

    def close(self) -> None:
        pass


class Progress:
    """Readable lines: TaskTrack step and exit messages verbatim, and what each attempt did."""

    def __init__(self, console: Console | None = None) -> None:
        self.console = console or _Console(highlight=False, soft_wrap=True)
        self.live = self.console.is_terminal
        self.spinner: Spinner | None = None
        self.task: str | None = None
        self.stage = "starting"
        self.attempt = 0
        self.since = time.monotonic()

    def __call__(self, event: Event) -> None:
        line = self.render(event)
        with reader_may_leave():
            if line is not None:
                self.console.print(rich_text(line))  # one line per event, whatever it quotes
            if self.live:
                self.refresh()

    def render(self, event: Event) -> str | None:
        data, task = event.data, event.task_id
        kind = event.kind
        if kind == "step":
            message = str(data["message"])
            self.stage = message.removeprefix("TaskTrack STEP: ")
            return message
        if kind == "attempt_started":
            self.task, self.attempt, self.since = task, int(data["attempt"]), time.monotonic()
            return f"  {task}: attempt {data['attempt']}"
        if kind == "unit_started" and data.get("role") == "evaluator":
            self.stage = f"review ({data.get('lens') or 'general'})"
            return None
        if kind == "unit_finished":
            who = "reviewer" if data.get("role") == "evaluator" else "agent"
            return (
                f"  {task}: {who} finished ({data['case']}) in {data['seconds']}s, "
                f"{data['tokens_in']} tokens in, {data['tokens_out']} out"
            )
        if kind == "verdict":
            lens = "" if data.get("lens") in (None, "general") else f" ({data['lens']})"
            if data.get("verdict") == "accept":
                return f"  {task}: reviewer{lens} accepted"
            return f"  {task}: reviewer{lens} rejected as {data['category']}: {data['concern']}"
        if kind == "reviewer_write_violation":
            return (
                f"  {task}: the {data['lens']} reviewer changed the candidate "
                f"(reviewer_write_violation); its verdict does not count"
            )
        if kind == "review_failed":
            return f"  {task}: {_first_line(data['reason'])}"
        if kind == "gate":
            mark = "passed" if data["ok"] else "FAILED"
            return f"  {task}: gate {data['name']} {mark}: {_first_line(data['detail'])}"
        if kind == "attempt_failed":
            return f"  {task}: attempt not accepted: {_first_line(data['reason'])}"
        if kind == "attempt_rejected":
            return f"  {task}: attempt rejected by the reviewer"
        if kind == "integrated":
            return f"  {task}: integrated as {str(data['sha'])[:12]}"
        if kind == "warning":
            return f"warning: {data['message']}"
        if kind in ("run_started", "run_resumed"):
            verb = "started" if kind == "run_started" else "resumed"
            return f"run {event.run_id} {verb}"
        if kind == "attempt_interrupted":
            return f"  {task}: attempt {data['attempt']} was interrupted; it will be redone"
        return None

    def refresh(self) -> None:
        text = (
            f"{self.task or '-'}  {self.stage}  attempt {self.attempt}  "
            f"{time.monotonic() - self.since:.0f}s"
        )
        if self.spinner is None:
            self.spinner = self.console.status(rich_text(text))
            self.spinner.start()
        else:
            self.spinner.update(rich_text(text))

    def close(self) -> None:
        if self.spinner is not None:
            with reader_may_leave():
                self.spinner.stop()


def _first_line(text: object) -> str:
    lines = str(text).strip().splitlines()
    return lines[0] if lines else ""
