"""One delivery step by step against a bare remote and the stand-in gh: the branch pushed,
one pull request with its body, the store's row before and after each step, and a retry after
any failure that opens no second pull request."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from taskhand.delivery import DeliveryError
from taskhand.delivery.body import Story, TaskFacts
from taskhand.delivery.ship import Target, ship
from taskhand.plan.model import Criterion
from taskhand.state.paths import StateDir
from taskhand.state.records import DeliveryState
from taskhand.state.store import Store
from tests.delivery.remotes import Remote, with_remote
from tests.runs import git, make_repo

BRANCH = "taskhand/T-1-add-a"
STORY = Story("T-1: Add a", "Add a.txt.", tasks=[TaskFacts("T-1", "Add a", [Criterion("it is")])])


@pytest.fixture
def remote(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Remote:
    repo = make_repo(tmp_path / "repo")
    git(repo, "branch", "-q", BRANCH)
    git(repo, "checkout", "-q", BRANCH)
    (repo / "a.txt").write_text("a\n")
    git(repo, "add", "a.txt")
    git(repo, "commit", "-q", "-m", "T-1: Add a")
    git(repo, "checkout", "-q", "main")
    return with_remote(repo, tmp_path, monkeypatch)


@pytest.fixture
def store(remote: Remote) -> Iterator[Store]:
    with Store.open(StateDir.for_repo(remote.repo).database) as opened:
        yield opened


def target(store: Store, remote: Remote) -> Target:
    runs = store.runs()
    main = git(remote.repo, "rev-parse", "main").strip()
    run = runs[0] if runs else store.create_run("plan", "markdown", str(remote.repo), main, "", {})
    body = remote.repo.parent / "artifacts" / "T-1" / "pr-body.md"
    return Target(
        run.id, "T-1", remote.repo, "origin", BRANCH, "main", main, ("T-1",), "T-1: Add a", body
    )


def creates(remote: Remote) -> int:
    return sum(call[:2] == ["pr", "create"] for call in remote.calls())


def test_the_branch_is_pushed_and_one_pull_request_opened(store: Store, remote: Remote) -> None:
    t = target(store, remote)
    url = ship(store, t, STORY)
    assert remote.tip(BRANCH) == git(remote.repo, "rev-parse", BRANCH).strip()
    assert remote.subjects(f"main..{BRANCH}") == ["T-1: Add a"]
    [pr] = remote.prs()
    assert (pr["url"], pr["head"], pr["base"], pr["title"]) == (url, BRANCH, "main", "T-1: Add a")
    assert pr["body"] == t.body_file.read_text()
    assert "- [ ] it is" in pr["body"] and "T-1: Add a" in pr["body"].split("## Commits")[1]
    row = store.delivery(t.run_id, "T-1")
    assert row is not None and (row.state, row.pr_url, row.reason) == (
        DeliveryState.OPENED,
        url,
        "",
    )
    # A ref and its upstream only: the user's checkout stays on main, untouched.
    assert git(remote.repo, "config", f"branch.{BRANCH}.remote").strip() == "origin"
    assert git(remote.repo, "symbolic-ref", "--short", "HEAD").strip() == "main"
    assert git(remote.repo, "status", "--porcelain") == ""
    calls = len(remote.calls())
    assert ship(store, t, STORY) == url  # delivered: nothing asked again
    assert len(remote.calls()) == calls


def test_a_failure_after_the_push_keeps_the_reason_and_a_retry_opens_one(
    store: Store, remote: Remote, monkeypatch: pytest.MonkeyPatch
) -> None:
    t = target(store, remote)
    monkeypatch.setenv("FAKE_GH_FAIL", "pr view")
    with pytest.raises(DeliveryError, match="gh pr view taskhand/T-1-add-a failed: HTTP 502"):
        ship(store, t, STORY)
    row = store.delivery(t.run_id, "T-1")
    assert row is not None and row.state is DeliveryState.FAILED and "HTTP 502" in row.reason
    assert remote.tip(BRANCH) is not None and remote.prs() == []
    monkeypatch.delenv("FAKE_GH_FAIL")
    url = ship(store, t, STORY)
    assert [pr["url"] for pr in remote.prs()] == [url]


def test_a_pull_request_whose_answer_was_lost_is_found_not_opened_again(
    store: Store, remote: Remote, monkeypatch: pytest.MonkeyPatch
) -> None:
    t = target(store, remote)
    monkeypatch.setenv("FAKE_GH_FAIL", "pr create:after")
    with pytest.raises(DeliveryError, match="gh pr create failed: HTTP 504"):
        ship(store, t, STORY)
    monkeypatch.delenv("FAKE_GH_FAIL")
    url = ship(store, t, STORY)
    assert [pr["url"] for pr in remote.prs()] == [url] and creates(remote) == 1
    # A run killed before it recorded the address leaves the row at pushed: the same holds.
    store.record_delivery(t.run_id, "T-1", BRANCH, "main", DeliveryState.PUSHED)
    assert ship(store, t, STORY) == url and creates(remote) == 1


def test_a_closed_pull_request_is_not_replaced(store: Store, remote: Remote) -> None:
    t = target(store, remote)
    url = ship(store, t, STORY)
    prs = remote.prs()
    prs[0]["state"] = "CLOSED"
    (remote.state / "prs.json").write_text(json.dumps(prs))
    store.record_delivery(t.run_id, "T-1", BRANCH, "main", DeliveryState.PUSHED)
    with pytest.raises(DeliveryError, match=f"was closed unmerged: {url}"):
        ship(store, t, STORY)
    assert creates(remote) == 1


def test_a_push_the_remote_refuses_fails_before_any_pull_request(
    store: Store, remote: Remote
) -> None:
    tree = git(remote.repo, "rev-parse", "main^{tree}").strip()
    theirs = git(remote.repo, "commit-tree", tree, "-p", "main", "-m", "someone else's").strip()
    git(remote.repo, "push", "-q", "origin", f"{theirs}:refs/heads/{BRANCH}")
    with pytest.raises(
        DeliveryError,
        match=rf"git push -u origin {BRANCH} failed: ! \[rejected\] .* \(non-fast-forward\)",
    ):
        ship(store, target(store, remote), STORY)
    assert remote.tip(BRANCH) == theirs and remote.prs() == []


def test_the_repositorys_settings_choose_no_program_for_the_push(
    store: Store, remote: Remote, tmp_path: Path
) -> None:
    marker = tmp_path / "ran"
    evil = f"sh -c 'touch {marker}; exec git-receive-pack \"$@\"' --"
    git(remote.repo, "config", "remote.origin.receivepack", evil)
    git(remote.repo, "config", "core.sshCommand", f"touch {marker}")
    hook = remote.repo / ".git" / "hooks" / "pre-push"
    hook.write_text(f"#!/bin/sh\ntouch {marker}\n")
    os.chmod(hook, 0o755)
    ship(store, target(store, remote), STORY)
    assert remote.tip(BRANCH) is not None
    assert not marker.exists()
