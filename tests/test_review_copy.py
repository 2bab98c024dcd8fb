"""Reviewers work in copies wiped after each review; any change to the candidate is caught."""

from __future__ import annotations

from pathlib import Path

from taskhand import git
from taskhand.review_copy import disposable_copy, release
from tests.runs import git as run_git
from tests.runs import make_repo


def candidate(tmp_path: Path) -> tuple[Path, Path, str]:
    """A repository, an attempt worktree with a committed candidate, and its sha."""
    repo = make_repo(tmp_path / "repo", {"app.py": "print('v1')\n", "lib.py": "x = 1\n"})
    worktree = tmp_path / "attempt"
    git.add_worktree(repo, worktree, "taskhand/T-001-x", git.resolve(repo, "HEAD"))
    (worktree / "app.py").write_text("print('v2')\n")
    sha = git.commit_worktree(worktree, git.resolve(repo, "HEAD"), "T-001: x")
    assert sha is not None
    return repo, worktree, sha


def test_a_reviewer_may_change_its_copy_and_nothing_of_it_is_kept(tmp_path: Path) -> None:
    repo, worktree, sha = candidate(tmp_path)
    with disposable_copy(repo, sha, tmp_path / "review", worktree) as copy:
        assert (copy.path / "app.py").read_text() == "print('v2')\n"
        (copy.path / "app.py").write_text("print('tampered')\n")
        (copy.path / "scratch.txt").write_text("notes\n")
        (copy.path / "build").mkdir()
        (copy.path / ".gitignore").write_text("build/\n")
        (copy.path / "build" / "out.o").write_text("binary\n")
        run_git(copy.path, "add", "-A")
    assert copy.violations == []
    # The folder stays for the next review, exactly as the commit has it.
    assert run_git(copy.path, "status", "--porcelain", "--ignored") == ""
    assert sorted(p.name for p in copy.path.iterdir()) == [".git", "app.py", "lib.py"]
    assert (copy.path / "app.py").read_text() == "print('v2')\n"
    release(repo, copy.path)
    assert not copy.path.exists()
    assert all(w.path != copy.path.resolve() for w in git.worktrees(repo))


def test_the_next_review_gets_the_next_candidate_in_the_same_folder(tmp_path: Path) -> None:
    repo, worktree, first = candidate(tmp_path)
    with disposable_copy(repo, first, tmp_path / "review", worktree) as copy:
        inode = (copy.path / "lib.py").stat().st_ino
    (worktree / "app.py").write_text("print('v3')\n")
    second = git.commit_worktree(worktree, git.resolve(repo, "HEAD"), "T-001: again")
    assert second is not None
    with disposable_copy(repo, second, tmp_path / "review", worktree) as again:
        assert (again.path / "app.py").read_text() == "print('v3')\n"
        assert run_git(again.path, "rev-parse", "HEAD").strip() == second
        assert (again.path / "lib.py").stat().st_ino == inode  # unchanged files stay put
    assert again.violations == []


def test_a_copy_whose_git_link_was_rewritten_is_removed_not_used(tmp_path: Path) -> None:
    """A reviewer that aims its copy's .git at the user's repository must not get the
    harness to reset that repository on its behalf."""
    repo, worktree, sha = candidate(tmp_path)
    (repo / "staged.txt").write_text("the user's work\n")
    run_git(repo, "add", "staged.txt")
    with disposable_copy(repo, sha, tmp_path / "review", worktree) as copy:
        (copy.path / ".git").write_text(f"gitdir: {repo / '.git'}\n")
        assert not git.worktree_link_intact(repo, copy.path)
    assert not copy.path.exists()
    assert run_git(repo, "status", "--porcelain") == "A  staged.txt\n"  # still staged
    assert all(w.path != copy.path.resolve() for w in git.worktrees(repo))
    with disposable_copy(repo, sha, tmp_path / "review", worktree) as fresh:
        assert git.worktree_link_intact(repo, fresh.path)
        assert (fresh.path / "app.py").read_text() == "print('v2')\n"


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


def test_a_staged_change_or_a_moved_head_is_a_violation(tmp_path: Path) -> None:
    repo, worktree, sha = candidate(tmp_path)
    with disposable_copy(repo, sha, tmp_path / "review", worktree) as copy:
        run_git(worktree, "commit", "-q", "--allow-empty", "-m", "sneaky")
    assert "the head changed" in copy.violations
