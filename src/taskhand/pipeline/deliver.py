"""The deliver stage: a task's landed work leaves as a pull request (one per task), and once
every task is done, the run branch as one (one per run). The harness alone: no agent, no tokens.

A failure ends the task with `deliver: <reason>`, its work still on the run branch; a retry
(reopen, or a resumed run) goes through this stage alone (run/attempt.py). A task whose branch
stands on another task's work that is not merged yet is a stacked pull request on that task's.
"""

from __future__ import annotations

import dataclasses

from taskhand.delivery import DeliveryError, preflight, remote
from taskhand.delivery.body import Judgement, Story, TaskFacts
from taskhand.delivery.ship import Target, ship
from taskhand.pipeline.harness import Harness
from taskhand.pipeline.work import Ended, Work
from taskhand.plan.model import Plan, Status, Task
from taskhand.state.deliveries import RUN
from taskhand.state.events import EventKind
from taskhand.state.records import Attempt, AttemptStatus, DeliveryState
from taskhand.text import shorten
from taskhand.unit import Case, Role
from taskhand.workspace import git, refs

PREFIX = "deliver: "  # how a delivery's failure reads as a task's reason
BODY_FILE = "pr-body.md"
_ON_THE_REMOTE = (DeliveryState.PUSHED, DeliveryState.OPENED)


def deliver(h: Harness, work: Work) -> Ended | None:
    """Open the task's pull request (`[deliver] per = "task"`); else pass the work on."""
    if not h.config.deliver.per_task:
        return None
    assert work.landed is not None, "deliver runs after the work landed (integrate)"
    story = default_story(h, work.task, work.attempt)
    try:
        url = deliver_task(h, work.task, work.attempt, story)
    except (DeliveryError, git.GitError) as exc:
        return Ended(Status.FAIL, PREFIX + h.redact(str(exc)))
    return Ended(Status.DONE, f"{work.landed} (delivered: {url})")


def deliver_task(h: Harness, task: Task, attempt: Attempt, story: Story) -> str:
    """Push the branch of the task's landed `attempt` and open its pull request, told by
    `story` (stacked when the branch stands on another task's work not merged yet); its
    address. A DeliveryError says why not."""
    config = h.config.deliver
    candidate = attempt.candidate_sha
    if attempt.status != AttemptStatus.PASSED or not candidate:
        raise DeliveryError(f"{task.id} has no accepted work to deliver")
    base = config.base or preflight.base_branch(h.repo, h.config.base_ref, config.remote)
    refs.create_branch_if_absent(h.repo, attempt.branch, candidate)
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
        branch=attempt.branch,
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
    parts = [task_facts(h, t, landed[t.id]) for t in plan.tasks if t.id in landed]
    title = shorten(f"{plan.code}: {plan.title}" if plan.code else plan.title, 200)
    story = Story(title, plan.objective or plan.overview_text, tasks=parts)
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
        url = _shipped(h, target, story)
    except (DeliveryError, git.GitError) as exc:
        return Ended(Status.FAIL, PREFIX + h.redact(str(exc)))
    return Ended(Status.DONE, url)


def default_story(h: Harness, task: Task, attempt: Attempt) -> Story:
    """The default pipeline's facts for a task's pull request: the task's own text (its spec
    and plan where a stage wrote them), its criteria, and the verdicts its work passed."""
    goal = task.documents.get("spec") or task.description
    facts = task_facts(h, task, attempt)
    return Story(f"{task.id}: {task.title}", goal, task.documents.get("plan", ""), (facts,))


def task_facts(h: Harness, task: Task, attempt: Attempt) -> TaskFacts:
    """The task's criteria and its reviewers' verdicts on the landed attempt, each with the
    number of the unit that gave it."""
    entries = [e for e in h.store.ledger(h.run.id, task.id) if e.attempt_id == attempt.id]
    units = [
        u
        for u in h.store.units(h.run.id, task.id)
        if u.attempt_id == attempt.id and u.role is Role.EVALUATOR and u.outcome is Case.DONE
    ]
    judgements = []
    for verdict in entries[-1].verdicts if entries else []:
        unit = next((u.id for u in reversed(units) if u.lens == verdict.lens), None)
        role = "reviewer" if verdict.lens == "general" else f"reviewer ({verdict.lens})"
        judgements.append(Judgement(role, verdict.accepted, verdict.concern, unit))
    return TaskFacts(task.id, task.title, task.criteria, judgements=judgements)


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
    """The branch of the task whose landed work `below` is, and what the body says of it."""
    landed = [a for a in h.store.attempts(h.run.id) if a.status == AttemptStatus.PASSED]
    owner = next((a for a in landed if a.candidate_sha == below), None)
    if owner is None:
        return base, ""  # not a task's work: the contract names the commits that are not ours
    row = h.store.delivery(h.run.id, owner.task_id)
    if row is None or row.state not in _ON_THE_REMOTE:
        raise DeliveryError(
            f"{task.id}'s branch stands on {owner.task_id}'s work, which is not delivered yet",
            fix=f"taskhand reopen {owner.task_id} to deliver it first, then {task.id}",
        )
    if owner.task_id in task.dependencies:
        why = f"{owner.task_id} is a dependency of {task.id}"
    else:
        why = f"{owner.task_id} ran before {task.id}, so this branch holds its commit"
    where = row.pr_url or f"branch {row.branch}"
    text = (
        f"It goes into {owner.task_id}'s branch ({where}), which is not merged yet: {why}. "
        f"Merge that pull request first; this one shows {task.id}'s own commit only."
    )
    return row.branch, text
