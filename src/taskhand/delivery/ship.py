"""One delivery, step by step, each step's outcome in the store before the next begins: the
branch contract, the body file, the push, `gh pr view` (so a pull request that a killed run
opened is found, never opened twice), `gh pr create`, and the address recorded.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

from taskhand.delivery import DeliveryError, contract, remote
from taskhand.delivery.body import Story, render
from taskhand.delivery.gh import Gh, PullState
from taskhand.errors import UserError
from taskhand.host.secrets import Redactor
from taskhand.plan.formats.files import write_atomic
from taskhand.state.records import DeliveryState
from taskhand.state.store import Store
from taskhand.text import printable, shorten


@dataclass(frozen=True)
class Target:
    """Where one pull request comes from and goes: `branch` into `base` on `remote`, its own
    commits those after `below`, each a commit of one of `owners` (task ids)."""

    run_id: str
    task_id: str  # "" for the run's own pull request
    repo: Path
    remote: str
    branch: str
    base: str
    below: str
    owners: tuple[str, ...]
    title: str
    body_file: Path


def ship(store: Store, target: Target, story: Story) -> str:
    """Deliver `target` as a pull request told by `story`; its address. A DeliveryError says
    which step failed, and the store holds it as the delivery's reason. A delivery the store
    holds as opened is not asked again; any other goes through every step, each of which
    is safe to repeat."""
    t = target
    done = store.delivery(t.run_id, t.task_id)
    if done and done.state is DeliveryState.OPENED and done.branch == t.branch and done.pr_url:
        return done.pr_url

    def record(state: DeliveryState, url: str = "", reason: str = "") -> None:
        store.record_delivery(
            t.run_id, t.task_id, t.branch, t.base, state, pr_url=url, reason=reason
        )

    record(DeliveryState.PENDING)
    try:
        address = remote.url(t.repo, t.remote)
        if address is None:
            raise DeliveryError(
                f"the repository has no remote named {t.remote}",
                fix=f"git remote add {t.remote} URL, then retry",
            )
        tip = remote.branch_tip(t.repo, t.remote, t.base)
        commits = contract.check(t.repo, t.branch, t.below, t.owners, t.base, tip)
        write_body(t.body_file, dataclasses.replace(story, commits=commits))
        remote.push(t.repo, t.remote, t.branch)
        record(DeliveryState.PUSHED)
        gh = Gh(t.repo, address)
        found = gh.pr_view(t.branch)
        if found is not None and found.state == PullState.CLOSED:
            raise DeliveryError(
                f"the pull request of {t.branch} was closed unmerged: {found.url}",
                fix="reopen it on GitHub (or delete its branch there), then retry",
            )
        title = shorten(printable(Redactor()(t.title)), 200)
        url = found.url if found else gh.pr_create(t.base, t.branch, title, t.body_file)
    except UserError as exc:  # a step's own, or git's reading the branch
        record(DeliveryState.FAILED, reason=str(exc))
        if isinstance(exc, DeliveryError):
            raise
        raise DeliveryError(str(exc)) from None
    record(DeliveryState.OPENED, url=url)
    return url


def write_body(path: Path, story: Story) -> None:
    """The pull request's body, free of secrets, where `gh pr create --body-file` reads it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, Redactor()(render(story)))
