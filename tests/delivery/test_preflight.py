"""Preflight with delivery on: a remote, gh installed and logged in, the base branch on the
remote. Each failure stops `taskhand run` before it makes anything, with exit code 2 and the
fix in one line."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from taskhand.config import Delivery
from taskhand.delivery import SetupError
from taskhand.delivery.preflight import base_branch, check
from taskhand.state.paths import StateDir
from tests.conftest import RunCli
from tests.delivery.remotes import with_remote
from tests.run.test_review import plan_repo
from tests.runs import git

ON = Delivery("task", "origin")


def test_a_ready_setup_names_the_base_branch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = plan_repo(tmp_path, {"T-001": "Do it.\n"})
    with_remote(repo, tmp_path, monkeypatch)
    assert check(repo, ON, "HEAD") == "main"
    assert check(repo, ON, "origin/main") == "main"
    git(repo, "checkout", "-q", "--detach")
    with pytest.raises(SetupError, match="detached HEAD") as out:
        base_branch(repo, "HEAD", "origin")
    assert out.value.fix == "check out the branch pull requests go into, or pass --base BRANCH"
    with pytest.raises(SetupError, match="the run's base 'HEAD~1' is not a branch"):
        base_branch(repo, "HEAD~1", "origin")


def _no_remote(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    git(repo, "remote", "remove", "origin")


def _gh_missing(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TASKHAND_GH", str(repo / "no-such-gh"))


def _logged_out(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_GH_LOGGED_OUT", "1")


def _base_not_pushed(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bare = Path(git(repo, "remote", "get-url", "origin").strip())
    subprocess.run(
        ["git", "--git-dir", str(bare), "update-ref", "-d", "refs/heads/main"], check=True
    )


def _remote_gone(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    git(repo, "remote", "set-url", "origin", str(repo.parent / "gone.git"))


@pytest.mark.parametrize(
    ("breaks", "what", "fix"),
    [
        (
            _no_remote,
            "delivery is on, but the repository has no remote named 'origin'",
            "git remote add origin URL (or set [deliver] remote), or --deliver off",
        ),
        (_gh_missing, "could not start (No such file or directory)", "install the GitHub CLI"),
        (
            _logged_out,
            "is not logged in: You are not logged into any GitHub hosts",
            "gh auth login",
        ),
        (
            _base_not_pushed,
            "the base branch main is not on the remote origin",
            "git push origin main",
        ),
        (_remote_gone, "the remote origin cannot be read: git ls-remote", "git ls-remote origin"),
    ],
)
def test_each_missing_piece_exits_2_with_the_fix_before_anything_is_made(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    run_cli: RunCli,
    breaks: object,
    what: str,
    fix: str,
) -> None:
    repo = plan_repo(tmp_path, {"T-001": "Do it.\n"})
    with_remote(repo, tmp_path, monkeypatch)
    assert callable(breaks)
    breaks(repo, monkeypatch)
    result = run_cli("run", repo / "plan", "--deliver", "task", "--repo", repo)
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith("taskhand: error: ") and result.stderr.count("\n") == 1
    assert what in result.stderr.split(" (fix: ")[0] and fix in result.stderr.split(" (fix: ")[1]
    assert not StateDir.for_repo(repo).database.exists()  # no run was made
    as_json = run_cli("run", repo / "plan", "--deliver", "task", "--repo", repo, "--json")
    assert as_json.exit_code == 2
    assert fix in json.loads(as_json.stderr)["fix"]


def test_without_delivery_nothing_is_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_cli: RunCli
) -> None:
    repo = plan_repo(tmp_path, {"T-001": "Do it.\n"})
    _gh_missing(repo, monkeypatch)
    result = run_cli("run", repo / "plan", "--repo", repo, "--script", tmp_path / "none.json")
    assert result.exit_code != 2
    assert "gh" not in result.stderr
