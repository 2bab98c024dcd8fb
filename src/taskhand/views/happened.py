"""What happened to a task on its way, in a line, for `taskhand stats`: the interview, the plan
sent back, the prototype's rounds, the bounces, the parks, the requeues; read from the store's
records of the plan's runs (the lifecycle's questions and a person's remarks, the task's
moves, its units and attempts), never from what an agent said.
"""

from __future__ import annotations

from collections.abc import Sequence

from taskhand.pipeline.lifecycle import Move
from taskhand.state.events import Event, EventKind
from taskhand.state.life import Lifecycle
from taskhand.state.records import AttemptStatus, UnitRow
from taskhand.state.store import Store
from taskhand.text import plural
from taskhand.unit import Role

L = Lifecycle
_BOUNCED_FROM = (L.QA, L.JUDGE)  # a rejection sends the task from these back to implementing


def times(n: int) -> str:
    return {1: "once", 2: "twice"}.get(n, f"{n} times")


def story(
    store: Store, plan_key: str, task_id: str, moves: Sequence[Event], units: Sequence[UnitRow]
) -> str:
    """The task's way in one line ("" when nothing is worth telling): `moves` are its
    task_moved events and `units` its units, over the runs shown."""
    told = []
    asked = len(store.questions(plan_key, task_id))
    if asked:
        told.append(f"a {asked}-question interview")
    sent_back = sum(r.kind == Move.REVISE for r in store.remarks(plan_key, task_id))
    if sent_back:
        told.append(f"the plan sent back {times(sent_back)}")
    rounds = sum(u.role == Role.DESIGNER for u in units)
    if rounds:
        by_person = any(e.data.get("by") == Move.ACCEPT for e in moves)
        by_itself = any(  # full autonomy: the round's picture is taken as it is
            e.data.get("before") == L.PROTOTYPE and e.data.get("after") == L.READY for e in moves
        )
        if by_person:
            told.append(f"the prototype accepted on round {rounds}")
        elif by_itself:
            told.append(f"the prototype passed on round {rounds}")
        else:
            told.append(plural(rounds, "prototype round"))
    if any(u.role == Role.QA for u in units):
        bounces = sum(
            e.data.get("before") in _BOUNCED_FROM and e.data.get("after") == L.IMPLEMENTING
            for e in moves
        )
        told.append(plural(bounces, "bounce") if bounces else "no bounce")
    parks = sum(e.data.get("after") == L.PARKED for e in moves)
    if parks:
        told.append(f"parked {times(parks)}")
    runs = {u.run_id for u in units}  # a requeued attempt's worker worked in it
    requeued = sum(
        a.status == AttemptStatus.REQUEUED for run in runs for a in store.attempts(run, task_id)
    )
    if requeued:
        told.append(f"requeued {times(requeued)} by other tasks' landings")
    return ", ".join(told)


def moves_of(store: Store, run_ids: Sequence[str]) -> dict[str, list[Event]]:
    """Each task's task_moved events over the runs, oldest first."""
    found: dict[str, list[Event]] = {}
    for run_id in run_ids:
        for event in store.events_of(run_id, EventKind.TASK_MOVED):
            if event.task_id:
                found.setdefault(event.task_id, []).append(event)
    return found
