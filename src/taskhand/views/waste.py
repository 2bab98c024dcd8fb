"""What a run of several jobs spent beyond its work, as `taskhand stats` shows it per run: the
unit-seconds of attempts a conflict ended (their candidate conflicted with work that landed
meanwhile, or failed its checks only on top of it: the next attempt redoes the work), and the
re-gates (acceptance checks run again in the merge queue, on the tree a candidate would land
as) with their seconds."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from taskhand.state.events import Event, EventKind
from taskhand.state.ledger import LedgerOutcome
from taskhand.state.records import Run
from taskhand.state.store import Store

# How the ledger says an attempt was lost to other tasks' landings (pipeline/requeue.py): its
# change conflicted with theirs, or its checks failed only on top of them.
CONFLICTED = frozenset({LedgerOutcome.CONFLICT, LedgerOutcome.BROKEN_BY_LANDING})


@dataclass(frozen=True)
class Waste:
    run_id: str
    conflicts: int  # attempts a conflict ended
    conflict_seconds: float  # the agent time of their units
    regates: int  # replayed candidates whose checks ran again
    regate_seconds: float  # the seconds those checks took

    @property
    def line(self) -> str:
        return (
            f"run {self.run_id}: {self.conflicts} attempt{'s' * (self.conflicts != 1)} "
            f"lost to conflicts ({self.conflict_seconds:.1f} unit-seconds wasted), "
            f"{self.regates} re-gate{'s' * (self.regates != 1)} "
            f"({self.regate_seconds:.1f} s of checks run again)"
        )

    def as_json(self) -> dict[str, Any]:
        return {
            "run": self.run_id,
            "conflicts": self.conflicts,
            "conflict_unit_seconds": round(self.conflict_seconds, 3),
            "regates": self.regates,
            "regate_seconds": round(self.regate_seconds, 3),
        }


def of_run(store: Store, run_id: str) -> Waste:
    """The run's attempts lost to conflicts and its re-gates, from its ledger and its log."""
    events = store.events(run_id)
    lost = {entry.attempt_id for entry in store.ledger(run_id, None) if entry.outcome in CONFLICTED}
    wasted = sum(
        _seconds(u.started, u.ended)
        for u in store.units(run_id)
        if u.attempt_id in lost and u.ended
    )
    regates = _regates(events)
    return Waste(run_id, len(lost), wasted, len(regates), sum(regates))


def shown(wasted: Waste, run: Run) -> bool:
    """Whether `stats` has this to say: the run had several jobs, or something was lost."""
    jobs = run.config.get("jobs", 1)
    return (isinstance(jobs, int) and jobs > 1) or bool(wasted.conflicts or wasted.regates)


def _regates(events: list[Event]) -> list[float]:
    """The seconds of each check run again in the merge queue, on the tree a candidate would
    land as (pipeline/queue.py)."""
    return [float(e.data.get("seconds", 0.0)) for e in events if e.kind == EventKind.GATED]


def _seconds(start: str, end: str) -> float:
    return (datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds()
