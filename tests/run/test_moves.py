"""A person's moves as library calls, in both dialects, on real repositories and the real store:
each from a status that opens it, refused from one that does not (naming the moves open) and
while a unit works on the task, the task files valid after every move."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from taskhand.pipeline.lifecycle import plan_key
from taskhand.plan import validate
from taskhand.plan.formats import tasktrack_edit
from taskhand.plan.model import Status
from taskhand.run import feedback, moves
from taskhand.run.movement import MoveError, shown_plan
from taskhand.state import documents, lock
from taskhand.state.documents import Documents
from taskhand.state.events import EventKind
from taskhand.state.life import Lifecycle
from tests.lives import Lives, lives
from tests.plans import md_plan, tt_plan
from tests.runs import attempt, make_repo, run_plan, script, write

L = Lifecycle
DIALECTS = ["markdown", "tasktrack"]


def valid(life: Lives) -> None:
    """The plan validates with no error: a TaskTrack plan's files conform to the spec."""
    report = validate.validate(life.plan)
    assert report.errors == [], [p.render() for p in report.errors]


def task_text(life: Lives, task_id: str) -> str:
    task = life.load().task(task_id)
    assert task is not None and task.source is not None
    return task.source.read_text()


def refused(life: Lives, call: object, *parts: str) -> str:
    """A move refused as one line naming `parts`, leaving every file and record as it was."""
    files = life.files()
    records = [life.life(t) for t in life.ids]
    with pytest.raises(MoveError) as caught:
        call()  # type: ignore[operator]
    message = str(caught.value)
    assert "\n" not in message and "(fix: " in message, message
    for part in parts:
        assert part in message, message
    assert life.files() == files
    assert [life.life(t) for t in life.ids] == records
    return message


# -- new and submit --------------------------------------------------------------------------


@pytest.mark.parametrize("dialect", DIALECTS)
def test_new_writes_a_draft_with_the_next_free_id(tmp_path: Path, dialect: str) -> None:
    life = lives(tmp_path, dialect)
    moved = moves.new(life.plan, "Export as CSV", "People want their data out.\nA CSV will do.")
    new_id = "T-003" if dialect == "markdown" else "FOO-3"
    assert (moved.task, moved.after, moved.waiting, moved.status) == (
        new_id,
        L.DRAFT,
        False,
        Status.OPEN,
    )
    assert moved.next == f"taskhand submit {new_id} {moved.plan}"
    valid(life)
    text = task_text(life, new_id)
    assert "People want their data out.\nA CSV will do." in text
    if dialect == "markdown":
        assert moved.file is not None and moved.file.endswith("T-003-export-as-csv.md")
        assert text.startswith("---\nid: T-003\ntitle: Export as CSV\n---\n\n## Description\n")
    else:
        overview = (life.plan / "FOO-TaskTrack.md").read_text()
        assert overview.endswith("* [OPEN] FOO-2: Task FOO-2\n* [OPEN] FOO-3: Export as CSV\n")
        assert text.startswith("# FOO-3: Export as CSV\n\n**Status**: OPEN\n")
    record = life.life(new_id)
    assert record is not None and record.status is L.DRAFT

    submitted = moves.submit(new_id, life.plan)
    assert (submitted.before, submitted.after, submitted.waiting) == (L.DRAFT, L.SPEC, False)
    assert submitted.next == f"taskhand run {submitted.plan}"
    valid(life)
    refused(life, lambda: moves.submit(new_id, life.plan), f"{new_id} is spec", "comment", "park")


@pytest.mark.parametrize("dialect", DIALECTS)
def test_new_writes_the_first_task_of_a_plan_that_has_only_its_overview(
    tmp_path: Path, dialect: str
) -> None:
    if dialect == "markdown":
        files = {"overview.md": "# Feature\n\n## Goal\nShip it.\n"}
    else:  # the overview alone: no phase, no task
        files = {k: str(v) for k, v in tt_plan([]).items()}
    repo = make_repo(tmp_path / "repo", {f"plan/{k}": v for k, v in files.items()})
    assert validate.validate(repo / "plan").errors  # no task yet: the plan cannot run
    moved = moves.new(repo / "plan", "Export as CSV", "People want their data out.")
    assert (moved.task, moved.after) == ("T-001" if dialect == "markdown" else "FOO-1", L.DRAFT)
    plan = validate.validate(repo / "plan").require()
    assert [t.id for t in plan.tasks] == [moved.task]
    if dialect == "tasktrack":
        overview = (repo / "plan" / "FOO-TaskTrack.md").read_text()
        assert overview.endswith("\n\n## 1: Tasks\n\n* [OPEN] FOO-1: Export as CSV\n")


def test_a_new_ui_task_keeps_its_kind_and_its_approved_plan_goes_to_a_prototype(
    tmp_path: Path,
) -> None:
    life = lives(tmp_path, "tasktrack")
    moved = moves.new(life.plan, "Dark mode", "A toggle.", kind="ui")
    assert "**Kind**: ui\n" in task_text(life, moved.task)  # taskhand's field in the file
    life.put(moved.task, L.PLANNED, waiting=True)
    assert moves.approve(moved.task, life.plan).after is L.PROTOTYPE
    markdown = lives(tmp_path / "md", "markdown")
    drafted = moves.new(markdown.plan, "Dark mode", "A toggle.", kind="ui")
    assert "kind: ui\n" in task_text(markdown, drafted.task)


def test_a_draft_on_the_default_pipeline_is_submitted_to_ready(tmp_path: Path) -> None:
    life = lives(tmp_path, "markdown", pipeline="default")
    moved = moves.new(life.plan, "Tidy up", "Remove the dead code.")
    assert moves.submit(moved.task, life.plan).after is L.READY


def test_no_run_takes_a_draft_on_the_default_pipeline_until_it_is_submitted(
    tmp_path: Path,
) -> None:
    files = {f"plan/{k}": str(v) for k, v in md_plan(("T-001", {})).items()}
    repo = make_repo(tmp_path / "repo", files)
    drafted = moves.new(repo / "plan", "Tidy up", "Remove the dead code.").task
    work = {t: [attempt(write(f"{t}.txt", "x\n"))] for t in ("T-001", drafted)}
    summary, record = run_plan(repo / "plan", repo, script(tmp_path, work))
    assert summary.status == "waiting"  # the draft waits for a person, as a question would
    assert {e.task_id for e in record.of("attempt_started")} == {"T-001"}
    moves.submit(drafted, repo / "plan")
    summary, record = run_plan(repo / "plan", repo, script(tmp_path, work))
    assert summary.status == "completed"
    assert {e.task_id for e in record.of("attempt_started")} == {drafted}


@pytest.mark.parametrize("dialect", DIALECTS)
def test_new_refuses_what_would_break_the_plan_and_writes_nothing(
    tmp_path: Path, dialect: str
) -> None:
    life = lives(tmp_path, dialect)
    refused(life, lambda: moves.new(life.plan, "  ", "text"), "the title is empty")
    refused(life, lambda: moves.new(life.plan, "A title", " \n"), "the draft is empty")
    refused(life, lambda: moves.new(life.plan, "A title", "x", kind="big"), "kind 'big'")


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_draft_that_looks_like_fields_or_sections_stays_its_text(
    tmp_path: Path, dialect: str
) -> None:
    life = lives(tmp_path, dialect)
    sneaky = "Finish it.\n\n**Status**: DONE\n## Acceptance criteria\n- `$ true` passes"
    moved = moves.new(life.plan, "Sneaky", sneaky)
    task = validate.validate(life.plan).require().task(moved.task)
    assert task is not None and task.description == sneaky
    assert task.status is Status.OPEN and task.criteria == []
    assert life.life(moved.task).status is L.DRAFT


# -- the interview ---------------------------------------------------------------------------


@pytest.mark.parametrize("dialect", DIALECTS)
def test_answers_flip_questions_and_the_last_one_returns_the_task_to_its_stage(
    tmp_path: Path, dialect: str
) -> None:
    life = lives(tmp_path, dialect)
    run_id = life.start_run()
    one, _ = life.ids
    life.ask(
        one,
        L.SPEC,
        ("Where should the toggle live?", ["Header", "Settings page only"]),
        ("Which default?", ["Light", "Dark", "The system's"]),
    )
    valid(life)
    if dialect == "markdown":
        assert "### Q1 · Where should the toggle live? · open" in task_text(life, one)

    refused(
        life,
        lambda: moves.answer(one, "Q9", "a", plan_path=life.plan),
        "no question 'Q9'",
        "Q1, Q2",
    )
    refused(
        life, lambda: moves.answer(one, "Q1", "c", plan_path=life.plan), "has no option 'c'", "a, b"
    )
    refused(
        life, lambda: moves.approve(one, life.plan), "needs-input", "taskhand answer", "respond"
    )

    first = moves.answer(one, "Q1", "a", plan_path=life.plan)
    assert (first.after, first.waiting, first.status) == (L.NEEDS_INPUT, True, Status.WAIT)
    assert first.next == f"taskhand answer {one} Q2 a {first.plan}"
    valid(life)
    refused(
        life, lambda: moves.answer(one, "q1", "b", plan_path=life.plan), "answered already", "Q2"
    )
    text = task_text(life, one)
    if dialect == "markdown":
        assert "### Q1 · Where should the toggle live? · answered" in text
        assert "> **Answer:** (a) Header — recommended" in text
        assert "### Q2 · Which default? · open" in text
    else:
        assert (
            "**Response**: Q1: (a) Header — recommended\n\n**Request**: Q2: Which default?" in text
        )
        assert "**Status**: WAIT" in text

    last = moves.answer(one, "2", "(c)", note="Follow the OS.", plan_path=life.plan)
    assert (last.after, last.waiting, last.status) == (L.SPEC, False, Status.OPEN)
    assert last.next == f"taskhand resume {run_id}"
    valid(life)
    text = task_text(life, one)
    if dialect == "markdown":
        assert "> **Answer:** (c) The system's Follow the OS." in text
        assert "· open" not in text
    else:
        assert text.rstrip().endswith("**Response**: Q2: (c) The system's — Follow the OS.")
        assert "**Status**: OPEN" in text
        assert f"* [OPEN] {one}" in (life.plan / "FOO-TaskTrack.md").read_text()
    with life.store() as store:
        answers = [(q.choice, q.note) for q in store.questions(plan_key(life.load()), one)]
        moved = [e.data for e in store.events_of(run_id, EventKind.TASK_MOVED)]
    assert answers == [("a", None), ("c", "Follow the OS.")]
    assert [(m["before"], m["after"], m["by"]) for m in moved] == [
        ("needs-input", "needs-input", "answer"),
        ("needs-input", "spec", "answer"),
    ]


@pytest.mark.parametrize("dialect", DIALECTS)
def test_respond_answers_the_open_question_in_words(tmp_path: Path, dialect: str) -> None:
    life = lives(tmp_path, dialect)
    one, _ = life.ids
    life.ask(one, L.PLAN, ("Which library?", ["stdlib", "requests"]))
    refused(life, lambda: moves.respond(one, "   ", life.plan), "the answer is empty")
    moved = moves.respond(one, "Neither: use httpx.", life.plan)
    assert (moved.after, moved.waiting) == (L.PLAN, False)
    valid(life)
    with life.store() as store:
        [question] = store.questions(plan_key(life.load()), one)
    assert (question.choice, question.note, question.open) == ("", "Neither: use httpx.", False)
    if dialect == "tasktrack":
        assert task_text(life, one).rstrip().endswith("**Response**: Q1: Neither: use httpx.")


# -- the plan gate and the prototype ----------------------------------------------------------


@pytest.mark.parametrize("dialect", DIALECTS)
def test_approve_sends_a_plan_on(tmp_path: Path, dialect: str) -> None:
    life = lives(tmp_path, dialect)
    one, two = life.ids
    refused(life, lambda: moves.approve(two, life.plan), f"{two} is spec", "approve is not open")
    life.put(two, L.PLANNED, waiting=True, request="Approve the plan.")
    moved = moves.approve(two, life.plan)
    assert (moved.before, moved.after, moved.status) == (L.PLANNED, L.READY, Status.OPEN)
    valid(life)
    if dialect == "tasktrack":
        text = task_text(life, two)
        assert text.endswith("**Request**: Approve the plan.\n\n**Response**: Approved.\n")
        assert "**Status**: OPEN" in text
    else:
        life.put(one, L.PLANNED, waiting=True)
        assert moves.approve(one, life.plan).after is L.PROTOTYPE  # kind: ui


@pytest.mark.parametrize("dialect", DIALECTS)
def test_revise_adds_a_review_block_per_round(tmp_path: Path, dialect: str) -> None:
    life = lives(tmp_path, dialect)
    _, two = life.ids
    life.put(two, L.PLANNED, waiting=True)
    refused(life, lambda: moves.revise(two, "  ", life.plan), "the revise says nothing")
    moved = moves.revise(two, "Keep the old API.", life.plan)
    assert (moved.after, moved.waiting, moved.status) == (L.PLAN, False, Status.OPEN)
    valid(life)
    refused(life, lambda: moves.revise(two, "More.", life.plan), "back with the planner")
    life.put(two, L.PLANNED, waiting=True)
    moves.revise(two, "And add a test.", life.plan)
    valid(life)
    task = life.load().task(two)
    assert task is not None
    from taskhand.state.documents import PLAN, Documents

    plan_text = Documents(life.load(), life.state).read(task, PLAN)
    assert re.findall(r"### Review\n\n(.*)", plan_text) == ["Keep the old API.", "And add a test."]
    if dialect == "markdown":
        assert "## Plan\n\n### Review\n\nKeep the old API." in task_text(life, two)
    else:
        assert "**Response**: Revise: Keep the old API." in task_text(life, two)
    with life.store() as store:
        said = [(r.kind, r.text) for r in store.remarks(plan_key(life.load()), two)]
    assert said == [("revise", "Keep the old API."), ("revise", "And add a test.")]


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_prototype_is_accepted_or_commented_on(tmp_path: Path, dialect: str) -> None:
    life = lives(tmp_path, dialect)
    one, two = life.ids
    life.put(one, L.PROTOTYPE, waiting=True, request="Review the prototype.")
    refused(life, lambda: moves.comment(one, "", life.plan), "the comment is empty")
    again = moves.comment(one, "Bigger toggle.", life.plan)
    assert (again.after, again.waiting, again.status) == (L.PROTOTYPE, False, Status.OPEN)
    valid(life)
    refused(life, lambda: moves.accept(one, life.plan), "accept is not open")
    life.put(one, L.PROTOTYPE, waiting=True, request="Review round 2.")
    accepted = moves.accept(one, life.plan)
    assert (accepted.after, accepted.waiting) == (L.READY, False)
    valid(life)
    # A comment elsewhere is a note for the next unit: the status stays.
    life.put(two, L.IMPLEMENTING)
    noted = moves.comment(two, "Mind the cache.", life.plan)
    assert (noted.before, noted.after, noted.waiting) == (L.IMPLEMENTING, L.IMPLEMENTING, False)
    with life.store() as store:
        said = [r.text for r in store.remarks(plan_key(life.load()), two)]
    assert said == ["Mind the cache."]


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_prototype_comment_is_a_review_block_and_the_round_cap_refuses_one_more(
    tmp_path: Path, dialect: str
) -> None:
    life = lives(tmp_path, dialect)
    with (life.plan / "taskhand.toml").open("a") as settings:
        settings.write("prototype_rounds = 2\n")
    one = life.ids[0]
    life.put(one, L.PROTOTYPE, waiting=True, round_done=True, request="Review round 1.")
    moves.comment(one, "Bigger toggle.", life.plan)
    task = life.load().task(one)
    assert task is not None
    prototype = Documents(life.load(), life.state).read(task, documents.PROTOTYPE)
    assert prototype == "### Review\n\nBigger toggle."
    if dialect == "markdown":  # in the task's own file, apart from its description
        assert "\n## Prototype\n\n### Review\n\nBigger toggle.\n" in task_text(life, one)
        assert "Bigger toggle" not in task.description
    valid(life)
    # The second round was the last the cap allows: one more is refused at the move, naming
    # the cap, instead of a run that parks the task.
    life.put(one, L.PROTOTYPE, waiting=True, round_done=True, request="Review round 2.")
    message = refused(
        life,
        lambda: moves.comment(one, "Smaller again.", life.plan),
        f"{one}'s prototype has had its 2 rounds, the cap (prototype_rounds = 2)",
        f"taskhand accept {one}",
    )
    assert "raise prototype_rounds" in message
    assert moves.accept(one, life.plan).after is L.READY


# -- park and reopen --------------------------------------------------------------------------


@pytest.mark.parametrize("dialect", DIALECTS)
def test_park_and_reopen_return_a_task_where_it_was(tmp_path: Path, dialect: str) -> None:
    life = lives(tmp_path, dialect)
    run_id = life.start_run()
    one, two = life.ids
    life.put(two, L.PLANNED, waiting=True, request="Approve the plan.")
    refused(life, lambda: moves.park(two, " ", life.plan), "the reason is empty")
    parked = moves.park(two, "Waiting for the API team.", life.plan)
    assert (parked.after, parked.waiting, parked.status) == (L.PARKED, True, Status.WAIT)
    assert parked.next == f"taskhand reopen {two} {parked.plan}"
    valid(life)
    record = life.life(two)
    assert record is not None and (record.resume, record.reason) == (
        "planned",
        "Waiting for the API team.",
    )
    refused(life, lambda: moves.approve(two, life.plan), "parked", f"taskhand reopen {two}")
    refused(life, lambda: moves.park(two, "again", life.plan), "park is not open")
    if dialect == "tasktrack":
        text = task_text(life, two)
        assert "**Response**: Parked: Waiting for the API team.\n\n**Request**: Parked:" in text

    back = moves.reopen(two, life.plan)
    assert (back.after, back.waiting, back.status) == (L.PLANNED, True, Status.WAIT)
    valid(life)
    assert moves.approve(two, life.plan).after is L.READY

    # From a stage, park remembers it; reopen counts the caps afresh.
    life.put(one, L.QA, bounce=True)
    moves.park(one, "Flaky browser.", life.plan)
    reopened = moves.reopen(one, life.plan)
    assert (reopened.after, reopened.waiting, reopened.status) == (L.QA, False, Status.OPEN)
    assert reopened.next == f"taskhand resume {run_id}"
    record = life.life(one)
    assert record is not None and record.bounces == 0
    valid(life)


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_task_whose_pull_request_is_due_parks_and_reopens_to_it(
    tmp_path: Path, dialect: str
) -> None:
    """Done with its pull request due (the deliver stage's, until it opens one) is not
    finished: park and reopen are open, and a reopen brings the delivery back, shown OPEN."""
    life = lives(tmp_path, dialect)
    life.start_run()
    one, two = life.ids
    life.put(one, L.DONE, resume=L.DELIVERED)  # as the deliver stage leaves it when killed
    life.put(two, L.DONE, resume="")  # finished: no delivery is due
    refused(life, lambda: moves.park(two, "why", life.plan), "none: it is finished")
    moves.park(one, "The remote is down.", life.plan)
    valid(life)
    refused(life, lambda: moves.park(one, "again", life.plan), "park is not open")
    back = moves.reopen(one, life.plan)
    assert (back.after, back.waiting, back.status) == (L.DONE, False, Status.OPEN)
    record = life.life(one)
    assert record is not None and record.resume == L.DELIVERED
    valid(life)
    if dialect == "tasktrack":
        text = task_text(life, one)
        assert "**Status**: OPEN" in text and "**Resolution**" not in text


def test_reopen_of_a_failed_full_pipeline_task_starts_it_over(tmp_path: Path) -> None:
    life = lives(tmp_path, "tasktrack")
    life.start_run()
    one, _ = life.ids
    life.put(one, L.FAILED, reason="it broke")
    plan = life.load()
    with life.store() as store:
        from taskhand.state.status import StatusBook

        run = store.latest_run(plan_key(plan))
        assert run is not None
        book = StatusBook(plan, store, run.id)
        book.conclude(one, Status.FAIL, "it broke")
        book.complete(one, Status.FAIL)
    moved = moves.reopen(one, life.plan)
    assert (moved.before, moved.after, moved.status) == (L.FAILED, L.SPEC, Status.OPEN)
    assert "**Failure**" not in task_text(life, one)
    valid(life)


# -- while a unit works ----------------------------------------------------------------------


@pytest.mark.parametrize("dialect", DIALECTS)
def test_every_move_waits_while_a_unit_works_on_the_task(tmp_path: Path, dialect: str) -> None:
    life = lives(tmp_path, dialect)
    run_id = life.start_run()
    one, two = life.ids
    life.put(one, L.PLANNED, waiting=True)
    life.put(two, L.PLANNED, waiting=True)
    plan = life.load()
    with life.store() as store:
        from taskhand.state.status import StatusBook

        book = StatusBook(plan, store, run_id)
        book.select(one)
        book.claim(one)
    calls = [
        lambda: moves.approve(one, life.plan),
        lambda: moves.revise(one, "x", life.plan),
        lambda: moves.comment(one, "x", life.plan),
        lambda: moves.park(one, "x", life.plan),
        lambda: moves.reopen(one, life.plan),
        lambda: moves.respond(one, "x", life.plan),
        lambda: moves.answer(one, "Q1", "a", plan_path=life.plan),
        lambda: moves.accept(one, life.plan),
        lambda: moves.submit(one, life.plan),
    ]
    with lock.hold(life.state.lock(life.plan), life.plan, "a run"):
        for call in calls:
            refused(life, call, f"{one} is being worked on")
        # The run holds the plan; a task it does not work on moves all the same.
        moved = moves.approve(two, life.plan)
        assert moved.next == ""
    valid(life)


def test_the_files_lock_waits_for_another_writer_then_gives_up(tmp_path: Path) -> None:
    import fcntl
    import os

    life = lives(tmp_path, "tasktrack")
    fd = os.open(life.plan, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # another open file description: another writer
        with (
            pytest.raises(lock.FilesBusyError, match="stayed locked"),
            lock.files(life.plan, seconds=0.1),
        ):
            pass
    finally:
        os.close(fd)
    with lock.files(life.plan), lock.files(life.plan):  # reentrant within a move
        tasktrack_edit.read_raw(life.plan / "FOO-1.md")


def test_a_stopped_run_names_the_move_each_waiting_task_needs(tmp_path: Path) -> None:
    life = lives(tmp_path, "markdown")
    run_id = life.start_run()
    one, two = life.ids
    life.ask(one, L.SPEC, ("Which?", ["This", "That"]))
    life.put(two, L.PLANNED, waiting=True)
    shown = shown_plan(life.plan)
    assert feedback.left_for_a_person(life.repo, run_id) == [
        f"{one} waits for an answer to Q1",
        f"  next: taskhand answer {one} Q1 a {shown}",
        f"{two} waits for approval of the plan (or a revise)",
        f"  next: taskhand approve {two} {shown}",
    ]


def test_the_pipeline_is_read_from_the_plans_own_settings_file(tmp_path: Path) -> None:
    from taskhand import config
    from taskhand.pipeline import standing

    assert standing.SETTINGS == config.FILE
    assert standing.plan_pipeline(lives(tmp_path, "markdown").plan, None) == "full"
    assert standing.plan_pipeline(tmp_path, None) == "default"


# Each move from a status that does not open it: (move, status, waiting).
NOT_OPEN = [
    ("submit", L.READY, False),
    ("answer", L.PLANNED, True),
    ("respond", L.PLANNED, True),
    ("approve", L.PROTOTYPE, True),
    ("revise", L.DRAFT, False),
    ("comment", L.PARKED, True),
    ("accept", L.PLANNED, True),
    ("reopen", L.READY, False),
    ("park", L.DONE, False),
]


@pytest.mark.parametrize(("name", "status", "waiting"), NOT_OPEN)
def test_a_move_its_status_does_not_open_is_refused_with_the_open_ones(
    tmp_path: Path, name: str, status: Lifecycle, waiting: bool
) -> None:
    life = lives(tmp_path, "markdown")
    one, _ = life.ids
    life.put(one, status, waiting=waiting, reason="why")
    calls = {
        "submit": lambda: moves.submit(one, life.plan),
        "answer": lambda: moves.answer(one, "Q1", "a", plan_path=life.plan),
        "respond": lambda: moves.respond(one, "x", life.plan),
        "approve": lambda: moves.approve(one, life.plan),
        "revise": lambda: moves.revise(one, "x", life.plan),
        "comment": lambda: moves.comment(one, "x", life.plan),
        "accept": lambda: moves.accept(one, life.plan),
        "reopen": lambda: moves.reopen(one, life.plan),
        "park": lambda: moves.park(one, "x", life.plan),
    }
    message = refused(life, calls[name], f"{one} is {status}", f"{name} is not open there")
    if status is L.DONE:
        assert message.endswith("(fix: none: it is finished)")
    else:
        assert "the moves open are: taskhand " in message


@pytest.mark.parametrize(
    ("status", "waiting", "move"),
    [
        (L.PLANNED, True, "approve"),
        (L.PLANNED, True, "revise"),
        (L.PROTOTYPE, True, "accept"),
        (L.QA, False, "park"),
        (L.PARKED, True, "reopen"),
    ],
)
def test_where_a_move_lands_is_where_the_board_says(
    tmp_path: Path, status: Lifecycle, waiting: bool, move: str
) -> None:
    """`show --json` tells the board where each move sends a task (the column a drag onto it
    means); making the move puts the task exactly there."""
    from taskhand.pipeline import standing

    life = lives(tmp_path, "markdown")
    life.start_run()
    one, _ = life.ids
    if status is L.PARKED:
        life.put(one, L.QA)
        moves.park(one, "Flaky browser.", life.plan)
    else:
        life.put(one, status, waiting=waiting, request="Look at it.")
    _, found = standing.read(life.load(), repo=life.repo)
    said = found[one].as_json()["lands"]
    assert move in said, said
    made = {
        "approve": lambda: moves.approve(one, life.plan),
        "revise": lambda: moves.revise(one, "Smaller.", life.plan),
        "accept": lambda: moves.accept(one, life.plan),
        "park": lambda: moves.park(one, "Later.", life.plan),
        "reopen": lambda: moves.reopen(one, life.plan),
    }[move]()
    assert str(made.after) == said[move]
    # T-001 is a ui task: an approved plan goes to its prototype, a reopen back to qa.
    assert said.get("approve", "prototype") == "prototype"
    assert said.get("reopen", "qa") == "qa"
