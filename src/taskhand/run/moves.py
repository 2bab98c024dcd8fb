"""A person's moves on a task, one function each: new, submit, answer, respond, approve, revise,
comment, accept, reopen, park. Each is refused, as one line naming the moves that are open,
when the lifecycle's table (pipeline/lifecycle.py) does not open it or a unit works on the
task; else it lands through the desk (run/movement.py), which says what happens next.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from taskhand.pipeline import lifecycle
from taskhand.pipeline.lifecycle import Move
from taskhand.pipeline.standing import Standing
from taskhand.plan import drafts, validate
from taskhand.plan.model import Plan, Status, Task
from taskhand.plan.problems import Problem, display_path, relative_path
from taskhand.plan.validate import Report
from taskhand.run import feedback
from taskhand.run.addition import add_files
from taskhand.run.movement import ANSWER, Desk, Moved, MoveError, command, desk
from taskhand.state import documents
from taskhand.state.life import Lifecycle, Question
from taskhand.state.records import RunStatus
from taskhand.state.status import StatusBook
from taskhand.text import printable

L = Lifecycle
_NUMBER = re.compile(r"^[Qq]?(\d{1,6})$")


def new(
    plan_path: Path | None,
    title: str,
    draft: str,
    kind: str | None = None,
    repo: Path | None = None,
) -> Moved:
    """Write a new task into the plan as a draft, with the next free id; submit sends it on."""
    title = " ".join(title.split())
    if not title:
        raise MoveError('the title is empty (fix: give one: taskhand new --title "..." PLAN)')
    if not draft.strip():
        raise MoveError(
            'the draft is empty (fix: say what you want in a line or two: --draft "...")'
        )
    if kind is not None and kind not in drafts.KINDS:
        raise MoveError(
            f"kind {printable(kind)!r} is unknown (fix: use one of {', '.join(drafts.KINDS)})"
        )
    with desk(Move.NEW, plan_path, repo) as d:
        task, files = drafts.draft(d.plan, title, draft, kind)
        d.plan = _write_checked(d.plan, files)
        d.book = StatusBook(d.plan, d.store, d.book.run_id)
        written = d.plan.task(task.id)
        assert written is not None
        before = d.standings()[written.id]
        before = replace(before, life=replace(before.life, status=L.DRAFT))
        moved = d.land(written, before, Move.NEW, L.DRAFT, reason="a draft")
    return replace(moved, file=relative_path(written.source) if written.source else None)


def submit(task_id: str, plan_path: Path | None = None, repo: Path | None = None) -> Moved:
    """Send a draft on to its pipeline's first stage."""
    with desk(Move.SUBMIT, plan_path, repo) as d:
        task, where = d.task(task_id, Move.SUBMIT)
        d.check(Move.SUBMIT, where)
        first = _lands(Move.SUBMIT, where, task)
        return d.land(task, where, Move.SUBMIT, first, reason="submitted")


def answer(
    task_id: str,
    question: str,
    option: str,
    note: str = "",
    plan_path: Path | None = None,
    repo: Path | None = None,
) -> Moved:
    """Pick an option of an open question; once none is open, the stage that asked goes on."""
    with desk(Move.ANSWER, plan_path, repo) as d:
        task, where = d.task(task_id, Move.ANSWER)
        d.check(Move.ANSWER, where)
        asked = _question(task_id, question, where.questions)
        letters = [lifecycle.letter(i) for i in range(len(asked.options))]
        choice = option.strip().lower().strip("()")
        if choice not in letters:
            valid = ", ".join(letters) or "none (it asks for words)"
            example = (
                f"taskhand answer {task_id} Q{asked.number} {letters[0]} {d.shown}"
                if letters
                else f"taskhand respond {task_id} {ANSWER} {d.shown}"
            )
            raise MoveError(
                f"{task_id} Q{asked.number} has no option {printable(option)!r} "
                f"(fix: choose one of {valid}: {example})"
            )
        chosen = documents.option_line(asked, letters.index(choice))
        return _answered(d, task, where, asked, choice, note.strip(), Move.ANSWER, chosen)


def respond(
    task_id: str, text: str, plan_path: Path | None = None, repo: Path | None = None
) -> Moved:
    """Answer in free text: the task's open question, or else its request (a WAIT task's)."""
    with desk(Move.RESPOND, plan_path, repo, durable=False) as d:
        task, where = d.task(task_id, Move.RESPOND)
        _check(d, where, Move.RESPOND)
        if not text.strip():
            raise MoveError(
                f"the answer is empty (fix: write it: taskhand respond {task_id} "
                f'"your answer" {d.shown})'
            )
        opened = where.open_questions
        if opened:
            return _answered(d, task, where, opened[0], "", text.strip(), Move.RESPOND, "")
        d.store.remark(d.key, task.id, str(Move.RESPOND), text.strip())
        back = lifecycle.resumed(where.life.resume) or lifecycle.first_status(where.pipeline, task)
        return d.land(task, where, Move.RESPOND, back, resume="", response=text.strip())


def approve(task_id: str, plan_path: Path | None = None, repo: Path | None = None) -> Moved:
    """Approve the plan: a ui task goes on to its prototype, any other to ready."""
    with desk(Move.APPROVE, plan_path, repo) as d:
        task, where = d.task(task_id, Move.APPROVE)
        d.check(Move.APPROVE, where)
        after = _lands(Move.APPROVE, where, task)
        return d.land(
            task, where, Move.APPROVE, after, reason="the plan is approved", response="Approved."
        )


def revise(
    task_id: str, text: str, plan_path: Path | None = None, repo: Path | None = None
) -> Moved:
    """Send the plan back to the planner with what to change, as a `### Review` block at the
    end of the plan, which the next round reads and keeps."""
    with desk(Move.REVISE, plan_path, repo) as d:
        task, where = d.task(task_id, Move.REVISE)
        back = "the plan is back with the planner: wait for the new one to revise it"
        d.check(Move.REVISE, where, back if where.life.status is L.PLAN else "")
        if not text.strip():
            raise MoveError(
                f"the revise says nothing (fix: say what to change: taskhand revise {task_id} "
                f'"what to change" {d.shown})'
            )
        d.documents.add_review(task, text)
        d.store.remark(d.key, task.id, str(Move.REVISE), text.strip())
        said = f"Revise: {text.strip()}"
        return d.land(
            task,
            where,
            Move.REVISE,
            _lands(Move.REVISE, where, task),
            reason="revise",
            response=said,
        )


def comment(
    task_id: str, text: str, plan_path: Path | None = None, repo: Path | None = None
) -> Moved:
    """Words for the next unit, kept word for word; on a prototype awaiting review, another
    designer round."""
    with desk(Move.COMMENT, plan_path, repo) as d:
        task, where = d.task(task_id, Move.COMMENT)
        d.check(Move.COMMENT, where)
        if not text.strip():
            raise MoveError(
                f"the comment is empty (fix: write it: taskhand comment {task_id} "
                f"{ANSWER} {d.shown})"
            )
        life = where.life
        another_round = life.status is L.PROTOTYPE and life.waiting
        if another_round:
            _within_rounds(d, task, life.rounds)
        d.store.remark(d.key, task.id, str(Move.COMMENT), text.strip())
        if another_round:
            d.documents.add_review(task, text.strip(), documents.PROTOTYPE)
            said = f"Another round: {text.strip()}"
            return d.land(task, where, Move.COMMENT, L.PROTOTYPE, reason="comment", response=said)
        return d.land(
            task, where, Move.COMMENT, life.status, waiting=life.waiting, reason=life.reason
        )


def _within_rounds(d: Desk, task: Task, rounds: int) -> None:
    """Refuse another prototype round past the cap the task's next run goes by (the latest
    run's, which `resume` keeps; else the plan's taskhand.toml): that run would park it."""
    from taskhand.config import Caps, RunConfig, read_file

    if d.run is not None and d.run.status is not RunStatus.COMPLETED:
        cap = RunConfig.from_json(d.run.config).caps.prototype_rounds
    else:
        cap = read_file(d.plan.root).get("prototype_rounds") or Caps().prototype_rounds
    if rounds < cap:
        return
    raise MoveError(
        f"{task.id}'s prototype has had its {cap} rounds, the cap (prototype_rounds = {cap}): "
        f"another would park it (fix: accept it: {command(Move.ACCEPT, task.id, d.shown)}; or "
        "raise prototype_rounds in the plan's taskhand.toml, or taskhand run --prototype-rounds"
        " N, and comment again)"
    )


def accept(task_id: str, plan_path: Path | None = None, repo: Path | None = None) -> Moved:
    """Accept the prototype: the task is ready for its tests and code."""
    with desk(Move.ACCEPT, plan_path, repo) as d:
        task, where = d.task(task_id, Move.ACCEPT)
        d.check(Move.ACCEPT, where)
        return d.land(
            task,
            where,
            Move.ACCEPT,
            _lands(Move.ACCEPT, where, task),
            reason="the prototype is accepted",
            response="Accepted.",
        )


def reopen(task_id: str, plan_path: Path | None = None, repo: Path | None = None) -> Moved:
    """A parked task returns to the status it was parked from (parked at done, its delivery
    is due again), a failed one to its start; both with their caps counted afresh (the
    ledger keeps the earlier attempts)."""
    with desk(Move.REOPEN, plan_path, repo, durable=False) as d:
        task, where = d.task(task_id, Move.REOPEN)
        _check(d, where, Move.REOPEN)
        d.store.restart_lives(d.key, [task.id])
        if d.run is not None:  # fresh attempts: the caps count from here
            d.store.reopen_task(d.run.id, task.id, "taskhand reopen")
        back = _lands(Move.REOPEN, where, task)
        # A status no stage works from is a person's turn again (a plan to approve, a
        # question to answer); from any other the harness goes on.
        waiting = where.life.status is L.PARKED and back in (L.PLANNED, L.NEEDS_INPUT)
        said = "Reopened." if where.status is Status.WAIT else ""
        onward = lifecycle.onward(back)  # parked at done: its delivery is retried
        return d.land(task, where, Move.REOPEN, back, waiting=waiting, resume=onward, response=said)


def park(task_id: str, why: str, plan_path: Path | None = None, repo: Path | None = None) -> Moved:
    """Stop the task, saying why; reopen returns it to the status it had."""
    with desk(Move.PARK, plan_path, repo) as d:
        task, where = d.task(task_id, Move.PARK)
        d.check(Move.PARK, where)
        why = " ".join(why.split())
        if not why:
            raise MoveError(
                f'the reason is empty (fix: say why: taskhand park {task_id} "why" {d.shown})'
            )
        return d.land(
            task,
            where,
            Move.PARK,
            _lands(Move.PARK, where, task),
            waiting=True,
            resume=where.life.status,
            reason=why,
            response=f"Parked: {why}",
        )


# -- what several moves share ----------------------------------------------------------------


def _answered(
    d: Desk,
    task: Task,
    where: Standing,
    asked: Question,
    choice: str,
    note: str,
    move: Move,
    chosen: str,
) -> Moved:
    """Record the answer, show it where the dialect shows questions, and move the task back
    to the stage that asked once no question is open."""
    d.store.answer(d.key, task.id, asked.number, choice, note)
    questions = d.store.questions(d.key, task.id)
    d.documents.show_questions(task, questions)
    said = f"Q{asked.number}: " + " — ".join(x for x in (chosen, note) if x)
    if any(q.open for q in questions):
        return d.land(task, where, move, L.NEEDS_INPUT, waiting=True, response=said)
    back = (
        lifecycle.resumed(asked.stage)
        or lifecycle.resumed(where.life.resume)
        or lifecycle.first_status(where.pipeline, task)
    )
    return d.land(task, where, move, back, resume="", reason="answered", response=said)


def _question(task_id: str, given: str, questions: tuple[Question, ...]) -> Question:
    open_ones = ", ".join(f"Q{q.number}" for q in questions if q.open) or "none"
    match = _NUMBER.match(given.strip())
    found = next((q for q in questions if match and q.number == int(match.group(1))), None)
    if found is None:
        raise MoveError(
            f"{task_id} has no question {printable(given)!r} (fix: answer an open one: {open_ones})"
        )
    if not found.open:
        raise MoveError(
            f"{task_id} Q{found.number} is answered already (fix: answer an open one: {open_ones})"
        )
    return found


def _check(d: Desk, where: Standing, move: Move) -> None:
    """reopen and respond refuse a default-pipeline task as they always did, in the five
    codes its people know; any other refusal is every move's."""
    said = None if where.working or move in where.moves else feedback.refusal(where, move, d.shown)
    if said is None:
        d.check(move, where)
        return
    raise MoveError(said)


def _lands(move: Move, where: Standing, task: Task) -> Lifecycle:
    """Where a move that changes the task's status sends it, from the lifecycle's table."""
    found = lifecycle.lands(move, where.life, task, where.pipeline)
    assert found is not None, f"{move} changes no status"
    return found


def _write_checked(plan: Plan, files: dict[Path, str]) -> Plan:
    """Write a new task's files when the plan they make still validates; else leave the
    folder as it was and refuse, naming the first problem the task would bring."""

    def judge(report: Report, new: list[Problem]) -> None:
        if report.plan is None or new:
            first = new[0] if new else None
            problem = "the plan cannot be read"
            if first is not None:  # named in the plan folder, not in the copy it was found in
                at = f"{first.path.name}:{first.line}" if first.line else first.path.name
                problem = f"{at}: {first.message}"
            raise MoveError(
                f"the new task would break the plan ({problem}) (fix: change the title or "
                f"draft so that {display_path(plan.root)} still validates)"
            )

    add_files(plan.root, files, judge)
    return validate.validate(plan.root).require()
