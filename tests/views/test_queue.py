"""The merge queue as the boards show it, from the events a run writes to a real store: its
order, each entry's state and what it gates on top of, a moot result gated again, and every
way out of it (landing, a requeue, an attempt's end, the run's end)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from taskhand.state.events import EventKind
from taskhand.state.paths import StateDir
from taskhand.state.store import Store
from taskhand.views.queue import Queue, of_run
from tests.plans import md_plan
from tests.runs import make_repo

Kind = EventKind


class Run:
    """A run of `plan` in a real store, whose log a test writes event by event, as the
    runner's merge queue would."""

    def __init__(self, store: Store, plan: str = "plan") -> None:
        self.store = store
        self.id = store.create_run(plan, "markdown", "repo", "base", "taskhand/run", {}).id

    def log(self, kind: EventKind, task: str | None = None, **data: Any) -> str:
        """Write an event; its time."""
        return self.store.event(self.id, kind, task, **data).ts

    def queued(self, task: str, *ahead: str, attempt: int = 1) -> str:
        return self.log(Kind.QUEUED, task, attempt=attempt, ahead=list(ahead))

    def gating(self, task: str, *on: str, attempt: int = 1) -> str:
        return self.log(Kind.GATING, task, attempt=attempt, on=list(on), onto="a1", sha="b2")

    def gated(self, task: str, *on: str, ok: bool = True, current: bool = True) -> str:
        data = {"attempt": 1, "on": list(on), "ok": ok, "seconds": 1.5, "current": current}
        return self.log(Kind.GATED, task, **data)

    def queue(self, at: str | None = None) -> Queue:
        """The queue as the log stands, seen at `at` (now, else)."""
        now = datetime.fromisoformat(at) if at else datetime.now().astimezone()
        return of_run(self.store, self.id, now)

    def shown(self) -> list[tuple[str, str]]:
        """Each entry, front first, as a person reads it."""
        return [(e.task_id, e.text) for e in self.queue().entries]


@pytest.fixture
def run(tmp_path: Path) -> Iterator[Run]:
    with Store.open(tmp_path / "state.db") as store:
        yield Run(store)


def queue_repo(tmp_path: Path) -> Path:
    """A repository with a plan of three tasks, T-001 to T-003."""
    plan = md_plan(("T-001", {}), ("T-002", {}), ("T-003", {}))
    return make_repo(tmp_path / "repo", {f"plan/{name}": str(text) for name, text in plan.items()})


@contextmanager
def plan_run(repo: Path) -> Iterator[Run]:
    """A run of the repository's plan in its store, as the boards find it."""
    with Store.open(StateDir.for_repo(repo).database) as store:
        yield Run(store, str((repo / "plan").resolve()))


def gate_on_top(run: Run) -> str:
    """T-001 at the front gating, T-002 gating on top of it, T-003 waiting behind: the time
    T-002's checks started."""
    run.log(Kind.RUN_STARTED, plan="plan", base="b", branch="r", agent="replay")
    run.queued("T-001")
    run.queued("T-002", "T-001")
    run.queued("T-003", "T-001", "T-002")
    run.gating("T-001")
    return run.gating("T-002", "T-001")


def later(ts: str, seconds: float) -> str:
    return (datetime.fromisoformat(ts) + timedelta(seconds=seconds)).isoformat()


def test_the_queue_in_order_with_what_gates_on_top_of_what(run: Run) -> None:
    run.log(Kind.RUN_STARTED, plan="p", base="b", branch="r", agent="replay")
    assert run.queue().entries == ()  # nothing queued yet
    run.queued("T-001")
    run.queued("T-002", "T-001")
    run.queued("T-003", "T-001", "T-002")
    assert run.shown() == [("T-001", "waits"), ("T-002", "waits"), ("T-003", "waits")]
    run.gating("T-001")
    started = run.gating("T-002", "T-001")
    assert run.shown() == [
        ("T-001", "gating"),
        ("T-002", "gating on top of T-001"),
        ("T-003", "waits"),
    ]
    gating = run.queue(later(started, 12)).entries[1]
    assert (gating.attempt, gating.on, gating.ahead) == (1, ("T-001",), ("T-001",))
    assert gating.as_json(datetime.fromisoformat(later(started, 12)))["seconds"] == 12.0
    run.gated("T-001")
    run.gated("T-002", "T-001", ok=False)
    run.gating("T-003", "T-001", "T-002")
    assert run.shown() == [
        ("T-001", "passed"),
        ("T-002", "failed on top of T-001, waits for T-001"),
        ("T-003", "gating on top of T-001, T-002"),
    ]
    [first, second, third] = run.queue().as_json()
    assert first["state"] == "passed" and second["state"] == "failed"
    assert (third["state"], third["on"], third["ahead"]) == (
        "gating",
        ["T-001", "T-002"],
        ["T-001", "T-002"],
    )
    assert third["queued_seconds"] >= third["seconds"] >= 0


def test_a_candidate_joins_behind_those_the_queue_says_are_ahead(run: Run) -> None:
    run.queued("T-001")
    run.queued("T-003", "T-001")
    run.queued("T-002", "T-001")  # the queue put it ahead of T-003
    assert [task for task, _ in run.shown()] == ["T-001", "T-002", "T-003"]
    run.gated("T-003", "T-001", "T-002")  # passed on top of both
    assert run.shown()[2] == ("T-003", "passed, lands after T-001, T-002")


def test_a_moot_result_waits_and_gates_again_on_what_is_left(run: Run) -> None:
    run.queued("T-001")
    joined = run.queued("T-002", "T-001")
    run.gating("T-001")
    run.gating("T-002", "T-001")
    run.log(Kind.ATTEMPT_REQUEUED, "T-001", attempt=1, after=["T-009"], reason="conflict")
    assert run.shown() == [("T-002", "gating on top of T-001")]  # its checks still run
    run.gated("T-002", "T-001", current=False)  # T-001 left meanwhile: the result is moot
    assert run.shown() == [("T-002", "waits")]
    assert run.queue().entries[0].on == ()
    again = run.gating("T-002")
    [entry] = run.queue(later(again, 3)).as_json()
    assert (entry["text"], entry["since"], entry["seconds"]) == ("gating", again, 3.0)
    # In the queue since it first joined, not since its checks began again.
    waited = (
        datetime.fromisoformat(later(again, 3)) - datetime.fromisoformat(joined)
    ).total_seconds()
    assert (entry["joined"], entry["queued_seconds"]) == (joined, round(waited, 3))


LEAVING: list[tuple[EventKind, dict[str, Any]]] = [
    (Kind.INTEGRATED, {"sha": "c3"}),
    (Kind.ATTEMPT_REQUEUED, {"attempt": 1, "after": ["T-009"], "reason": "broken by a landing"}),
    (Kind.ATTEMPT_FAILED, {"reason": "checks failed"}),
    (Kind.ATTEMPT_INTERRUPTED, {"attempt": 1}),
]


@pytest.mark.parametrize(("kind", "data"), LEAVING, ids=[k.value for k, _ in LEAVING])
def test_an_entry_leaves_and_those_behind_move_up(
    run: Run, kind: EventKind, data: dict[str, Any]
) -> None:
    run.queued("T-001")
    run.queued("T-002", "T-001")
    run.queued("T-003", "T-001", "T-002")
    run.gating("T-003", "T-001", "T-002")
    run.log(kind, "T-002", **data)
    # Its checks run on until they end (the queue then says whether they still count).
    assert run.shown() == [("T-001", "waits"), ("T-003", "gating on top of T-001, T-002")]
    run.log(kind, "T-001", **data)
    assert run.shown() == [("T-003", "gating on top of T-001, T-002")]
    assert run.queue().entries[0].ahead == ()


@pytest.mark.parametrize(("kind", "data"), LEAVING[1:], ids=[k.value for k, _ in LEAVING[1:]])
def test_a_result_on_top_of_a_candidate_that_left_unlanded_is_moot(
    run: Run, kind: EventKind, data: dict[str, Any]
) -> None:
    run.queued("T-001")
    run.queued("T-002", "T-001")
    run.queued("T-003", "T-001", "T-002")
    run.gated("T-002", "T-001")
    run.gated("T-003", "T-001", "T-002", ok=False)
    run.log(Kind.INTEGRATED, "T-001", sha="c3")  # landed as checked: the results stand
    assert run.shown() == [
        ("T-002", "passed"),
        ("T-003", "failed on top of T-001, T-002, waits for T-002"),
    ]
    run.log(kind, "T-002", **data)  # gone unlanded: T-003's tree is not what it would land as
    assert run.shown() == [("T-003", "waits")]


def test_a_candidate_lands_without_gating_and_a_requeued_one_joins_again(run: Run) -> None:
    run.queued("T-001")  # nothing landed since its base and nothing ahead: it just lands
    run.queued("T-002", "T-001")
    run.log(Kind.INTEGRATED, "T-001", sha="c3")
    assert run.shown() == [("T-002", "waits")]
    run.log(Kind.ATTEMPT_REQUEUED, "T-002", attempt=1, after=["T-001"], reason="conflict")
    assert run.shown() == []
    run.log(Kind.ATTEMPT_STARTED, "T-002", attempt=2, start="c3")
    run.queued("T-002", attempt=2)
    assert [(e.task_id, e.attempt) for e in run.queue().entries] == [("T-002", 2)]


@pytest.mark.parametrize(
    ("kind", "data"),
    [
        (Kind.RUN_FINISHED, {"status": "completed", "message": "done"}),
        (Kind.RUN_INTERRUPTED, {"signal": "SIGINT"}),
    ],
)
def test_the_runs_end_empties_the_queue_and_a_resumed_run_starts_afresh(
    run: Run, kind: EventKind, data: dict[str, Any]
) -> None:
    run.queued("T-001")
    run.queued("T-002", "T-001")
    run.gating("T-002", "T-001")
    run.log(kind, **data)
    assert run.shown() == []
    run.log(Kind.RUN_RESUMED, plan="p")
    run.queued("T-002")
    assert run.shown() == [("T-002", "waits")]  # nothing left of the queue before the end


def test_a_run_killed_outright_resumes_with_an_empty_queue(run: Run) -> None:
    """A process killed with no word in the log took its queue with it; the resumed run
    queues its candidates afresh."""
    run.queued("T-001")
    run.gating("T-001")
    run.log(Kind.RUN_RESUMED, plan="p")
    assert run.shown() == []
