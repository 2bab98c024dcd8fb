"""What the workspace tests share: git without the user's configuration, a repository made
and committed to with the git command line."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from taskhand.workspace.depot import Depot


@pytest.fixture(autouse=True)
def isolated_git(monkeypatch: pytest.MonkeyPatch) -> None:
    """No user or system configuration; a fixed identity and clock, so shas repeat."""
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", os.devnull)
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for role in ("AUTHOR", "COMMITTER"):
        monkeypatch.setenv(f"GIT_{role}_NAME", "Tess Ter")
        monkeypatch.setenv(f"GIT_{role}_EMAIL", "tess@example.com")
        monkeypatch.setenv(f"GIT_{role}_DATE", "@1700000000 +0000")
    for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "EMAIL"):
        monkeypatch.delenv(name, raising=False)


def run(folder: Path, *args: str, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        ["git", "-C", str(folder), *args],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, **(env or {})},
    )
    return done.stdout.strip()


def write(folder: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def commit(folder: Path, message: str, files: dict[str, str] | None = None) -> str:
    write(folder, files or {})
    run(folder, "add", "-A")
    run(folder, "commit", "-q", "--allow-empty", "-m", message)
    return run(folder, "rev-parse", "HEAD")


def make_repo(folder: Path) -> Path:
    run(folder.parent, "init", "-q", "-b", "main", folder.name)
    files = {"README.md": "# demo\n", "src/app.py": "print('hi')\n", ".gitignore": "build/\n"}
    commit(folder, "first", files)
    return folder


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo")


@pytest.fixture
def attempt(tmp_path: Path) -> Path:
    """Where an earlier version put a task attempt's worktree: outside the user's checkout."""
    return tmp_path / "state" / "worktrees" / "task-1" / "attempt-1"


def depot_of(repo: Path) -> Depot:
    """The depot a run would keep for `repo`: beside it, as the state folder is."""
    return Depot.open(repo, repo.parent / f"{repo.name}-depot")


def agent_env(repo: Path) -> dict[str, str]:
    """What every process of an attempt has for its own git to read the depot's commits (the
    workspace's alternates name the user's objects alone)."""
    return {"GIT_ALTERNATE_OBJECT_DIRECTORIES": str(depot_of(repo).objects)}


def in_depot(repo: Path, *args: str) -> str:
    """`git ARGS` through `repo`'s depot, which sees its objects and the depot's."""
    return run(repo, f"--git-dir={depot_of(repo).path}", *args)
