"""A run's base from a dirty checkout (`--snapshot`): one commit of the working tree as it is,
staged, unstaged and untracked changes alike (ignored files never), on top of HEAD.

It is built through an index of the harness's own, outside the repository, so the user's
index, files, stash, HEAD, branches and configuration stay byte for byte as they were; the
commit is kept reachable under `refs/taskhand/snapshots/<run>`, a ref no branch command shows.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from taskhand.errors import UserError
from taskhand.workspace import git, no_filters

REFS = "refs/taskhand/snapshots"
MESSAGE = (
    "taskhand: snapshot of the working tree\n\n"
    "The checkout's uncommitted content when the run started: its tasks build on it.\n"
)
GITLINK = "160000"


class SnapshotError(UserError):
    """A checkout whose state no commit can hold; the message says what and the fix."""


def ref_of(run_id: str) -> str:
    return f"{REFS}/{run_id}"


def take(repo: Path, scratch: Path) -> str:
    """The commit of `repo`'s working tree as it is now, whose parent is HEAD (HEAD itself
    when nothing differs). `scratch` is a folder of the harness's for its temporary index.
    SnapshotError, with nothing made, when a commit cannot represent the checkout."""
    _refuse_unrepresentable(repo)
    head = git.resolve(repo, "HEAD")
    scratch.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="snapshot-", dir=scratch) as folder:
        env = {"GIT_INDEX_FILE": str(Path(folder, "index").resolve())}
        # Content filters are programs the configuration names: off, as for every workspace
        # (a file under a filter, LFS's included, is taken as its bytes).
        plain = no_filters(repo)
        git.run(repo, *plain, "read-tree", head, env=env)
        git.run(repo, *plain, "add", "--all", env=env)
        tree = git.decode(git.run(repo, *plain, "write-tree", env=env).stdout).strip()
    if tree == git.tree_of(repo, head):
        return head
    changes = git.fields(git.run(repo, "diff-tree", "-r", "-z", "--no-renames", head, tree).stdout)
    for meta, name in zip(changes[0::2], changes[1::2], strict=False):
        old_mode, new_mode = meta.lstrip(":").split(" ")[:2]
        if GITLINK in (old_mode, new_mode):  # an embedded repository status did not name
            raise _submodule(name)
    return git.commit_tree(repo, tree, head, MESSAGE)


def keep(repo: Path, run_id: str, sha: str) -> None:
    """Keep `sha` reachable under the run's snapshot ref (made once; the same again is fine)."""
    ref = ref_of(run_id)
    if git.run(repo, "check-ref-format", ref, ok=(0, 1)).returncode != 0:
        raise git.error(f"no ref can be named {ref!r}", "report this run id")
    done = git.run(repo, "update-ref", ref, sha, "", ok=(0, 128))
    if done.returncode != 0 and kept(repo, run_id) != git.resolve(repo, sha):
        raise git.error(
            f"cannot keep the run's snapshot under {ref}: {git.reason(done.stderr)}",
            f"git update-ref {ref} {sha}",
        )


def kept(repo: Path, run_id: str) -> str | None:
    """The commit the run's snapshot ref holds, or None."""
    done = git.run(repo, "rev-parse", "--verify", "--quiet", ref_of(run_id), ok=(0, 1))
    return git.decode(done.stdout).strip() if done.returncode == 0 else None


def _refuse_unrepresentable(repo: Path) -> None:
    """Refuse, before any object is written, a checkout a tree cannot hold: unmerged paths,
    a sparse checkout (its absent files would read as deleted), a submodule with changes or
    a repository nested in the working tree. Read only: GIT_OPTIONAL_LOCKS=0 keeps status
    from rewriting the user's index."""
    tags = git.fields(git.run(repo, "ls-files", "-t", "-z").stdout)
    unmerged = next((t[2:] for t in tags if t.startswith("M ")), None)
    if unmerged is not None:
        raise SnapshotError(
            f"your checkout has unmerged paths ({unmerged}), which no commit can hold",
            fix="finish the merge or rebase (or git merge --abort), then run again",
        )
    sparse = next((t[2:] for t in tags if t.startswith("S ")), None)
    if sparse is not None:
        raise SnapshotError(
            f"your checkout is sparse ({sparse} is not checked out), so a snapshot would "
            "lose the files it leaves out",
            fix="git sparse-checkout disable, or commit your changes and run without --snapshot",
        )
    status = ["status", "--porcelain=v2", "-z", "--untracked-files=all", "--ignore-submodules=none"]
    entries = iter(git.fields(git.run(repo, *status).stdout))
    for entry in entries:
        kind = entry[:2]
        if kind == "2 ":
            next(entries, None)  # a rename's original path, a field of its own
        if kind == "? " and entry.endswith("/"):  # -uall lists files: a folder is a repository
            raise _submodule(entry[2:].rstrip("/"))
        if kind in ("1 ", "2 ") and entry.split(" ")[2].startswith("S"):
            raise _submodule(entry.split(" ", 9 if kind == "2 " else 8)[-1])


def _submodule(name: str) -> SnapshotError:
    return SnapshotError(
        f"{name} is a submodule or repository with changes of its own, which a snapshot "
        "cannot hold",
        fix=f"commit inside {name} (and its new commit in your checkout), or run without "
        "--snapshot",
    )
