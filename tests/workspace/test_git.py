"""The hardened git runner and what it reads, against real repositories built in each test's
temp folder (branches: test_refs.py; worktrees: test_worktrees.py)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from taskhand import workspace
from taskhand.workspace import diffs, git, refs, replay, worktrees
from taskhand.workspace.diffs import Change
from taskhand.workspace.git import GitError
from taskhand.workspace.snapshot import snapshot
from tests.workspace.conftest import commit, depot_of, make_repo, run, write


def assert_one_line_fix(error: pytest.ExceptionInfo[GitError]) -> str:
    message = str(error.value)
    assert "\n" not in message
    assert "(fix: " in message
    return message


# finding the repository and naming commits


def test_find_repo_from_a_folder_and_from_a_file(repo: Path) -> None:
    top = repo.resolve()
    assert git.find_repo(repo / "src") == top
    assert git.find_repo(repo / "src" / "app.py") == top


def test_find_repo_outside_a_repository(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    with pytest.raises(GitError) as error:
        git.find_repo(tmp_path / "plain")
    message = assert_one_line_fix(error)
    assert message.startswith("not a git repository: ")
    assert "git init" in message


def test_find_repo_of_a_missing_path(tmp_path: Path) -> None:
    with pytest.raises(GitError) as error:
        git.find_repo(tmp_path / "missing")
    assert "no such file or folder" in assert_one_line_fix(error)


@pytest.mark.parametrize(
    "call",
    [
        git.has_commits,
        refs.current_branch,
        git.dirty_paths,
        worktrees.listed,
        snapshot,
        lambda folder: git.resolve(folder, "HEAD"),
        lambda folder: refs.branch_sha(folder, "main"),
    ],
)
def test_every_call_in_a_plain_folder_fails_in_one_line(
    tmp_path: Path, call: Callable[[Path], object]
) -> None:
    with pytest.raises(GitError) as error:
        call(tmp_path)
    assert assert_one_line_fix(error).startswith("not a git repository")


def test_a_repository_without_commits(tmp_path: Path) -> None:
    run(tmp_path, "init", "-q", "empty")
    empty = tmp_path / "empty"
    assert git.has_commits(empty) is False
    with pytest.raises(GitError) as error:
        git.resolve(empty, "HEAD")
    assert "the repository has no commits yet" in assert_one_line_fix(error)
    assert "make a first commit" in str(error.value)


def test_an_inherited_git_dir_does_not_redirect_calls(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = make_repo(tmp_path / "other")
    run(other, "switch", "-q", "-c", "elsewhere")
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))  # as inside a git hook
    monkeypatch.setenv("GIT_INDEX_FILE", str(other / ".git" / "index"))
    assert refs.current_branch(repo) == "main"


def test_has_commits(repo: Path) -> None:
    assert git.has_commits(repo) is True


def test_resolve_gives_full_commit_shas(repo: Path) -> None:
    head = run(repo, "rev-parse", "HEAD")
    run(repo, "tag", "-a", "-m", "annotated", "v1")
    assert git.resolve(repo, "HEAD") == head
    assert git.resolve(repo, "main") == head
    assert git.resolve(repo, head[:8]) == head
    assert git.resolve(repo, "v1") == head  # the tag object is peeled to its commit


@pytest.mark.parametrize("ref", ["nope", "", "--all", "HEAD:README.md", "main\nHEAD"])
def test_resolve_rejects_what_is_not_a_commit(repo: Path, ref: str) -> None:
    with pytest.raises(GitError) as error:
        git.resolve(repo, ref)
    message = assert_one_line_fix(error)
    assert f"no commit named {ref!r}" in message
    assert "give a branch, tag or commit" in message


def test_dirty_paths(repo: Path) -> None:
    assert git.dirty_paths(repo) == []
    write(repo, {"README.md": "changed\n", "new/deep/file.txt": "x", "build/out.o": "ignored"})
    run(repo, "mv", "src/app.py", "src/main.py")
    write(repo, {"with space.txt": "x"})
    assert git.dirty_paths(repo) == [
        "README.md",
        "new/deep/file.txt",
        "src/app.py",
        "src/main.py",
        "with space.txt",
    ]


# reading commits


def test_is_ancestor(repo: Path) -> None:
    first = run(repo, "rev-parse", "HEAD")
    second = commit(repo, "second")
    assert git.is_ancestor(repo, first, second) is True
    assert git.is_ancestor(repo, second, first) is False
    assert git.is_ancestor(repo, first, first) is True


def test_tree_of(repo: Path) -> None:
    first = run(repo, "rev-parse", "HEAD")
    assert git.tree_of(repo, first) == run(repo, "rev-parse", "HEAD^{tree}")


# the harness's commit


def test_commit_tree_makes_one_commit_on_the_base(repo: Path) -> None:
    base = run(repo, "rev-parse", "HEAD")
    later = commit(repo, "later", {"later.txt": "x"})
    tree = run(repo, "rev-parse", f"{later}^{{tree}}")
    sha = git.commit_tree(repo, tree, base, "task 1: one commit")
    assert run(repo, "rev-list", "--parents", "-n", "1", sha).split() == [sha, base]
    assert git.tree_of(repo, sha) == tree
    assert run(repo, "log", "-1", "--format=%B", sha) == "task 1: one commit"
    assert run(repo, "log", "-1", "--format=%an <%ae>", sha) == "Tess Ter <tess@example.com>"
    assert refs.branch_sha(repo, "main") == later  # no branch moves


# comparing commits


def test_changed_paths(repo: Path) -> None:
    body = "".join(f"line {n}\n" for n in range(20))
    base = commit(repo, "base", {"keep.txt": "k", "mod.txt": "m", "gone.txt": "g", "mv.py": body})
    (repo / "gone.txt").unlink()
    (repo / "mv.py").unlink()
    (repo / "src" / "app.py").unlink()
    (repo / "src" / "app.py").symlink_to("../README.md")
    write(repo, {"mod.txt": "changed", "new.txt": "n", "pkg/moved.py": body + "one more\n"})
    head = commit(repo, "head")
    assert sorted(diffs.changed_paths(repo, base, head), key=lambda c: c.path) == [
        Change("D", "gone.txt"),
        Change("M", "mod.txt"),
        Change("A", "new.txt"),
        Change("R", "pkg/moved.py", "mv.py"),
        Change("T", "src/app.py"),
    ]
    assert diffs.changed_paths(repo, head, head) == []


def test_whitespace_errors(repo: Path) -> None:
    base = run(repo, "rev-parse", "HEAD")
    clean = commit(repo, "clean", {"clean.txt": "fine\n"})
    assert diffs.whitespace_errors(repo, base, clean) == ""
    messy = commit(repo, "messy", {"messy.txt": "trailing   \n"})
    problems = diffs.whitespace_errors(repo, clean, messy)
    assert "messy.txt:1: trailing whitespace." in problems
    marker = commit(repo, "marker", {"conflict.txt": "<<<<<<< ours\na\n=======\nb\n>>>>>>> x\n"})
    assert "leftover conflict marker" in diffs.whitespace_errors(repo, messy, marker)


def test_counts_summary_and_patch(repo: Path) -> None:
    body = "".join(f"line {n}\n" for n in range(20))
    base = commit(repo, "base", {"mod.txt": "a\nb\n", "mv.py": body})
    (repo / "mv.py").unlink()
    (repo / "blob.bin").write_bytes(b"\x00\x01\xff")
    write(repo, {"mod.txt": "a\nB\nc\n", "pkg/moved.py": body + "one more\n"})
    head = commit(repo, "head")
    assert sorted(diffs.counts(repo, base, head), key=lambda c: c.path) == [
        diffs.Counted("blob.bin", None, None),
        diffs.Counted("mod.txt", 2, 1),
        diffs.Counted("pkg/moved.py", 1, 0),
    ]
    line = diffs.summary(repo, base, head)
    assert line.startswith("3 files changed (+3 -1): ")
    assert sorted(line.split(": ", 1)[1].split(", ")) == ["blob.bin", "mod.txt", "pkg/moved.py"]
    assert diffs.summary(repo, base, head, names=1).endswith(" and 2 more")
    assert diffs.summary(repo, head, head) == "no changes"
    text = diffs.patch(repo, base, head)
    assert "rename from mv.py" in text and "+B" in text and "-b" in text
    assert diffs.patch(repo, head, head) == ""


def test_symlinks(repo: Path) -> None:
    base = git.resolve(repo, "HEAD")
    (repo / "inside").symlink_to("src/app.py")
    (repo / "src" / "outside").symlink_to("/etc/passwd")
    (repo / "*").symlink_to("README.md")
    (repo / "README.md").write_text("a file, not a link\n")
    sha = commit(repo, "links")
    assert diffs.symlinks(repo, base, sha) == {
        "inside": "src/app.py",
        "src/outside": "/etc/passwd",
        "*": "README.md",  # a name, not a wildcard
    }
    (repo / "inside").unlink()
    assert diffs.symlinks(repo, sha, commit(repo, "link removed")) == {}
    assert diffs.symlinks(repo, sha, sha) == {}


# repository configuration never makes the harness's git run a program


def trap(tmp_path: Path, name: str) -> str:
    """A program that leaves the marker `name` in tmp_path/markers when anything runs it."""
    (tmp_path / "markers").mkdir(exist_ok=True)
    script = tmp_path / "traps" / name
    script.parent.mkdir(exist_ok=True)
    marker = tmp_path / "markers" / name
    script.write_text(f"#!/bin/sh\ntouch '{marker}'\ncat >/dev/null 2>&1\nexit 0\n")
    script.chmod(0o755)
    return str(script)


def markers(tmp_path: Path) -> list[str]:
    return sorted(p.name for p in (tmp_path / "markers").iterdir())


HOOKS = (
    "pre-commit",
    "post-commit",
    "post-checkout",
    "post-index-change",
    "reference-transaction",
    "pre-auto-gc",
    "post-rewrite",
)


def poison(repo: Path, tmp_path: Path) -> None:
    """Every setting of the repository's own .git that makes a plain git run a program."""
    settings = {
        "core.fsmonitor": trap(tmp_path, "fsmonitor"),
        "core.pager": trap(tmp_path, "pager"),
        "core.editor": trap(tmp_path, "editor"),
        "diff.external": trap(tmp_path, "diff-external"),
        "diff.md.command": trap(tmp_path, "diff-driver"),
        "diff.md.textconv": trap(tmp_path, "textconv"),
        "gpg.program": trap(tmp_path, "gpg"),
        "commit.gpgSign": "true",
        "alias.status": "!" + trap(tmp_path, "alias-status"),
        "alias.diff": "!" + trap(tmp_path, "alias-diff"),
        "core.hooksPath": str(tmp_path / "hooks"),
    }
    for key, value in settings.items():
        run(repo, "config", key, value)
    (repo / ".git" / "info").mkdir(exist_ok=True)
    (repo / ".git" / "info" / "attributes").write_text("notes.md diff=md\n")
    for folder in (tmp_path / "hooks", repo / ".git" / "hooks"):
        folder.mkdir(exist_ok=True)
        for hook in HOOKS:
            (folder / hook).write_text(Path(trap(tmp_path, f"hook-{hook}")).read_text())
            (folder / hook).chmod(0o755)


@pytest.fixture
def poisoned(repo: Path, tmp_path: Path) -> Path:
    """The repository with a second commit (an edit, a whitespace error, a symlink), then
    poisoned; nothing has run yet."""
    commit(repo, "second", {"README.md": "# demo  \nmore\n", "notes.md": "n\n"})
    (repo / "link").symlink_to("README.md")
    commit(repo, "third")
    poison(repo, tmp_path)
    assert markers(tmp_path) == []
    return repo


def test_the_poisoned_repository_makes_a_plain_git_run_programs(
    poisoned: Path, tmp_path: Path
) -> None:
    """What the harness's git must not do, shown by git itself: the test below can fail."""
    write(poisoned, {"README.md": "edited\n", "notes.md": "edited\n"})
    subprocess.run(["git", "-C", str(poisoned), "status"], capture_output=True, check=True)
    subprocess.run(["git", "-C", str(poisoned), "diff"], capture_output=True, check=False)
    subprocess.run(["git", "-C", str(poisoned), "commit", "-qam", "x"], capture_output=True)
    assert {"fsmonitor", "diff-external", "diff-driver", "hook-pre-commit"} <= set(
        markers(tmp_path)
    )


def workspace_round_trip(repo: Path, tmp_path: Path) -> None:
    """An attempt as the runner makes it: a workspace, an edit, the candidate collected."""
    base = git.resolve(repo, "HEAD~1")
    depot = depot_of(repo)
    ws = workspace.prepare(depot, tmp_path / "ws", tmp_path / "index", base, "task-1")
    write(ws.path, {"README.md": "changed  \n", "new.md": "n\n"})
    candidate = workspace.collect(depot, ws, base, "task 1")
    assert candidate is not None
    workspace.prepare(depot, ws.path, ws.index, candidate, None)  # reused for a review
    replayed = replay.onto(depot, candidate, "HEAD")  # onto a run branch that moved on
    refs.create_branch(repo, "task-1", replayed.sha or candidate)  # its objects copied in
    workspace.remove(ws.path)


HARNESS_CALLS: list[tuple[str, Callable[[Path, Path], object]]] = [
    ("resolve", lambda repo, _: git.resolve(repo, "HEAD~1")),
    ("has_commits", lambda repo, _: git.has_commits(repo)),
    ("current_branch", lambda repo, _: refs.current_branch(repo)),
    ("dirty_paths", lambda repo, _: git.dirty_paths(repo)),
    ("branch_sha", lambda repo, _: refs.branch_sha(repo, "main")),
    ("create_branch", lambda repo, _: refs.create_branch(repo, "task-1", "HEAD~1")),
    (
        "move_branch",
        lambda repo, _: (
            refs.create_branch(repo, "task-1", "HEAD~1"),
            refs.move_branch(repo, "task-1", "HEAD", "HEAD~1"),
            refs.delete_branch(repo, "task-1"),
        ),
    ),
    ("is_ancestor", lambda repo, _: git.is_ancestor(repo, "HEAD~2", "HEAD")),
    ("tree_of", lambda repo, _: git.tree_of(repo, "HEAD")),
    ("worktrees", lambda repo, _: worktrees.listed(repo)),
    ("changed_paths", lambda repo, _: diffs.changed_paths(repo, "HEAD~2", "HEAD")),
    ("whitespace_errors", lambda repo, _: diffs.whitespace_errors(repo, "HEAD~2", "HEAD")),
    ("patch", lambda repo, _: diffs.patch(repo, "HEAD~2", "HEAD")),
    ("summary", lambda repo, _: diffs.summary(repo, "HEAD~2", "HEAD")),
    ("symlinks", lambda repo, _: diffs.symlinks(repo, "HEAD~2", "HEAD")),
    ("snapshot", lambda repo, _: snapshot(repo)),
    ("commit_tree", lambda repo, _: git.commit_tree(repo, git.tree_of(repo, "HEAD"), "HEAD", "m")),
    ("workspace prepare and collect", workspace_round_trip),
]


@pytest.mark.parametrize(("name", "call"), HARNESS_CALLS, ids=[n for n, _ in HARNESS_CALLS])
def test_the_harness_git_runs_nothing_a_repository_configures(
    poisoned: Path, tmp_path: Path, name: str, call: Callable[[Path, Path], object]
) -> None:
    write(poisoned, {"README.md": "the user's edit\n"})  # something for status to look at
    call(poisoned, tmp_path)
    assert markers(tmp_path) == []


def test_filters_the_repository_configures_are_not_run(repo: Path, tmp_path: Path) -> None:
    """As the issue names them: hooks, fsmonitor, filters, ... never run in the harness."""
    commit(repo, "second", {"README.md": "second\n"})
    run(repo, "config", "filter.x.clean", trap(tmp_path, "clean"))
    run(repo, "config", "filter.x.smudge", trap(tmp_path, "smudge"))
    (repo / ".git" / "info" / "attributes").write_text("* filter=x\n")
    workspace_round_trip(repo, tmp_path)
    assert markers(tmp_path) == []


# the user's checkout stays as it was


def test_reading_leaves_the_index_file_alone(repo: Path) -> None:
    # A stat-only change makes a plain `git status` rewrite the index; ours must not.
    os.utime(repo / "README.md", (1_600_000_000, 1_600_000_000))
    before = snapshot(repo)
    git.dirty_paths(repo)
    snapshot(repo)
    assert snapshot(repo) == before


def touch_tracked(repo: Path) -> None:
    os.utime(repo / "README.md", (1_600_000_000, 1_600_000_000))
    run(repo, "update-index", "--refresh")


def store_stash(repo: Path) -> None:
    write(repo, {"README.md": "for the stash\n"})
    sha = run(repo, "stash", "create")
    write(repo, {"README.md": "# demo\n"})
    run(repo, "stash", "store", "-m", "kept", sha)


MUTATIONS: list[tuple[str, Callable[[Path], object]]] = [
    ("head", lambda repo: commit(repo, "another")),
    ("branch", lambda repo: run(repo, "switch", "-q", "-c", "other")),
    ("index", lambda repo: run(repo, "update-index", "--chmod=+x", "README.md")),
    ("index_hash", touch_tracked),
    ("stash", store_stash),
    ("status", lambda repo: write(repo, {"untracked.txt": "x"})),
    ("files", lambda repo: write(repo, {"build/ignored.o": "x"})),
    ("files", lambda repo: (repo / "empty-folder").mkdir()),
    ("files", lambda repo: (repo / "link").symlink_to("README.md")),
    ("files", lambda repo: (repo / ".gitignore").chmod(0o755)),
]


@pytest.mark.parametrize(("key", "mutate"), MUTATIONS)
def test_snapshot_notices_each_kind_of_change(
    repo: Path, key: str, mutate: Callable[[Path], object]
) -> None:
    write(repo, {"build/ignored.o": "original"})
    before = snapshot(repo)
    mutate(repo)
    after = snapshot(repo)
    assert before[key] != after[key]


def test_snapshot_is_stable_and_skips_the_git_folder(repo: Path) -> None:
    before = snapshot(repo)
    run(repo, "update-ref", "refs/heads/unrelated", "HEAD")  # writes under .git only
    assert snapshot(repo) == before
    assert set(before) == {"head", "branch", "index", "index_hash", "stash", "status", "files"}
    files = before["files"]
    assert isinstance(files, dict)
    assert sorted(files) == [".gitignore", "README.md", "src", "src/app.py"]
