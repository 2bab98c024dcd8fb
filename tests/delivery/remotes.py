"""A remote for delivery tests: a bare repository on disk, and the stand-in `gh` pointed at it
(taskhand.demo.gh as $TASKHAND_GH), with what it recorded read back."""

from __future__ import annotations

import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from taskhand.demo import gh as fake_gh
from tests.runs import git

FAKE_GH = Path(fake_gh.__file__).resolve()


@dataclass
class Remote:
    """The bare repository `bare`, the remote `origin` of `repo`, and the stand-in's state."""

    repo: Path
    bare: Path
    state: Path

    def calls(self) -> list[list[str]]:
        return fake_gh.calls(self.state)

    def prs(self) -> list[dict[str, Any]]:
        return fake_gh.prs(self.state)

    def tip(self, branch: str) -> str | None:
        done = subprocess.run(
            ["git", "--git-dir", str(self.bare), "rev-parse", "--verify", "-q", branch],
            capture_output=True,
            text=True,
            check=False,
        )
        return done.stdout.strip() if done.returncode == 0 else None

    def subjects(self, spec: str) -> list[str]:
        """The subjects of `git log spec` in the remote, newest first."""
        done = subprocess.run(
            ["git", "--git-dir", str(self.bare), "log", "--format=%s", spec],
            capture_output=True,
            text=True,
            check=True,
        )
        return done.stdout.splitlines()


def with_remote(
    repo: Path, folder: Path, monkeypatch: pytest.MonkeyPatch, push: bool = True
) -> Remote:
    """Give `repo` a bare remote `origin` (main pushed, unless not `push`) and put the
    stand-in `gh` in gh's place."""
    bare = folder / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(bare)], check=True)
    git(repo, "remote", "add", "origin", str(bare))
    if push:
        git(repo, "push", "-q", "origin", "main")
    state = folder / "gh-state"
    monkeypatch.setenv("TASKHAND_GH", f"{shlex.quote(sys.executable)} {shlex.quote(str(FAKE_GH))}")
    monkeypatch.setenv("FAKE_GH_STATE", str(state))
    monkeypatch.setenv("FAKE_GH_REMOTE", str(bare))
    for name in ("FAKE_GH_FAIL", "FAKE_GH_KILL", "FAKE_GH_LOGGED_OUT", "GH_REPO"):
        monkeypatch.delenv(name, raising=False)
    return Remote(repo, bare, state)
