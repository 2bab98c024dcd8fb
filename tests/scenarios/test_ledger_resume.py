"""The integration ledger across SIGKILL: a landing the kill cut short of its disposition gets
it on resume, and one already recorded is never recorded twice.

The runner is a real process (tests/scenarios/crashing_run.py) killed right after a chosen
call returns; the run then resumes to completion, checked as every campaign is.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from taskhand.state.events import EventKind
from taskhand.state.records import AttemptStatus, Disposition
from tests.scenarios.test_resume import Campaign, _git, build, finish_checks

POINTS = {
    # T-001's candidate is on the run branch; the ledger does not know yet.
    "after the run branch moved": "call:taskhand.workspace.refs:move_branch#1",
    # The ledger knows; the `integrated` event is not logged yet.
    "after the disposition": "call:taskhand.pipeline.integrate:record_landing#1",
}


@pytest.mark.parametrize("point", list(POINTS))
def test_a_landing_is_disposed_once_across_a_kill(
    tmp_path: Path, home: Path, seed: int, point: str
) -> None:
    c = Campaign(f"markdown, {point}", *build("markdown", tmp_path), seed, tmp_path / "logs")
    assert c.round(POINTS[point]), f"{c.where()}: not killed"
    store = c.store()
    assert store is not None
    with store:
        run = store.latest_run()
        assert run is not None
        [landed] = [a for a in store.attempts(run.id) if a.status == AttemptStatus.PASSED]
        head = _git(c.repo, "rev-parse", run.run_branch).strip()
        rows = store.dispositions(run.id)
        logged = store.events_of(run.id, EventKind.INTEGRATED)
    assert (landed.task_id, landed.candidate_sha) == ("T-001", head), c.where()
    assert logged == [], c.where()
    if point == "after the run branch moved":
        assert rows == [], c.where()
    else:
        assert [(d.attempt_id, d.status) for d in rows] == [(landed.id, Disposition.INTEGRATED)], (
            c.where()
        )

    c.finish()
    finish_checks(c, "markdown")  # every result disposed once, every task landed once
    store = c.store()
    assert store is not None
    with store:
        rows = store.dispositions(run.id, "T-001")
        disposed = store.events_of(run.id, EventKind.DISPOSED)
    assert [(d.attempt_id, d.status, d.recorded_by) for d in rows] == [
        (landed.id, Disposition.INTEGRATED, "harness")
    ], c.where()
    assert rows[0].target_ref == run.run_branch and rows[0].target_sha == head
    assert Counter(e.task_id for e in disposed)["T-001"] == 1, c.where()
