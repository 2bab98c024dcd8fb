"""Reviewers work in copies wiped after each review; any change to the candidate is caught."""

from __future__ import annotations

import shutil
from pathlib import Path

from taskhand import workspace
from taskhand.workspace import git
from taskhand.workspace.review_copy import disposable_copy, release
from taskhand.workspace.snapshot import snapshot, tree_digests
from tests.runs import git as plain_git
from tests.runs import make_repo
from tests.workspace.conftest import depot_of


def run_git(copy: Path, *args: str) -> str:
    """git in a copy as its reviewer runs it: with the run's depot in the environment, as
    every process of an attempt has it (the copy's alternates name the user's objects)."""
    objects = depot_of(copy.parent / "repo").objects
    return plain_git(copy, *args, env={"GIT_ALTERNATE_OBJECT_DIRECTORIES": str(objects)})


def candidate(tmp_path: Path) -> tuple[Path, Path, str]:
    """A repository, an attempt's workspace with a collected candidate, and its sha."""
    repo = make_repo(tmp_path / "repo", {"app.py": "print('v1')\n", "lib.py": "x = 1\n"})
    base = git.resolve(repo, "HEAD")
    index = tmp_path / "indexes" / "attempt"
    ws = workspace.prepare(depot_of(repo), tmp_path / "attempt", index, base, "taskhand/T-001-x")
    (ws.path / "app.py").write_text("print('v2')\n")
    sha = workspace.collect(depot_of(repo), ws, base, "T-001: x")
    assert sha is not None
    return repo, ws.path, sha


def review(tmp_path: Path) -> tuple[Path, Path]:
    """The folder reviewers through one lens share, and the harness's index of it."""
    return tmp_path / "review", tmp_path / "indexes" / "review"


def untouched(repo: Path) -> tuple[object, ...]:
    """The user's checkout and every byte under its .git but the object store."""
    common = git.common_dir(repo)
    raw = tree_digests(common, with_git=True, skip=lambda name: name.startswith("objects"))
    return raw, snapshot(repo)


def assert_pristine(copy: Path, sha: str) -> None:
    assert (copy / ".git").is_dir() and not (copy / ".git").is_symlink()
    assert run_git(copy, "rev-parse", "HEAD").strip() == sha
    assert run_git(copy, "status", "--porcelain", "--ignored") == ""
    assert sorted(p.name for p in copy.iterdir()) == [".git", "app.py", "lib.py"]
    assert (copy / "app.py").read_text() == "print('v2')\n"


def test_a_reviewer_may_change_its_copy_and_nothing_of_it_is_kept(tmp_path: Path) -> None:
    repo, worktree, sha = candidate(tmp_path)
    path, index = review(tmp_path)
    with disposable_copy(depot_of(repo), sha, path, index, worktree) as copy:
        assert copy.path == path
        assert (copy.path / "app.py").read_text() == "print('v2')\n"
        (copy.path / "app.py").write_text("print('tampered')\n")
        (copy.path / "scratch.txt").write_text("notes\n")
        (copy.path / "build").mkdir()
        (copy.path / ".gitignore").write_text("build/\n")
        (copy.path / "build" / "out.o").write_text("binary\n")
        run_git(copy.path, "add", "-A")
        run_git(copy.path, "commit", "-q", "-m", "the reviewer's own commit")
    assert copy.violations == []
    # The folder stays for the next review, exactly as the commit has it.
    assert_pristine(copy.path, sha)
    release(path, index)
    assert not path.exists()
    assert not index.exists()


def test_the_next_review_gets_the_next_candidate_in_the_same_folder(tmp_path: Path) -> None:
    repo, worktree, first = candidate(tmp_path)
    path, index = review(tmp_path)
    with disposable_copy(depot_of(repo), first, path, index, worktree) as copy:
        inode = (copy.path / "lib.py").stat().st_ino
    ws = workspace.prepare(
        depot_of(repo), worktree, tmp_path / "indexes" / "attempt", first, "T-001"
    )
    (ws.path / "app.py").write_text("print('v3')\n")
    second = workspace.collect(depot_of(repo), ws, git.resolve(repo, "HEAD"), "T-001: again")
    assert second is not None
    with disposable_copy(depot_of(repo), second, path, index, ws.path) as again:
        assert (again.path / "app.py").read_text() == "print('v3')\n"
        assert run_git(again.path, "rev-parse", "HEAD").strip() == second
        assert (again.path / "lib.py").stat().st_ino == inode  # unchanged files stay put
    assert again.violations == []


def test_a_copy_aimed_at_the_users_repository_does_not_reach_it(tmp_path: Path) -> None:
    """A reviewer that rewrites its copy's .git into a link to the user's repository must
    not get the harness to reset that repository when the copy is wiped."""
    repo, worktree, sha = candidate(tmp_path)
    (repo / "staged.txt").write_text("the user's work\n")
    run_git(repo, "add", "staged.txt")
    (repo / "app.py").write_text("the user's unsaved edit\n")
    before = untouched(repo)
    path, index = review(tmp_path)
    with disposable_copy(depot_of(repo), sha, path, index, worktree) as copy:
        shutil.rmtree(copy.path / ".git")
        (copy.path / ".git").write_text(f"gitdir: {repo / '.git'}\n")
        (copy.path / "app.py").write_text("print('the reviewer')\n")
    assert copy.violations == []
    assert untouched(repo) == before
    assert run_git(repo, "status", "--porcelain") == " M app.py\nA  staged.txt\n"
    assert_pristine(copy.path, sha)


def test_a_copy_swapped_for_a_link_to_the_users_checkout_is_not_wiped_through_it(
    tmp_path: Path,
) -> None:
    repo, worktree, sha = candidate(tmp_path)
    (repo / "app.py").write_text("the user's unsaved edit\n")
    (repo / "notes.txt").write_text("the user's notes\n")
    before = untouched(repo)
    path, index = review(tmp_path)
    with disposable_copy(depot_of(repo), sha, path, index, worktree) as copy:
        shutil.rmtree(copy.path)
        copy.path.symlink_to(repo)
    assert untouched(repo) == before
    assert (repo / "notes.txt").read_text() == "the user's notes\n"
    assert_pristine(path, sha)


def test_writes_into_the_candidate_are_violations(tmp_path: Path) -> None:
    repo, worktree, sha = candidate(tmp_path)
    path, index = review(tmp_path)
    with disposable_copy(depot_of(repo), sha, path, index, worktree) as copy:
        (worktree / "app.py").write_text("print('changed behind its back')\n")
        (worktree / "extra.txt").write_text("x\n")
        (worktree / "lib.py").unlink()
    assert copy.violations == ["app.py was modified", "extra.txt was added", "lib.py was deleted"]


def test_writes_into_the_candidates_git_are_violations(tmp_path: Path) -> None:
    repo, worktree, sha = candidate(tmp_path)
    path, index = review(tmp_path)
    with disposable_copy(depot_of(repo), sha, path, index, worktree) as copy:
        run_git(worktree, "commit", "-q", "--allow-empty", "-m", "sneaky")
    assert ".git/refs/heads/taskhand/T-001-x was modified" in copy.violations
    config = worktree / ".git" / "config"
    with disposable_copy(depot_of(repo), sha, path, index, worktree) as again:
        config.write_text(config.read_text() + "[core]\n\tfsmonitor = /bin/true\n")
    assert again.violations == [".git/config was modified"]
