"""Whether delivery can work here, checked before a run creates anything: a remote of the
configured name, `gh` installed and logged in, and the base branch on the remote. Each
failure is a SetupError (exit 2) with the fix.
"""

from __future__ import annotations

from pathlib import Path

from taskhand.config import Delivery
from taskhand.delivery import DeliveryError, SetupError, remote
from taskhand.delivery.gh import Gh
from taskhand.workspace import git, refs


def check(repo: Path, deliver: Delivery, base_ref: str) -> str:
    """The branch pull requests go into, once every check passed."""
    address = remote.url(repo, deliver.remote)
    if address is None:
        raise SetupError(
            f"delivery is on, but the repository has no remote named {deliver.remote!r}",
            fix=f"git remote add {deliver.remote} URL (or set [deliver] remote), or --deliver off",
        )
    Gh(repo, address).auth_status()
    base = deliver.base or base_branch(repo, base_ref, deliver.remote)
    try:
        tip = remote.branch_tip(repo, deliver.remote, base)
    except DeliveryError as exc:
        raise SetupError(
            f"the remote {deliver.remote} cannot be read: {exc.what}",
            fix=f"check its address and your access: git ls-remote {deliver.remote}",
        ) from None
    if tip is None:
        raise SetupError(
            f"the base branch {base} is not on the remote {deliver.remote}",
            fix=f"git push {deliver.remote} {base}",
        )
    return base


def base_branch(repo: Path, base_ref: str, remote_name: str) -> str:
    """The branch pull requests go into: the run's base as a branch name (HEAD: the branch
    checked out; `origin/main`: main)."""
    if base_ref == "HEAD":
        current = refs.current_branch(repo)
        if current is None:
            raise SetupError(
                "the run starts from a detached HEAD, which no pull request can go into",
                fix="check out the branch pull requests go into, or pass --base BRANCH",
            )
        return current
    for prefix in ("refs/heads/", f"refs/remotes/{remote_name}/", f"{remote_name}/"):
        if base_ref.startswith(prefix):
            return base_ref.removeprefix(prefix)
    try:
        found = refs.branch_sha(repo, base_ref)
    except git.GitError:
        found = None
    if found is None:
        raise SetupError(
            f"the run's base {base_ref!r} is not a branch, so no pull request can go into it",
            fix="pass --base BRANCH",
        )
    return base_ref
