"""Worktrees against real repositories: listing them, and removing those that runs of earlier
versions left (attempts no longer run in worktrees of the repository)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from taskhand.workspace import git, refs, worktrees
from taskhand.workspace.git import GitError
from taskhand.workspace.snapshot import snapshot
from taskhand.workspace.worktrees import Worktree
from tests.workspace.conftest import make_repo, run, write
from tests.workspace.test_git import assert_one_line_fix


def old_worktree(repo: Path, path: Path, branch: str = "task-1") -> None:
    """A worktree as a run of an earlier version made it."""
    run(repo, "worktree", "add", "-q", "-b", branch, str(path), "HEAD")


def test_remove_worktree_discards_it_and_is_idempotent(repo: Path, attempt: Path) -> None:
    old_worktree(repo, attempt)
    write(attempt, {"README.md": "dirty\n", "untracked.txt": "x", "build/ignored": "x"})
    worktrees.remove(repo, attempt)
    assert not attempt.exists()
    assert [t.path for t in worktrees.listed(repo)] == [repo.resolve()]
    assert refs.branch_sha(repo, "task-1") is not None  # the branch outlives its worktree
    worktrees.remove(repo, attempt)


def test_remove_worktree_after_its_folder_was_deleted_by_hand(repo: Path, attempt: Path) -> None:
    old_worktree(repo, attempt)
    subprocess.run(["rm", "-rf", str(attempt)], check=True)
    worktrees.remove(repo, attempt)
    assert [t.path for t in worktrees.listed(repo)] == [repo.resolve()]
    refs.delete_branch(repo, "task-1")


@pytest.mark.parametrize("deleted_by_hand", [False, True])
def test_remove_worktree_refuses_a_locked_worktree_unless_told(
    repo: Path, attempt: Path, deleted_by_hand: bool
) -> None:
    old_worktree(repo, attempt)
    run(repo, "worktree", "lock", str(attempt))
    if deleted_by_hand:
        subprocess.run(["rm", "-rf", str(attempt)], check=True)
    with pytest.raises(GitError) as error:
        worktrees.remove(repo, attempt)
    assert "locked" in assert_one_line_fix(error)
    worktrees.remove(repo, attempt, locked_too=True)
    assert not attempt.exists()
    assert len(worktrees.listed(repo)) == 1


def test_remove_worktree_of_a_worktree_whose_git_link_was_rewritten(
    repo: Path, attempt: Path, tmp_path: Path
) -> None:
    """An agent of an earlier version aimed its worktree at another repository: the folder
    is the harness's own, so it goes, and the other repository is left alone."""
    other = make_repo(tmp_path / "other")
    before = snapshot(other)
    old_worktree(repo, attempt)
    (attempt / ".git").write_text(f"gitdir: {other / '.git'}\n")
    worktrees.remove(repo, attempt, locked_too=True)
    assert not attempt.exists()
    assert len(worktrees.listed(repo)) == 1
    assert snapshot(other) == before


def test_remove_worktree_of_a_path_never_added(repo: Path, attempt: Path) -> None:
    worktrees.remove(repo, attempt)
    assert len(worktrees.listed(repo)) == 1


def test_worktrees_lists_the_main_checkout_first(repo: Path, tmp_path: Path) -> None:
    head = run(repo, "rev-parse", "HEAD")
    old_worktree(repo, tmp_path / "on branch")
    run(repo, "worktree", "add", "-q", "--detach", str(tmp_path / "detached"))
    main, *others = worktrees.listed(repo)
    assert main == Worktree(repo.resolve(), head, "main")
    assert sorted(others, key=lambda t: t.path) == [
        Worktree((tmp_path / "detached").resolve(), head, None),
        Worktree((tmp_path / "on branch").resolve(), head, "task-1"),
    ]


def test_common_dir_is_the_repositorys_own_git_folder(repo: Path, attempt: Path) -> None:
    old_worktree(repo, attempt)
    assert git.common_dir(repo).resolve() == (repo / ".git").resolve()
    assert git.common_dir(attempt).resolve() == (repo / ".git").resolve()
