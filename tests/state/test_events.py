"""The catalogue of events: every kind has a payload, and every event a run logs decodes into
its payload's types once, as the progress view, the guard and the board read it."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from taskhand.plan.model import Status
from taskhand.state.events import (
    PAYLOADS,
    AttemptPaused,
    AttemptStarted,
    Event,
    EventKind,
    GateChecked,
    RunFinished,
    TaskConcluded,
    UnitFinished,
    UnitStarted,
    decode,
)
from taskhand.state.ledger import VerdictNote
from taskhand.state.records import RunStatus
from taskhand.unit import Case, Role
from tests.plans import md_plan
from tests.runs import attempt, make_repo, run_plan, script, write

REJECT = {"verdict": "reject", "category": "weak_test", "concern": "c", "next_step": "n"}


def test_every_kind_has_a_payload_whose_fields_leave_room_for_the_export() -> None:
    assert set(PAYLOADS) == set(EventKind)
    for shape in PAYLOADS.values():
        names = {f.name for f in dataclasses.fields(shape)}
        assert not names & {"id", "ts", "kind", "task_id"}, shape  # events.jsonl writes those


def test_every_event_of_a_run_decodes_into_its_payload(tmp_path: Path) -> None:
    plan = tmp_path / "repo" / "plan"
    repo = make_repo(
        tmp_path / "repo", {f"plan/{k}": str(v) for k, v in md_plan(("T-001", {})).items()}
    )
    first = attempt(write("a.txt", "a\n"), review=REJECT)
    second = attempt(write("a.txt", "b\n"), review={"verdict": "accept"})
    summary, record = run_plan(plan, repo, script(tmp_path, {"T-001": [first, second]}))
    assert summary.status == RunStatus.COMPLETED
    payloads = [(e.kind, decode(e)) for e in record.events]
    for kind, payload in payloads:
        assert isinstance(payload, PAYLOADS[kind]), kind
    of = {kind: [p for k, p in payloads if k is kind] for kind in EventKind}
    [finished] = of[EventKind.RUN_FINISHED]
    assert finished == RunFinished(RunStatus.COMPLETED, "TaskTrack EXIT: Plan Completed")
    assert [p.attempt for p in of[EventKind.ATTEMPT_STARTED] if isinstance(p, AttemptStarted)] == [
        1,
        2,
    ]
    roles = [p.role for p in of[EventKind.UNIT_STARTED] if isinstance(p, UnitStarted)]
    assert roles == [Role.IMPLEMENTER, Role.EVALUATOR] * 2
    cases = {p.case for p in of[EventKind.UNIT_FINISHED] if isinstance(p, UnitFinished)}
    assert cases == {Case.DONE}
    assert all(isinstance(p, GateChecked) and p.ok for p in of[EventKind.GATE])
    verdicts = [p for p in of[EventKind.VERDICT] if isinstance(p, VerdictNote)]
    assert [(v.lens, v.accepted, v.category) for v in verdicts] == [
        ("general", False, "weak_test"),
        ("general", True, ""),
    ]
    [concluded] = of[EventKind.TASK_CONCLUDED]
    assert isinstance(concluded, TaskConcluded) and concluded.status is Status.DONE


def test_an_event_an_earlier_version_logged_decodes_with_the_defaults() -> None:
    """Older runs logged attempts without their start and units without a lens."""
    old = Event(1, "R", "ts", EventKind.ATTEMPT_STARTED, "T-1", {"attempt": 1})
    assert decode(old) == AttemptStarted(1, "")
    unit = Event(2, "R", "ts", EventKind.UNIT_STARTED, "T-1", {"role": "implementer", "attempt": 1})
    assert decode(unit) == UnitStarted(Role.IMPLEMENTER, 1, "")


def test_a_paused_attempt_keeps_the_case_its_review_reads() -> None:
    case = {
        "resolution": "Added count().",
        "criteria": [{"criterion": "count works", "evidence": "wc.py:count"}],
        "workarounds": [],
        "uncertainties": ["unicode"],
    }
    paused = decode(
        Event(1, "R", "ts", EventKind.ATTEMPT_PAUSED, "T-1", {"attempt": 2, "case": case})
    )
    assert isinstance(paused, AttemptPaused)
    assert paused.case.resolution == "Added count()."
    assert paused.case.as_json() == case
