"""The merge queue as people see it, from a run's log: the candidates waiting to land, front
first, each with where it stands (waits, gating on top of the candidates ahead, passed or
failed there) and since when. The boards show it; pipeline/queue.py writes the events."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from enum import StrEnum
from typing import Any

from taskhand.state.events import Event, EventKind, decode_as
from taskhand.state.parallel_events import Gated, Gating, Queued
from taskhand.state.store import Store


class State(StrEnum):
    WAITS = "waits"  # joined: no checks yet, or a result made moot, or waiting for a gate slot
    GATING = "gating"  # its checks run on the tree it would land as
    PASSED = "passed"  # its checks passed: it lands once those ahead have
    FAILED = "failed"  # its checks failed on top of those ahead: it waits for them to settle


# An entry leaves the queue when its task lands, is requeued, or its attempt ends; a new
# attempt of the task means the old one left. The run's end (or a new process) ends them all.
LEAVES = frozenset(
    {
        EventKind.INTEGRATED,
        EventKind.ATTEMPT_REQUEUED,
        EventKind.ATTEMPT_FAILED,
        EventKind.ATTEMPT_REJECTED,
        EventKind.ATTEMPT_INTERRUPTED,
        EventKind.ATTEMPT_STARTED,
    }
)
EMPTIES = frozenset(
    {
        EventKind.RUN_STARTED,
        EventKind.RUN_RESUMED,
        EventKind.RUN_FINISHED,
        EventKind.RUN_INTERRUPTED,
    }
)


@dataclass(frozen=True)
class Entry:
    """One candidate in the queue."""

    task_id: str
    attempt: int
    state: State
    joined: str  # when it joined the queue (the event's time)
    since: str  # when its state began: a gate's start, its end, or the join
    on: tuple[str, ...] = ()  # the candidates ahead whose changes its checked tree holds
    ahead: tuple[str, ...] = ()  # the candidates ahead of it in the queue, front first

    @property
    def text(self) -> str:
        """Where it stands, in a few words: `gating on top of T-001, T-002`."""
        state = str(self.state)
        if self.state is State.GATING:
            return f"{state} on top of {', '.join(self.on)}" if self.on else state
        if self.state is State.PASSED:
            return f"{state}, lands after {', '.join(self.ahead)}" if self.ahead else state
        if self.state is State.FAILED:
            failed = f"{state} on top of {', '.join(self.on)}" if self.on else state
            return f"{failed}, waits for {', '.join(self.ahead)}" if self.ahead else failed
        return state

    def as_json(self, now: datetime) -> dict[str, Any]:
        return {
            "task_id": self.task_id,
            "attempt": self.attempt,
            "state": self.state.value,
            "on": list(self.on),
            "ahead": list(self.ahead),
            "text": self.text,
            "joined": self.joined,
            "since": self.since,
            "queued_seconds": round(_seconds(self.joined, now), 3),
            "seconds": round(_seconds(self.since, now), 3),
        }


@dataclass(frozen=True)
class Queue:
    """The queue at `now`: its entries, front first."""

    entries: tuple[Entry, ...]
    now: datetime

    def as_json(self) -> list[dict[str, Any]]:
        return [entry.as_json(self.now) for entry in self.entries]


def of_run(store: Store, run_id: str, now: datetime) -> Queue:
    """The run's queue as its log stands at `now`."""
    joined = store.events_of(run_id, EventKind.QUEUED)
    if not joined:  # nothing ever queued: the rest of the log has nothing to say
        return Queue((), now)
    return of_events(store.events(run_id, joined[0].id - 1), now)


def of_events(events: list[Event], now: datetime) -> Queue:
    """The queue that a log, oldest event first, leaves."""
    order: list[Entry] = []
    for event in events:
        task = event.task_id or ""
        at = next((i for i, e in enumerate(order) if e.task_id == task), None)
        if event.kind in EMPTIES:
            order.clear()
        elif event.kind in LEAVES and at is not None:
            del order[at]
            if event.kind is not EventKind.INTEGRATED:  # what was checked on top of it is moot
                order = [_moot(entry, task, event.ts) for entry in order]
        elif event.kind is EventKind.QUEUED:
            if at is not None:
                del order[at]
            queued = decode_as(event, Queued)
            behind = [i for i, e in enumerate(order) if e.task_id in queued.ahead]
            entry = Entry(task, queued.attempt, State.WAITS, event.ts, event.ts)
            order.insert(max(behind, default=-1) + 1, entry)
        elif event.kind is EventKind.GATING:
            gating = decode_as(event, Gating)
            if at is None:  # joined before this log began: at the back, as it would be
                order.append(Entry(task, gating.attempt, State.WAITS, event.ts, event.ts))
                at = len(order) - 1
            on = tuple(gating.on)
            order[at] = replace(
                order[at], attempt=gating.attempt, state=State.GATING, on=on, since=event.ts
            )
        elif event.kind is EventKind.GATED and at is not None:
            order[at] = _ended(order[at], decode_as(event, Gated), event.ts)
    ids = [entry.task_id for entry in order]
    return Queue(tuple(replace(e, ahead=tuple(ids[:i])) for i, e in enumerate(order)), now)


def _moot(entry: Entry, left: str, ts: str) -> Entry:
    """A result on top of a candidate that left without landing: it waits to gate again (one
    still gating says so when its checks end)."""
    if entry.state in (State.PASSED, State.FAILED) and left in entry.on:
        return replace(entry, state=State.WAITS, on=(), since=ts)
    return entry


def _ended(entry: Entry, gated: Gated, ts: str) -> Entry:
    """Its checks ended: passed or failed on what they ran on, or moot (it gates again)."""
    if not gated.current:
        return replace(entry, state=State.WAITS, on=(), since=ts)
    state = State.PASSED if gated.ok else State.FAILED
    return replace(entry, state=state, on=tuple(gated.on), since=ts)


def _seconds(start: str, now: datetime) -> float:
    return max(0.0, (now - datetime.fromisoformat(start)).total_seconds())
