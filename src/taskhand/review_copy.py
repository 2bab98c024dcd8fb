"""Disposable copies for reviewers: a throwaway worktree of the candidate commit per reviewer,
and proof afterwards that the candidate's own worktree was not touched.

A reviewer may edit, build and run tests in its copy; the copy is discarded either way. Any
change to the candidate (HEAD, index, dirty or untracked paths, any file's bytes or mode) is
a `reviewer_write_violation`, reported with what changed.
"""

from __future__ import annotations

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
    """A worktree at `path` on commit `candidate`; `watched` is checked unchanged afterwards."""
    before = snapshot(watched)
    git.add_detached_worktree(repo, path, candidate)
    copy = Copy(path)
    try:
        yield copy
    finally:
        git.remove_worktree(repo, path, locked_too=True)
        copy.violations.extend(differences(before, snapshot(watched)))


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
