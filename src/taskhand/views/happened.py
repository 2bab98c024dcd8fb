"""What happened to a task on its way, in a line, for `taskhand stats`: the interview, the plan
sent back, the prototype's rounds, the bounces, the parks; read from the store's records of
the plan's runs (the lifecycle's questions and a person's remarks, the task's moves, its
units), never from what an agent said.
"""

from __future__ import annotations

from collections.abc import Sequence

from taskhand.state.events import Event, EventKind
from taskhand.state.records import UnitRow
from taskhand.state.store import Store

_BOUNCED_FROM = ("qa", "judge")  # a rejection sends the task from these back to implementing


def times(n: int) -> str:
    return {1: "once", 2: "twice"}.get(n, f"{n} times")


def plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def story(
    store: Store, plan_key: str, task_id: str, moves: Sequence[Event], units: Sequence[UnitRow]
) -> str:
    """The task's way in one line ("" when nothing is worth telling): `moves` are its
    task_moved events and `units` its units, over the runs shown."""
    told = []
    asked = len(store.questions(plan_key, task_id))
    if asked:
        told.append(f"a {asked}-question interview")
    sent_back = sum(r.kind == "revise" for r in store.remarks(plan_key, task_id))
    if sent_back:
        told.append(f"the plan sent back {times(sent_back)}")
    rounds = sum(str(u.role) == "designer" for u in units)
    if rounds:
        accepted = any(e.data.get("by") == "accept" for e in moves)
        passed = any(
            e.data.get("before") == "prototype" and e.data.get("after") == "ready" for e in moves
        )
        if accepted or passed:
            told.append(f"the prototype {'accepted' if accepted else 'passed'} on round {rounds}")
        else:
            told.append(plural(rounds, "prototype round"))
    if any(str(u.role) == "qa" for u in units):
        bounces = sum(
            e.data.get("before") in _BOUNCED_FROM and e.data.get("after") == "implementing"
            for e in moves
        )
        told.append(plural(bounces, "bounce") if bounces else "no bounce")
    parks = sum(e.data.get("after") == "parked" for e in moves)
    if parks:
        told.append(f"parked {times(parks)}")
    return ", ".join(told)


def moves_of(store: Store, run_ids: Sequence[str]) -> dict[str, list[Event]]:
    """Each task's task_moved events over the runs, oldest first."""
    found: dict[str, list[Event]] = {}
    for run_id in run_ids:
        for event in store.events_of(run_id, EventKind.TASK_MOVED):
            if event.task_id:
                found.setdefault(event.task_id, []).append(event)
    return found
