"""The branch contract: the branch exists, has commits of its own, each says whose it is, and
the base it goes into on the remote holds what it starts from."""

from __future__ import annotations

from pathlib import Path

import pytest

from taskhand.delivery import DeliveryError
from taskhand.delivery.contract import check, own_commits
from tests.runs import git, make_repo

BRANCH = "taskhand/T-1-add"


def commit(repo: Path, subject: str, name: str) -> str:
    (repo / name).write_text(f"{subject}\n")
    git(repo, "add", name)
    git(repo, "commit", "-q", "-m", subject)
    return git(repo, "rev-parse", "HEAD").strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """main at 'start', and BRANCH one commit of T-1 ahead of it."""
    made = make_repo(tmp_path / "repo")
    git(made, "checkout", "-q", "-b", BRANCH)
    commit(made, "T-1: Add a", "a.txt")
    git(made, "checkout", "-q", "main")
    return made


def test_a_branch_of_the_tasks_own_commits_holds(repo: Path) -> None:
    main = git(repo, "rev-parse", "main").strip()
    [own] = check(repo, BRANCH, main, ("T-1",), "main", main)
    assert own.subject == "T-1: Add a"
    assert own_commits(repo, main, BRANCH) == [own]


def test_each_broken_part_is_named(repo: Path) -> None:
    main = git(repo, "rev-parse", "main").strip()
    with pytest.raises(DeliveryError, match="the branch taskhand/T-9 does not exist"):
        check(repo, "taskhand/T-9", main, ("T-9",), "main", main)
    tip = git(repo, "rev-parse", BRANCH).strip()
    with pytest.raises(DeliveryError, match=f"{BRANCH} has no commits after {tip[:12]}"):
        check(repo, BRANCH, tip, ("T-1",), "main", main)
    with pytest.raises(DeliveryError, match="the remote has no branch main"):
        check(repo, BRANCH, main, ("T-1",), "main", None)


def test_a_commit_that_is_not_the_tasks_breaks_it(repo: Path) -> None:
    main = git(repo, "rev-parse", "main").strip()
    git(repo, "checkout", "-q", BRANCH)
    commit(repo, "T-10: Someone else's", "b.txt")  # T-1's id is a prefix of T-10's, not its
    git(repo, "checkout", "-q", "main")
    with pytest.raises(DeliveryError) as out:
        check(repo, BRANCH, main, ("T-1",), "main", main)
    assert "holds 1 commit(s) whose subject does not start with T-1:" in out.value.what
    assert "T-10: Someone else's" in out.value.what
    [*_, last] = check(repo, BRANCH, main, ("T-1", "T-10"), "main", main)
    assert last.subject == "T-10: Someone else's"


def test_a_base_the_remote_lacks_would_carry_unpushed_commits(repo: Path) -> None:
    pushed = git(repo, "rev-parse", "main").strip()
    local = commit(repo, "work nobody pushed", "c.txt")
    git(repo, "branch", "-q", "-f", "taskhand/T-2-b", local)
    git(repo, "checkout", "-q", "taskhand/T-2-b")
    commit(repo, "T-2: B", "d.txt")
    git(repo, "checkout", "-q", "main")
    with pytest.raises(DeliveryError) as out:
        check(repo, "taskhand/T-2-b", local, ("T-2",), "main", pushed)
    assert f"starts from {local[:12]}, which main on the remote lacks" in out.value.what
    assert out.value.fix == "push main first, then retry"
    # A tip this repository never fetched cannot be judged here: the remote may well hold it.
    assert check(repo, "taskhand/T-2-b", local, ("T-2",), "main", "f" * 40)
