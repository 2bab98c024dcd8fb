"""Disposable copies for reviewers: a pristine checkout of the candidate commit per review,
and proof afterwards that the candidate's own worktree was not touched.

A reviewer may edit, build and run tests in its copy; whatever it did there is wiped when the
review ends. The folder itself is kept for the next review through the same lens, since moving
a checkout to the next candidate rewrites only the files that differ, where a new worktree
writes every file of the project. Any change to the candidate (HEAD, index, dirty or untracked
paths, any file written) is a `reviewer_write_violation`, reported with what changed.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from taskhand import git
from taskhand.snapshot import snapshot

VIOLATION = "reviewer_write_violation"


@dataclass
class Copy:
    """The reviewer's worktree, and after the review, what it changed in the candidate."""

    path: Path
    violations: list[str] = field(default_factory=list)


@contextmanager
def disposable_copy(repo: Path, candidate: str, path: Path, watched: Path) -> Iterator[Copy]:
    """A clean checkout of commit `candidate` at `path`; `watched` is checked unchanged after."""
    # By inode and change time rather than by content: a write always moves a file's ctime,
    # and reading every byte of a large project twice a review would cost more than the review.
    before = snapshot(watched, content=False)
    checkout(repo, path, candidate)
    copy = Copy(path)
    try:
        yield copy
    finally:
        wipe(repo, path)
        copy.violations.extend(differences(before, snapshot(watched, content=False)))


def checkout(repo: Path, path: Path, sha: str) -> None:
    """`path` as a detached worktree at `sha` with nothing else in it: the folder a previous
    review left is reused when git still knows it as ours, else made anew."""
    if path.exists() and git.worktree_link_intact(repo, path):
        try:
            git._git(path, "checkout", "--quiet", "--force", "--detach", git.resolve(repo, sha))
            git._git(path, "clean", "-ffdxq")
            return
        except git.GitError:
            pass  # a copy too damaged to move: made anew below
    release(repo, path)
    git.add_detached_worktree(repo, path, sha)


def wipe(repo: Path, path: Path) -> None:
    """Undo whatever a reviewer did in its copy; a copy whose link to the repository was
    tampered with is removed whole, never touched through that link."""
    if not git.worktree_link_intact(repo, path):
        release(repo, path)
        return
    try:
        git._git(path, "reset", "--quiet", "--hard")
        git._git(path, "clean", "-ffdxq")
    except git.GitError:
        release(repo, path)


def release(repo: Path, path: Path) -> None:
    """Remove the copy at `path`, from the repository's side, and any folder left of it."""
    git.remove_worktree(repo, path, locked_too=True)
    shutil.rmtree(path, ignore_errors=True)


def differences(before: dict[str, object], after: dict[str, object]) -> list[str]:
    """What changed between two snapshots of a worktree, one line each, sorted."""
    found = []
    for key in ("head", "branch", "index", "index_hash", "stash", "status"):
        if before.get(key) != after.get(key):
            found.append(f"the {key.replace('_', ' ')} changed")
    old = before.get("files")
    new = after.get("files")
    assert isinstance(old, dict) and isinstance(new, dict)
    for name in sorted(old.keys() | new.keys()):
        if name not in new:
            found.append(f"{name} was deleted")
        elif name not in old:
            found.append(f"{name} was added")
        elif old[name] != new[name]:
            found.append(f"{name} was modified")
    return found
