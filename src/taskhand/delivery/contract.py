"""The branch contract a pull request is opened on: the branch exists, it has commits after
the one it starts from, each of them says whose it is (`T-1: title`, as the harness commits),
and the base it goes into on the remote holds that starting commit, so the pull request shows
exactly the work delivered and nothing a person has not pushed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from taskhand.delivery import DeliveryError, remote
from taskhand.text import printable, shorten
from taskhand.workspace import git, refs


@dataclass(frozen=True)
class Commit:
    sha: str
    subject: str

    def line(self) -> str:
        return f"{self.sha[:12]} {self.subject}"


def own_commits(repo: Path, below: str, branch: str) -> list[Commit]:
    """The commits of `branch` after `below`, oldest first."""
    spec = f"{git.resolve(repo, below)}..refs/heads/{branch}"
    args = ("rev-list", "--reverse", "--no-commit-header", "--format=%H%x00%s", spec)
    found = []
    for line in git.decode(git.run(repo, *args).stdout).splitlines():
        sha, _, subject = line.partition("\0")
        found.append(Commit(sha, printable(subject)))
    return found


def check(
    repo: Path,
    branch: str,
    below: str,
    owners: Sequence[str],
    base: str,
    base_tip: str | None,
) -> list[Commit]:
    """The branch's own commits (after `below`) when the contract holds, else a DeliveryError
    that says which part broke. `owners` are the task ids a subject may start with; `base_tip`
    is the commit `base` points at on the remote (None: the remote has no such branch)."""
    if refs.branch_sha(repo, branch) is None:
        raise DeliveryError(
            f"the branch {branch} does not exist", fix="recreate it at the work to deliver"
        )
    commits = own_commits(repo, below, branch)
    if not commits:
        raise DeliveryError(f"{branch} has no commits after {below[:12]}: nothing to deliver")
    prefixes = tuple(f"{owner}:" for owner in owners)
    stray = [c for c in commits if not c.subject.startswith(prefixes)]
    if stray:
        whose = f"{owners[0]}:" if len(owners) == 1 else "a task id of the plan and ':'"
        raise DeliveryError(
            f"{branch} holds {len(stray)} commit(s) whose subject does not start with {whose}, "
            f"the first {shorten(stray[0].line(), 100)!r}",
            fix=f"keep only the task's commits on {branch}",
        )
    if base_tip is None:
        raise DeliveryError(f"the remote has no branch {base} to open the pull request into")
    if remote.known(repo, base_tip) and not git.is_ancestor(repo, below, base_tip):
        raise DeliveryError(
            f"{branch} starts from {below[:12]}, which {base} on the remote lacks: its pull "
            "request would carry commits nobody pushed",
            fix=f"push {base} first, then retry",
        )
    return commits
