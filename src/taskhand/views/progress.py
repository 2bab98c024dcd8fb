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
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TextIO

from rich.console import Console
from rich.status import Status as Spinner

from taskhand.state.events import (
    AttemptStarted,
    Event,
    EventKind,
    GateChecked,
    Message,
    OutsideChange,
    Pruned,
    TaskMoved,
    UnitFinished,
    UnitStarted,
    decode,
)
from taskhand.state.ledger import VerdictNote
from taskhand.state.life import Lifecycle
from taskhand.text import dumps, printable
from taskhand.unit import Role
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
        self.out.write(dumps(event.as_json()) + "\n")
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
        """The event's line (None: the log keeps it, but it is not shown as it passes), after
        the status line has followed it."""
        payload = decode(event)
        if isinstance(payload, Message) and event.kind is EventKind.STEP:
            self.stage = payload.message.removeprefix("TaskTrack STEP: ")
        elif isinstance(payload, AttemptStarted):
            self.task, self.attempt, self.since = event.task_id, payload.attempt, time.monotonic()
        elif isinstance(payload, UnitStarted) and payload.role is Role.EVALUATOR:
            self.stage = f"review ({payload.lens or 'general'})"
        elif isinstance(payload, UnitStarted) and payload.role is not Role.IMPLEMENTER:
            self.stage = str(payload.role)
        show = LINES[event.kind]
        return None if show is None else show(payload, event)

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


def _unit_finished(p: UnitFinished, e: Event) -> str:
    who = {Role.EVALUATOR: "reviewer", Role.IMPLEMENTER: "agent"}.get(p.role, str(p.role))
    return (
        f"  {e.task_id}: {who} finished ({p.case}) in {p.seconds}s, "
        f"{p.tokens_in} tokens in, {p.tokens_out} out"
    )


def _verdict(p: VerdictNote, e: Event) -> str:
    # qa's and the judge's verdicts are logged under their role's name, as a lens.
    who = p.lens if p.lens in (Role.QA, Role.JUDGE) else "reviewer"
    lens = "" if p.lens in ("general", Role.QA, Role.JUDGE) else f" ({p.lens})"
    if p.accepted:
        return f"  {e.task_id}: {who}{lens} accepted"
    return f"  {e.task_id}: {who}{lens} rejected as {p.category}: {p.concern}"


def _gate(p: GateChecked, e: Event) -> str:
    mark = "passed" if p.ok else "FAILED"
    return f"  {e.task_id}: gate {p.name} {mark}: {_first_line(p.detail)}"


# How each kind of event shows as it passes: the line for its payload, or None for the kinds
# the log keeps but a person watching need not read. Every kind is listed, so a new one is a
# decision here, not an accident.
LINES: dict[EventKind, Callable[[Any, Event], str | None] | None] = {
    EventKind.RUN_STARTED: lambda p, e: (
        f"run {e.run_id} started"
        + (
            f" from a snapshot of your checkout ({p.base[:12]}, kept as {p.snapshot})"
            if p.snapshot
            else ""
        )
    ),
    EventKind.RUN_RESUMED: lambda p, e: f"run {e.run_id} resumed",
    EventKind.RUN_FINISHED: None,  # the last step says how, and the CLI sums it up
    EventKind.RUN_INTERRUPTED: None,  # the CLI says how to resume it
    EventKind.STEP: lambda p, e: p.message,
    EventKind.WARNING: lambda p, e: f"warning: {p.message}",
    EventKind.PLAN_CHANGED: None,
    EventKind.ATTEMPT_STARTED: lambda p, e: f"  {e.task_id}: attempt {p.attempt}",
    EventKind.ATTEMPT_RESUMED: None,
    EventKind.ATTEMPT_PAUSED: None,
    EventKind.ATTEMPT_INTERRUPTED: lambda p, e: (
        f"  {e.task_id}: attempt {p.attempt} was interrupted; it will be redone"
    ),
    EventKind.ATTEMPT_FAILED: lambda p, e: (
        f"  {e.task_id}: attempt not accepted: {_first_line(p.reason)}"
    ),
    EventKind.ATTEMPT_REJECTED: lambda p, e: f"  {e.task_id}: attempt rejected by the reviewer",
    EventKind.ATTEMPT_REQUEUED: lambda p, e: (  # "requeued after the landing of T-002 ..."
        f"  {e.task_id}: attempt {p.attempt} {_first_line(p.reason)}"
    ),
    EventKind.UNIT_STARTED: None,  # the status line shows it
    EventKind.UNIT_FINISHED: _unit_finished,
    EventKind.GATE: _gate,
    EventKind.VERDICT: _verdict,
    EventKind.REVIEW_FAILED: lambda p, e: f"  {e.task_id}: {_first_line(p.reason)}",
    EventKind.REVIEWER_WRITE_VIOLATION: lambda p, e: (
        f"  {e.task_id}: the {p.lens} reviewer changed the candidate "
        f"({EventKind.REVIEWER_WRITE_VIOLATION}); its verdict does not count"
    ),
    EventKind.INTEGRATED: lambda p, e: f"  {e.task_id}: integrated as {p.sha[:12]}",
    EventKind.REPLAYED: lambda p, e: (
        f"  {e.task_id}: replayed onto {p.onto[:12]} (another task landed), checks again"
    ),
    EventKind.QUEUED: lambda p, e: (
        f"  {e.task_id}: joins the merge queue"
        + (f" behind {', '.join(p.ahead)}" if p.ahead else "")
    ),
    EventKind.GATING: lambda p, e: (
        f"  {e.task_id}: checks"
        + (f" on top of {', '.join(p.on)}" if p.on else f" on {p.onto[:12]}")
        + " (the tree it would land as)"
    ),
    EventKind.GATED: lambda p, e: (
        None
        if p.ok or not p.current
        else f"  {e.task_id}: checks failed on top of {', '.join(p.on) or 'the run branch'}"
    ),
    EventKind.TASK_HELD: lambda p, e: (
        f"  {e.task_id}: waits for {', '.join(p.behind)}: both may change "
        f"{', '.join(p.paths[:3])}{f' and {len(p.paths) - 3} more' if p.paths[3:] else ''}"
    ),
    EventKind.TASK_CONCLUDED: None,  # the steps around it say so
    EventKind.TASK_REOPENED: None,
    EventKind.TASK_ANSWERED: None,
    EventKind.OUTSIDE_CHANGE: lambda p, e: _outside(p, e),
    EventKind.VIOLATION: None,
    EventKind.TASK_MOVED: lambda p, e: _moved(p, e),  # the lifecycle's moves, not the default's
    EventKind.QUESTION_ASKED: lambda p, e: (
        f"  {e.task_id}: asks Q{p.number}: {_first_line(p.text)} "
        f"({', '.join(f'({chr(97 + i)}) {o}' for i, o in enumerate(p.options))})"
    ),
    EventKind.DELIVERED: lambda p, e: f"  {e.task_id or 'the run'}: pull request {p.url}",
    EventKind.DISPOSED: None,  # `taskhand integration show` lists them
    EventKind.WORKSPACE_PRUNED: lambda p, e: _pruned(p, e),
}

# The default pipeline's own statuses: its moves among them are what the steps already say.
_QUIET = frozenset({Lifecycle.READY, Lifecycle.IMPLEMENTING, Lifecycle.REVIEW, Lifecycle.DONE})


def _moved(p: TaskMoved, e: Event) -> str | None:
    if p.before in _QUIET and p.after in _QUIET:
        return None
    waits = " (waits for a person)" if p.waiting else ""
    return f"  {e.task_id}: {p.before} -> {p.after}{waits}"


def _outside(p: OutsideChange, e: Event) -> str:
    more = f" and {len(p.changes) - 1} more" if p.changes[1:] else ""
    first = p.changes[0] if p.changes else "something"
    return f"  {e.task_id or 'the run'}: outside the workspace during {p.during}: {first}{more}"


def _pruned(p: Pruned, e: Event) -> str:
    names = [printable(name, name=True) for name in [*p.folders, *p.dropped]]
    shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if names[3:] else "")
    return f"  {e.task_id}: pruned {shown} from attempt {p.attempt} ({p.bytes:,} bytes freed)"


def _first_line(text: object) -> str:
    lines = str(text).strip().splitlines()
    return lines[0] if lines else ""
