"""The full pipeline with the replay agent, through the library: every role's unit runs in its
stage, the lifecycle moves as the design says, the documents land where each dialect keeps
them, people's gates stop the run, and hard stops park the task."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from taskhand.pipeline.lifecycle import plan_key
from taskhand.plan.model import Status
from taskhand.plan.validate import validate
from taskhand.run import launch, moves
from taskhand.run.preflight import load
from taskhand.state.life import Lifecycle
from taskhand.state.paths import StateDir
from taskhand.state.store import Store
from tests.conftest import RunCli
from tests.plans import md_task, tt_plan, tt_task
from tests.runs import Recorder, make_repo, run_plan, write

SVG = "<svg xmlns='http://www.w3.org/2000/svg' width='1440' height='90'><text>Toggle</text></svg>"
CRITERIA = "- `$ test -f toggle.txt` passes\n- [found] the toggle shows in the header\n"


def plan_repo(tmp_path: Path, dialect: str, kind: str = "ui") -> Path:
    """A repository whose plan holds one task, T-001 (TaskTrack: FOO-1), of `kind`."""
    if dialect == "markdown":
        body = f"## Description\nUsers want a dark theme.\n\n## Acceptance criteria\n{CRITERIA}"
        files = {
            "plan/overview.md": "# Dark mode\n\n## Goal\nA dark theme.\n",
            "plan/T-001-toggle.md": md_task("T-001", "Dark mode toggle", body, kind=kind),
        }
    else:
        plan = tt_plan([[("FOO-1", "OPEN")]])
        plan["FOO-1.md"] = tt_task("FOO-1", "Task FOO-1", criteria=CRITERIA.rstrip()).replace(
            "**Dependencies**", f"**Kind**: {kind}\n\n**Dependencies**"
        )
        files = {f"plan/{name}": str(text) for name, text in plan.items()}
    return make_repo(tmp_path / "repo", files)


def task_id(dialect: str) -> str:
    return "T-001" if dialect == "markdown" else "FOO-1"


def replay(tmp_path: Path, task: str, roles: dict[str, list[dict[str, Any]]]) -> Path:
    path = tmp_path / "replay.json"
    implement = [{"actions": [write("toggle.txt", "on\n")], "resolution": "Added it."}]
    path.write_text(json.dumps({"tasks": {task: implement}, "roles": {task: roles}}))
    return path


def roles_of(repo: Path, run_id: str, task: str) -> list[str]:
    with Store.open(StateDir.for_repo(repo).database) as store:
        return [str(u.role) for u in store.units(run_id, task)]


def life(repo: Path, task: str) -> Any:
    with Store.open(StateDir.for_repo(repo).database) as store:
        return store.life(plan_key(load(repo / "plan")), task)


@pytest.mark.parametrize("dialect", ["markdown", "tasktrack"])
def test_with_full_autonomy_a_ui_task_goes_from_spec_to_done(tmp_path: Path, dialect: str) -> None:
    repo = plan_repo(tmp_path, dialect)
    task = task_id(dialect)
    script = replay(
        tmp_path,
        task,
        {
            "writer": [{"resolution": "# Spec\n\nA toggle in the header."}],
            "planner": [{"resolution": "1. Write toggle.txt."}],
            "designer": [{"actions": [write("prototype.svg", SVG)], "resolution": "A header."}],
        },
    )
    settings = {"pipeline": "full", "autonomy": "full"}
    summary, record = run_plan(repo / "plan", repo, script, settings=settings)
    assert summary.status == "completed"
    assert roles_of(repo, summary.run_id, task) == [
        "writer", "explorer", "planner", "designer", "tester", "implementer", "qa", "judge"
    ]  # fmt: skip
    moves = [(e.data["before"], e.data["after"]) for e in record.of("task_moved")]
    assert moves == [
        ("spec", "plan"), ("plan", "prototype"), ("prototype", "ready"),
        ("ready", "implementing"), ("implementing", "qa"), ("qa", "judge"), ("judge", "done"),
    ]  # fmt: skip
    artifacts = StateDir.for_repo(repo).artifacts(repo / "plan", task)
    assert (artifacts / "prototype.svg").read_text() == SVG
    plan = load(repo / "plan")
    if dialect == "markdown":  # the spec and plan are sections of the task file
        text = (repo / "plan" / "T-001-toggle.md").read_text()
        assert "## Spec\n\n# Spec\n\nA toggle in the header." in text
        assert "## Plan\n\n1. Write toggle.txt." in text
        assert plan.tasks[0].documents["plan"] == "1. Write toggle.txt."
    else:  # a processing run may not rewrite a TaskTrack file: they are artifacts
        assert (artifacts / "spec.md").read_text() == "# Spec\n\nA toggle in the header.\n"
        assert (artifacts / "plan.md").read_text() == "1. Write toggle.txt.\n"
        assert plan.tasks[0].status is Status.DONE
        assert validate(repo / "plan").ok()


@pytest.mark.parametrize("dialect", ["markdown", "tasktrack"])
def test_a_prototype_round_that_leaves_no_picture_gets_a_note_in_the_log(
    tmp_path: Path, dialect: str
) -> None:
    repo = plan_repo(tmp_path, dialect)
    task = task_id(dialect)
    script = replay(tmp_path, task, {"designer": [{"resolution": "The route /dark."}]})
    summary, _ = run_plan(
        repo / "plan", repo, script, settings={"pipeline": "full", "autonomy": "full"}
    )
    assert summary.status == "completed"
    note = "- prototype round 1 left no picture: review the route in the app"
    if dialect == "markdown":
        text = (repo / "plan" / "T-001-toggle.md").read_text()
        assert f"\n## Log\n\n{note}\n" in text
        assert not validate(repo / "plan").errors
    else:  # beside its spec and plan, in the task's artifacts
        artifacts = StateDir.for_repo(repo).artifacts(repo / "plan", task)
        assert (artifacts / "log.md").read_text() == f"{note}\n"


def test_a_tasktrack_request_names_no_path_of_this_machine(tmp_path: Path, run_cli: RunCli) -> None:
    repo = plan_repo(tmp_path, "tasktrack", kind="ui")
    script = replay(tmp_path, "FOO-1", {})
    summary, _ = run_plan(repo / "plan", repo, script, settings={"pipeline": "full"})
    moves.approve("FOO-1", repo / "plan", repo)
    assert launch.resume(summary.run_id, Recorder(), repo).status == "waiting"
    assert life(repo, "FOO-1").status is Lifecycle.PROTOTYPE
    text = (repo / "plan" / "FOO-1.md").read_text()
    state = str(StateDir.for_repo(repo).root)
    assert state not in text and str(tmp_path) not in text
    assert (
        "**Request**: Review the prototype (no picture (review the route in the app), in the "
        "task's artifacts (taskhand show PLAN TASK names the folder)): taskhand accept FOO-1"
    ) in text
    # Where the command says: the folder, on this machine, for the person who asks.
    shown = run_cli("show", repo / "plan", "FOO-1")
    artifacts = StateDir.for_repo(repo).artifacts(repo / "plan", "FOO-1")
    assert f"\nArtifacts: {artifacts}\n" in shown.output


@pytest.mark.parametrize("dialect", ["markdown", "tasktrack"])
def test_gated_the_plan_waits_for_a_person_and_the_run_exits_waiting(
    tmp_path: Path, dialect: str
) -> None:
    repo = plan_repo(tmp_path, dialect, kind="logic")
    task = task_id(dialect)
    script = replay(tmp_path, task, {})
    summary, record = run_plan(repo / "plan", repo, script, settings={"pipeline": "full"})
    assert summary.status == "waiting"
    assert "TaskTrack EXIT: Waiting for Human Feedback" in record.steps()
    assert roles_of(repo, summary.run_id, task) == ["writer", "explorer", "planner"]
    now = life(repo, task)
    assert (now.status, now.waiting) == (Lifecycle.PLANNED, True)
    if dialect == "tasktrack":
        text = (repo / "plan" / "FOO-1.md").read_text()
        assert "**Status**: WAIT" in text
        # A file people commit names no path of this machine: the command that shows it.
        assert (
            str(StateDir.for_repo(repo).root) not in text
            and "/" not in text.split("**Request**")[1]
        )
        assert (
            "**Request**: Approve the plan (in plan.md in the task's artifacts (taskhand show "
            "PLAN TASK names the folder)): taskhand approve FOO-1" in text
        )
        assert validate(repo / "plan").ok()
    # Approved (as `taskhand approve` will record it), the next run goes on to the code.
    with Store.open(StateDir.for_repo(repo).database) as store:
        store.set_life(plan_key(load(repo / "plan")), task, Lifecycle.READY)
        store.set_task(summary.run_id, task, Status.OPEN)
    if dialect == "tasktrack":
        path = repo / "plan" / "FOO-1.md"
        path.write_text(path.read_text().replace("**Status**: WAIT", "**Status**: OPEN"))
        overview = repo / "plan" / "FOO-TaskTrack.md"
        if overview.exists():
            overview.write_text(overview.read_text().replace("[WAIT]", "[OPEN]"))
    summary = launch.resume(summary.run_id, Recorder(), repo)
    assert summary.status == "completed"
    assert roles_of(repo, summary.run_id, task)[3:] == ["tester", "implementer", "qa", "judge"]


@pytest.mark.parametrize("dialect", ["markdown", "tasktrack"])
def test_a_question_is_written_into_the_task_with_lettered_options(
    tmp_path: Path, dialect: str
) -> None:
    repo = plan_repo(tmp_path, dialect, kind="logic")
    task = task_id(dialect)
    asked = {
        "outcome": "question",
        "question": "Where should the toggle live?",
        "options": ["Header, right of the nav", "Settings page only"],
    }
    script = replay(tmp_path, task, {"writer": [asked]})
    summary, record = run_plan(repo / "plan", repo, script, settings={"pipeline": "full"})
    assert summary.status == "waiting"
    now = life(repo, task)
    assert (now.status, now.waiting, now.resume) == (Lifecycle.NEEDS_INPUT, True, "spec")
    if dialect == "markdown":
        text = (repo / "plan" / "T-001-toggle.md").read_text()
        assert (
            "## Questions\n\n### Q1 · Where should the toggle live? · open\n\n"
            "- (a) Header, right of the nav — recommended\n- (b) Settings page only\n\n"
            "> **Answer:**"
        ) in text
        assert validate(repo / "plan").ok()
    else:
        text = (repo / "plan" / "FOO-1.md").read_text()
        assert (
            "**Request**: Q1: Where should the toggle live? Options: (a) Header, right of the "
            "nav — recommended; (b) Settings page only."
        ) in text
        assert validate(repo / "plan").ok()
    assert [e.data["number"] for e in record.of("question_asked")] == [1]


@pytest.mark.parametrize("options", [["Header"], [], ["a", "b", "c", "d", "e"]])
def test_a_question_without_2_to_4_options_is_the_agents_error_and_it_asks_again(
    tmp_path: Path, options: list[str]
) -> None:
    repo = plan_repo(tmp_path, "markdown", kind="logic")
    wrong = {"outcome": "question", "question": "Where should it live?", "options": options}
    right = {**wrong, "options": ["Header", "Settings"]}
    script = replay(tmp_path, "T-001", {"writer": [wrong, right]})
    summary, _ = run_plan(repo / "plan", repo, script, settings={"pipeline": "full"})
    assert summary.status == "waiting"
    with Store.open(StateDir.for_repo(repo).database) as store:
        asked = store.questions(plan_key(load(repo / "plan")), "T-001")
        writers = [u for u in store.units(summary.run_id, "T-001") if u.role == "writer"]
        attempts = store.attempts(summary.run_id, "T-001")
    assert len(writers) == 2  # the first unit's question was refused, the second's recorded
    assert [(q.number, q.options) for q in asked] == [(1, ["Header", "Settings"])]
    # The first try ended as the agent's error, saying what was wrong with its question.
    said = attempts[0].reason or ""
    assert "needs 2 to 4 lettered options (non-empty), the recommended one first" in said
    assert f"it gave {len(options)}" in said
    text = (repo / "plan" / "T-001-toggle.md").read_text()
    assert "- (a) Header — recommended\n- (b) Settings\n" in text


def test_a_qa_rejection_bounces_and_the_bounce_limit_parks_the_task(tmp_path: Path) -> None:
    repo = plan_repo(tmp_path, "markdown", kind="logic")
    reject = {
        "verdict": "reject",
        "category": "acceptance_gap",
        "concern": "The toggle is missing from the header.",
        "next_step": "Add it to the header.",
    }
    script = replay(tmp_path, "T-001", {"qa": [reject]})
    settings = {"pipeline": "full", "autonomy": "full"}
    summary, _ = run_plan(repo / "plan", repo, script, settings=settings, bounces=2)
    assert summary.status == "waiting"  # parked: a person reopens it
    now = life(repo, "T-001")
    assert (now.status, now.bounces, now.resume) == (Lifecycle.PARKED, 2, "implementing")
    assert "the reviewer rejected 2 attempts" in (now.reason or "")
    # The second implementer saw the rejection, word for word.
    with Store.open(StateDir.for_repo(repo).database) as store:
        units = [u for u in store.units(summary.run_id, "T-001") if u.role == "implementer"]
        transcript = Path(units[1].transcript or "").read_text()
    assert "The toggle is missing from the header." in transcript


def test_a_worker_that_gives_up_parks_the_task_with_its_reason(tmp_path: Path) -> None:
    repo = plan_repo(tmp_path, "tasktrack", kind="logic")
    script = replay(
        tmp_path, "FOO-1", {"writer": [{"outcome": "failed", "failure": "no such product"}]}
    )
    run_plan(repo / "plan", repo, script, settings={"pipeline": "full"})
    now = life(repo, "FOO-1")
    assert (now.status, now.waiting, now.resume) == (Lifecycle.PARKED, True, "spec")
    text = (repo / "plan" / "FOO-1.md").read_text()
    assert "**Status**: WAIT" in text  # parked is WAIT in TaskTrack, never FAIL
    assert "**Request**: Parked: no such product. To retry: taskhand reopen FOO-1." in text
    assert validate(repo / "plan").ok()


def test_prototype_rounds_are_capped(tmp_path: Path) -> None:
    repo = plan_repo(tmp_path, "markdown", kind="ui")
    script = replay(tmp_path, "T-001", {})
    settings = {"pipeline": "full", "autonomy": "full"}
    with Store.open(StateDir.for_repo(repo).database) as store:  # two rounds used already
        store.set_life(plan_key(load(repo / "plan")), "T-001", Lifecycle.PROTOTYPE, round_done=True)
        store.set_life(plan_key(load(repo / "plan")), "T-001", Lifecycle.PROTOTYPE, round_done=True)
    summary, _ = run_plan(repo / "plan", repo, script, settings=settings, prototype_rounds=2)
    now = life(repo, "T-001")
    assert (now.status, now.resume) == (Lifecycle.PARKED, "prototype")
    assert now.reason == "the prototype's 2 rounds are used up"
    assert roles_of(repo, summary.run_id, "T-001") == []


def answer_by_hand(repo: Path, task: str, response: str) -> None:
    """What a person does by hand in a TaskTrack plan: a Response below the Request, OPEN."""
    path = repo / "plan" / f"{task}.md"
    text = path.read_text().replace("**Status**: WAIT", "**Status**: OPEN")
    path.write_text(text.rstrip("\n") + f"\n\n**Response**: {response}\n")
    overview = repo / "plan" / "FOO-TaskTrack.md"
    overview.write_text(overview.read_text().replace(f"[WAIT] {task}", f"[OPEN] {task}"))
    assert validate(repo / "plan").ok()


def test_a_response_written_by_hand_is_the_move_it_stands_for(tmp_path: Path) -> None:
    repo = plan_repo(tmp_path, "tasktrack", kind="logic")
    script = replay(
        tmp_path, "FOO-1", {"planner": [{"resolution": "Plan A."}, {"resolution": "Plan B."}]}
    )
    summary, _ = run_plan(repo / "plan", repo, script, settings={"pipeline": "full"})
    assert life(repo, "FOO-1").status == Lifecycle.PLANNED
    answer_by_hand(repo, "FOO-1", "Split the plan in two steps.")  # not an approval: changes
    summary = launch.resume(summary.run_id, Recorder(), repo)
    assert (life(repo, "FOO-1").status, summary.status) == (Lifecycle.PLANNED, "waiting")
    artifacts = StateDir.for_repo(repo).artifacts(repo / "plan", "FOO-1")
    assert (artifacts / "plan.md").read_text() == (
        "Plan B.\n\n### Review\n\nSplit the plan in two steps.\n"
    )
    answer_by_hand(repo, "FOO-1", "Approved.")
    summary = launch.resume(summary.run_id, Recorder(), repo)
    assert summary.status == "completed"
    assert roles_of(repo, summary.run_id, "FOO-1")[-4:] == ["tester", "implementer", "qa", "judge"]
    assert validate(repo / "plan").ok()


def test_each_role_runs_on_the_model_its_route_names(tmp_path: Path) -> None:
    repo = plan_repo(tmp_path, "markdown", kind="logic")
    script = replay(tmp_path, "T-001", {})
    routes = {"planner": {"model": "big-planner"}, "judge": {"agent": "replay", "model": "j-1"}}
    settings = {"pipeline": "full", "autonomy": "full", "model": "small", "routes": routes}
    summary, _ = run_plan(repo / "plan", repo, script, settings=settings)
    assert summary.status == "completed"
    with Store.open(StateDir.for_repo(repo).database) as store:
        models = {str(u.role): u.model for u in store.units(summary.run_id, "T-001")}
    assert models == {
        "writer": "small", "explorer": "small", "planner": "big-planner", "tester": "small",
        "implementer": "small", "qa": "small", "judge": "j-1",
    }  # fmt: skip
