"""The payloads of the events a run of several jobs logs (state/events.py catalogues them):
requeues, replays, the merge queue's steps, tasks held back."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class AttemptRequeued:
    """An attempt whose candidate could not land on top of other tasks' landings."""

    attempt: int
    after: list[str]  # the tasks whose landing it came after (the blame), oldest first
    reason: str


@dataclass(frozen=True)
class Replayed:
    attempt: int
    onto: str  # the run branch's head it was replayed onto
    sha: str  # the new candidate


@dataclass(frozen=True)
class Queued:
    attempt: int
    ahead: list[str]  # the tasks whose candidates wait ahead of it, front first


@dataclass(frozen=True)
class Gating:
    attempt: int
    on: list[str]  # the tasks whose unlanded candidates the tree holds beneath it, in order
    onto: str  # the commit it was replayed onto: the run branch's head or the one ahead's
    sha: str  # the commit whose tree is checked, the one that would land


@dataclass(frozen=True)
class Gated:
    attempt: int
    on: list[str]
    ok: bool
    seconds: float
    current: bool = True  # False: a candidate ahead left meanwhile, so the result is moot


@dataclass(frozen=True)
class Held:
    behind: list[str]  # the running tasks whose files it may change too
    paths: list[str]  # its paths (declared, or changed by earlier attempts) that meet theirs
