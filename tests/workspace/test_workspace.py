"""Workspaces: a private repository per attempt, written and read through the user's
repository, whatever the agent does to the workspace's own .git."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from taskhand import workspace
from taskhand.workspace import Workspace, WorkspaceError, git, refs
from taskhand.workspace.snapshot import snapshot, tree_digests
from tests.workspace.conftest import agent_env, commit, depot_of, in_depot, make_repo, run, write
from tests.workspace.test_git import markers, trap


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / "markers").mkdir()
    return make_repo(tmp_path / "repo")


def prepare(
    repo: Path, tmp_path: Path, sha: str = "HEAD", branch: str | None = "taskhand/T-001-x"
) -> Workspace:
    """The runner's call: the folder and the harness's index of it, apart."""
    return workspace.prepare(
        depot_of(repo), tmp_path / "ws", tmp_path / "indexes" / "ws", sha, branch
    )


def files(folder: Path) -> dict[str, str]:
    """Every file and link of a checkout but its .git: path -> content or link target."""
    found: dict[str, str] = {}
    for top, folders, names in os.walk(folder):
        if top == str(folder):
            folders[:] = [f for f in folders if f != ".git"]
            names = [n for n in names if n != ".git"]
        for name in names + [f for f in folders if Path(top, f).is_symlink()]:
            path = Path(top, name)
            text = f"-> {os.readlink(path)}" if path.is_symlink() else path.read_text()
            found[str(path.relative_to(folder))] = text
    return found


def committed(repo: Path, sha: str) -> dict[str, str]:
    """Every file of commit `sha` (of the repository or its depot): path -> content or link
    target."""
    found: dict[str, str] = {}
    sha = run(repo, "rev-parse", sha)  # a name of the repository's; a full sha stays as it is
    for line in in_depot(repo, "ls-tree", "-r", "--full-tree", sha).splitlines():
        info, path = line.split("\t", 1)
        git_dir = f"--git-dir={depot_of(repo).path}"
        blob = ["git", "-C", str(repo), git_dir, "cat-file", "blob", info.split()[2]]
        text = subprocess.run(blob, capture_output=True, text=True, check=True).stdout
        found[path] = f"-> {text}" if info.startswith("120000") else text
    return found


def untouched(repo: Path) -> tuple[object, ...]:
    """The user's checkout and every byte under its .git but the object store."""
    common = git.common_dir(repo)
    raw = tree_digests(common, content=True, with_git=True, skip=lambda n: n.startswith("objects"))
    return (raw, snapshot(repo))


def exists_in(repo: Path, sha: str) -> bool:
    done = subprocess.run(["git", "-C", str(repo), "cat-file", "-e", sha], capture_output=True)
    return done.returncode == 0


def loose_objects(repo: Path) -> int:
    counts = dict(line.split(": ") for line in run(repo, "count-objects", "-v").splitlines())
    return int(counts["count"])


# prepare


def test_prepare_gives_exactly_the_commits_files(repo: Path, tmp_path: Path) -> None:
    base = git.resolve(repo, "HEAD")
    commit(repo, "later", {"later.txt": "not at base", "README.md": "later\n"})
    write(repo, {"build/ignored.o": "x", "untracked.txt": "x"})
    ws = prepare(repo, tmp_path, base)
    assert files(ws.path) == committed(repo, base)
    assert (ws.path / ".git").is_dir()
    assert run(ws.path, "rev-parse", "--absolute-git-dir") == str((ws.path / ".git").resolve())
    assert run(ws.path, "status", "--porcelain", "--ignored") == ""
    assert run(ws.path, "symbolic-ref", "HEAD") == "refs/heads/taskhand/T-001-x"
    assert run(ws.path, "rev-parse", "HEAD") == base
    assert run(ws.path, "log", "--format=%s") == "first"  # history read from the user's objects


def test_prepare_without_a_branch_gives_a_detached_head(repo: Path, tmp_path: Path) -> None:
    ws = prepare(repo, tmp_path, branch=None)
    assert refs.current_branch(ws.path) is None
    assert run(ws.path, "rev-parse", "HEAD") == git.resolve(repo, "HEAD")
    assert run(ws.path, "status", "--porcelain", "--ignored") == ""


def test_what_the_agent_commits_stays_in_the_workspace(repo: Path, tmp_path: Path) -> None:
    before = untouched(repo)
    loose = loose_objects(repo)
    ws = prepare(repo, tmp_path)
    write(ws.path, {"agent.txt": "the agent's own commit\n"})
    run(ws.path, "add", "-A")
    run(ws.path, "commit", "-q", "-m", "agent: mine")
    run(ws.path, "tag", "agent-tag")
    run(ws.path, "branch", "agent-branch")
    own = run(ws.path, "rev-parse", "HEAD")
    assert run(ws.path, "rev-parse", "HEAD~1") == git.resolve(repo, "HEAD")
    assert not exists_in(repo, own)
    assert not exists_in(repo, run(ws.path, "rev-parse", "HEAD:agent.txt"))
    assert loose_objects(repo) == loose
    assert untouched(repo) == before


def test_reusing_the_folder_rewrites_only_what_differs(repo: Path, tmp_path: Path) -> None:
    first = git.resolve(repo, "HEAD")
    second = commit(repo, "second", {"README.md": "second\n", "added.txt": "a\n"})
    ws = prepare(repo, tmp_path, first)
    unchanged = (ws.path / "src" / "app.py").stat().st_ino
    write(ws.path, {"scratch.txt": "x", "build/ignored.o": "x", "deep/new/file.txt": "x"})
    (ws.path / ".gitignore").unlink()
    again = prepare(repo, tmp_path, second)
    assert again.path == ws.path
    assert files(again.path) == committed(repo, second)
    assert (again.path / "src" / "app.py").stat().st_ino == unchanged
    assert not (again.path / "build").exists() and not (again.path / "deep").exists()
    assert run(again.path, "status", "--porcelain", "--ignored") == ""
    assert run(again.path, "rev-parse", "HEAD") == second


def test_reuse_without_the_harness_index_starts_over(repo: Path, tmp_path: Path) -> None:
    ws = prepare(repo, tmp_path)
    write(ws.path, {"left.txt": "x", "build/ignored.o": "x"})
    ws.index.unlink()
    again = prepare(repo, tmp_path)
    assert files(again.path) == committed(repo, "HEAD")
    assert run(again.path, "status", "--porcelain", "--ignored") == ""


@pytest.mark.parametrize("link", ["src", ".git"])
def test_reuse_never_writes_through_a_link_the_agent_left(
    repo: Path, tmp_path: Path, link: str
) -> None:
    """A folder of the workspace swapped for a link into the user's checkout: the next
    prepare replaces the link instead of writing the commit's files through it."""
    write(repo, {"src/app.py": "the user's unsaved work\n"})
    run(repo, "add", "src/app.py")
    ws = prepare(repo, tmp_path)
    before = untouched(repo)
    shutil.rmtree(ws.path / link)
    (ws.path / link).symlink_to(repo / link)
    again = prepare(repo, tmp_path)
    assert untouched(repo) == before
    assert (repo / "src" / "app.py").read_text() == "the user's unsaved work\n"
    assert not (again.path / link).is_symlink()
    assert files(again.path) == committed(repo, "HEAD")
    assert run(again.path, "status", "--porcelain", "--ignored") == ""


# collect


def agent_session(ws: Path) -> None:
    """What an agent might leave: two commits of its own, then uncommitted work."""
    commit(ws, "agent: one", {"a.txt": "a\n"})
    commit(ws, "agent: two", {"b.txt": "b\n"})
    write(ws, {"c.txt": "c\n", "build/cache.bin": "ignored"})
    (ws / "README.md").unlink()


def test_collect_squashes_the_agents_commits(repo: Path, tmp_path: Path) -> None:
    base = git.resolve(repo, "HEAD")
    ws = prepare(repo, tmp_path, base)
    agent_session(ws.path)
    sha = workspace.collect(depot_of(repo), ws, base, "task 1: add letters")
    assert sha is not None
    assert in_depot(repo, "rev-list", "--parents", "-n", "1", sha).split() == [sha, base]
    assert in_depot(repo, "log", "-1", "--format=%B", sha) == "task 1: add letters"
    names = sorted(committed(repo, sha))
    assert names == [".gitignore", "a.txt", "b.txt", "c.txt", "src/app.py"]
    assert refs.branch_sha(repo, "main") == base  # no branch of the user's moves
    assert refs.branch_sha(repo, "taskhand/T-001-x") is None
    assert (ws.path / "build" / "cache.bin").exists()  # ignored files stay, uncommitted


def test_collect_without_changes(repo: Path, tmp_path: Path) -> None:
    base = git.resolve(repo, "HEAD")
    ws = prepare(repo, tmp_path, base)
    write(ws.path, {"build/only-ignored.txt": "x"})
    assert workspace.collect(depot_of(repo), ws, base, "nothing") is None


def test_collect_after_the_agent_reverted_itself(repo: Path, tmp_path: Path) -> None:
    base = git.resolve(repo, "HEAD")
    ws = prepare(repo, tmp_path, base)
    commit(ws.path, "agent: try", {"README.md": "rewritten\n"})
    run(ws.path, "revert", "--no-edit", "HEAD")
    assert workspace.collect(depot_of(repo), ws, base, "nothing after all") is None


def test_collect_twice_builds_on_the_same_base(repo: Path, tmp_path: Path) -> None:
    base = git.resolve(repo, "HEAD")
    ws = prepare(repo, tmp_path, base)
    write(ws.path, {"x.txt": "1\n"})
    first = workspace.collect(depot_of(repo), ws, base, "first")
    write(ws.path, {"x.txt": "2\n"})
    second = workspace.collect(depot_of(repo), ws, base, "second")
    assert first is not None and second is not None
    assert git.resolve(repo, f"{second}^") == base
    assert committed(repo, second)["x.txt"] == "2\n"


def test_collect_is_deterministic(tmp_path: Path) -> None:
    shas = []
    for name in ("one", "two"):
        repo = make_repo(tmp_path / name)
        ws = workspace.prepare(
            depot_of(repo), tmp_path / f"{name}-ws", tmp_path / f"{name}-index", "HEAD", None
        )
        agent_session(ws.path)
        shas.append(workspace.collect(depot_of(repo), ws, "main", "same work"))
    assert shas[0] is not None
    assert shas[0] == shas[1]


def identity(repo: Path, sha: str) -> str:
    return in_depot(repo, "log", "-1", "--format=%an <%ae> / %cn <%ce>", sha)


def test_collect_identity(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = prepare(repo, tmp_path)
    write(ws.path, {"x.txt": "1"})
    given = workspace.collect(depot_of(repo), ws, "main", "from the environment")
    assert given is not None
    assert identity(repo, given) == "Tess Ter <tess@example.com> / Tess Ter <tess@example.com>"

    for variable in ("NAME", "EMAIL"):
        for role in ("AUTHOR", "COMMITTER"):
            monkeypatch.delenv(f"GIT_{role}_{variable}")
    run(ws.path, "config", "user.name", "Agent In The Workspace")  # never read
    run(ws.path, "config", "user.email", "agent@example.com")
    fallback = workspace.collect(depot_of(repo), ws, "main", "fallback")
    assert fallback is not None
    assert identity(repo, fallback) == (
        "taskhand <taskhand@localhost> / taskhand <taskhand@localhost>"
    )

    run(repo, "config", "user.name", "Configured")
    run(repo, "config", "user.email", "configured@example.com")
    configured = workspace.collect(depot_of(repo), ws, "main", "configured")
    assert configured is not None
    expected = "Configured <configured@example.com> / Configured <configured@example.com>"
    assert identity(repo, configured) == expected


def dirty_checkout(repo: Path) -> None:
    """A checkout mid-session: edits, a staged file, untracked and ignored files, a stash."""
    write(repo, {"README.md": "stashed\n"})
    run(repo, "stash", "-q")
    write(repo, {"README.md": "half-edited\n", "staged.txt": "s", "notes.txt": "n"})
    run(repo, "add", "staged.txt")
    write(repo, {"build/artifact.o": "binary"})


def test_an_attempt_leaves_the_users_repository_alone(repo: Path, tmp_path: Path) -> None:
    dirty_checkout(repo)
    before = untouched(repo)
    base = git.resolve(repo, "HEAD")
    ws = prepare(repo, tmp_path, base)
    agent_session(ws.path)
    (ws.path / "link").symlink_to("/etc/passwd")
    sha = workspace.collect(depot_of(repo), ws, base, "task 1")
    assert sha is not None
    assert committed(repo, sha)["link"] == "-> /etc/passwd"
    prepare(repo, tmp_path, sha, None)  # reused, as a review copy is
    workspace.remove(ws.path)
    assert untouched(repo) == before


# an agent that rewrites its workspace's .git


def plant_config(ws: Path, text: str) -> None:
    with (ws / ".git" / "config").open("a") as config:
        config.write(text)


def fsmonitor(ws: Path, tmp_path: Path) -> None:
    plant_config(ws, f"[core]\n\tfsmonitor = {trap(tmp_path, 'fsmonitor')}\n")


def hooks(ws: Path, tmp_path: Path) -> None:
    folder = ws / ".git" / "hooks"
    folder.mkdir()
    for hook in ("pre-commit", "post-index-change", "reference-transaction", "post-checkout"):
        shutil.copy(trap(tmp_path, f"hook-{hook}"), folder / hook)
    plant_config(ws, f"[core]\n\thooksPath = {folder}\n")


def filters(ws: Path, tmp_path: Path) -> None:
    clean, smudge = trap(tmp_path, "clean"), trap(tmp_path, "smudge")
    plant_config(ws, f'[filter "x"]\n\tclean = {clean}\n\tsmudge = {smudge}\n\trequired\n')
    (ws / ".git" / "info").mkdir(exist_ok=True)
    (ws / ".git" / "info" / "attributes").write_text("* filter=x\n")
    write(ws, {".gitattributes": "* filter=x\n"})


def exclude_everything(ws: Path, _: Path) -> None:
    (ws / ".git" / "info").mkdir(exist_ok=True)
    (ws / ".git" / "info" / "exclude").write_text("*\n")


def gitdir_file(ws: Path, _: Path) -> None:
    shutil.rmtree(ws / ".git")
    user = ws.parent / "repo" / ".git"
    (ws / ".git").write_text(f"gitdir: {user}\n")


def git_link(ws: Path, _: Path) -> None:
    shutil.rmtree(ws / ".git")
    (ws / ".git").symlink_to(ws.parent / "repo" / ".git")


def alternates(ws: Path, tmp_path: Path) -> None:
    elsewhere = make_repo(tmp_path / "elsewhere")
    (ws / ".git" / "objects" / "info" / "alternates").write_text(
        f"{elsewhere / '.git' / 'objects'}\n/nonexistent/objects\n"
    )


def no_git(ws: Path, _: Path) -> None:
    shutil.rmtree(ws / ".git")


HOSTILE: list[tuple[str, Callable[[Path, Path], None]]] = [
    ("core.fsmonitor in its config", fsmonitor),
    ("hooks and core.hooksPath", hooks),
    ("a clean filter and attributes", filters),
    ("an info/exclude hiding every file", exclude_everything),
    ("a gitdir file aimed at the user's repository", gitdir_file),
    ("a link to the user's .git", git_link),
    ("replaced alternates", alternates),
    ("its .git deleted", no_git),
]


@pytest.mark.parametrize(("name", "attack"), HOSTILE, ids=[n for n, _ in HOSTILE])
def test_collect_reads_only_the_files_whatever_the_workspace_git_says(
    repo: Path, tmp_path: Path, name: str, attack: Callable[[Path, Path], None]
) -> None:
    dirty_checkout(repo)
    base = git.resolve(repo, "HEAD")
    ws = prepare(repo, tmp_path, base)
    attack(ws.path, tmp_path)
    write(ws.path, {"README.md": "the agent's edit\n", "pkg/new.py": "new = 1\n"})
    (ws.path / "src" / "app.py").unlink()
    expected = files(ws.path)
    before = untouched(repo)
    sha = workspace.collect(depot_of(repo), ws, base, "task 1")
    assert sha is not None
    assert committed(repo, sha) == expected
    assert committed(repo, sha)["README.md"] == "the agent's edit\n"
    assert git.resolve(repo, f"{sha}^") == base
    assert markers(tmp_path) == []
    assert untouched(repo) == before
    again = prepare(repo, tmp_path, sha, None)  # the next use of the folder: still nothing runs
    assert files(again.path) == expected
    status = run(again.path, "status", "--porcelain", "--ignored", env=agent_env(repo))
    assert status == ""
    assert markers(tmp_path) == []
    assert untouched(repo) == before


def test_the_agents_own_git_obeys_what_it_planted(repo: Path, tmp_path: Path) -> None:
    """The traps above are armed: the workspace's git runs them (the test above can fail)."""
    ws = prepare(repo, tmp_path)
    fsmonitor(ws.path, tmp_path)
    hooks(ws.path, tmp_path)
    filters(ws.path, tmp_path)
    write(ws.path, {"README.md": "edited\n"})
    run(ws.path, "add", "-A")
    run(ws.path, "commit", "-q", "-m", "agent")
    assert {"fsmonitor", "clean", "hook-pre-commit", "hook-post-index-change"} <= set(
        markers(tmp_path)
    )


def test_a_nested_repository_is_not_committed_as_a_link_to_a_missing_commit(
    repo: Path, tmp_path: Path
) -> None:
    """A candidate must hold what the reviewers can read, and only commits the repository has."""
    base = git.resolve(repo, "HEAD")
    ws = prepare(repo, tmp_path, base)
    run(ws.path, "init", "-q", "nested")
    commit(ws.path / "nested", "agent: hidden", {"payload.py": "hidden = 1\n"})
    try:
        sha = workspace.collect(depot_of(repo), ws, base, "task 1")
    except WorkspaceError:
        return  # refusing the workspace is as good
    assert sha is not None
    assert " commit " not in in_depot(repo, "ls-tree", "-r", sha)
    assert committed(repo, sha).get("nested/payload.py") == "hidden = 1\n"


# a workspace folder the agent swapped


def test_a_workspace_replaced_by_a_link_to_the_users_checkout_is_refused(
    repo: Path, tmp_path: Path
) -> None:
    secret = "the user's uncommitted secret\n"
    write(repo, {"secret.txt": secret})
    base = git.resolve(repo, "HEAD")
    ws = prepare(repo, tmp_path, base)
    before = untouched(repo)
    shutil.rmtree(ws.path)
    ws.path.symlink_to(repo)
    with pytest.raises(WorkspaceError, match="replaced"):
        workspace.collect(depot_of(repo), ws, base, "task 1")
    blob = subprocess.run(
        ["git", "hash-object", "--stdin"], input=secret, capture_output=True, text=True, check=True
    ).stdout.strip()
    assert not exists_in(repo, blob)  # nothing of the checkout was read into an object
    assert untouched(repo) == before


def test_a_workspace_replaced_by_another_folder_is_refused(repo: Path, tmp_path: Path) -> None:
    base = git.resolve(repo, "HEAD")
    ws = prepare(repo, tmp_path, base)
    ws.path.rename(tmp_path / "moved")
    shutil.copytree(tmp_path / "moved", ws.path, symlinks=True)
    write(ws.path, {"README.md": "from the impostor\n"})
    with pytest.raises(WorkspaceError, match="replaced"):
        workspace.collect(depot_of(repo), ws, base, "task 1")


def test_a_deleted_workspace_is_refused(repo: Path, tmp_path: Path) -> None:
    ws = prepare(repo, tmp_path)
    workspace.remove(ws.path)
    with pytest.raises(WorkspaceError, match="gone"):
        workspace.collect(depot_of(repo), ws, "HEAD", "task 1")


# remove


def test_remove_deletes_links_not_what_they_point_at(repo: Path, tmp_path: Path) -> None:
    precious = tmp_path / "precious"
    write(precious, {"keep.txt": "keep\n"})
    ws = prepare(repo, tmp_path)
    (ws.path / "outside").symlink_to(precious)
    (ws.path / "src" / "repo").symlink_to(repo)
    workspace.remove(ws.path)
    assert not ws.path.exists()
    assert (precious / "keep.txt").read_text() == "keep\n"
    assert (repo / "README.md").exists()
    link = tmp_path / "ws-link"
    link.symlink_to(precious)
    workspace.remove(link)
    assert not link.exists() and not link.is_symlink()
    assert (precious / "keep.txt").read_text() == "keep\n"


def test_remove_a_workspace_the_agent_made_unwritable(repo: Path, tmp_path: Path) -> None:
    ws = prepare(repo, tmp_path)
    write(ws.path, {"locked/inner/file.txt": "x"})
    (ws.path / "locked" / "inner").chmod(0)
    (ws.path / "locked").chmod(0o500)
    (ws.path / ".git" / "objects").chmod(0)
    workspace.remove(ws.path)
    assert not ws.path.exists()


def test_remove_of_a_missing_workspace(tmp_path: Path) -> None:
    workspace.remove(tmp_path / "never-made")
    assert not (tmp_path / "never-made").exists()
