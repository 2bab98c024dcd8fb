"""Disposable copies for reviewers and the gate: a pristine workspace at the candidate commit
(exactly its bytes, see workspace/depot.py) per review or round of checks, and proof
afterwards that the candidate's own workspace was not touched.

A reviewer may edit, build and run tests in its copy; whatever it did there is wiped when the
review ends. The folder itself is kept for the next review through the same lens, since moving
a copy to the next candidate rewrites only the files that differ. Any change to the candidate's
workspace (a file written, added or removed, its .git included) is a
`reviewer_write_violation`, reported with what changed.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from taskhand import workspace
from taskhand.workspace.depot import Depot
from taskhand.workspace.snapshot import differences, tree_digests


@dataclass
class Copy:
    """The reviewer's folder, and after the review, what it changed in the candidate."""

    path: Path
    violations: list[str] = field(default_factory=list)
    left: str = ""  # what of the reviewer's leftovers could not be wiped away, if any


@contextmanager
def disposable_copy(
    depot: Depot, candidate: str, path: Path, index: Path, watched: Path
) -> Iterator[Copy]:
    """A clean copy of commit `candidate` at `path`; `watched` is checked unchanged after."""
    # By inode and change time rather than by content: a write always moves a file's ctime,
    # and reading every byte of a large project twice a review would cost more than the review.
    before = tree_digests(watched, content=False, with_git=True)
    workspace.prepare(depot, path, index, candidate, None)
    copy = Copy(path)
    try:
        yield copy
    finally:
        # Wiped at once: nothing the reviewer left waits there for the next one. What cannot
        # be wiped (it kept the folder from being deleted) is said; the next copy tries again.
        try:
            workspace.prepare(depot, path, index, candidate, None)
        except workspace.WorkspaceError as exc:
            copy.left = str(exc)
        after = tree_digests(watched, content=False, with_git=True)
        copy.violations.extend(differences(before, after))


def release(path: Path, index: Path) -> list[str]:
    """Remove the copy at `path` and the harness's index of it; what could not be deleted."""
    index.unlink(missing_ok=True)
    return workspace.remove(path)
