"""Branches against real repositories: each move a compare and swap, names checked first."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from taskhand.workspace import git, refs, worktrees
from taskhand.workspace.git import GitError
from tests.workspace.conftest import commit, run
from tests.workspace.test_git import assert_one_line_fix
from tests.workspace.test_worktrees import old_worktree


def test_current_branch_and_a_detached_head(repo: Path) -> None:
    assert refs.current_branch(repo) == "main"
    run(repo, "checkout", "-q", "--detach")
    assert refs.current_branch(repo) is None


def test_branch_sha_create_branch_and_delete_branch(repo: Path) -> None:
    head = run(repo, "rev-parse", "HEAD")
    assert refs.branch_sha(repo, "task") is None
    refs.create_branch(repo, "task", head[:10])
    assert refs.branch_sha(repo, "task") == head
    refs.create_branch(repo, "task", head)  # the same sha again: nothing to do
    refs.delete_branch(repo, "task")
    assert refs.branch_sha(repo, "task") is None
    refs.delete_branch(repo, "task")  # already gone: nothing to do


def test_create_branch_refuses_an_existing_branch_elsewhere(repo: Path) -> None:
    first = run(repo, "rev-parse", "HEAD")
    second = commit(repo, "second")
    refs.create_branch(repo, "task", first)
    with pytest.raises(GitError) as error:
        refs.create_branch(repo, "task", second)
    assert "already exists" in assert_one_line_fix(error)
    assert refs.branch_sha(repo, "task") == first


def git_says(repo: Path, names: list[str]) -> dict[str, str]:
    """The branches' commits as `git for-each-ref` lists them."""
    wanted = [f"refs/heads/{n}" for n in names]
    listed = run(repo, "for-each-ref", "--format=%(objectname) %(refname)", *wanted)
    pairs = (line.split(" ", 1) for line in listed.splitlines())
    return {ref.removeprefix("refs/heads/"): sha for sha, ref in pairs if ref in wanted}


def test_branch_shas_say_what_git_says(repo: Path) -> None:
    first = run(repo, "rev-parse", "HEAD")
    second = commit(repo, "second")
    refs.create_branch(repo, "taskhand/T-1", first)
    refs.create_branch(repo, "b", second)
    names = ["taskhand/T-1", "b", "missing"]
    assert refs.branch_shas(repo, names) == {"taskhand/T-1": first, "b": second}
    run(repo, "pack-refs", "--all")  # no ref files left: git reads packed-refs
    assert refs.branch_shas(repo, names) == {"taskhand/T-1": first, "b": second}
    heads = repo / ".git" / "refs" / "heads"
    (heads / "symbolic").write_text("ref: refs/heads/b\n")
    (heads / "link").symlink_to("b")
    (heads / "noted").write_text(f"{first}\n# a note after the name, which git ignores\n")
    (heads / "short").write_text(first[:39] + "\n")
    for name in ["symbolic", "link", "noted", "short"]:
        assert refs.branch_shas(repo, ["b", name]) == git_says(repo, ["b", name]), name
    assert refs.branch_shas(repo, ["symbolic", "noted"]) == {"symbolic": second, "noted": first}


def test_create_branch_says_why_git_would_not_create_it(repo: Path) -> None:
    (repo / ".git" / "refs" / "heads" / "task.lock").write_text("")  # a killed git's leftover
    with pytest.raises(GitError) as error:
        refs.create_branch(repo, "task", "HEAD")
    assert "cannot create branch 'task'" in assert_one_line_fix(error)
    assert refs.branch_sha(repo, "task") is None


def test_create_branch_if_absent_says_where_an_existing_one_is(repo: Path) -> None:
    first = run(repo, "rev-parse", "HEAD")
    second = commit(repo, "second")
    assert refs.create_branch_if_absent(repo, "task", first) is None
    assert refs.create_branch_if_absent(repo, "task", second) == first
    assert refs.branch_sha(repo, "task") == first


@pytest.mark.parametrize("name", ["bad..name", "-x", "a b", "x~1", ""])
def test_invalid_branch_names(repo: Path, name: str) -> None:
    with pytest.raises(GitError) as error:
        refs.create_branch(repo, name, "HEAD")
    assert "invalid branch name" in assert_one_line_fix(error)


NAMES = ["T-001_x/y", "a//b", "a/", "/a", "a/-b", "a.lock", "a/.b", "a..b", "a.b", "a@{b", "@"]


@pytest.mark.parametrize("name", NAMES)
def test_a_branch_name_is_valid_as_git_says(repo: Path, name: str) -> None:
    ruled = subprocess.run(
        ["git", "check-ref-format", f"refs/heads/{name}"], capture_output=True, check=False
    )
    try:
        refs.branch_sha(repo, name)
        valid = True
    except GitError:
        valid = False
    assert valid == (ruled.returncode == 0)


def test_move_branch_is_a_compare_and_swap(repo: Path) -> None:
    first = run(repo, "rev-parse", "HEAD")
    second = commit(repo, "second")
    refs.create_branch(repo, "task", first)
    refs.move_branch(repo, "task", second, first)
    assert refs.branch_sha(repo, "task") == second
    with pytest.raises(GitError) as error:
        refs.move_branch(repo, "task", first, first)  # stale: it is at second now
    assert "is at" in assert_one_line_fix(error)
    assert refs.branch_sha(repo, "task") == second


def test_move_branch_of_a_missing_branch(repo: Path) -> None:
    with pytest.raises(GitError) as error:
        refs.move_branch(repo, "ghost", "HEAD", "HEAD")
    assert "does not exist" in assert_one_line_fix(error)


def test_delete_branch_refuses_a_checked_out_branch(repo: Path, attempt: Path) -> None:
    old_worktree(repo, attempt, "task")
    with pytest.raises(GitError) as error:
        refs.delete_branch(repo, "task")
    assert "remove that worktree first" in assert_one_line_fix(error)
    worktrees.remove(repo, attempt)
    refs.delete_branch(repo, "task")
    assert refs.branch_sha(repo, "task") is None


def test_branch_shas_reads_missing_and_packed_branches_without_git(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A task's branch before its work lands has no ref: read as missing, from the ref
    files alone, as a packed one is (a run reads its branches after every unit)."""
    head = git.resolve(repo, "HEAD")
    refs.create_branch(repo, "packed/one", head)
    run(repo, "pack-refs", "--all")
    refs.create_branch(repo, "loose/two", head)
    calls: list[tuple[str, ...]] = []
    real = git.run

    def counted(folder: Path, *args: str, **kw: Any) -> Any:
        calls.append(args)
        return real(folder, *args, **kw)

    monkeypatch.setattr(git, "run", counted)
    found = refs.branch_shas(repo, ["packed/one", "loose/two", "never/made"])
    assert found == {"packed/one": head, "loose/two": head}
    assert not [c for c in calls if "for-each-ref" in c]
