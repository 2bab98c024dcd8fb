"""The full demo, as a person runs it (`taskhand demo --full`): the lifecycle from an interview
to two pull requests, offline, with real screenshots where a browser can run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from taskhand.agents import browser
from tests.agents.pictures import assert_shows_the_app


def test_the_full_demo_goes_from_an_interview_to_pull_requests(
    tmp_path: Path, isolated_home: Path
) -> None:
    folder = tmp_path / "demo"
    env = {**os.environ, "TASKHAND_HOME": str(isolated_home)}
    env.pop("TASKHAND_GH", None)
    done = subprocess.run(
        [sys.executable, "-m", "taskhand", "demo", "--full", "--dir", str(folder)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )
    out = done.stdout
    assert done.returncode == 0, out + done.stderr
    for typed in (
        "$ taskhand answer T-001 Q1 a",
        '$ taskhand revise T-001 "Say which file',
        "$ taskhand approve T-001",
        "$ taskhand accept T-001",
        "$ taskhand approve T-002",
    ):
        assert typed in out
    for line in (
        "T-001: asks Q1: Where should the search box live?",
        "T-001: judge rejected as weak_test",
        "T-001: pull request https://github.example/owner/project/pull/1",
        "T-002: pull request https://github.example/owner/project/pull/2",
        "TaskTrack EXIT: Plan Completed",
    ):
        assert line in out
    prs = json.loads((folder / "gh" / "prs.json").read_text())
    assert [(p["head"], p["base"]) for p in prs] == [
        ("taskhand/T-001-search-box-that-filters-the-list", "main"),
        ("taskhand/T-002-say-how-many-bookmarks-are-saved",
         "taskhand/T-001-search-box-that-filters-the-list"),
    ]  # fmt: skip
    assert "### Review\n\nSay which file the filter goes in" in prs[0]["body"]
    task_file = (folder / "bookmarks" / "plan" / "T-001-search.md").read_text()
    assert "### Q1 · Where should the search box live? · answered" in task_file
    remote = folder / "remote.git"
    heads = subprocess.run(
        ["git", "--git-dir", str(remote), "branch", "--list"], capture_output=True, text=True
    ).stdout
    assert "taskhand/T-001-search-box-that-filters-the-list" in heads
    assert "merge" not in " ".join(" ".join(c) for c in _calls(folder))  # nothing merged
    if browser.problem():
        return
    artifacts = next((isolated_home / "repos").glob("bookmarks-*/artifacts/*/T-001"))
    for name in ("prototype.png", "found-2.png", "found-3.png"):
        assert_shows_the_app(artifacts / name)
    assert "(screenshot: `found-3.png`)" in prs[0]["body"]


def _calls(folder: Path) -> list[list[str]]:
    lines = (folder / "gh" / "calls.jsonl").read_text().splitlines()
    return [json.loads(line)["argv"] for line in lines]
