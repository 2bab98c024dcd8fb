"""The repository's worktrees: listing them, and removing those that runs of earlier versions
left (attempts now run in workspaces of their own, see workspace/__init__.py).
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from taskhand.workspace import git


@dataclass(frozen=True)
class Worktree:
    path: Path
    head: str
    branch: str | None


def listed(repo: Path) -> list[Worktree]:
    """Every checkout of the repository, the main one first; bare entries are left out."""
    found: list[Worktree] = []
    record: dict[str, str] = {}
    for field in [*git.fields(git.run(repo, "worktree", "list", "--porcelain", "-z").stdout), ""]:
        if field:
            key, _, value = field.partition(" ")
            record[key] = value
            continue
        if "worktree" in record and "bare" not in record:
            branch = record.get("branch")
            found.append(
                Worktree(
                    path=Path(record["worktree"]),
                    head=record.get("HEAD", ""),
                    branch=branch.removeprefix("refs/heads/") if branch else None,
                )
            )
        record = {}
    return found


def _registered(repo: Path, path: Path) -> Worktree | None:
    target = path.resolve()
    return next((t for t in listed(repo) if t.path.resolve() == target), None)


def remove(repo: Path, path: Path, locked_too: bool = False) -> None:
    """Remove the worktree at `path` with its changes; nothing to do when it is gone.

    Attempts no longer run in worktrees of the user's repository (see workspace/__init__.py); this
    removes those that runs of earlier versions left. `locked_too` also removes a locked one
    and, failing that, deletes its folder: the harness passes it for its own folders.
    """
    if _registered(repo, path) is None:
        return
    # --force discards the attempt's uncommitted files; it also unregisters a worktree whose
    # folder was deleted by hand. Prune is only the fallback, since it also forgets other
    # worktrees whose folders are missing (say, on an unmounted drive).
    force = ["--force", "--force"] if locked_too else ["--force"]
    done = git.run(repo, "worktree", "remove", *force, "--", str(path.resolve()), ok=(0, 128))
    if done.returncode == 0:
        return
    if path.exists() and locked_too:
        # git will not remove a worktree whose .git was rewritten; the folder is ours.
        shutil.rmtree(path, ignore_errors=True)
    if not path.exists():
        git.run(repo, "worktree", "prune")
    if _registered(repo, path) is not None:
        raise git.error(
            f"cannot remove worktree {path}: {git.reason(done.stderr)}",
            f"git worktree unlock {path}, then try again",
        )
