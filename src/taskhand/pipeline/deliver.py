"""The deliver stage: a task's landed work leaves as a pull request (one per task), and once
every task is done, the run branch as one (one per run). The harness alone: no agent, no tokens.

A failure ends the task with `deliver: <reason>`, its work still on the run branch; a retry
(reopen, or a resumed run) goes through this stage alone (run/attempt.py). A task whose branch
stands on another task's work that is not merged yet is a stacked pull request on that task's.
"""

from __future__ import annotations

import dataclasses

from taskhand.delivery import DeliveryError, preflight, remote
from taskhand.delivery.body import Judgement, Story, TaskFacts, qa_screenshots
from taskhand.delivery.ship import Target, ship
from taskhand.pipeline.harness import Harness
from taskhand.pipeline.work import Ended, Work
from taskhand.plan.model import Plan, Status, Task
from taskhand.state import documents
from taskhand.state.deliveries import RUN
from taskhand.state.documents import Documents
from taskhand.state.events import EventKind
from taskhand.state.life import Lifecycle
from taskhand.state.records import Attempt, AttemptStatus, DeliveryState
from taskhand.text import shorten
from taskhand.unit import Case, Role
from taskhand.workspace import git, refs

PREFIX = "deliver: "  # how a delivery's failure reads as a task's reason
BODY_FILE = "pr-body.md"


def deliver(h: Harness, work: Work) -> Ended | None:
    """Open the task's pull request (`[deliver] per = "task"`); else pass the work on."""
    if not h.config.deliver.per_task:
        return None
    task = work.task
    if work.landed is None:  # a pipeline that reached here without landing its work
        return Ended(Status.FAIL, f"{PREFIX}{task.id}'s work is not on the run branch")
    # Its pull request is due: a failure parks it here, and a reopen delivers again.
    h.track.move(task, Lifecycle.DONE, resume=Lifecycle.DELIVERED)
    try:
        told = task_story(h, work.plan, task, work.attempt)
        url = deliver_task(h, task, work.attempt.branch, work.candidate, told)
    except (DeliveryError, git.GitError) as exc:
        return Ended(Status.FAIL, PREFIX + h.redact(str(exc)))
    resolution = f"{work.landed} (delivered: {url})"
    delivered(h, work.plan, task, resolution, url)
    return Ended(Status.DONE, resolution)


def delivered(h: Harness, plan: Plan, task: Task, reason: str, url: str) -> None:
    """The task is delivered: its record, and `pr: <url>` in a Markdown task's file."""
    h.track.move(task, Lifecycle.DELIVERED, reason=reason, pr=url, resume="")
    Documents(plan, h.state).record_pr(task, url)


def deliver_task(h: Harness, task: Task, branch: str, candidate: str, story: Story) -> str:
    """Push `branch` (the task's, at its landed `candidate`) and open its pull request, told
    by `story` (stacked when the branch stands on another task's work not merged yet); its
    address. A DeliveryError says why not."""
    config = h.config.deliver
    if not candidate:
        raise DeliveryError(f"{task.id} has no accepted work to deliver")
    base = config.base or preflight.base_branch(h.repo, h.config.base_ref, config.remote)
    refs.create_branch_if_absent(h.repo, branch, candidate)
    below = git.resolve(h.repo, f"{candidate}^")  # the run branch the attempt started from
    into = base
    if below != h.run.base_sha and not _merged(h, base, below):
        into, stacked = _stacked_on(h, task, below, base)
        story = dataclasses.replace(story, stacked_on=stacked)
    body_file = h.state.artifacts(h.plan_path, task.id) / BODY_FILE
    title = f"{task.id}: {task.title}"
    target = Target(
        h.run.id,
        task.id,
        h.repo,
        remote=config.remote,
        branch=branch,
        base=into,
        below=below,
        owners=(task.id,),
        title=title,
        body_file=body_file,
    )
    return _shipped(h, target, story)


def deliver_run(h: Harness, plan: Plan) -> Ended | None:
    """The run branch's pull request once every task is done (`[deliver] per = "run"`):
    DONE with its address, or FAIL with `deliver: <reason>`; None when delivery is not per run."""
    config = h.config.deliver
    if not config.per_run:
        return None
    landed = {a.task_id: a for a in h.store.attempts(h.run.id) if a.status == AttemptStatus.PASSED}
    done = [t for t in plan.tasks if t.id in landed]
    if not done:  # every task was done before this run: it has nothing to deliver
        return None
    parts = [task_facts(h, t, landed[t.id]) for t in done]
    title = shorten(f"{plan.code}: {plan.title}" if plan.code else plan.title, 200)
    told = Story(title, plan.objective or plan.overview_text, tasks=parts)
    try:
        base = config.base or preflight.base_branch(h.repo, h.config.base_ref, config.remote)
        target = Target(
            h.run.id,
            RUN,
            h.repo,
            remote=config.remote,
            branch=h.run.run_branch,
            base=base,
            below=h.run.base_sha,
            owners=tuple(t.id for t in plan.tasks),
            title=title,
            body_file=h.state.run_dir(h.run.id) / BODY_FILE,
        )
        url = _shipped(h, target, told)
    except (DeliveryError, git.GitError) as exc:
        return Ended(Status.FAIL, PREFIX + h.redact(str(exc)))
    for task in done:
        delivered(h, plan, task, f"delivered: {url}", url)
    return Ended(Status.DONE, url)


def task_story(h: Harness, plan: Plan, task: Task, attempt: Attempt) -> Story:
    """A task's pull request as either pipeline leaves it: the spec (else the task's own
    description) and the plan where stages wrote them, the criteria with qa's screenshots,
    and the verdicts the landed work passed."""
    docs = Documents(plan, h.state)
    goal = docs.read(task, documents.SPEC) or task.description
    facts = task_facts(h, task, attempt)
    return Story(f"{task.id}: {task.title}", goal, docs.read(task, documents.PLAN), (facts,))


def task_facts(h: Harness, task: Task, attempt: Attempt) -> TaskFacts:
    """The task's criteria, the screenshots qa took of its `[found]` ones, and the verdicts
    (reviewers', qa's, the judge's) on the landed attempt, each with its unit's number."""
    entries = [e for e in h.store.ledger(h.run.id, task.id) if e.attempt_id == attempt.id]
    units = [
        u
        for u in h.store.units(h.run.id, task.id)
        if u.attempt_id == attempt.id and u.role.judges and u.outcome is Case.DONE
    ]
    judgements = []
    for verdict in entries[-1].verdicts if entries else []:
        mine = [u for u in units if verdict.lens in (u.lens, str(u.role))]
        role = verdict.lens if verdict.lens in (Role.QA, Role.JUDGE) else "reviewer"
        if role == "reviewer" and verdict.lens != "general":
            role = f"reviewer ({verdict.lens})"
        judgements.append(
            Judgement(role, verdict.accepted, verdict.concern, mine[-1].id if mine else None)
        )
    shots = qa_screenshots(h.state.artifacts(h.plan_path, task.id), task.criteria)
    walked = len(shots) if any(u.role is Role.QA for u in units) else None
    return TaskFacts(task.id, task.title, task.criteria, shots, walked, judgements)


def _shipped(h: Harness, target: Target, story: Story) -> str:
    before = h.store.delivery(target.run_id, target.task_id)
    url = ship(h.store, target, story)
    if before is None or before.state is not DeliveryState.OPENED:  # said once per PR
        task_id = target.task_id or None
        h.emit(EventKind.DELIVERED, task_id, url=url, branch=target.branch, base=target.base)
    return url


def _merged(h: Harness, base: str, commit: str) -> bool:
    """Whether `base` on the remote holds `commit` already (an earlier task's PR merged)."""
    tip = remote.branch_tip(h.repo, h.config.deliver.remote, base)
    return tip is not None and remote.known(h.repo, tip) and git.is_ancestor(h.repo, commit, tip)


def _stacked_on(h: Harness, task: Task, below: str, base: str) -> tuple[str, str]:
    """The branch of the task whose landed work `below` is, and what the body says of it. A
    task whose own pull request is not open yet (its delivery failed) still has its branch
    pushed, so that this one can open; its own opens when it is retried."""
    landed = [a for a in h.store.attempts(h.run.id) if a.status == AttemptStatus.PASSED]
    owner = next((a for a in landed if a.candidate_sha == below), None)
    if owner is None:
        return base, ""  # not a task's work: the contract names the commits that are not ours
    row = h.store.delivery(h.run.id, owner.task_id)
    if row is not None and row.state is DeliveryState.OPENED:
        where = row.pr_url
    else:
        held = h.guard.added_commits(owner.task_id)
        if held:  # a person's commit on it is theirs to publish, never the run's
            raise DeliveryError(f"{task.id} stands on {owner.task_id}'s branch, and {held}")
        refs.create_branch_if_absent(h.repo, owner.branch, below)
        remote.push(h.repo, h.config.deliver.remote, owner.branch)  # as its own delivery does
        where = (
            f"branch {owner.branch}; its own pull request is not open yet: "
            f"taskhand reopen {owner.task_id} opens it"
        )
    if owner.task_id in task.dependencies:
        why = f"{owner.task_id} is a dependency of {task.id}"
    else:
        why = f"{owner.task_id} ran before {task.id}, so this branch holds its commit"
    text = (
        f"It goes into {owner.task_id}'s branch ({where}), which is not merged yet: {why}. "
        f"Merge that pull request first; this one shows {task.id}'s own commit only."
    )
    return owner.branch, text
