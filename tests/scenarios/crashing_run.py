"""Run a plan with taskhand in this process, and SIGKILL this process at a chosen point.

For tests/scenarios/test_resume.py: a real process dies, with no chance to clean up, exactly
where the test says. State goes to $TASKHAND_HOME.

    python tests/scenarios/crashing_run.py start|resume PLAN REPO SCRIPT \
        [--kill SPEC] [--heard FILE] [--deliver task|run] [--settings] [--jobs N]

SPEC picks the point; the process kills itself right after it:

    N                       the N-th event this process emits (1 is its first)
    event:KIND[:TEXT][#K]   the K-th event of KIND whose label contains TEXT: its message,
                            a unit's role, a move's `before>after`
    call:MODULE:NAME[#K]    the K-th return of MODULE.NAME, e.g. taskhand.workspace.refs:move_branch
                            or taskhand.state.store:Store.finish_attempt (between two events)

Without --kill, or when the run ends before the point, it prints the run's summary as JSON.
--heard appends each event the listener hears to FILE (id and kind), before any kill.
--settings starts the run with the plan's own taskhand.toml (its pipeline, autonomy, ...).
--jobs N runs N tasks at once.
"""

from __future__ import annotations

import argparse
import functools
import importlib
import json
import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from taskhand import config as runconfig
from taskhand.config import Flags
from taskhand.run import launch
from taskhand.state.events import Event


def label(event: Event) -> str:
    """What an event:KIND:TEXT point matches TEXT against: the event's message, else the
    role of a unit's event, else a lifecycle move as `before>after`."""
    data = event.data
    if "message" in data:
        return str(data["message"])
    if "role" in data:
        return str(data["role"])
    if "before" in data and "after" in data:
        return f"{data['before']}>{data['after']}"
    return ""


def die() -> None:
    sys.stdout.flush()
    os.kill(os.getpid(), signal.SIGKILL)


class Killer:
    """The runner's listener: counts this process's events and dies at the chosen one."""

    def __init__(self, spec: str | None, heard: Path | None) -> None:
        self.heard = heard.open("a", encoding="utf-8") if heard else None
        self.count = 0
        self.seen = 0
        self.number: int | None = None
        self.kind: str | None = None
        self.text = ""
        self.nth = 1
        if spec is None or spec.startswith("call:"):
            return
        if spec.isdigit():
            self.number = int(spec)
            return
        what, _, nth = spec.removeprefix("event:").partition("#")
        self.kind, _, self.text = what.partition(":")
        self.nth = int(nth or 1)

    def close(self) -> None:
        if self.heard:
            self.heard.close()

    def __call__(self, event: Event) -> None:
        self.count += 1
        if self.heard:
            self.heard.write(f"{event.id} {event.kind}\n")
            self.heard.flush()
        if self.number is not None and self.count == self.number:
            die()
        if event.kind == self.kind and self.text in label(event):
            self.seen += 1
            if self.seen == self.nth:
                die()


def kill_after_call(spec: str) -> None:
    """Wrap MODULE.NAME so that its K-th return kills the process."""
    target, _, nth = spec.removeprefix("call:").partition("#")
    module_name, _, qualname = target.partition(":")
    owner: Any = importlib.import_module(module_name)
    *path, name = qualname.split(".")
    for part in path:
        owner = getattr(owner, part)
    original: Callable[..., Any] = getattr(owner, name)
    calls = [0]

    @functools.wraps(original)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        result = original(*args, **kwargs)
        calls[0] += 1
        if calls[0] == int(nth or 1):
            die()
        return result

    setattr(owner, name, wrapper)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["start", "resume"])
    parser.add_argument("plan", type=Path)
    parser.add_argument("repo", type=Path)
    parser.add_argument("script", type=Path)
    parser.add_argument("--kill")
    parser.add_argument("--heard", type=Path)
    parser.add_argument("--deliver", help="off, task or run: pull requests")
    parser.add_argument("--settings", action="store_true")
    parser.add_argument("--jobs", type=int, default=1)
    args = parser.parse_args()
    if args.kill and args.kill.startswith("call:"):
        kill_after_call(args.kill)
    killer = Killer(args.kill, args.heard)
    try:
        if args.mode == "start":
            config = runconfig.RunConfig(
                agent="replay",
                script=str(args.script),
                deliver=runconfig.Delivery(args.deliver or "off"),
                jobs=args.jobs,
            )
            if args.settings:
                flags = Flags(agent="replay", script=args.script, deliver=args.deliver)
                config = runconfig.build(args.plan, flags)
            summary = launch.start(args.plan, config, killer, args.repo)
        else:
            summary = launch.resume(None, killer, args.repo)
    finally:
        killer.close()
    print(json.dumps({"run_id": summary.run_id, "status": summary.status, "events": killer.count}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
