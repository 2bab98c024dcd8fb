"""Workspaces: a private git repository per attempt and per reviewer, checked out at a pinned
commit, sharing the user's objects and the run's depot read-only through git's alternates.

The agent may do anything in its workspace, `.git` included. The harness never runs git through
that `.git`: it writes and reads the files through the run's depot (workspace/depot.py) as git
dir and an index of its own kept outside the workspace, so no setting, hook or link an agent
leaves there can make the harness run anything or reach another checkout. No attribute rewrites
content on the way in or out: a workspace holds exactly its commit's bytes, and what is
collected from it is exactly the bytes it holds.
"""

from __future__ import annotations

import functools
import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from taskhand.errors import UserError
from taskhand.text import printable
from taskhand.workspace import git, removal, screen
from taskhand.workspace.depot import NEUTRAL, Depot

# The user section lets an agent's own `git commit` work in a sandbox, whose home (and so
# ~/.gitconfig) is empty; what lands is the harness's commit, by the user's identity.
_CONFIG = """[core]
\trepositoryformatversion = 0
\tfilemode = true
\tbare = false
\tlogallrefupdates = true
[user]
\tname = taskhand agent
\temail = agent@taskhand.invalid
"""


class WorkspaceError(UserError):
    """A workspace the harness will not read: the message says what was wrong."""


@dataclass(frozen=True)
class Workspace:
    """A checked-out workspace: its folder, the harness's index of it, and the folder's
    identity when it was made (a folder an agent swapped for a link is never read)."""

    path: Path
    index: Path
    identity: tuple[int, int]


def prepare(depot: Depot, path: Path, index: Path, sha: str, branch: str | None) -> Workspace:
    """`path` holding exactly commit `sha` (of `depot`'s repository, or of the depot), as a
    repository of its own on `branch` (a detached HEAD when None). A folder left from an
    earlier use of `path` is brought to `sha` by rewriting only the files that differ, when
    the harness's index of it is still there; when what an agent left there stops that (a
    folder it made unwritable or immutable, a FIFO), the folder is deleted and made anew. A
    WorkspaceError when even that leaves something."""
    full = git.resolve(depot.repo, sha)
    depot.check()
    if _reusable(path, index):
        try:
            return _check_out(depot, path, index, full, branch, leftovers=True)
        except (git.GitError, OSError):
            pass
    left = remove(path)
    index.unlink(missing_ok=True)
    if left:
        raise WorkspaceError(left_behind(path, left))
    return _check_out(depot, path, index, full, branch, leftovers=False)


def _check_out(
    depot: Depot, path: Path, index: Path, full: str, branch: str | None, leftovers: bool
) -> Workspace:
    repo = depot.repo
    index.parent.mkdir(parents=True, exist_ok=True)
    path.mkdir(parents=True, exist_ok=True)
    with os.scandir(path) as entries:  # an empty new folder has nothing to clean away
        leftovers = leftovers or any(entries)
    own = _own_index(depot, path)
    git.run(repo, *own, "read-tree", "--reset", "-u", full, env=_index_env(index))
    if leftovers:
        git.run(repo, *own, "clean", "-ffdxq", env=_index_env(index))
    _make_git_dir(depot, path / ".git", full, branch, index)
    info = os.stat(path)
    return Workspace(path, index, (info.st_dev, info.st_ino))


def left_behind(path: Path, left: list[str]) -> str:
    """The one line that says what of `path` could not be deleted, and how to delete it."""
    shown = "; ".join(left[:5]) + (f"; and {len(left) - 5} more" if len(left) > 5 else "")
    where = printable(str(path), name=True)
    return (
        f"{where} could not be deleted in full ({shown}) (fix: as its owner or root, "
        f"chattr -R -i {where}; chmod -R u+rwx {where}; rm -rf {where})"
    )


def collect(
    depot: Depot, ws: Workspace, base: str, message: str, keep_out: Sequence[str] = ()
) -> str | None:
    """Every file of the workspace, byte for byte, as one commit on top of `base`, written
    into the depot (never the user's repository); None when nothing changed. Commits the
    agent made itself are not read: the result's only parent is `base`. The paths `keep_out`
    names (files `[setup] copy` put there) stay as `base` has them, whatever the workspace
    holds."""
    check_intact(ws)
    repo = depot.repo
    depot.check()
    own = _own_index(depot, ws.path)
    env = _index_env(ws.index)
    _refuse_strays(repo, ws.path, own, env)
    added = git.run(repo, *own, "add", "-A", env=env, ok=(0, 1, 128))
    if added.returncode:  # a file git cannot read as it is (its encoding, its rights)
        raise WorkspaceError(
            f"the workspace's files were not taken: {printable(git.reason(added.stderr))} "
            "(fix: leave only files git can add as they are)"
        )
    full_base = git.resolve(repo, base)
    if keep_out:
        _as_in_base(repo, own, env, full_base, keep_out)
    tree = git.decode(git.run(repo, *own, "write-tree", env=env).stdout).strip()
    # One diff against the base says both whether anything changed and what was taken.
    diff = ["diff-tree", "-r", "-z", "--no-renames", full_base, tree]
    changes = git.fields(git.run(repo, *diff).stdout)
    if not changes:
        return None
    _refuse_nested_repositories(changes)
    _refuse_names(repo, tree, changes)
    return git.commit_tree(repo, tree, full_base, message, into=depot.args())


def _refuse_strays(repo: Path, path: Path, own: tuple[str, ...], env: dict[str, str]) -> None:
    """Refuse a workspace holding what git would skip or choke on (a FIFO, a socket, a nested
    .git, an unreadable file): the result would not be what the agent left. What git ignores
    stays out of the result anyway, and is no reason."""
    found = [f for f in screen.strays(path) if f[0] != "."]
    if not found:
        return
    names = b"".join(os.fsencode(name) + b"\0" for name, _ in found)
    check = ["check-ignore", "-z", "--stdin"]
    # 128: a path git will not judge (one inside a nested repository): not ignored, then.
    done = git.run(repo, *own, *check, stdin=names, env=env, ok=(0, 1, 128))
    ignored = set(git.fields(done.stdout)) if done.returncode != 128 else set()
    found = [f for f in found if f[0] not in ignored]
    if found:
        raise WorkspaceError(screen.refusal(found))


def _refuse_names(repo: Path, tree: str, changes: list[str]) -> None:
    """Refuse a result that changes too many paths, or adds one under a name it may not hold
    (workspace/screen.py)."""
    pairs = list(zip(changes[0::2], changes[1::2], strict=False))
    if len(pairs) > screen.MAX_CHANGED:
        raise WorkspaceError(
            f"the workspace's files were not taken: they change {len(pairs)} paths, more than "
            f"the {screen.MAX_CHANGED} one result may (fix: leave generated and vendored files "
            "out, ignored in .gitignore)"
        )
    added = [name for meta, name in pairs if meta.split(" ")[-1].startswith("A")]
    found = screen.names(added)
    if added and not found:
        listed = ["ls-tree", "-r", "-z", "--name-only", "--full-tree", tree]
        found = screen.clashes(git.fields(git.run(repo, *listed).stdout), set(added))
    if found:
        raise WorkspaceError(screen.refusal(found))


def _as_in_base(
    repo: Path, own: tuple[str, ...], env: dict[str, str], base: str, paths: Sequence[str]
) -> None:
    """Put `paths` in the harness's index back as `base` has them, or out of it."""
    listed = ["ls-tree", "-r", "-z", "--full-tree", base, "--", *paths]
    entries = git.run(repo, *listed, env={"GIT_LITERAL_PATHSPECS": "1"}).stdout
    names = b"".join(os.fsencode(p) + b"\0" for p in paths)
    git.run(repo, *own, "update-index", "-z", "--force-remove", "--stdin", stdin=names, env=env)
    if entries:
        git.run(repo, *own, "update-index", "-z", "--index-info", stdin=entries, env=env)


def _refuse_nested_repositories(changes: list[str]) -> None:
    """A folder holding a .git of its own is recorded by git as a link to a commit that only
    the workspace has: nobody could read that work. Say so instead of taking it."""
    for meta, name in zip(changes[0::2], changes[1::2], strict=False):
        if meta.split(" ")[1] == "160000":  # the new mode of a gitlink
            shown = printable(name, name=True)
            raise WorkspaceError(
                f"{shown} is a git repository inside the workspace, so its files cannot be "
                f"taken (fix: remove {shown}/.git and keep its files)"
            )


def check_intact(ws: Workspace) -> None:
    """Refuse a workspace whose folder is no longer the one made (say, a link to elsewhere)."""
    try:
        info = os.lstat(ws.path)
    except OSError:
        raise WorkspaceError("the workspace folder is gone") from None
    if ws.path.is_symlink() or (info.st_dev, info.st_ino) != ws.identity:
        raise WorkspaceError("the workspace folder was replaced, so nothing in it was taken")


def remove(path: Path) -> list[str]:
    """Delete the workspace at `path`, never following a link out of it, through whatever the
    agent did to keep it (workspace/removal.py); what could not be deleted, one line each."""
    return removal.remove_tree(path).left


def harness_git(depot: Depot, path: Path, index: Path) -> tuple[tuple[str, ...], dict[str, str]]:
    """The git options and environment that read or write the workspace at `path` the
    harness's way: the depot as git dir, `index` as the index, no attribute rewriting."""
    return _own_index(depot, path), _index_env(index)


def _reusable(path: Path, index: Path) -> bool:
    return index.is_file() and path.is_dir() and not path.is_symlink()


def _own_index(depot: Depot, path: Path) -> tuple[str, ...]:
    """git options that work on `path`'s files through the depot, not its .git: whose
    attributes switch off every filter (a filter is a program, and an agent's .gitattributes
    may name any of them, so LFS files are taken as they are) and every conversion."""
    return (*depot.args(), f"--work-tree={path.resolve()}")


def no_filters(repo: Path) -> list[str]:
    """git options switching off every content filter `repo`'s configuration names.
    Asked again only when a configuration file changed (by its stat identity)."""
    return list(_filters_off(repo, git.config_identity(repo)))


@functools.lru_cache(maxsize=16)
def _filters_off(repo: Path, identity: tuple[object, ...]) -> tuple[str, ...]:
    done = git.run(repo, "config", "-z", "--name-only", "--get-regexp", r"^filter\.", ok=(0, 1))
    names = {key.rsplit(".", 1)[0] for key in git.fields(done.stdout)}
    return tuple(
        arg
        for name in sorted(names)
        for setting in ("clean=", "smudge=", "process=", "required=false")
        for arg in ("-c", f"{name}.{setting}")
    )


def _index_env(index: Path) -> dict[str, str]:
    return {"GIT_INDEX_FILE": str(index.resolve())}


def _make_git_dir(depot: Depot, folder: Path, sha: str, branch: str | None, index: Path) -> None:
    """A fresh .git for the agent: its objects come from the user's repository and the run's
    depot, read-only; what it commits stays in here. Written by hand, so no template or hook
    is copied."""
    remove(folder)
    # Only the folders git needs to see a repository; it makes the others (objects/pack,
    # refs/tags) when the agent first needs them. Each costs a journal write under load.
    (folder / "objects" / "info").mkdir(parents=True)
    (folder / "refs" / "heads").mkdir(parents=True)
    (folder / "info").mkdir()
    objects = (git.common_dir(depot.repo) / "objects").resolve()
    # The user's objects first (the base's history), then the depot's (the candidates'). Every
    # process of the attempt is also given the depot in GIT_ALTERNATE_OBJECT_DIRECTORIES
    # (Harness.workspace_env), but a git library that reads objects itself (aider's GitPython
    # with gitdb) knows only this file.
    alternates = f"{objects}\n{depot.objects.resolve()}\n"
    (folder / "objects" / "info" / "alternates").write_text(alternates)
    # The agent's own git sees the files as the harness wrote them, converting nothing.
    (folder / "info" / "attributes").write_text(NEUTRAL)
    (folder / "config").write_text(_CONFIG)
    if branch is None:
        (folder / "HEAD").write_text(f"{sha}\n")
    else:
        ref = folder / "refs" / "heads" / branch
        ref.parent.mkdir(parents=True, exist_ok=True)
        ref.write_text(f"{sha}\n")
        (folder / "HEAD").write_text(f"ref: refs/heads/{branch}\n")
    # The harness's index matches the files just written, so the agent's `git status` is clean.
    shutil.copyfile(index, folder / "index")
