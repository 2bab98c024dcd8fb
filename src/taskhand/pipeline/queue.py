"""The merge queue: candidates wait in order, each checked on the tree it would land as (the
run branch and every candidate ahead of it), all at once; they land in order, each once its
reviewer accepted it (it joins at its gate, so those behind build on it meanwhile).

Speculative gating, as Zuul, bors and GitHub's merge queue run it. Each candidate is replayed
onto the one ahead of it (or onto the run branch, at the front), and its acceptance checks run
on that commit while those ahead are still checking. The front candidate lands when its own
commit passed: the run branch only ever moves to a tree whose checks passed on exactly that
tree. A candidate that conflicts or fails on top of those ahead is passed over by those behind
it (it will likely leave) and waits until those ahead have settled: if they all landed, its
failure is theirs to blame (pipeline/requeue.py); if one of them left, it is replayed and
checked again without it. Candidates behind one that left are replayed too, since their trees
held it.

This module is the queue's state and its decisions, under the run's landing lock;
pipeline/gating.py does the git and the checks each step calls for, in the job's own thread,
outside the lock (from the gate stage, then the integrate stage). Only a candidate's own thread
changes its entry, so a check never races its own result. How many checks run at once is
bounded by numbered gate slots (each a checkout of its own), granted front first.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum

from taskhand.gates import GateResult
from taskhand.host import interrupts

_WAKE_SECONDS = 0.25  # how often a waiting candidate looks whether the run is stopping


@dataclass(eq=False)
class Candidate:
    """One task's candidate in the queue."""

    task_id: str
    base: str  # the commit the attempt started from
    own: str  # its candidate on that base, whose checks passed there
    onto: str = ""  # what it was last replayed onto
    sha: str = ""  # that replay: the commit that would land ("" while none, or on a conflict)
    conflicts: list[str] = field(default_factory=list)  # where that replay conflicted
    checked: bool | None = None  # whether `sha`'s checks passed; None while not known
    checks: list[GateResult] | None = None  # the acceptance commands' results on `sha`
    gating: int = 0  # the gate slot its checks run in, 0 when they do not run
    wants_gate: bool = False
    # Reviewed and through every stage before landing: only then may it land (it joins at
    # its gate, so that those behind build on it while it is reviewed).
    is_ready: bool = False

    @property
    def standing(self) -> bool:
        """Whether those behind build on it: no conflict, no failed checks (yet)."""
        return not self.conflicts and self.checked is not False


class Step(Enum):
    REPLAY = "replay"  # replay the candidate onto the tip given
    GATE = "gate"  # check `sha` in the gate slot given
    LAND = "land"  # at the front, checked on the run branch's head: land it
    CONFLICTED = "conflicted"  # at the front, conflicting with what landed: requeue
    BROKEN = "broken"  # at the front, failing on top of what landed: requeue


class MergeQueue:
    def __init__(self, lock: threading.RLock, gates: int) -> None:
        # The run's landing lock: the guard reads the run branch under it too.
        self.changed = threading.Condition(lock)
        self.entries: list[Candidate] = []
        self.head = ""  # the run branch's head, as the queue last moved or read it
        self.free_gates = list(range(max(gates, 1), 0, -1))

    def join(self, candidate: Candidate, head: str) -> list[str]:
        """Append `candidate` (the run branch at `head`); the tasks ahead of it, front first."""
        with self.changed:
            ahead = [c.task_id for c in self.entries]
            self.head = head
            self.entries.append(candidate)
            self.changed.notify_all()
            return ahead

    def leave(self, candidate: Candidate, landed: str = "") -> None:
        """Take `candidate` out (landed at `landed`, or gone otherwise); those behind replan."""
        with self.changed:
            if candidate in self.entries:
                self.entries.remove(candidate)
            if candidate.gating:
                self.free_gates.append(candidate.gating)
                candidate.gating = 0
            if landed:
                self.head = landed
            self.changed.notify_all()

    def ready(self, candidate: Candidate) -> None:
        """It may land once it is at the front and checked there."""
        with self.changed:
            candidate.is_ready = True
            self.changed.notify_all()

    def next_step(
        self, candidate: Candidate, until: Callable[[], bool] | None = None
    ) -> tuple[Step, str | int] | None:
        """What `candidate` does now, with the tip to replay onto, or the gate slot to check
        in; waiting until it has something to do, or (None) until `until()` holds. Raises
        Interrupted once the run stops."""
        with self.changed:
            while True:
                interrupts.heed()
                found = self._step(candidate)
                if found is not None or (until is not None and until()):
                    return found
                self.changed.wait(_WAKE_SECONDS)

    def nudge(self) -> None:
        """Something a waiting candidate's `until` reads has changed."""
        with self.changed:
            self.changed.notify_all()

    def replayed(
        self,
        candidate: Candidate,
        onto: str,
        sha: str,
        conflicts: list[str],
        checked: bool | None = None,
    ) -> None:
        """Its replay onto `onto` made `sha`, or conflicted in `conflicts`. `checked`: True
        when `sha` needs no checks of its own (its own candidate on its own base, or a task
        with no acceptance commands)."""
        with self.changed:
            candidate.onto, candidate.sha, candidate.conflicts = onto, sha, conflicts
            candidate.checked, candidate.checks, candidate.wants_gate = checked, None, False
            self.changed.notify_all()

    def gated(self, candidate: Candidate, slot: int, sha: str, found: list[GateResult]) -> bool:
        """Its checks on `sha` ended with `found`; whether that result still stands (it is moot
        when a candidate beneath it left meanwhile: it is replayed and checked again)."""
        with self.changed:
            candidate.gating = 0
            self.free_gates.append(slot)
            if candidate.sha == sha:
                candidate.checked, candidate.checks = all(g.ok for g in found), found
            current = self._tips().get(id(candidate)) == candidate.onto
            self.changed.notify_all()
            return current

    def beneath(self, candidate: Candidate) -> list[str]:
        """The tasks whose unlanded candidates its tree holds: those ahead that stand."""
        with self.changed:
            index = self.entries.index(candidate) if candidate in self.entries else 0
            return [c.task_id for c in self.entries[:index] if c.standing]

    # -- decisions, under the lock ----------------------------------------------------------

    def _tips(self) -> dict[int, str | None]:
        """What each candidate would land on now: the run branch's head with every standing
        candidate ahead of it; None while one of those has no replay of its own yet."""
        tips: dict[int, str | None] = {}
        tip: str | None = self.head
        for c in self.entries:
            tips[id(c)] = tip
            if tip is None or not c.standing:
                continue  # those behind pass over one that will likely leave
            tip = c.sha if c.onto == tip and c.sha else None
        return tips

    def _step(self, candidate: Candidate) -> tuple[Step, str | int] | None:
        tip = self._tips()[id(candidate)]
        if tip is None:
            return None
        if candidate.onto != tip:
            return Step.REPLAY, tip
        if candidate.is_ready and tip == self.head:  # all it built on landed
            if candidate.conflicts:
                return Step.CONFLICTED, tip
            if candidate.checked is False:
                return Step.BROKEN, tip
            if candidate.checked:
                return Step.LAND, tip
        if candidate.sha and candidate.checked is None and not candidate.gating:
            candidate.wants_gate = True
            ahead = self.entries[: self.entries.index(candidate)]
            if self.free_gates and not any(c.wants_gate for c in ahead):
                candidate.wants_gate = False
                candidate.gating = self.free_gates.pop()
                return Step.GATE, candidate.gating
        return None


class Seat:
    """A job's claim on running agents' units, in a run of several jobs (run/jobs.py): given
    back while its candidate waits in the queue. The run's own harness holds one for good."""

    def give_back(self) -> None:
        """Its candidate waits in the merge queue: another task may run its units meanwhile."""

    def take(self) -> None:
        """Before an attempt's units: wait for a seat if it gave its own back."""
