"""The catalogue of events: every kind has a payload, and every event a run logs decodes into
its payload's types once, as the progress view, the guard and the board read it."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from taskhand.plan.model import Status
from taskhand.state.events import (
    PAYLOADS,
    AttemptPaused,
    AttemptStarted,
    Event,
    EventKind,
    GateChecked,
    Integrated,
    Message,
    P,
    RunFinished,
    TaskConcluded,
    UnitFinished,
    UnitStarted,
    decode,
    decode_as,
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
    for event in record.events:
        assert isinstance(decode(event), PAYLOADS[event.kind]), event.kind

    def of(kind: EventKind, shape: type[P]) -> list[P]:
        return [decode_as(e, shape) for e in record.of(kind)]

    assert of(EventKind.RUN_FINISHED, RunFinished) == [
        RunFinished(RunStatus.COMPLETED, "TaskTrack EXIT: Plan Completed")
    ]
    assert [p.attempt for p in of(EventKind.ATTEMPT_STARTED, AttemptStarted)] == [1, 2]
    roles = [p.role for p in of(EventKind.UNIT_STARTED, UnitStarted)]
    assert roles == [Role.IMPLEMENTER, Role.EVALUATOR] * 2
    assert {p.case for p in of(EventKind.UNIT_FINISHED, UnitFinished)} == {Case.DONE}
    assert all(p.ok for p in of(EventKind.GATE, GateChecked))
    verdicts = of(EventKind.VERDICT, VerdictNote)
    assert [(v.lens, v.accepted, v.category) for v in verdicts] == [
        ("general", False, "weak_test"),
        ("general", True, ""),
    ]
    [concluded] = of(EventKind.TASK_CONCLUDED, TaskConcluded)
    assert concluded.status is Status.DONE


def test_an_event_read_as_another_payload_is_refused() -> None:
    integrated = Event(1, "R", "ts", EventKind.INTEGRATED, "T-1", {"sha": "abc"})
    assert decode_as(integrated, Integrated).sha == "abc"
    with pytest.raises(TypeError, match="integrated events carry Integrated, not Message"):
        decode_as(integrated, Message)


def test_an_event_an_earlier_version_logged_decodes_with_the_defaults() -> None:
    """Older runs logged attempts without their start and units without a lens."""
    old = Event(1, "R", "ts", EventKind.ATTEMPT_STARTED, "T-1", {"attempt": 1})
    assert decode(old) == AttemptStarted(1, "")
    unit = Event(2, "R", "ts", EventKind.UNIT_STARTED, "T-1", {"role": "implementer", "attempt": 1})
    assert decode(unit) == UnitStarted(Role.IMPLEMENTER, 1, "")


def test_a_paused_attempt_keeps_its_case_and_the_stage_it_goes_on_at() -> None:
    case = {
        "resolution": "Added count().",
        "criteria": [{"criterion": "count works", "evidence": "wc.py:count"}],
        "workarounds": [],
        "uncertainties": ["unicode"],
    }
    data = {"attempt": 2, "case": case, "stage": "integrate"}
    paused = decode_as(Event(1, "R", "ts", EventKind.ATTEMPT_PAUSED, "T-1", data), AttemptPaused)
    assert (paused.attempt, paused.case.resolution, paused.stage) == (
        2,
        "Added count().",
        "integrate",
    )
    assert paused.case.as_json() == case
    before_pipelines = Event(
        2, "R", "ts", EventKind.ATTEMPT_PAUSED, "T-1", {"attempt": 2, "case": {}}
    )
    assert decode_as(before_pipelines, AttemptPaused).stage == "review"  # paused only there
