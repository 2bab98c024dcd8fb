"""Reviewers work in throwaway copies; any change to the candidate is caught and reported."""

from __future__ import annotations

from pathlib import Path

from taskhand import git
from taskhand.review_copy import disposable_copy
from tests.runs import git as run_git
from tests.runs import make_repo


def candidate(tmp_path: Path) -> tuple[Path, Path, str]:
    """A repository, an attempt worktree with a committed candidate, and its sha."""
    repo = make_repo(tmp_path / "repo", {"app.py": "print('v1')\n"})
    worktree = tmp_path / "attempt"
    git.add_worktree(repo, worktree, "taskhand/T-001-x", git.resolve(repo, "HEAD"))
    (worktree / "app.py").write_text("print('v2')\n")
    sha = git.commit_worktree(worktree, git.resolve(repo, "HEAD"), "T-001: x")
    assert sha is not None
    return repo, worktree, sha


def test_a_reviewer_may_change_its_copy_and_the_copy_goes(tmp_path: Path) -> None:
    repo, worktree, sha = candidate(tmp_path)
    with disposable_copy(repo, sha, tmp_path / "review", worktree) as copy:
        assert (copy.path / "app.py").read_text() == "print('v2')\n"
        (copy.path / "app.py").write_text("print('tampered')\n")
        (copy.path / "scratch.txt").write_text("notes\n")
        run_git(copy.path, "add", "-A")
    assert copy.violations == []
    assert not copy.path.exists()
    assert all(w.path != copy.path.resolve() for w in git.worktrees(repo))


def test_writes_into_the_candidate_are_violations(tmp_path: Path) -> None:
    repo, worktree, sha = candidate(tmp_path)
    with disposable_copy(repo, sha, tmp_path / "review", worktree) as copy:
        (worktree / "app.py").write_text("print('changed behind its back')\n")
        (worktree / "extra.txt").write_text("x\n")
    assert copy.violations == [
        "the status changed",
        "app.py was modified",
        "extra.txt was added",
    ]
    assert not copy.path.exists()


def test_a_staged_change_or_a_moved_head_is_a_violation(tmp_path: Path) -> None:
    repo, worktree, sha = candidate(tmp_path)
    with disposable_copy(repo, sha, tmp_path / "review", worktree) as copy:
        run_git(worktree, "commit", "-q", "--allow-empty", "-m", "sneaky")
    assert "the head changed" in copy.violations
