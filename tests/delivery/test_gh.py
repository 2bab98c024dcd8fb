"""The `gh` runner: $TASKHAND_GH or gh, three calls only, each bounded in time, and what gh
says made printable and free of secrets before a reason quotes it."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from taskhand.delivery import DeliveryError, SetupError
from taskhand.delivery.gh import Gh, PullRequest, github_repo, is_web_address, program
from tests.delivery.remotes import with_remote
from tests.runs import git, make_repo


def test_the_program_is_taskhand_gh_when_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TASKHAND_GH", raising=False)
    assert program() == ["gh"]
    monkeypatch.setenv("TASKHAND_GH", "'/opt/my tools/gh' --verbose")
    assert program() == ["/opt/my tools/gh", "--verbose"]


@pytest.mark.parametrize(
    ("url", "slug"),
    [
        ("git@github.com:owner/repo.git", "github.com/owner/repo"),
        ("https://github.com/owner/repo", "github.com/owner/repo"),
        ("https://x-token:abc@ghe.example:8443/team/app.git/", "ghe.example/team/app"),
        ("ssh://git@github.com/owner/repo.git", "github.com/owner/repo"),
        ("/srv/git/owner/repo.git", None),
        ("../remote.git", None),
        ("file:///srv/owner/repo.git", None),
        ("https://gitlab.example/group/sub/repo.git", None),
    ],
)
def test_the_repository_gh_is_pointed_at_comes_from_the_remote(url: str, slug: str | None) -> None:
    assert github_repo(url) == slug


@pytest.mark.parametrize(
    ("url", "web"),
    [
        ("https://github.com/owner/repo/pull/1", True),
        ("HTTP://ghe.example:8443/team/app/pull/2", True),
        ("javascript:alert(document.domain)//https://github.com/o/r/pull/1", False),
        ("JavaScript://github.com/%0aalert(1)", False),
        ("data:text/html,<script>alert(1)</script>", False),
        ("https:javascript:alert(1)", False),  # no host
        ("//github.com/owner/repo/pull/1", False),
        ("file:///etc/passwd", False),
        ("http://[::1", False),  # unparsable
    ],
)
def test_only_a_web_address_is_a_pull_requests(url: str, web: bool) -> None:
    assert is_web_address(url) is web


def test_a_pull_request_is_found_once_created(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_repo(tmp_path / "repo")
    remote = with_remote(repo, tmp_path, monkeypatch)
    git(repo, "push", "-q", "origin", "main:topic")
    gh = Gh(repo, "git@github.com:owner/project.git")
    gh.auth_status()
    assert gh.pr_view("topic") is None
    body = tmp_path / "body.md"
    body.write_text("The body.\n")
    url = gh.pr_create("main", "topic", "T-1: A title", body)
    assert url == "https://github.example/owner/project/pull/1"
    assert gh.pr_view("topic") == PullRequest(url, "OPEN")
    assert remote.calls() == [
        ["auth", "status"],
        ["pr", "view", "topic", "--json", "url,state"],
        ["pr", "create", "--base", "main", "--head", "topic", "--title", "T-1: A title",
         "--body-file", str(body)],
        ["pr", "view", "topic", "--json", "url,state"],
    ]  # fmt: skip
    logged = (remote.state / "calls.jsonl").read_text().splitlines()
    assert {json.loads(line)["gh_repo"] for line in logged} == {"github.com/owner/project"}
    assert remote.prs()[0]["body"] == "The body.\n"


def test_logged_out_and_missing_gh_are_setup_errors_with_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_repo(tmp_path / "repo")
    with_remote(repo, tmp_path, monkeypatch)
    monkeypatch.setenv("FAKE_GH_LOGGED_OUT", "1")
    with pytest.raises(SetupError) as out:
        Gh(repo).auth_status()
    assert out.value.exit_code == 2
    assert "is not logged in: You are not logged into any GitHub hosts" in out.value.what
    assert out.value.fix.startswith("run gh auth login")
    monkeypatch.setenv("TASKHAND_GH", str(tmp_path / "no-such-gh"))
    with pytest.raises(SetupError) as missing:
        Gh(repo).auth_status()
    assert "could not start" in missing.value.what
    assert "install the GitHub CLI" in missing.value.fix


def test_what_gh_says_reaches_a_reason_printable_and_without_secrets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_repo(tmp_path / "repo")
    noisy = tmp_path / "noisy_gh.py"
    noisy.write_text(
        "import os, sys\n"
        "sys.stderr.write('\\x1b[31mHTTP 401: bad credentials ' + os.environ['GH_TOKEN'] + "
        "'\\x1b[0m\\n')\n"
        "sys.exit(1)\n"
    )
    monkeypatch.setenv("GH_TOKEN", "gho_Secret1234567890abcdef")
    monkeypatch.setenv("TASKHAND_GH", f"{sys.executable} {noisy}")
    with pytest.raises(DeliveryError) as out:
        Gh(repo).pr_view("topic")
    assert out.value.what == "gh pr view topic failed: HTTP 401: bad credentials [redacted]"


def test_a_gh_that_hangs_is_stopped_at_its_deadline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_repo(tmp_path / "repo")
    monkeypatch.setenv("TASKHAND_GH", f"{sys.executable} -c 'import time; time.sleep(60)'")
    with pytest.raises(DeliveryError) as out:
        Gh(repo, seconds=0.5).pr_view("topic")
    assert out.value.what.endswith("pr view did not answer within 0.5s")
