"""A person's moves from the command line, in both dialects: each command's text and --json,
a refusal as one line (or one JSON object) with the moves open, `validate` passing after every
move, and what `show` says of each task's lifecycle."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from taskhand.plan.model import Status
from taskhand.state.life import Lifecycle
from taskhand.state.status import StatusBook
from taskhand.views.board import waiting_for_a_person
from tests.conftest import RunCli
from tests.lives import Lives, lives

L = Lifecycle
DIALECTS = ["markdown", "tasktrack"]
MOVED_KEYS = {"task", "move", "before", "after", "waiting", "status", "next", "plan", "run", "file"}
LIFECYCLE_KEYS = {
    "lifecycle",
    "pipeline",
    "waiting",
    "waits_for",
    "moves",
    "working",
    "questions",
    "pr",
}


def move(run_cli: RunCli, life: Lives, *args: str) -> dict[str, Any]:
    """Make a move with --json; the plan validates after it."""
    result = run_cli(*args, "--json")
    assert result.exit_code == 0, result.output
    data: dict[str, Any] = json.loads(result.stdout)
    assert set(data) == MOVED_KEYS
    checked = run_cli("validate", life.plan)
    assert checked.exit_code == 0, checked.output
    return data


def refused(run_cli: RunCli, *args: str) -> dict[str, str]:
    result = run_cli(*args, "--json")
    assert (result.exit_code, result.stdout) == (1, ""), result.output
    data: dict[str, str] = json.loads(result.stderr)
    assert set(data) == {"error", "fix"} and data["fix"], data
    return data


def shown(run_cli: RunCli, life: Lives) -> dict[str, dict[str, Any]]:
    result = run_cli("show", life.plan, "--json")
    assert result.exit_code == 0, result.output
    return {t["id"]: t for t in json.loads(result.stdout)["tasks"]}


@pytest.mark.parametrize("pipeline", ["full", "default"])
@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_draft_waits_for_a_person_so_next_ends_as_a_run_would(
    tmp_path: Path, run_cli: RunCli, dialect: str, pipeline: str
) -> None:
    life = lives(tmp_path, dialect, pipeline=pipeline)
    run_id = life.start_run(pipeline)
    with life.store() as store:  # the plan's own tasks are finished: only the draft is left
        book = StatusBook(life.load(), store, run_id)
        for task_id in life.ids:
            life.put(task_id, L.DONE)
            book.conclude(task_id, Status.DONE, "Done.")
            book.complete(task_id, Status.DONE)
    plan = str(life.plan)
    task = move(run_cli, life, "new", plan, "--title", "Dark mode", "--draft", "A toggle.")["task"]
    data = json.loads(run_cli("show", plan, "--json").stdout)
    drafted = next(t for t in data["tasks"] if t["id"] == task)
    assert (drafted["status"], drafted["waiting"], drafted["eligible"]) == ("OPEN", True, False)
    assert (data["next"], data["eligible"]) == (None, [])
    assert data["exit"]["reason"] == "waiting"
    assert waiting_for_a_person(data) == 1  # what the boards count and notify of
    assert json.loads(run_cli("show", plan, task, "--json").stdout)["eligible"] is False
    # A script looping on `next` ends: exit 3, waiting for a person, as a run would.
    nothing = run_cli("next", plan)
    assert (nothing.exit_code, nothing.stdout.strip()) == (
        3,
        "TaskTrack EXIT: Waiting for Human Feedback",
    )
    assert json.loads(run_cli("next", plan, "--json").stdout)["next"] is None
    assert "<- eligible" not in run_cli("show", plan).stdout
    move(run_cli, life, "submit", task, plan)
    assert json.loads(run_cli("next", plan, "--json").stdout)["next"] == task


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_draft_goes_through_every_gate_from_the_command_line(
    tmp_path: Path, run_cli: RunCli, dialect: str
) -> None:
    life = lives(tmp_path, dialect)
    run_id = life.start_run()
    plan = str(life.plan)
    made = move(
        run_cli, life, "new", plan, "--title", "Dark mode", "--draft", "A toggle.", "--kind", "ui"
    )
    task = made["task"]
    assert (made["before"], made["after"], made["status"], made["run"]) == (
        "draft",
        "draft",
        "OPEN",
        run_id,
    )
    assert made["next"] == f"taskhand submit {task} {made['plan']}"
    data = shown(run_cli, life)[task]
    assert set(data) >= LIFECYCLE_KEYS
    assert (data["lifecycle"], data["waiting"], data["moves"], data["working"]) == (
        "draft",
        True,
        ["submit", "comment", "park"],
        False,
    )
    assert data["waits_for"] == "a person to submit the draft"

    assert move(run_cli, life, "submit", task, plan)["after"] == "spec"
    life.ask(task, L.SPEC, ("Where should it live?", ["Header", "Settings"]))
    data = shown(run_cli, life)[task]
    assert (data["lifecycle"], data["waiting"], data["waits_for"]) == (
        "needs-input",
        True,
        "an answer to Q1",
    )
    assert data["moves"] == ["answer", "respond", "comment", "park"]
    assert data["questions"] == [
        {
            "number": 1,
            "text": "Where should it live?",
            "options": ["Header", "Settings"],
            "open": True,
            "choice": None,
            "note": None,
        }
    ]
    bad = refused(run_cli, "answer", task, "Q1", "z", plan)
    assert "has no option 'z'" in bad["error"] and "a, b" in bad["fix"]
    answered = move(run_cli, life, "answer", task, "Q1", "b", plan, "--note", "Less clutter.")
    assert (answered["after"], answered["waiting"]) == ("spec", False)
    assert shown(run_cli, life)[task]["questions"][0]["choice"] == "b"

    life.put(task, L.PLANNED, waiting=True, request="Approve the plan.")
    assert move(run_cli, life, "revise", task, "Fewer files.", plan)["after"] == "plan"
    life.put(task, L.PLANNED, waiting=True, request="Approve the plan.")
    assert move(run_cli, life, "approve", task, plan)["after"] == "prototype"
    life.put(task, L.PROTOTYPE, waiting=True, request="Review the prototype.")
    assert move(run_cli, life, "comment", task, "Larger.", plan)["waiting"] is False
    life.put(task, L.PROTOTYPE, waiting=True, request="Review the prototype.")
    assert move(run_cli, life, "accept", task, plan)["after"] == "ready"
    parked = move(run_cli, life, "park", task, "Not this sprint.", plan)
    assert (parked["after"], parked["status"], parked["waiting"]) == ("parked", "WAIT", True)
    data = shown(run_cli, life)[task]
    assert (data["lifecycle"], data["status"], data["moves"]) == ("parked", "WAIT", ["reopen"])
    assert data["waits_for"] == "a reopen (Not this sprint.)"
    reopened = move(run_cli, life, "reopen", task, plan)
    assert (reopened["after"], reopened["next"]) == ("ready", f"taskhand resume {run_id}")

    # The text form: what moved, then what happens next.
    text = run_cli("park", task, "Blocked.", plan)
    assert text.exit_code == 0, text.output
    assert text.output.splitlines() == [
        f"parked {task}: ready -> parked (WAIT, waiting for a person)",
        f"next: taskhand reopen {task} {parked['plan']}",
    ]
    listing = run_cli("show", plan).output
    assert f"[?] WAIT parked {task}: Dark mode" in listing
    assert "waits for a reopen (Blocked.)" in listing
    one_task = run_cli("show", plan, task).output
    assert "Lifecycle: parked (full pipeline), waits for a reopen (Blocked.)" in one_task
    assert "Moves: reopen" in one_task


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_refused_move_names_the_moves_open(tmp_path: Path, run_cli: RunCli, dialect: str) -> None:
    life = lives(tmp_path, dialect)
    one, _ = life.ids
    plan = str(life.plan)
    before = life.files()
    error = refused(run_cli, "approve", one, plan)
    assert error["error"] == f"{one} is spec: approve is not open there"
    assert f"taskhand comment {one} " in error["fix"] and f"taskhand park {one} " in error["fix"]
    text = run_cli("approve", one, plan)
    lines = text.output.strip().splitlines()
    assert text.exit_code == 1 and len(lines) == 1
    assert lines[0].startswith(f"taskhand: error: {one} is spec: approve is not open there (fix: ")
    assert refused(run_cli, "answer", one, "Q1", "a", plan)["error"] == (
        f"{one} is spec: answer is not open there"
    )
    life.put(one, L.PLANNED, waiting=True, request="Approve the plan.")
    before = life.files()
    assert "the revise says nothing" in refused(run_cli, "revise", one, " ", plan)["error"]
    assert "no task T-404" in refused(run_cli, "submit", "T-404", plan)["error"]
    assert life.files() == before


def test_moves_take_the_plan_of_the_latest_run_by_default(tmp_path: Path, run_cli: RunCli) -> None:
    life = lives(tmp_path, "tasktrack")
    life.start_run()
    moved = move(run_cli, life, "park", "FOO-2", "Later.", "--repo", str(life.repo))
    assert moved["after"] == "parked"
    assert move(run_cli, life, "reopen", "FOO-2", "--repo", str(life.repo))["after"] == "spec"


def test_the_default_pipeline_shows_its_five_codes_and_moves(
    tmp_path: Path, run_cli: RunCli
) -> None:
    life = lives(tmp_path, "tasktrack", pipeline="default")
    plan = str(life.plan)
    data = shown(run_cli, life)["FOO-1"]
    assert (data["lifecycle"], data["pipeline"], data["moves"]) == (
        "ready",
        "default",
        ["comment", "park"],
    )
    before = run_cli("show", plan).output
    assert "[ ] OPEN FOO-1: Task FOO-1" in before and "ready" not in before
    moved = move(run_cli, life, "park", "FOO-1", "Needs a decision.", plan)
    assert moved["status"] == "WAIT"
    assert "[?] WAIT parked FOO-1" in run_cli("show", plan).output
    assert move(run_cli, life, "reopen", "FOO-1", plan)["after"] == "ready"
    assert "[ ] OPEN FOO-1: Task FOO-1" in run_cli("show", plan).output
    assert (
        (life.plan / "FOO-1.md")
        .read_text()
        .endswith(
            "**Request**: Parked: Needs a decision. "
            f"To go on: taskhand reopen FOO-1 {moved['plan']}.\n\n**Response**: Reopened.\n"
        )
    )


def test_a_move_names_what_takes_the_task_on_and_no_run_that_is_not_there(
    tmp_path: Path, run_cli: RunCli
) -> None:
    life = lives(tmp_path, "markdown")
    run_id = life.start_run()
    one = life.ids[0]
    # Parked at its delivery: reopened, a run delivers it; none is under way to do it now.
    life.put(one, L.PARKED, waiting=True, resume="done", request="Parked: deliver: gh failed.")
    text = run_cli("reopen", one, str(life.plan))
    assert text.exit_code == 0, text.output
    assert "the run under way" not in text.output
    assert text.output.splitlines()[-1] == (
        f"next: taskhand resume {run_id} (or taskhand run {life.plan} with your options)"
    )
